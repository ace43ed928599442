/**
 * `infer` end to end, as a user runs it: the CLI (in the test's process unless the process is the point), real
 * videos made by ffmpeg, real ONNX Runtime and OpenCV, and ffprobe to check what was written.
 */
import test from 'ava';
import { validateSchemaFile } from '../src/schemas/validate.ts';
import { summarize } from '../src/util/stats.ts';
import { createProgress, progressLine } from '../src/cli/progress.ts';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import onnxProto from 'onnx-proto';
import { loadOpenCv } from '../src/video/opencv.ts';
import {
  freshDir,
  inferRun,
  makeModel,
  makeVideo,
  partialsIn,
  SMALL_LAB_CFG,
  probeVideo,
  ROOT,
  runCli,
  type CliResult,
  scratchDir,
  startCli,
} from './helpers/fixtures.ts';

// the small model (SMALL_LAB_CFG): what these tests check does not depend on the model's size
const smallModel = makeModel('small', SMALL_LAB_CFG, 5);

test('a 60-frame run writes a playable 60-frame mp4 at the frame size and a consistent JSON', async (t) => {
  const video = makeVideo('sixty.mp4', 60, 320, 240);
  const dir = freshDir('sixty');
  const out = join(dir, 'out.mp4');
  const json = join(dir, 'run.json');
  const r = await runCli(
    'infer',
    [
      video,
      '--model',
      smallModel.onnxPath,
      '--frame-size',
      '480x270',
      '--output',
      out,
      '--json',
      json,
      '--warmup',
      '5',
    ],
    { cwd: dir },
  );
  t.is(r.code, 0, r.stderr);
  const probe = probeVideo(out);
  t.is(probe.frames, 60);
  t.is(probe.width, 480);
  t.is(probe.height, 270);
  t.true(['h264', 'mpeg4'].includes(probe.codec));
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.schema, 'jetprof.run/2');
  t.notThrows(() => validateSchemaFile(run, json), 'what infer writes follows src/schemas/run-v2.schema.json');
  t.is(run.backend, 'onnx');
  t.is(run.frames, 55);
  t.is(run.warmupFrames, 5);
  t.deepEqual(run.frameSize, [480, 270]);
  t.like(run.video, { width: 320, height: 240, frameCount: 60 });
  t.like(run.model, { inputWidth: 160, inputHeight: 128, classes: 2, generatedWeights: true });
  const sha = createHash('sha256').update(readFileSync(smallModel.onnxPath)).digest('hex');
  t.like(run.model, { sha256: sha, onnxSha256: sha }, "the model's file, hashed (an ONNX is its own ONNX)");
  t.true(run.inferenceFps > 0);
  t.true(run.endToEndFps > 0);
  t.true(run.endToEndFps <= run.inferenceFps, 'end to end cannot be faster than inference alone');
  let stagesTotal = 0;
  for (const s of ['read', 'preprocess', 'inference', 'postprocess', 'write']) {
    const st = run.stages[s];
    t.true(st.p50Ms <= st.p90Ms && st.p90Ms <= st.p99Ms, `${s} percentiles ordered`);
    t.true(Math.abs(st.meanMs * 55 - st.totalMs) < 1e-6 * st.totalMs + 1e-9, `${s} mean x frames = total`);
    t.true(st.totalMs <= run.wallMs + 1e-6, `${s} total ${st.totalMs} <= wall ${run.wallMs}`);
    stagesTotal += st.totalMs;
  }
  // --pipeline auto (the default): ONNX Runtime on the CPU takes every core, so the sequential loop, and it says why
  t.like(run.setup, {
    loop: 'sequential',
    profiler: 'none',
    executionProvider: 'cpu',
    precision: 'fp32',
    label: 'onnx-fp32-cpu-sequential',
  });
  t.regex(r.stderr, /infer: sequential loop \(--pipeline auto: the model runs on the CPU and uses all \d+ cores/);
  t.regex(run.setup.device, /^CPU: /);
  t.true(stagesTotal >= run.stages.inference.totalMs);
  t.true(Math.abs(run.endToEndFps - 55 / (run.wallMs / 1000)) < 1e-9);
  t.true(Math.abs(run.inferenceFps - 55 / (run.stages.inference.totalMs / 1000)) < 1e-9);
  t.regex(
    r.stdout,
    /\| ONNX Runtime \(CPU, FP32\) \| \(480,270,3\) \| \d+\.\d\d \| \d+\.\d\d \|/,
    'the lab row on stdout, named as in reports',
  );
  t.notRegex(r.stderr, /\| ONNX Runtime/, 'progress and notes on stderr, the table not');
  // The per-frame records reproduce every aggregate exactly: the same totals, the same percentiles, the same FPS.
  const pf = run.perFrame;
  t.deepEqual(
    pf.index,
    Array.from({ length: 55 }, (_, i) => i + 5),
  );
  t.deepEqual(run.warmup.index, [0, 1, 2, 3, 4]);
  for (const s of ['read', 'preprocess', 'inference', 'postprocess', 'write']) {
    const { count: _count, ...fromArrays } = summarize(pf[`${s}Ms`]);
    t.deepEqual(run.stages[s], fromArrays, `${s} statistics from perFrame.${s}Ms`);
  }
  t.deepEqual(run.postprocess.draw, (({ count: _c, ...x }) => x)(summarize(pf.drawMs)));
  t.is(run.wallMs, pf.endMs[54] - pf.startMs[0]);
  t.is(run.endToEndFps, 55 / (run.wallMs / 1000));
  t.is(run.inferenceFps, 55 / (pf.inferenceMs.reduce((a: number, b: number) => a + b, 0) / 1000));
  t.is(
    run.detections.total,
    pf.detections.reduce((a: number, b: number) => a + b, 0),
  );
  for (let i = 0; i < 55; i++) {
    t.true(
      pf.startMs[i] <= pf.inferenceStartMs[i] &&
        pf.inferenceStartMs[i] <= pf.postprocessStartMs[i] &&
        pf.postprocessStartMs[i] <= pf.endMs[i],
      `frame ${i}: times in order`,
    );
    t.true(pf.drawMs[i] <= pf.postprocessMs[i], `frame ${i}: drawing is part of postprocess`);
  }
  t.regex(r.stderr, /RANDOM weights/);
  t.deepEqual(partialsIn(dir), []);
});

