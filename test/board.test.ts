/**
 * The lab as it runs on a Jetson, through the board stand-in (test/helpers/board.ts): TensorRT through jetprof's real
 * koffi binding and backends/tensorrt.ts, the CPU ABI library standing in for the shim, each run of the engine taking
 * the declared "GPU" time asleep and replaying ONNX Runtime's head outputs recorded on the same frames. Every timing
 * assertion here is a lower bound the stand-in guarantees (it sleeps at least the declared time) or a relation between
 * figures of the same run, so a loaded machine makes it slower, never wrong.
 */
import test from 'ava';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOARDS, boardEngine, recordHeads } from './helpers/board.ts';
import {
  buildCpuEngineLib,
  lastLines,
  makeModel,
  makeVideo,
  SMALL_LAB_CFG,
  quickCapacityArgs,
  requires,
  runCli,
  scratchDir,
} from './helpers/fixtures.ts';

const dir = join(scratchDir(), 'board');
mkdirSync(dir, { recursive: true });
const shim = { JETPROF_TRT_SHIM: buildCpuEngineLib() };
// a model that fires (objectness bias 0), so there are boxes to agree on
const model = makeModel('board', SMALL_LAB_CFG, 9, undefined, 0);
const FRAMES = 24;
const video = makeVideo('board.mp4', FRAMES, 320, 240);
const replay = recordHeads({ video, model: model.onnxPath, frames: FRAMES, out: join(dir, 'heads.bin') });
const nanoMs = BOARDS['nano-lab'].gpuMs;
const common = [video, '--warmup', '2', '--max-det', '20'];

async function engine(name: string, gpuMs: [number, number], batch = 1): Promise<string> {
  return boardEngine(join(dir, name), model.onnxPath, { gpuMs, replay: await replay, batch });
}

const run = (json: string) => JSON.parse(readFileSync(json, 'utf8'));
const stageSum = (r: { stages: Record<string, { meanMs: number }> }) =>
  ['read', 'preprocess', 'inference', 'postprocess', 'write'].reduce((s, k) => s + r.stages[k].meanMs, 0);

test('the lab on the stand-in at the Nano figure: compare runs both backends in one loop, prints the TensorRT vs ONNX Runtime speed-up, boxes 100% matched, and says TensorRT alone would have pipelined', async (t) => {
  const nano = await engine('nano.trt', [nanoMs, 0]);
  const out = join(dir, 'lab');
  const r = await runCli(
    'jetprof',
    [
      'compare',
      video,
      '--engine',
      nano,
      '--backends',
      'onnx,tensorrt',
      '--out-dir',
      out,
      '--',
      '--model',
      model.onnxPath,
      ...common.slice(1),
    ],
    { env: shim },
  );
  t.is(r.code, 0, r.stderr);
  const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
  t.regex(md, /\| TensorRT \(FP16\) \| \(320,240,3\) \| [\d.]+ \| [\d.]+ \|/);
  // the faster first (at the Nano's figure this small model runs faster on an x86 CPU than on the stand-in)
  t.regex(
    md,
    /- (TensorRT \(FP16\) vs ONNX Runtime \(CPU, FP32\)|ONNX Runtime \(CPU, FP32\) vs TensorRT \(FP16\)): [\d.]+x inference, [\d.]+x end to end/,
  );
  t.notRegex(md, /not compared: .*TensorRT/);
  t.regex(md, /TensorRT alone would run the pipelined loop \(--pipeline auto: the model runs on the GPU/);
  const trt = run(join(out, 'run_trt.json'));
  const onnx = run(join(out, 'run_onnx.json'));
  t.is(trt.setup.loop, 'sequential');
  t.is(onnx.setup.loop, 'sequential');
  // the stand-in's inference is at least its declared GPU time (it sleeps), and TensorRT's boxes are ONNX Runtime's
  t.true(trt.stages.inference.p50Ms >= nanoMs, `${trt.stages.inference.p50Ms} ms`);
  t.regex(md, /\| TensorRT \(FP16\) \| 100\.00% \(\d+\)/);
});

test('--pipeline auto pipelines TensorRT; where the CPU stages fit inside the GPU time, its steady end-to-end FPS (frame ends) is at least 0.9x inference FPS; the sequential loop gives one over the sum of its stages', async (t) => {
  const nano = await engine('nano-auto.trt', [nanoMs, 0]);
  const auto = join(dir, 'auto.json');
  const r = await runCli('infer-trt', [...common, '--engine', nano, '--no-write', '--json', auto], { env: shim });
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /pipelined loop \(--pipeline auto: the model runs on the GPU/);
  const p = run(auto);
  t.is(p.setup.loop, 'pipelined');
  // the pipelined loop's CPU stages run beside the inference: read + preprocess, and postprocess + write
  const ms = (st: string) => p.stages[st].meanMs as number;
  const slowestCpu = Math.max(ms('read') + ms('preprocess'), ms('postprocess') + ms('write'));
  // steady state, from the frames' ends (the wall time also holds the pipeline's fill and drain, a frame or two of
  // 22, which a loaded machine stretches): a frame leaves every inference time where the CPU stages fit inside it
  const ends = p.perFrame.endMs as number[];
  const steadyFps = ((ends.length - 1) / (ends[ends.length - 1] - ends[0])) * 1000;
  if (slowestCpu < ms('inference'))
    t.true(steadyFps >= 0.9 * p.inferenceFps, `${steadyFps} vs ${p.inferenceFps} (CPU stage ${slowestCpu} ms)`);
  else t.true(steadyFps >= (0.9 * 1000) / slowestCpu, `${steadyFps} FPS, slowest CPU stage ${slowestCpu} ms`);
  const seq = join(dir, 'seq.json');
  t.is(
    (
      await runCli('infer-trt', [...common, '--engine', nano, '--no-write', '--pipeline', 'off', '--json', seq], {
        env: shim,
      })
    ).code,
    0,
  );
  const s = run(seq);
  t.is(s.setup.loop, 'sequential');
  const predicted = 1000 / stageSum(s);
  t.true(s.endToEndFps <= predicted * 1.001 && s.endToEndFps >= predicted * 0.9, `${s.endToEndFps} vs ${predicted}`);
});

test('jetprof report given both loops of both backends prints one comparison per loop', async (t) => {
  const nano = await engine('nano-loops.trt', [nanoMs, 0]);
  const files: string[] = [];
  for (const [backend, loop] of [
    ['onnx', 'off'],
    ['trt', 'off'],
    ['onnx', 'on'],
    ['trt', 'on'],
  ]) {
    const json = join(dir, `loops-${backend}-${loop}.json`);
    const args = [
      ...common,
      '--backend',
      backend,
      '--pipeline',
      loop,
      '--no-write',
      '--json',
      json,
      '--model',
      model.onnxPath,
    ];
    const r = await runCli('infer', backend === 'trt' ? [...args, '--engine', nano] : args, { env: shim });
    t.is(r.code, 0, r.stderr);
    files.push(json);
  }
  const rep = await runCli('jetprof', ['report', ...files.flatMap((f) => ['--run', f])]);
  t.is(rep.code, 0, rep.stderr);
  const speedups = rep.stdout
    .split('\n')
    .filter((l) => /^- (TensorRT .* vs ONNX Runtime|ONNX Runtime .* vs TensorRT) .*x inference/.test(l));
  t.is(speedups.length, 2, rep.stdout);
  t.true(
    speedups.some((l) => (l.match(/sequential\]/g) ?? []).length === 2) &&
      speedups.some((l) => (l.match(/pipelined3\]/g) ?? []).length === 2),
    speedups.join('\n'),
  );
});

