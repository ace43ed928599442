/**
 * The JetPack 4 route from clone to lab table, rehearsed as written: every line of docs/JETPACK4.md's command block
 * ("The commands, in order") runs in a fresh clone, in order, with nothing else typed. What only a board has is
 * stood in for:
 * - run.sh runs each command through the container's entrypoint on this machine (JETPROF_REHEARSE=1) instead of
 *   `docker run`; the image's /opt/jetprof is a folder holding what the image keeps (the weights setup.sh fetched:
 *   seeded ones here, as no trained weights are reachable; the sample video: the first frames of the real vtest.avi)
 *   and the commands on PATH run this checkout, as setup.sh's wrappers run the image's;
 * - TensorRT is the CPU ABI library (test/native/cpu_engine_abi.c) at the Nano's FP16 figure, its engine written by a
 *   stand-in trtexec that records ONNX Runtime's outputs on the video, so both backends find the same boxes;
 * - nvprof is a stand-in that runs the application and writes a summary (the real one stops it here: no GPU).
 * The clone and the image's build (Docker) are the two lines not run: the test copies the files git tracks, and the
 * image's userland is checked by scripts/check-arm64.sh. What only a board can check is in docs/JETPACK4.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOARDS } from './helpers/board.ts';
import { nvprofStandIn, trtexecStandIn } from './helpers/board-standins.ts';
import { buildCpuEngineLib, freshDir, requires, ROOT, runCli, YOLOV4_TINY_CFG } from './helpers/fixtures.ts';
import { cliCommand } from '../src/util/process.ts';

const VTEST = join(ROOT, 'videos', 'vtest.avi');
const FRAMES = 12;

/** The command lines of the sh block under `heading` in a document of this checkout. */
function commandBlock(doc: string, heading: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const at = text.indexOf(heading);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(at));
  if (at < 0 || !block) throw new Error(`${doc}: no sh block under "${heading}"`);
  return block[1].split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
}

/** A fresh clone's files: what git tracks, as this checkout has them now (its uncommitted edits included). */
function cloneInto(dir: string): void {
  mkdirSync(dir, { recursive: true });
  // tar keeps the links and modes git keeps; a tracked file deleted in this checkout is left out, as a commit would
  execFileSync(
    'bash',
    [
      '-c',
      'git ls-files -z | while IFS= read -r -d "" f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\\0" "$f"; done | tar --null -T - -cf - | tar -xf - -C "$1"',
      'clone',
      dir,
    ],
    { cwd: ROOT },
  );
}

