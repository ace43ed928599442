/**
 * The pipelined frame loop against the sequential one: the same frames, written in the same order, the same
 * statistics in the run JSON; ORT in a worker thread gives the same outputs as in the main thread.
 */
import test from 'ava';
import { chooseLoop } from '../src/pipeline/loop-choice.ts';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOnnxSession } from '../src/backends/onnx.ts';
import { createOnnxWorkerSession } from '../src/backends/onnx-worker.ts';
import {
  inferRun,
  makeModel,
  makeVideo,
  SMALL_LAB_CFG,
  probeVideo,
  ROOT,
  scratchDir,
  TSX_IMPORT,
} from './helpers/fixtures.ts';

const model = makeModel('pipeline', SMALL_LAB_CFG, 11);

/** Frames of a video as small grey images (bottom half only: the FPS overlay at the top differs between runs). */
function greyFrames(path: string, w = 64, h = 24): Uint8Array[] {
  const raw = execFileSync(
    'ffmpeg',
    [
      '-v',
      'error',
      '-i',
      path,
      '-vf',
      `crop=iw:ih/2:0:ih/2,scale=${w}:${h}`,
      '-pix_fmt',
      'gray',
      '-f',
      'rawvideo',
      '-',
    ],
    { maxBuffer: 1 << 28 },
  );
  const frames: Uint8Array[] = [];
  for (let o = 0; o + w * h <= raw.length; o += w * h) frames.push(raw.subarray(o, o + w * h));
  return frames;
}

const meanAbsDiff = (a: Uint8Array, b: Uint8Array) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0) / a.length;

test("pipeline on and off: the same frames in the same order, and run JSONs that agree (frames resized by --frame-size and preprocessed on libuv's pool in the one, on the loop's thread in the other)", async (t) => {
  const video = makeVideo('pipeline.mp4', 30, 320, 240);
  const dir = scratchDir();
  const runs: Record<string, { json: Record<string, any>; out: string }> = {};
  for (const mode of ['on', 'off']) {
    const out = join(dir, `pipeline-${mode}.mp4`);
    const json = join(dir, `pipeline-${mode}.json`);
    await inferRun([
      video,
      '--model',
      model.onnxPath,
      '--pipeline',
      mode,
      '--warmup',
      '3',
      '--frame-size',
      '288x216',
      '-q',
      '-o',
      out,
      '--json',
      json,
    ]);
    runs[mode] = { json: JSON.parse(readFileSync(json, 'utf8')), out };
  }
  const on = runs.on.json;
  const off = runs.off.json;
  t.like(on.setup, { loop: 'pipelined', inFlight: 3, label: 'onnx-fp32-cpu-pipelined3' });
  t.like(off.setup, { loop: 'sequential', label: 'onnx-fp32-cpu-sequential' });
  t.false('inFlight' in off.setup);
  t.deepEqual(on.perFrame.detections, off.perFrame.detections, 'frame by frame, the same number of boxes');
  t.deepEqual(on.perFrame.candidates, off.perFrame.candidates);
  t.is(on.frames, 27);
  t.is(off.frames, 27);
  t.deepEqual(on.detections, off.detections, 'same model, same frames: same detections');
  t.regex(on.backendDetail, /in a worker thread/);
  for (const j of [on, off]) {
    t.true(j.endToEndFps <= j.inferenceFps * 1.0001);
    for (const s of ['read', 'preprocess', 'inference', 'postprocess', 'write'])
      t.true(j.stages[s].totalMs <= j.wallMs + 1e-6, `${s} within the wall time`);
  }
  const offSum = ['read', 'preprocess', 'inference', 'postprocess', 'write'].reduce(
    (a, s) => a + off.stages[s].totalMs,
    0,
  );
  t.true(offSum <= off.wallMs + 1e-6, `sequential: the stages (${offSum} ms) fit in the wall time (${off.wallMs} ms)`);
  t.like(probeVideo(runs.on.out), { frames: 30, width: 288, height: 216 });
  const a = greyFrames(runs.on.out);
  const b = greyFrames(runs.off.out);
  t.is(a.length, 30);
  for (let i = 0; i + 1 < a.length; i++) {
    const same = meanAbsDiff(a[i], b[i]);
    const next = meanAbsDiff(a[i], b[i + 1]);
    t.true(
      same < next,
      `frame ${i}: closer to the sequential run's frame ${i} (${same.toFixed(2)}) than to ${i + 1} (${next.toFixed(2)})`,
    );
  }
});