test("one rule names a run's default video, wherever it is written: one stream, stream i of several, a folder of images, a stream's short name, profile's and compare's out-dir", async (t) => {
  const { defaultOutputPath } = await import('../src/pipeline/infer.ts');
  t.is(defaultOutputPath('videos/vtest.avi', 'onnx'), resolve('vtest-onnx-detected.mp4'));
  t.is(defaultOutputPath('/v/vtest.avi', 'tensorrt', { dir: '/runs/lab' }), '/runs/lab/vtest-tensorrt-detected.mp4');
  t.is(defaultOutputPath('/v/a.mp4', 'opencv', { dir: 'out', stream: 2 }), resolve('out/a-2-opencv-detected.mp4'));
  t.is(defaultOutputPath('rtsp://10.0.0.5:8554/live', 'onnx', { dir: '/o' }), '/o/live-onnx-detected.mp4');
  const images = freshDir('named-images');
  t.is(defaultOutputPath(`${images}/`, 'onnx', { dir: '/o' }), `/o/${basename(images)}-onnx-detected`);
});

test("one function names every file of a command's runs: one stream, --repeat's run k (video, boxes, JSON; the runset under --json, none of a run's JSON on stdout), stream i of several", async (t) => {
  const { runFiles } = await import('../src/cli/infer-prepare.ts');
  const { classifySource } = await import('../src/video/sources.ts');
  const file = (source: string) => ({ source, arg: classifySource(source) });
  const o = { backend: 'onnx' as const, write: true, outputDir: '/o', repeat: 1 };
  t.deepEqual(runFiles({ ...o, json: 'run.json', detections: 'd.json' }, [file('/v/a.mp4')]), {
    runs: [
      {
        streams: [{ ...file('/v/a.mp4'), outputPath: '/o/a-onnx-detected.mp4', detectionsPath: 'd.json' }],
        json: 'run.json',
      },
    ],
  });
  const repeated = runFiles({ ...o, repeat: 2, output: 'x.mp4', json: 'r/run.json', detections: 'd.json' }, [
    file('/v/a.mp4'),
  ]);
  t.is(repeated.runset, 'r/run.json');
  t.deepEqual(
    repeated.runs.map((r) => [r.streams[0].outputPath, r.streams[0].detectionsPath, r.json]),
    [
      ['x-1.mp4', 'd-1.json', 'r/run-1.json'],
      ['x-2.mp4', 'd-2.json', 'r/run-2.json'],
    ],
  );
  const toStdout = runFiles({ ...o, repeat: 2, json: '-' }, [file('/v/a.mp4')]);
  t.deepEqual([toStdout.runset, toStdout.runs.map((r) => r.json)], [undefined, [undefined, undefined]]);
  t.is(runFiles({ ...o, json: '-' }, [file('/v/a.mp4')]).runs[0].json, '-');
  const streams = runFiles({ ...o, detections: 'd.json' }, [file('/v/a.mp4'), file('/v/b.mp4')]).runs[0].streams;
  t.deepEqual(
    streams.map((s) => [s.outputPath, s.detectionsPath]),
    [
      ['/o/a-0-onnx-detected.mp4', 'd-0.json'],
      ['/o/b-1-onnx-detected.mp4', 'd-1.json'],
    ],
  );
  t.deepEqual(
    runFiles({ ...o, write: false }, [file('/v/a.mp4')]).runs[0].streams.map((s) => s.outputPath),
    [undefined],
  );
});