test('several streams in batches: a run of the engine takes its declared time for its batch (fixed + per image), and each image gets its own recorded outputs', async (t) => {
  const b1 = await engine('b1.trt', [10, 20], 1);
  const b2 = await engine('b2.trt', [10, 20], 2);
  const figures: Record<string, { perBatchMs: { p50: number } }> = {};
  for (const [name, eng, batch] of [
    ['b1', b1, '1'],
    ['b2', b2, '2'],
  ] as const) {
    const json = join(dir, `streams-${name}.json`);
    const r = await runCli(
      'infer-trt',
      [...common, '--streams', '2', '--batch', batch, '--engine', eng, '--no-write', '--json', json],
      {
        env: shim,
      },
    );
    t.is(r.code, 0, r.stderr);
    figures[name] = run(json).batches;
  }
  t.true(figures.b1.perBatchMs.p50 >= 10 + 20 * 1, `batch 1: ${figures.b1.perBatchMs.p50} ms`);
  t.true(figures.b2.perBatchMs.p50 >= 10 + 20 * 2, `batch 2: ${figures.b2.perBatchMs.p50} ms`);
  t.true(figures.b2.perBatchMs.p50 > figures.b1.perBatchMs.p50);
});

test('--interval 2 on the stand-in: the GPU time is spent on the inferred frames only', async (t) => {
  const nano = await engine('nano-interval.trt', [nanoMs, 0]);
  const json = join(dir, 'interval.json');
  const r = await runCli('infer-trt', [...common, '--interval', '2', '--engine', nano, '--no-write', '--json', json], {
    env: shim,
  });
  t.is(r.code, 0, lastLines(r.stderr));
  // the console names the loop that ran (it said "pipelined" while the sequential loop ran)
  t.regex(
    r.stderr,
    /infer: sequential loop \(--pipeline auto: --interval 2: the sequential loop, the one that runs several streams and these settings/,
  );
  const j = run(json);
  t.is(j.setup.loop, 'sequential');
  t.is(j.inferredFrames, Math.ceil(FRAMES / 3));
  const inferred = j.perFrame.inferred.filter((x: number) => x === 1).length;
  t.true(
    j.stages.inference.totalMs >= inferred * nanoMs,
    `${j.stages.inference.totalMs} ms for ${inferred} inferred frames`,
  );
});

// with koffi's default async stack (128 KiB) this open dies of SIGSEGV, exit 139 (checked by hand on the built dist)
test("an engine whose open uses 1 MiB of stack, as CUDA's and cuDNN's initializers may on a board, opens and runs: koffi's async calls get a thread's 8 MiB", async (t) => {
  const deep = boardEngine(join(dir, 'deep-stack.trt'), model.onnxPath, { gpuMs: [1, 0], stackKib: 1024 });
  const r = await runCli(
    'infer-trt',
    [...common, '--engine', deep, '--batch', '1', '--max-frames', '4', '--no-write'],
    {
      env: shim,
    },
  );
  t.is(r.code, 0, r.stderr);
});

/** jetprof capacity at 10 FPS, a p99 of 2 s and one 2 s run per count, on a stand-in engine of batch 1. */
const capacity = async (eng: string, json: string) =>
  await runCli('jetprof', quickCapacityArgs(video, 10, json, ['--backend', 'trt'], ['--engine', eng, '--batch', '1']), {
    env: shim,
  });

test('jetprof capacity moves with the board: an engine slower than the frame interval holds no stream; a fast one holds at least as many', async (t) => {
  const slow = await engine('slow.trt', [250, 0]);
  const fast = await engine('fast.trt', [BOARDS['xavier-nx'].gpuMs, 0]);
  const answers: number[] = [];
  for (const eng of [slow, fast]) {
    const json = join(dir, `cap-${answers.length}.json`);
    const r = await capacity(eng, json);
    t.is(r.code, 0, r.stderr);
    answers.push(run(json).maxStreams);
  }
  t.is(answers[0], 0, '250 ms a frame cannot keep 10 FPS');
  t.true(answers[1] >= answers[0]);
});

test('an infer that dies of a fault: capacity and compare name the signal; capacity shows the end of what infer printed (its native stack) and names the command to run by hand', async (t) => {
  const crashing = boardEngine(join(dir, 'crashing.trt'), model.onnxPath, { gpuMs: [1, 0], faultAtRun: 3 });
  const json = join(dir, 'cap-crash.json');
  const r = await capacity(crashing, json);
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, /infer with 1 stream\(s\) died of SIGSEGV \(exit 139\)/);
  // the stand-in's null pointer, in the worker thread that ran the engine, with the library on the stack
  t.regex(r.stderr, /\[crash report\] SEGV at address 0x0 in thread \d+ of process \d+; native stack:/);
  t.regex(r.stderr, /libjetprof_cpu_engine_abi\.so\(jp_engine_infer\+0x[0-9a-f]+\)/);
  t.regex(
    r.stderr,
    new RegExp(
      `run that infer command by hand to see why: infer-trt ${video} --engine ${crashing} --batch 1 --streams 1 --realtime --source-fps 10 --duration 2 --warmup 5 --no-write --model-alone 0\\)$`,
      'm',
    ),
  );
  t.false(existsSync(json), 'no answer, no file');
  // compare: the backend's row says the signal (the last line it printed is the end of a native stack)
  const out = join(dir, 'crash-compare');
  const c = await runCli(
    'jetprof',
    ['compare', video, '--engine', crashing, '--backends', 'tensorrt', '--out-dir', out, '--', '--batch', '1'],
    {
      env: shim,
    },
  );
  t.not(c.code, 0, c.stderr);
  t.regex(
    readFileSync(join(out, 'REPORT.md'), 'utf8'),
    /TensorRT failed: exit code 139; its last line: died of SIGSEGV/,
  );
});