test('ONNX Runtime in a worker thread returns what it returns on the main thread', async (t) => {
  const main = await createOnnxSession(model.onnxPath);
  const worker = await createOnnxWorkerSession(model.onnxPath);
  const input = new Float32Array(3 * 128 * 160).map((_, i) => ((i * 7919) % 256) / 255);
  const [x, y] = await Promise.all([main.run(input), worker.run(input)]);
  t.deepEqual([...y.outputs.keys()], [...x.outputs.keys()]);
  for (const [name, data] of x.outputs) t.deepEqual(y.outputs.get(name), data, name);
  // Several requests in flight come back each with its own result.
  const inputs = [0, 0.5, 1].map((v) => new Float32Array(input.length).fill(v));
  const results = await Promise.all(inputs.map((i) => worker.run(i)));
  const again = await worker.run(inputs[1]);
  t.deepEqual(results[1].outputs.get(main.outputNames[0]), again.outputs.get(main.outputNames[0]));
  t.notDeepEqual(results[0].outputs.get(main.outputNames[0]), results[2].outputs.get(main.outputNames[0]));
  await main.dispose();
  await worker.dispose();
});

test('bad model in the worker: the error comes back as one line', async (t) => {
  const bad = join(scratchDir(), 'not-a-model.onnx');
  execFileSync('sh', ['-c', `echo garbage > ${bad}`]);
  await t.throwsAsync(createOnnxWorkerSession(bad), {
    message: /not-a-model\.onnx: ONNX Runtime cannot load this model/,
  });
});

test('--pipeline auto: sequential when the model runs on the CPU and takes its cores, pipelined on a GPU or with cores to spare', (t) => {
  const cpu = chooseLoop({ mode: 'auto', backend: 'onnx', executionProvider: 'cpu', cores: 2 });
  t.false(cpu.pipelined);
  t.regex(cpu.why!, /runs on the CPU and uses all 2 cores/);
  t.false(
    chooseLoop({ mode: 'auto', backend: 'opencv', executionProvider: 'cpu', cores: 6 }).pipelined,
    'OpenCV DNN on the CPU too',
  );
  t.false(
    chooseLoop({ mode: 'auto', backend: 'opencv', executionProvider: 'cuda', cores: 6, openCvHasCuda: () => false })
      .pipelined,
    'OpenCV without CUDA falls back to the CPU',
  );
  t.true(
    chooseLoop({ mode: 'auto', backend: 'opencv', executionProvider: 'cuda', cores: 6, openCvHasCuda: () => true })
      .pipelined,
  );
  t.true(
    chooseLoop({ mode: 'auto', backend: 'tensorrt', executionProvider: 'cpu', cores: 4 }).pipelined,
    'TensorRT runs on the GPU',
  );
  t.true(chooseLoop({ mode: 'auto', backend: 'onnx', executionProvider: 'cuda', cores: 4 }).pipelined);
  t.true(
    chooseLoop({ mode: 'auto', backend: 'onnx', executionProvider: 'cpu', threads: 2, cores: 8 }).pipelined,
    'six cores to spare',
  );
  t.false(
    chooseLoop({ mode: 'auto', backend: 'onnx', executionProvider: 'cpu', threads: 1, cores: 2 }).pipelined,
    'one spare core is not enough',
  );
  t.deepEqual(
    chooseLoop({ mode: 'on', backend: 'onnx', executionProvider: 'cpu', cores: 2 }),
    { pipelined: true },
    'on and off are obeyed, without a reason',
  );
  t.deepEqual(chooseLoop({ mode: 'off', backend: 'tensorrt', executionProvider: 'tensorrt', cores: 2 }), {
    pipelined: false,
  });
});