test("one vocabulary: the job's settings carry infer's options under the names infer declares, as parsed", async (t) => {
  const { parseInferArgs } = await import('../src/cli/infer-options.ts');
  const { jobSettings } = await import('../src/cli/infer-prepare.ts');
  const { disabledNvtx } = await import('../src/pipeline/nvtx.ts');
  const { o } = await parseInferArgs(
    ['a.mp4', '--engine', 'e.trt', '--plugin', 'p.so', '--strict', '--batch-timeout', '40', '--warmup', '3'].concat([
      '--ep',
      'cuda',
      '--duration',
      '7',
      '--heads',
      'h.bin',
      '--profiler-attached',
      'nsys',
      '--threads',
      '2',
    ]),
    'tensorrt',
  );
  const run = {
    plan: {} as never,
    nvtx: disabledNvtx('test'),
    shouldStop: () => false,
    onWarning: () => undefined,
    onInfo: () => undefined,
    onFrame: () => undefined,
  };
  const settings = jobSettings(o, run, { streams: [] });
  t.like(settings, {
    backend: 'tensorrt',
    engine: 'e.trt',
    plugin: ['p.so'],
    strict: true,
    batchTimeout: 40,
    warmup: 3,
    ep: 'cuda',
    duration: 7,
    heads: 'h.bin',
    profilerAttached: 'nsys',
    threads: 2,
  });
});

test('the default output name is ./<video>-onnx-detected.mp4 and --no-write writes no video', async (t) => {
  const video = makeVideo('named.mp4', 8, 160, 120);
  const dir = freshDir('named');
  t.is(
    (await runCli('infer-onnx', [video, '--model', smallModel.onnxPath, '--warmup', '2', '-q'], { cwd: dir })).code,
    0,
  );
  t.true(existsSync(join(dir, 'named-onnx-detected.mp4')));
  const dir2 = freshDir('nowrite');
  const r = await runCli('infer', [video, '--model', smallModel.onnxPath, '--no-write', '--json', '-', '-q'], {
    cwd: dir2,
  });
  t.is(r.code, 0, r.stderr);
  t.deepEqual(readdirSync(dir2), []);
  t.is(JSON.parse(r.stdout).frames, 3);
});