const nsysThere = existsSync('/usr/bin/nsys') || existsSync('/usr/local/bin/nsys');
requires(
  nsysThere,
  'nsys is not installed (bash scripts/setup.sh --profilers)',
  true,
)('jetprof profile under real nsys: the inference ranges of the stand-in show its GPU wait', async (t) => {
  const nano = await engine('nano-nsys.trt', [nanoMs, 0]);
  const out = join(dir, 'nsys');
  const r = await runCli(
    'jetprof',
    [
      'profile',
      '--tool',
      'nsys',
      '--out-dir',
      out,
      '--',
      '--backend',
      'trt',
      video,
      '--engine',
      nano,
      '--max-frames',
      '10',
      '--warmup',
      '2',
      '--no-write',
    ],
    { env: shim, timeout: 900_000 },
  );
  t.is(r.code, 0, lastLines(r.stderr));
  const profile = JSON.parse(readFileSync(join(out, 'profile_trt_nsys.json'), 'utf8'));
  const nvtx = profile.nsys.reports.nvtx_sum.rows as { range: string; instances: number; avgNs: number }[];
  const inference = nvtx.find((x) => /(^|:)inference$/.test(x.range));
  t.truthy(inference, JSON.stringify(nvtx.map((x) => x.range)));
  t.is(inference!.instances, 8);
  t.true(inference!.avgNs >= nanoMs * 1e6, `${inference!.avgNs} ns`);
});