test('one latency clock for every stream kind: a live or paced frame counts from its arrival, a file frame from its read, in one aligned column; no latency is negative or missing', async (t) => {
  const { LoopTally } = await import('../src/pipeline/loop-tally.ts');
  const { streamFigures } = await import('../src/pipeline/frame-tail.ts');
  const tally = new LoopTally(0, []);
  const ms = (v: number) => BigInt(Math.round(v * 1e6));
  const clock = (index: number, start: number, capture?: number) => ({
    index,
    t0: ms(start),
    tInference: ms(start + 5),
    tPostprocess: ms(start + 25),
    tEnd: ms(start + 30),
    ...(capture !== undefined ? { tCapture: ms(capture) } : {}),
    readMs: 5,
    preprocessMs: 0,
    inferenceMs: 20,
    postprocessMs: 2,
    drawMs: 0,
    writeMs: 3,
  });
  const post = { detections: [], candidates: 0 } as never;
  const result = { outputs: [] } as never;
  // stream 0 a file (read at 0, 40, 80), stream 1 live (arrived 10 ms before its read), taking turns
  tally.record({ clock: clock(0, 0), result, post, stream: 0 });
  tally.record({ clock: clock(0, 40, 30), result, post, stream: 1 });
  tally.record({ clock: clock(1, 80), result, post, stream: 0 });
  tally.record({ clock: clock(1, 120, 110), result, post, stream: 1 });
  const p = tally.measured;
  t.is(p.captureMs?.length, p.startMs.length, 'the column has one entry per frame');
  const file = streamFigures(p, 0);
  const live = streamFigures(p, 1);
  t.is(file.latencyMs.p50, 27, 'a file frame: from its read to its boxes');
  t.is(live.latencyMs.p50, 37, 'a live frame: from its arrival (10 ms before the read) to its boxes');
  for (const f of [file, live]) t.true(f.latencyMs.p99 >= 0 && Number.isFinite(f.latencyMs.p99));
});

test("ONNX Runtime's telemetry client stays off (no $TMPDIR/mat-debug-<pid>.log), in the main thread and in the worker; a user's own ORT_DISABLE_TELEMETRY is kept", async (t) => {
  const script = join(scratchDir(), 'ort-telemetry.mts');
  writeFileSync(
    script,
    [
      `import { createOnnxSession } from ${JSON.stringify(join(ROOT, 'src/backends/onnx.ts'))};`,
      `import { createOnnxWorkerSession } from ${JSON.stringify(join(ROOT, 'src/backends/onnx-worker.ts'))};`,
      `const s = process.argv[3] === 'worker' ? await createOnnxWorkerSession(process.argv[2]) : await createOnnxSession(process.argv[2]);`,
      'await s.dispose();',
      'console.log(process.pid);',
    ].join('\n'),
  );
  // ONNX Runtime leaves its client off by itself where one of these says it runs under CI: without them the
  // child runs as on a user's machine, so that the first two checks are not true by default
  const dropped = new Set([
    'ORT_DISABLE_TELEMETRY',
    'CI',
    'TF_BUILD',
    'GITHUB_ACTIONS',
    'GITLAB_CI',
    'CIRCLECI',
    'TRAVIS',
    'JENKINS_URL',
    'CODEBUILD_BUILD_ID',
    'BUILDKITE',
    'TEAMCITY_VERSION',
    'APPVEYOR',
    'BITBUCKET_BUILD_NUMBER',
  ]);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !dropped.has(k)));
  const telemetryLog = (where: string, extra: NodeJS.ProcessEnv = {}) => {
    const pid = execFileSync(process.execPath, [TSX_IMPORT, script, model.onnxPath, where], {
      env: { ...env, ...extra },
      encoding: 'utf8',
    }).trim();
    const log = join(tmpdir(), `mat-debug-${pid}.log`); // where the library writes it: $TMPDIR, else /tmp
    const there = existsSync(log);
    rmSync(log, { force: true });
    return there;
  };
  t.false(telemetryLog('main'));
  t.false(telemetryLog('worker'));
  // the check can fail: with the user's ORT_DISABLE_TELEMETRY=0 the library writes its log
  t.true(telemetryLog('main', { ORT_DISABLE_TELEMETRY: '0' }));
});