// A model whose answer is known: a 64x64 input max-pooled into a 2x2 grid; a 1x1 conv makes objectness high only
// where the red channel is high. One anchor of 32x32 px covers exactly one quadrant.
const RED_DETECTOR_CFG = `[net]
width=64
height=64
channels=3
[maxpool]
size=32
stride=32
padding=0
[convolutional]
filters=6
size=1
stride=1
pad=0
activation=linear
[yolo]
mask=0
anchors=32,32
classes=1
num=1
`;

test('a red square comes out boxed where it is: video -> ONNX Runtime -> decode -> NMS -> drawn frame', async (t) => {
  const model = makeModel('red', RED_DETECTOR_CFG, 1, (w) => {
    const conv = w.convs.get(1)!;
    conv.weights.fill(0);
    conv.biases.fill(0);
    // filter 4 (objectness) over input channels R, G, B (the blob is RGB): 20R - 20G - 20B - 10
    conv.weights.set([20, -20, -20], 4 * 3);
    conv.biases[4] = -10;
    conv.biases[5] = 10; // the one class: always sure
  });
  const dir = freshDir('red');
  const video = join(dir, 'red.mp4');
  // 128x128 black frames with a red square filling the top-right quadrant
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'color=c=black:s=128x128:r=10',
    '-frames:v',
    '6',
    '-vf',
    'drawbox=x=64:y=0:w=64:h=64:color=red:t=fill',
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv444p',
    '-crf',
    '0',
    video,
  ]);
  const out = join(dir, 'boxed.mp4');
  const json = join(dir, 'run.json');
  await inferRun([video, '--model', model.onnxPath, '--output', out, '--json', json, '--warmup', '0', '-q']);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.detections.total, 6, 'one box per frame');
  const cv = loadOpenCv();
  const cap = new cv.VideoCapture(out);
  const frame = cap.read();
  cap.release();
  // The box is (64,0)-(128,64) in frame pixels: its left edge is drawn in class 0's colour (BGR 0,255,0).
  const greenness = (x: number, y: number) => {
    const [b, g, rr] = frame.atRaw(y, x) as unknown as number[];
    return g - Math.max(b, rr);
  };
  const leftEdge = Math.max(...[62, 63, 64, 65, 66].map((x) => greenness(x, 40)));
  t.true(leftEdge > 100, `left edge of the box is green (${leftEdge})`);
  const bottomEdge = Math.max(...[61, 62, 63, 64, 65].map((y) => greenness(96, y)));
  t.true(bottomEdge > 100, `bottom edge of the box is green (${bottomEdge})`);
  // nothing drawn around the empty bottom-left quadrant
  t.true(Math.max(...[30, 31, 32, 33, 34].map((x) => greenness(x, 96))) < 50, 'no box in an empty quadrant');
  t.true(greenness(96, 110) < 50, 'no box below the red square');
  frame.release();
});

function assertBadInput(t: import('ava').ExecutionContext, r: CliResult, file: string, dir: string) {
  t.is(r.code, 2, r.stderr);
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1, `one line: ${r.stderr}`);
  t.true(lines[0].includes(file), `names ${file}: ${lines[0]}`);
  t.regex(lines[0], /fix:/);
  t.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith('.mp4') || f.includes('partial')),
    [],
    'no output left behind',
  );
}

test('bad call - missing video', async (t) => {
  const dir = freshDir('bad-missing');
  assertBadInput(
    t,
    await runCli('infer', ['/nonexistent/clip.mp4', '--model', smallModel.onnxPath, '-q'], { cwd: dir }),
    '/nonexistent/clip.mp4',
    dir,
  );
});

test('bad call - a file that is not a video', async (t) => {
  const dir = freshDir('bad-notvideo');
  const fake = join(scratchDir(), 'notes.mp4');
  writeFileSync(fake, 'this is not a video\n'.repeat(100));
  assertBadInput(t, await runCli('infer', [fake, '--model', smallModel.onnxPath, '-q'], { cwd: dir }), fake, dir);
});

