/**
 * The JetPack 4 image's recipe (board/jetpack4) read as the board's container runtime will meet it: it may install
 * nothing at a path the runtime mounts (the container would not start: "file exists"), no CUDA, cuDNN, TensorRT or
 * nvidia package, no userland with glibc 2.34 or later (clone3 on the Nano's 4.9 kernel), and run.sh passes the flags
 * the runtime and jetprof need. What the provisioned root really holds is checked by `SUITE=bullseye bash
 * scripts/check-arm64.sh` (not in CI: 45 minutes under qemu).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshDir, requires, ROOT } from './helpers/fixtures.ts';

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
  t.regex(scripts['provision.sh'], /^bash scripts\/setup\.sh \$phase$/m);
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

test('the image is Debian 11 (glibc 2.31: Node 22 runs, no clone3 on the 4.9 kernel) and asks for the runtime mounts', (t) => {
  const docker = read('Dockerfile');
  t.regex(docker, /^ARG NODE_IMAGE=node:22-bullseye/m);
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
    `-e JETPROF_OWNER=${process.getuid!()}:${process.getgid!()}`,
    'jetprof:jetpack4 jetprof selftest',
  ])
    t.true(old.includes(flag), `${flag} in ${old}`);
  t.false(old.includes('csv-mounts=all'), 'JetPack 4.6 ships toolkit 1.7.0, which mounts every CSV');
  t.true(run('1.10.0').includes('-e NVIDIA_REQUIRE_JETPACK=csv-mounts=all'));
  // the checkout is mounted whole even where its path holds ':' (docker -v would split it there)
  const colon = freshDir('jp4-a:b');
  const inColon = spawnSync('bash', [join(DIR, 'run.sh'), '--print', 'jetprof', 'doctor'], {
    cwd: colon,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
  t.is(inColon.status, 0, inColon.stderr);
  // printf %q quotes the argument for the shell; the argument itself is docker's CSV field
  const mount = /--mount (\S+)/.exec(inColon.stdout)![1];
  const unquoted = spawnSync('bash', ['-c', `printf '%s' ${mount}`], { encoding: 'utf8' }).stdout;
  t.is(unquoted, `type=bind,"source=${colon}",target=/work`);
  t.false(run().includes('csv-mounts=all'), 'no toolkit found: nothing to ask');
});

/** board/jetpack4/entrypoint.sh as the container starts it, in `cwd`, with the image's folder `home`. */
function entrypoint(cwd: string, home: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync('bash', [join(DIR, 'entrypoint.sh'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, JETPROF_HOME: home, JETPROF_TRT_SHIM: join(home, 'no-shim.so'), ...env },
  });
}