requires(existsSync(VTEST), 'videos/vtest.avi is missing: bash scripts/fetch-sample-video.sh')(
  "the JetPack 4 route as docs/JETPACK4.md writes it, in a fresh clone with the board's stand-ins: every line runs, and it ends in the lab's table (TensorRT beside ONNX Runtime, the same boxes, the speed-up) with the profile",
  async (t) => {
    const route = commandBlock('docs/JETPACK4.md', '## The commands, in order');
    // the README's board section is the route's beginning, word for word, so it is rehearsed too
    const readme = commandBlock('README.md', '## On a Jetson Nano (JetPack 4.6)');
    for (const line of readme) t.true(route.includes(line), `README's "${line}" is a line of docs/JETPACK4.md's route`);
    const work = freshDir('board-route');
    const clone = join(work, 'jetprof');
    cloneInto(clone);
    t.false(existsSync(join(clone, 'weights/yolov4-tiny.weights')), 'a fresh clone has no weights');
    // the image's /opt/jetprof: the weights setup.sh fetched and the sample video provision.sh kept
    const image = join(work, 'image');
    mkdirSync(join(image, 'videos'), { recursive: true });
    const made = await runCli('jetprof', [
      'make-weights',
      '--cfg',
      YOLOV4_TINY_CFG,
      '--seed',
      '1',
      '--objectness-bias',
      '0',
      '--out',
      join(image, 'weights/yolov4-tiny.weights'),
    ]);
    t.is(made.code, 0, made.stderr);
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-i',
      VTEST,
      '-frames:v',
      String(FRAMES),
      '-c:v',
      'mpeg4',
      '-q:v',
      '2',
      join(image, 'videos/vtest.avi'),
    ]);
    // the commands on PATH, as setup.sh writes them (here running this checkout: the tests' build, else its sources)
    const bin = join(work, 'bin');
    mkdirSync(bin);
    for (const name of ['jetprof', 'infer', 'infer-onnx', 'infer-trt', 'infer-opencv'])
      writeFileSync(
        join(bin, name),
        `#!/bin/sh\nexec ${cliCommand(name)
          .map((a) => `"${a}"`)
          .join(' ')} "$@"\n`,
        { mode: 0o755 },
      );
    const env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      JETPROF_REHEARSE: '1',
      JETPROF_HOME: image,
      JETPROF_TRT_SHIM: buildCpuEngineLib(),
      JETPROF_CPU_ENGINE_RUNTIME: '8201', // JetPack 4.6's TensorRT 8.2.1, which the stand-in trtexec builds for
      JETPROF_TRTEXEC: trtexecStandIn(work, {
        gpuMs: [BOARDS['nano-fp16'].gpuMs, 0],
        replay: {
          video: join(clone, 'videos/vtest.avi'),
          frames: FRAMES,
          frameSize: [960, 540],
          out: join(work, 'heads.bin'),
        },
      }),
      JETPROF_NVPROF: nvprofStandIn(work),
    };
    const ran: string[] = [];
    for (const line of route) {
      if (/^git clone /.test(line) || /board\/jetpack4\/build\.sh/.test(line)) continue;
      const started = Date.now();
      const r = spawnSync('bash', ['-c', line], { cwd: clone, env, encoding: 'utf8', timeout: 600_000 });
      t.log(`${((Date.now() - started) / 1000).toFixed(1)} s: ${line.slice(0, 90)}`);
      if (ran.length === 0)
        t.regex(r.stderr, /copied the image's weights\/yolov4-tiny\.weights here \(once\)/, 'the first start');
      t.is(r.status, 0, `${line}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-3000)}`);
      if (r.status !== 0) return;
      ran.push(line);
    }
    t.deepEqual(
      route.filter((l) => !ran.includes(l)).map((l) => l.split(/\s+/).slice(0, 2).join(' ')),
      ['git clone', 'bash board/jetpack4/build.sh'],
      'every other line ran',
    );
    // the entrypoint put the image's inputs into the clone
    t.true(statSync(join(clone, 'videos/vtest.avi')).size > 0);
    const lab = readFileSync(join(clone, 'runs/LAB.md'), 'utf8');
    // the lab's table: both rows, every box matched, the speed-up (which way it goes depends on this machine's CPU
    // against the Nano's GPU figure), and the TensorRT profile
    t.regex(lab, /\| TensorRT \(FP16\) \| \(960,540,3\) \| [\d.]+ \| [\d.]+ \|/);
    t.regex(lab, /\| ONNX Runtime \(CPU, FP32\) \| \(960,540,3\) \| [\d.]+ \| [\d.]+ \|/);
    t.regex(lab, /\| TensorRT \(FP16\) \| 100\.00% \(\d+\) \|/);
    t.regex(
      lab,
      /^- (TensorRT \(FP16\) vs ONNX Runtime|ONNX Runtime \(CPU, FP32\) vs TensorRT) .*: [\d.]+x inference/m,
    );
    t.regex(lab, /## Profiles\n\n### trt-fp16-\S+-nvprof \(profile_trt_nvprof\.json\)/);
    t.true(existsSync(join(clone, 'runs/lab.html')));
    t.true(readdirSync(join(clone, 'runs/selftest')).includes('SELFTEST.md'));
  },
);