test('bad call - a truncated video (no decodable frame)', async (t) => {
  const dir = freshDir('bad-truncated');
  const good = readFileSync(makeVideo('whole.mp4', 30, 160, 120));
  const cut = join(scratchDir(), 'cut.mp4');
  writeFileSync(cut, good.subarray(0, 2000));
  assertBadInput(t, await runCli('infer', [cut, '--model', smallModel.onnxPath, '-q'], { cwd: dir }), cut, dir);
});

test('bad call - an ONNX model without YOLO metadata, and one whose input is not [batch,3,H,W] float', async (t) => {
  const { onnx } = onnxProto;
  const video = makeVideo('tiny.mp4', 3, 64, 48);
  const dir = freshDir('bad-model');
  const model = onnx.ModelProto.decode(readFileSync(smallModel.onnxPath));
  model.metadataProps = [];
  const bare = join(scratchDir(), 'bare.onnx');
  writeFileSync(bare, onnx.ModelProto.encode(model).finish());
  assertBadInput(t, await runCli('infer', [video, '--model', bare, '-q'], { cwd: dir }), bare, dir);

  const again = onnx.ModelProto.decode(readFileSync(smallModel.onnxPath));
  again.graph!.input![0].type!.tensorType!.shape!.dim![1] = { dimValue: 1 };
  const gray = join(scratchDir(), 'gray.onnx');
  writeFileSync(gray, onnx.ModelProto.encode(again).finish());
  const r = await runCli('infer', [video, '--model', gray, '-q'], { cwd: dir });
  assertBadInput(t, r, gray, dir);
  t.regex(r.stderr, /input must be float \[batch,3,128,160\], found \[batch,1,128,160\]/);
});