test("the entrypoint puts the image's weights and sample video into a fresh clone: once, never replacing a file, never through a link planted at their names", (t) => {
  const home = freshDir('jp4-image');
  for (const [f, text] of [
    ['weights/yolov4-tiny.weights', 'the image weights'],
    ['videos/vtest.avi', 'the image video'],
  ]) {
    mkdirSync(join(home, f, '..'), { recursive: true });
    writeFileSync(join(home, f), text);
  }
  const clone = freshDir('jp4-clone');
  mkdirSync(join(clone, 'weights'));
  writeFileSync(join(clone, 'weights/yolov4-tiny.cfg'), '[net]\n');
  const first = entrypoint(clone, home, ['true']);
  t.is(first.status, 0, first.stderr);
  t.regex(first.stderr, /copied the image's weights\/yolov4-tiny\.weights here \(once\)/);
  t.is(readFileSync(join(clone, 'videos/vtest.avi'), 'utf8'), 'the image video');
  // the user's own file stays; a link planted at the name is not written through
  writeFileSync(join(clone, 'weights/yolov4-tiny.weights'), 'my weights');
  const victim = join(freshDir('jp4-victim'), 'victim');
  writeFileSync(victim, 'not yours');
  rmSync(join(clone, 'videos/vtest.avi'));
  symlinkSync(victim, join(clone, 'videos/vtest.avi'));
  const again = entrypoint(clone, home, ['true']);
  t.is(again.status, 0, again.stderr);
  t.notRegex(again.stderr, /copied/);
  t.is(readFileSync(join(clone, 'weights/yolov4-tiny.weights'), 'utf8'), 'my weights');
  t.is(readFileSync(victim, 'utf8'), 'not yours');
  t.deepEqual(readdirSync(join(clone, 'videos')), ['vtest.avi'], 'no partial copy left');
  // the image's own folder is not a clone to fill
  const inImage = entrypoint(home, home, ['true']);
  t.notRegex(inImage.stderr, /copied/);
});

requires(process.getuid?.() === 0, 'needs root, as the container runs')(
  "the entrypoint runs a command as run.sh's user (JETPROF_OWNER, in the video group), and a profile as root (nvprof's counters) with what it wrote given to that user; the exit code is the command's",
  (t) => {
    const home = freshDir('jp4-image-owner');
    const work = freshDir('jp4-owned');
    chmodSync(work, 0o777);
    const env = { JETPROF_OWNER: '65534:65534', JETPROF_GROUPS: '44' };
    const plain = entrypoint(work, home, ['sh', '-c', 'touch plain; id -u; id -G'], env);
    t.is(plain.status, 0, plain.stderr);
    t.deepEqual(plain.stdout.trim().split('\n'), ['65534', '65534 44']);
    t.is(statSync(join(work, 'plain')).uid, 65534);
    const profile = entrypoint(
      work,
      home,
      ['sh', '-c', 'mkdir -p runs/profile && touch runs/profile/log; id -u; exit 3', 'profile'],
      env,
    );
    t.is(profile.status, 3, profile.stderr);
    t.is(profile.stdout.trim(), '0', 'the profile ran as root');
    for (const f of ['runs', 'runs/profile', 'runs/profile/log']) t.is(statSync(join(work, f)).uid, 65534, f);
  },
);

test("build.sh: a Docker without BuildKit's buildx plugin (23 and later) is told what to install; JetPack 4's Docker 20.10 builds; a git pull rebuilds only the project layer", (t) => {
  const bin = freshDir('jp4-docker');
  const log = join(bin, 'calls');
  const build = (server: string) => {
    writeFileSync(
      join(bin, 'docker'),
      `#!/bin/sh\ncase "$1" in buildx) exit 1;; version) echo ${server};; *) echo "$@" >> ${log};; esac\n`,
    );
    chmodSync(join(bin, 'docker'), 0o755);
    return spawnSync('bash', [join(DIR, 'build.sh')], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    });
  };
  const new24 = build('24.0.7');
  t.is(new24.status, 1);
  t.regex(new24.stderr, /^build\.sh: Docker 24\.0\.7 needs the buildx plugin .* sudo apt-get install docker-buildx/);
  const jp4 = build('20.10.21');
  t.is(jp4.status, 0, jp4.stderr);
  t.regex(readFileSync(log, 'utf8'), /^build -t jetprof:jetpack4 -f board\/jetpack4\/Dockerfile \.$/m);
  // the layer the OpenCV binding compiles in is made before the sources are copied: from the lockfile and scripts
  const docker = read('Dockerfile');
  const deps = docker.indexOf('RUN bash board/jetpack4/provision.sh --deps');
  const sources = docker.indexOf('COPY . .');
  t.true(deps > 0 && sources > deps, 'the dependencies layer comes before COPY . .');
  for (const m of docker.slice(0, deps).matchAll(/^COPY (.*) \S+$/gm))
    for (const f of m[1].split(/\s+/))
      t.regex(f, /^(package(-lock)?\.json|scripts\/[\w-]+\.sh|board\/jetpack4\/provision\.sh)$/, f);
  t.regex(docker.slice(sources), /RUN bash board\/jetpack4\/provision\.sh --project/);
  // the image leaves out onnxruntime-node's libraries for other platforms: provision.sh's own lines, run on a tree
  const prune = read('provision.sh')
    .split('\n')
    .filter((l) => l.includes('onnxruntime-node/bin') && !l.startsWith('#'));
  t.is(prune.length, 2, prune.join('\n'));
  const tree = freshDir('jp4-ort');
  for (const d of ['darwin/arm64', 'linux/x64', 'linux/arm64', 'win32/x64'])
    mkdirSync(join(tree, 'node_modules/onnxruntime-node/bin/napi-v6', d), { recursive: true });
  const pruned = spawnSync('bash', ['-c', prune.join('\n')], { cwd: tree, encoding: 'utf8' });
  t.is(pruned.status, 0, pruned.stderr);
  t.deepEqual(readdirSync(join(tree, 'node_modules/onnxruntime-node/bin/napi-v6')), ['linux']);
  t.deepEqual(readdirSync(join(tree, 'node_modules/onnxruntime-node/bin/napi-v6/linux')), [process.arch]);
});

test('setup.sh on JetPack 4 (glibc 2.27) sends its owner to the container instead of asking for a Node it cannot run', (t) => {
  const bin = freshDir('jp4-ldd');
  writeFileSync(join(bin, 'ldd'), '#!/bin/sh\necho "ldd (Ubuntu GLIBC 2.27-3ubuntu1.6) 2.27"\n', { mode: 0o755 });
  const needNode = /^need_node\(\) \{\n[\s\S]*?\n\}$/m.exec(readFileSync(join(ROOT, 'scripts/setup.sh'), 'utf8'))![0];
  const r = spawnSync('bash', ['-c', `${needNode}\nJETPACK=1\nneed_node`], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
  t.is(r.status, 1);
  t.regex(
    r.stderr,
    /^JetPack 4 has glibc 2\.27, which no Node 20 build runs on: use jetprof's container \(bash board\/jetpack4\/build\.sh/,
  );
  t.notRegex(r.stderr, /NodeSource/);
});
