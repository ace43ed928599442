/**
 * The JetPack 4 image's recipe (board/jetpack4) read as the board's container runtime will meet it: it may install
 * nothing at a path the runtime mounts (the container would not start: "file exists"), no CUDA, cuDNN, TensorRT or
 * nvidia package, no userland with glibc 2.34 or later (clone3 on the Nano's 4.9 kernel), and run.sh passes the flags
 * the runtime and jetprof need. What the provisioned root really holds is checked by `SUITE=bullseye bash
 * scripts/check-arm64.sh` (not in CI: 45 minutes under qemu).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshDir, ROOT } from './helpers/fixtures.ts';

const DIR = join(ROOT, 'board/jetpack4');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');

/** The `type, path` lines of csv-mounts.txt. */
function mountedPaths(): { kind: string; path: string }[] {
  return read('csv-mounts.txt')
    .split('\n')
    .filter((l) => /^(dir|lib|sym|dev),/.test(l))
    .map((l) => {
      const [kind, path] = l.split(',').map((x) => x.trim());
      return { kind, path };
    });
}

/** The paths a shell script writes: redirect targets, and the targets of ln, cp, mv, install, mkdir and touch. */
export function writtenPaths(script: string): string[] {
  const out: string[] = [];
  for (const raw of script.split('\n')) {
    const line = raw.replace(/#.*$/, '');
    for (const m of line.matchAll(/>{1,2}\s*([^\s;&|)]+)/g)) out.push(m[1]);
    for (const m of line.matchAll(/\b(ln|cp|mv|install)\s+(?:-\S+\s+)*(\S+(?:\s+\S+)*?)\s*(?:$|[;&|)])/g)) {
      const args = m[2].split(/\s+/).filter((a) => !a.startsWith('-'));
      if (args.length >= 2) out.push(args[args.length - 1]);
    }
    for (const m of line.matchAll(/\b(mkdir|touch)\s+((?:-\S+\s+)*)([^;&|)]+)/g))
      out.push(...m[3].split(/\s+/).filter((a) => a && !a.startsWith('-')));
  }
  return out.filter((p) => p.startsWith('/'));
}

const under = (path: string, mounted: string) => path === mounted || path.startsWith(`${mounted}/`);

test('writtenPaths finds what a script writes (so the check below can fail)', (t) => {
  t.deepEqual(
    writtenPaths(
      'echo x >/usr/local/cuda-10.2/a\nln -s cuda-10.2 /usr/local/cuda\ncp -a lib.so /usr/lib/aarch64-linux-gnu/tegra/x.so\nmkdir -p /a /b',
    ),
    ['/usr/local/cuda-10.2/a', '/usr/local/cuda', '/usr/lib/aarch64-linux-gnu/tegra/x.so', '/a', '/b'],
  );
});

test('the recipe writes nothing at a path the container runtime mounts, and installs no CUDA, cuDNN, TensorRT or nvidia package', (t) => {
  const mounted = mountedPaths().filter((m) => m.kind !== 'dev');
  t.true(mounted.length >= 20, 'the CSV list is read');
  const scripts = {
    'provision.sh': read('provision.sh'),
    Dockerfile: read('Dockerfile'),
    'entrypoint.sh': read('entrypoint.sh'),
  };
  for (const [name, text] of Object.entries(scripts))
    for (const p of writtenPaths(text))
      for (const m of mounted)
        t.false(under(p, m.path), `${name} writes ${p}, under ${m.path} (${m.kind}), which the runtime mounts`);
  // the packages the recipe installs: its own apt line and setup.sh's system packages (provision.sh runs setup.sh
  // without --profilers or --test, so only system_packages installs anything)
  t.regex(scripts['provision.sh'], /^bash scripts\/setup\.sh$/m);
  const setup = readFileSync(join(ROOT, 'scripts/setup.sh'), 'utf8');
  const systemPackages = /^system_packages\(\) \{\n([\s\S]*?)\n\}/m.exec(setup)?.[1] ?? '';
  const apt = [
    ...[...scripts['provision.sh'].matchAll(/apt-get install([^\n]*)/g)].map((m) => m[1]),
    ...[...systemPackages.matchAll(/pkgs\+?=\(([^)]*)\)/g)].map((m) => m[1]),
    ...[...systemPackages.matchAll(/pkgs\+=\((\S+)\)/g)].map((m) => m[1]),
  ]
    .flatMap((x) => x.split(/\s+/))
    .filter((w) => /^[a-z0-9][a-z0-9.+-]+$/.test(w));
  t.true(apt.includes('libopencv-dev') && apt.includes('kmod'), apt.join(' '));
  const forbidden =
    /^(cuda|libcudnn|libnvinfer|libnvonnxparsers?|libnvparsers|tensorrt|nvidia-|libnvidia|graphsurgeon|uff-converter)/;
  for (const p of apt)
    t.false(forbidden.test(p), `${p}: the board's container runtime mounts this; a copy in the image clashes`);
});

test('the image is Debian 11 (glibc 2.31: Node 20 runs, no clone3 on the 4.9 kernel) and asks for the runtime mounts', (t) => {
  const docker = read('Dockerfile');
  t.regex(docker, /^ARG NODE_IMAGE=node:20-bullseye/m);
  t.regex(docker, /NVIDIA_VISIBLE_DEVICES=all/);
  t.regex(docker, /NVIDIA_DRIVER_CAPABILITIES=all/);
  t.regex(docker, /RUN bash board\/jetpack4\/provision\.sh/);
  t.regex(read('provision.sh'), /bash scripts\/setup\.sh/, 'the image is set up as any machine is');
});

test("run.sh's docker command: the runtime, its variables, csv-mounts=all on toolkit 1.9 and later only, the board's files, SYS_ADMIN", (t) => {
  const bin = freshDir('jp4-bin');
  const cli = join(bin, 'nvidia-container-cli');
  const run = (version?: string) => {
    writeFileSync(
      cli,
      version
        ? `#!/bin/sh\necho "cli-version: ${version}"\necho "lib-version: 0.10.0+jetpack"\n`
        : '#!/bin/sh\nexit 1\n',
    );
    chmodSync(cli, 0o755);
    const r = spawnSync('bash', [join(DIR, 'run.sh'), '--print', 'jetprof', 'selftest'], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    });
    t.is(r.status, 0, r.stderr);
    return r.stdout;
  };
  const old = run('1.7.0');
  for (const flag of [
    '--runtime nvidia',
    '-e NVIDIA_VISIBLE_DEVICES=all',
    '-e NVIDIA_DRIVER_CAPABILITIES=all',
    '--cap-add SYS_ADMIN',
    '-v jetprof-shim:/opt/jetprof/native/build',
    'jetprof:jetpack4 jetprof selftest',
  ])
    t.true(old.includes(flag), `${flag} in ${old}`);
  t.false(old.includes('csv-mounts=all'), 'JetPack 4.6 ships toolkit 1.7.0, which mounts every CSV');
  t.true(run('1.10.0').includes('-e NVIDIA_REQUIRE_JETPACK=csv-mounts=all'));
  t.false(run().includes('csv-mounts=all'), 'no toolkit found: nothing to ask');
});