test('bad call - a model that is not there: its one line alone, not after the note on the loop chosen', async (t) => {
  const video = makeVideo('tiny-nomodel.mp4', 3, 64, 48);
  const dir = freshDir('bad-nomodel');
  const missing = join(dir, 'missing.onnx');
  const r = await runCli('infer', [video, '--model', missing], { cwd: dir });
  assertBadInput(t, r, missing, dir);
  t.notRegex(r.stderr, /loop \(--pipeline/);
});

test('bad call - an output directory that cannot be made (a file stands where it would go)', async (t) => {
  const video = makeVideo('tiny2.mp4', 3, 64, 48);
  const dir = freshDir('bad-outdir');
  const out = join(video, 'dir', 'out.mp4');
  assertBadInput(
    t,
    await runCli('infer', [video, '--model', smallModel.onnxPath, '--output', out, '-q'], { cwd: dir }),
    out,
    dir,
  );
});

test('--ep cuda without CUDA: one warning line, then the run completes on the CPU', async (t) => {
  const video = makeVideo('ep.mp4', 4, 160, 120);
  const dir = freshDir('ep');
  const json = join(dir, 'run.json');
  const r = await runCli(
    'infer',
    [video, '--model', smallModel.onnxPath, '--ep', 'cuda', '--no-write', '--warmup', '1', '-q', '--json', json],
    { cwd: dir },
  );
  t.is(r.code, 0, r.stderr);
  const warnings = r.stderr
    .trim()
    .split('\n')
    .filter((l) => /execution provider 'cuda' is not available here/.test(l));
  t.is(warnings.length, 1, r.stderr);
  t.regex(warnings[0], /using 'cpu'$/);
  t.regex(JSON.parse(readFileSync(json, 'utf8')).backendDetail, /\(cpu\)/);
});

test("bad call - an unknown option value exits 2 with commander's one-line message", async (t) => {
  const r = await runCli('infer', ['x.mp4', '--conf', '1.5']);
  t.is(r.code, 2);
  t.regex(r.stderr, /--conf must be a number between 0 and 1, got '1\.5'/);
});

test.serial(
  'Ctrl-C finishes the frame in flight, closes a playable video and writes the JSON with interrupted: true',
  async (t) => {
    const video = makeVideo('long.mp4', 600, 320, 240);
    const dir = freshDir('sigint');
    const out = join(dir, 'out.mp4');
    const json = join(dir, 'run.json');
    const run0 = startCli(
      'infer',
      [video, '--model', smallModel.onnxPath, '--output', out, '--json', json, '--warmup', '2'],
      {
        cwd: dir,
      },
    );
    // some measured frames through (the progress lines count them), then Ctrl-C
    await run0.framesDone(10);
    run0.child.kill('SIGINT');
    const code = await run0.exit;
    const stderr = run0.stderr();
    t.is(code, 130, stderr);
    const run = JSON.parse(readFileSync(json, 'utf8'));
    t.true(run.interrupted);
    t.true(run.frames > 0 && run.frames < 598, `frames measured: ${run.frames}`);
    const probe = probeVideo(out);
    t.is(probe.frames, run.frames + run.warmupFrames, 'every frame read was written');
    t.deepEqual(partialsIn(dir), []);
  },
);

test('the real pedestrian clip videos/vtest.avi runs at the lab frame size 960x540', async (t) => {
  const vtest = join(ROOT, 'videos/vtest.avi');
  if (!existsSync(vtest)) return t.fail('videos/vtest.avi is missing: run scripts/fetch-sample-video.sh');
  const dir = freshDir('vtest');
  const json = join(dir, 'vtest.json');
  const args = ['--frame-size', '960x540', '--max-frames', '25', '--output-dir', dir, '--json', json, '-q'];
  await inferRun([vtest, '--model', smallModel.onnxPath, ...args]);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.like(run.video, { width: 768, height: 576, frameCount: 795 });
  t.is(run.frames, 20);
  const probe = probeVideo(join(dir, 'vtest-onnx-detected.mp4'));
  t.like(probe, { width: 960, height: 540, frames: 25 });
});

test('--repeat 3 writes three runs and their spread (jetprof.runset/1); the report shows mean ± std over 3 runs', async (t) => {
  const video = makeVideo('repeat.mp4', 10, 160, 120);
  const dir = freshDir('repeat');
  const json = join(dir, 'onnx.json');
  const r = await runCli(
    'infer',
    [video, '--model', smallModel.onnxPath, '--warmup', '2', '--repeat', '3', '--no-write', '--json', json],
    { cwd: dir },
  );
  t.is(r.code, 0, r.stderr);
  t.deepEqual(readdirSync(dir).sort(), ['onnx-1.json', 'onnx-2.json', 'onnx-3.json', 'onnx.json']);
  const runs = [1, 2, 3].map((k) => JSON.parse(readFileSync(join(dir, `onnx-${k}.json`), 'utf8')));
  for (const run of runs) t.like(run, { schema: 'jetprof.run/2', frames: 8 });
  const set = JSON.parse(readFileSync(json, 'utf8'));
  t.like(set, {
    schema: 'jetprof.runset/1',
    label: 'onnx-fp32-cpu-sequential',
    runs: 3,
    files: ['onnx-1.json', 'onnx-2.json', 'onnx-3.json'],
  });
  const fps = runs.map((x) => x.inferenceFps);
  const mean = (fps[0] + fps[1] + fps[2]) / 3;
  const std = Math.sqrt(fps.reduce((a, v) => a + (v - mean) ** 2, 0) / 2);
  t.true(Math.abs(set.inferenceFps.mean - mean) < 1e-9 && Math.abs(set.inferenceFps.std - std) < 1e-9);
  t.is(set.inferenceFps.min, Math.min(...fps));
  t.true(
    Math.abs(set.inferenceFps.ci95[1] - (mean + (4.303 * std) / Math.sqrt(3))) < 1e-9,
    '95% CI with Student t, 2 degrees of freedom',
  );
  t.is(set.stageP50Ms.inference.max, Math.max(...runs.map((x) => x.stages.inference.p50Ms)));
  t.regex(r.stdout, /3 runs of onnx-fp32-cpu-sequential:\n {2}inference FPS {7}[\d.]+ ± [\d.]+ \(95% CI/);
  const rep = await runCli('jetprof', ['report', '--run', json]);
  t.is(rep.code, 0, rep.stderr);
  t.regex(
    rep.stdout,
    new RegExp(
      `\\| ONNX Runtime \\(CPU, FP32\\) \\| \\(160,120,3\\) \\| ${mean.toFixed(2)} ± ${std.toFixed(2)} \\(3 runs\\) \\|`,
    ),
  );
});

test('the progress line fits the terminal (a wrapped line would print a new line per update) and can show N/N', (t) => {
  const state = { frame: 60, totalFrames: 60, measured: 55, wallMs: 5000, inferenceMs: 4000 };
  for (const columns of [40, 60, 80, 120, 200]) {
    const line = progressLine(state, columns, 6000);
    t.true(line.length <= columns - 1, `${columns} columns: ${line.length} characters`);
    t.true(line.includes('frame 60/60') || columns < 60, line);
  }
  t.regex(progressLine(state, 120, 6000), /^\[#{24}\] frame 60\/60 {2}end-to-end 11\.0 FPS {2}inference 13\.8 FPS$/);
  t.regex(progressLine({ ...state, frame: 30 }, 120, 3000), /ETA 3s$/);
  // several streams: frames per stream and drops so far, the FPS over all of them
  t.regex(
    progressLine({ ...state, streams: [30, 30], dropped: 7 }, 200, 6000),
    /frame 60\/60 {2}aggregate 11\.0 FPS {2}inference 13\.8 FPS {2}per stream 30\/30 {2}dropped 7$/,
  );
  // four streams mid-run on 80 columns: the drops stay on the line; per-stream counts and the time left go first
  const four = { ...state, frame: 1450, totalFrames: 3180, streams: [363, 362, 363, 362], dropped: 1234 };
  const narrow = progressLine(four, 80, 130_000);
  t.true(narrow.length <= 79, narrow);
  t.regex(narrow, /^frame 1450\/3180 {2}aggregate 11\.0 FPS {2}inference 13\.8 FPS {2}dropped 1234 {2}ETA \d+s$/);
  t.regex(progressLine(four, 200, 130_000), /per stream 363\/362\/363\/362 {2}dropped 1234 {2}ETA \d+s$/);
  t.regex(progressLine(four, 60, 130_000), /^frame 1450\/3180 {2}aggregate 11\.0 FPS {2}dropped 1234$/);
  // --duration 20: the run ends on time, so the line counts its seconds, not the file's 3180 frames
  const timed = progressLine({ ...four, frame: 45 }, 160, 8_400, 20);
  t.notRegex(timed, /\/3180/);
  t.regex(timed, /^\[#{10}\.{14}\] frame 45 {2}aggregate .* {2}8 of 20 s$/);
  t.regex(progressLine({ ...four, frame: 200 }, 160, 21_000, 20), /^\[#{24}\] frame 200 .* 20 of 20 s$/);
});

test('JETPROF_PROGRESS=every:S (set by profile and compare for the infer they relay): a plain line every S seconds and the last state at the end', (t) => {
  const written: string[] = [];
  const sink = { write: (s: string) => written.push(s), isTTY: false } as unknown as NodeJS.WriteStream;
  const before = process.env.JETPROF_PROGRESS;
  process.env.JETPROF_PROGRESS = 'every:3600';
  try {
    const p = createProgress(false, sink);
    const state = { frame: 1, totalFrames: 3, measured: 1, wallMs: 100, inferenceMs: 50 };
    p.update(state);
    p.update({ ...state, frame: 2 });
    t.deepEqual(written, [], 'nothing before the period');
    p.update({ ...state, frame: 3 });
    p.done();
    t.is(written.length, 1);
    t.regex(written[0], /^progress: \[.*\] frame 3\/3 /);
  } finally {
    if (before === undefined) delete process.env.JETPROF_PROGRESS;
    else process.env.JETPROF_PROGRESS = before;
  }
});

test('--ep cuda on a Jetson (linux arm64): the line says why onnxruntime-node cannot use the GPU there and what would', async (t) => {
  const { unavailableProviderMessage } = await import('../src/backends/onnx.ts');
  const jetson = unavailableProviderMessage('cuda', 'Failed to load shared library', 'linux', 'arm64');
  t.regex(
    jetson,
    /onnxruntime-node ships CUDA and TensorRT providers for linux x64 only, so on a Jetson \(arm64\) it runs on the CPU; using 'cpu'\. For the GPU use --backend trt/,
  );
  t.false(jetson.includes('\n'));
  t.regex(
    unavailableProviderMessage('cuda', 'Failed to load shared library\nmore', 'linux', 'x64'),
    /^ONNX Runtime execution provider 'cuda' is not available here \(Failed to load shared library\); using 'cpu'$/,
  );
});

test("every run also times the model alone (back-to-back runs on the loop's last input, after the loop, outside its figures; min to max as trtexec gives them), in the run JSON, on the console and in the report, beside each stage's min and max and one stream's latency; --model-alone 0 skips it", async (t) => {
  const dir = join(scratchDir(), 'model-alone');
  mkdirSync(dir, { recursive: true });
  const video = makeVideo('model-alone.mp4', 6, 160, 120);
  const json = join(dir, 'run.json');
  const args = [video, '--model', smallModel.onnxPath, '--warmup', '1', '--no-write'];
  const r = await runCli('infer', [...args, '--json', json]);
  t.is(r.code, 0, r.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.true(run.modelAlone.runs >= 3 && run.modelAlone.runs <= 30, JSON.stringify(run.modelAlone));
  t.is(run.modelAlone.batch, 1);
  // as trtexec gives a bare engine's latency: min, p50, p90, p99, max, in order
  const m = run.modelAlone;
  t.true(
    m.perFrameMs > 0 && m.minMs <= m.p50Ms && m.p50Ms <= m.p90Ms && m.p90Ms <= m.p99Ms && m.p99Ms <= m.maxMs,
    JSON.stringify(m),
  );
  t.is(run.frames, 5, 'the timed runs are not frames of the loop');
  // every stage has its fastest and slowest frame; one free-running stream its latency, read to boxes
  for (const st of Object.values(run.stages) as { minMs: number; p50Ms: number; maxMs: number }[])
    t.true(st.minMs <= st.p50Ms && st.p50Ms <= st.maxMs, JSON.stringify(st));
  t.true(run.latencyMs.p50 > 0 && run.latencyMs.p50 <= run.latencyMs.p90 && run.latencyMs.p90 <= run.latencyMs.p99);
  t.true(run.latencyMs.p99 >= run.stages.inference.minMs, 'a frame waits at least for the model');
  const said = r.stdout.replace(/\s+/g, ' ');
  t.regex(
    said,
    /Model alone [\d.]+ ms a frame \(\d+ back-to-back runs on one frame, min [\d.]+, p50 [\d.]+, p90 [\d.]+, p99 [\d.]+, max [\d.]+ ms a run(; only \d+ runs, so a rough figure)?\); in the loop [\d.]+ ms, (the same|\d+% (slower|faster))/,
  );
  t.regex(said, /\| Stage \| mean \| min \| p50 \| p90 \| p99 \| max \| share of wall \|/);
  t.regex(said, /Latency, a frame's read to its boxes: p50 [\d.]+, p90 [\d.]+, p99 [\d.]+ ms \(5 frames\)\./);
  const rep = await runCli('jetprof', ['report', '--run', json]);
  const page = rep.stdout.replace(/\s+/g, ' ');
  t.regex(page, /- ONNX Runtime \(CPU, FP32\): Model alone [\d.]+ ms a frame/);
  t.regex(page, /- ONNX Runtime \(CPU, FP32\): Latency, a frame's read to its boxes: p50 [\d.]+/);
  t.regex(page, /\| Stage \| mean \| min \| p50 \| p90 \| p99 \| max \| share of wall \|/);
  const skipped = join(dir, 'skipped.json');
  await inferRun([...args, '--json', skipped, '--model-alone', '0']);
  t.is(JSON.parse(readFileSync(skipped, 'utf8')).modelAlone, undefined);
});
