/**
 * Preprocessing in the graph (`jetprof export --frame-input WxH`): the model takes the frame's own uint8 BGR bytes and
 * resizes, reorders, scales and lays them out itself, so on a board TensorRT does it on the GPU and the CPU only
 * copies the frame. Checked here with ONNX Runtime on real vtest.avi frames against jetprof's CPU preprocessing.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { checkEngineIo } from '../src/backends/engine-io.ts';
import { stretchGeometry } from '../src/detect/geometry.ts';
import { parseCfg } from '../src/model/cfg.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { exportOnnx } from '../src/model/onnx-export.ts';
import { generateWeights } from '../src/model/weights.ts';
import { cvCalls, modelInput } from '../src/pipeline/preprocess.ts';
import { loadOpenCv } from '../src/video/opencv.ts';
import { boardEngine } from './helpers/board.ts';
import {
  buildCpuEngineLib,
  freshDir,
  inferRun,
  makeModel,
  makeVideo,
  requires,
  ROOT,
  runCli,
  LAB_CFG_160,
} from './helpers/fixtures.ts';

const VTEST = join(ROOT, 'videos', 'vtest.avi');
const withVtest = requires(existsSync(VTEST), 'videos/vtest.avi is missing: bash scripts/fetch-sample-video.sh');

/**
 * A network whose head is its input: one 1x1 convolution copying the three input channels (and three zero ones) to a
 * [yolo] head, so the head's first three planes are exactly what the model was given after preprocessing.
 */
function identityModel(
  netW: number,
  netH: number,
  frame?: { width: number; height: number },
): Promise<ort.InferenceSession> {
  const cfg = parseCfg(
    `[net]\nwidth=${netW}\nheight=${netH}\nchannels=3\n[convolutional]\nfilters=6\nsize=1\nstride=1\npad=0\nactivation=linear\n` +
      '[yolo]\nmask=0\nanchors=10,10\nclasses=1\nnum=1\n',
  );
  const weights = generateWeights(cfg, 1);
  const conv = weights.convs.get(0)!;
  conv.biases.fill(0);
  conv.weights.fill(0);
  for (let c = 0; c < 3; c++) conv.weights[c * 3 + c] = 1;
  return ort.InferenceSession.create(Buffer.from(exportOnnx(cfg, weights, frame ? { frameInput: frame } : {}).bytes));
}

withVtest(
  "the graph's preprocessing on real vtest frames: within 0.8 of a level (of 255) of jetprof's CPU preprocessing when it resizes, identical when it does not",
  async (t) => {
    const cv = loadOpenCv();
    const cap = new cv.VideoCapture(VTEST);
    const frames = Array.from({ length: 8 }, () => {
      const f = cap.read();
      for (let k = 0; k < 60; k++) cap.read(); // frames across the clip
      return f;
    });
    cap.release();
    const [fw, fh] = [frames[0].cols, frames[0].rows];
    // 768x576 frames into the lab's 416x416 and into a 768x576 network (no resize: only cast, order, scale, layout)
    for (const [w, h, bound] of [
      [416, 416, 0.8 / 255],
      [fw, fh, 0],
    ] as const) {
      const cpu = await identityModel(w, h);
      const graph = await identityModel(w, h, { width: fw, height: fh });
      let max = 0;
      let sum = 0;
      for (const frame of frames) {
        const g = stretchGeometry(fw, fh, w, h);
        const plain = { inputWidth: w, inputHeight: h } as Parameters<typeof modelInput>[2];
        const a = (await modelInput(cvCalls(cv), [{ frame, g }], plain)).input as Float32Array;
        const b = (await modelInput(cvCalls(cv), [{ frame, g }], { ...plain, frameInput: { width: fw, height: fh } }))
          .input;
        t.true(b instanceof Uint8Array && b.length === fw * fh * 3, "the frame-input model is given the frame's bytes");
        const ra = (await cpu.run({ input: new ort.Tensor('float32', a, [1, 3, h, w]) })).yolo_1.data as Float32Array;
        const rb = (await graph.run({ input: new ort.Tensor('uint8', b, [1, fh, fw, 3]) })).yolo_1.data as Float32Array;
        for (let i = 0; i < 3 * w * h; i++) {
          const d = Math.abs(ra[i] - rb[i]);
          max = Math.max(max, d);
          sum += d;
        }
      }
      const mean = sum / (frames.length * 3 * w * h);
      t.log(
        `${fw}x${fh} -> ${w}x${h}: largest difference ${(max * 255).toFixed(3)} levels, mean ${(mean * 255).toFixed(3)}`,
      );
      t.true(max <= bound, `largest difference ${max} (${(max * 255).toFixed(3)} levels) within ${bound * 255} levels`);
      // the resize differs by OpenCV's rounding of its resized bytes (half a level at most, a quarter on average)
      if (bound > 0) t.true(mean > 0 && mean < 0.35 / 255, `mean difference ${(mean * 255).toFixed(3)} levels`);
      await Promise.all([cpu.release(), graph.release()]);
    }
  },
);

withVtest(
  'infer with a --frame-input model finds the boxes the CPU-preprocessed model finds (100% matched on vtest), in both loops, and the run says where preprocessing ran',
  async (t) => {
    const dir = freshDir('frame-input');
    const model = makeModel('frame-input', LAB_CFG_160, 2, undefined, 0);
    const exported = (frame: string[], out: string) =>
      runCli('jetprof', ['export', '--cfg', model.cfgPath, '--weights', model.weightsPath, ...frame, '--out', out]);
    const plain = join(dir, 'plain.onnx');
    const framed = join(dir, 'framed.onnx');
    t.is((await exported([], plain)).code, 0);
    const r = await exported(['--frame-input', '768x576'], framed);
    t.is(r.code, 0, r.stderr);
    t.regex(r.stderr, /input frame 768x576 uint8 BGR, preprocessed in the graph to 160x128/);
    t.deepEqual(readModelInfo(framed).frameInput, { width: 768, height: 576 });
    const run = async (modelPath: string, name: string, extra: string[] = []) => {
      const json = join(dir, `${name}.json`);
      const common = ['--max-frames', '60', '--warmup', '2', '--conf', '0.4', '--no-write', '-q'];
      const dets = join(dir, `${name}-d.json`);
      await inferRun([VTEST, '--model', modelPath, ...common, ...extra, '--json', json, '--detections', dets]);
      const detections = JSON.parse(readFileSync(dets, 'utf8')) as { image_id: number }[];
      return { json, run: JSON.parse(readFileSync(json, 'utf8')), detections };
    };
    const cpu = await run(plain, 'cpu');
    const graph = await run(framed, 'graph');
    const piped = await run(framed, 'graph-pipelined', ['--pipeline', 'on']);
    t.is(cpu.run.setup.preprocessing, 'cpu');
    t.like(graph.run.setup, { preprocessing: 'graph', label: 'onnx-fp32-cpu-sequential-graphpre' });
    t.is(piped.run.setup.preprocessing, 'graph');
    t.deepEqual(
      graph.detections,
      piped.detections,
      'one path for a frame: both loops give the graph model the same input',
    );
    const agreeJson = join(dir, 'agree.json');
    const a = await runCli('jetprof', ['agree', cpu.json, graph.json, '--json', agreeJson, '--min-match', '1']);
    t.is(a.code, 0, a.stdout + a.stderr);
    const agreement = JSON.parse(readFileSync(agreeJson, 'utf8'));
    t.true(agreement.matched >= 30, `${agreement.matched} boxes matched`);
    t.is(agreement.matchedShare, 1);
    t.true(agreement.maxAbsScoreDiff < 0.002, `scores within ${agreement.maxAbsScoreDiff}`);
    // the report names it beside the model
    const report = await runCli('jetprof', ['report', '--run', cpu.json, '--run', graph.json]);
    t.is(report.code, 0, report.stderr);
    t.regex(report.stdout, /network input 160x128, preprocessing in the graph/);
  },
);

test('a --frame-input model: OpenCV DNN and --letterbox are refused in one line; a TensorRT engine must take its uint8 frames', async (t) => {
  const dir = freshDir('frame-input-bad');
  const model = makeModel('frame-input', LAB_CFG_160, 2, undefined, 0);
  const framed = join(dir, 'framed.onnx');
  const r = await runCli('jetprof', [
    ...['export', '--cfg', model.cfgPath, '--weights', model.weightsPath, '--frame-input', '320x240'],
    ...['--out', framed],
  ]);
  t.is(r.code, 0, r.stderr);
  const video = join(ROOT, 'videos', 'vtest.avi');
  const opencv = await runCli('infer', [
    video,
    '--backend',
    'opencv',
    '--model',
    framed,
    '--no-write',
    '--max-frames',
    '8',
  ]);
  t.is(opencv.code, 2, opencv.stderr);
  t.regex(
    opencv.stderr,
    /framed\.onnx: takes the frame's own bytes \(export --frame-input\), which OpenCV DNN does not run/,
  );
  const boxed = await runCli('infer', [video, '--model', framed, '--letterbox', '--no-write', '--max-frames', '8']);
  t.is(boxed.code, 2, boxed.stderr);
  t.regex(boxed.stderr, /resizes the frame in its graph \(export --frame-input\), without --letterbox's padding/);

  const info = readModelInfo(framed);
  const outputs = info.heads.map((h) => ({
    name: h.output,
    isInput: false,
    dtype: 0,
    dims: [1, 21, h.gridH, h.gridW],
    bytes: 0,
  }));
  const engine = (dtype: number, dims: number[]) => [
    { name: 'input', isInput: true, dtype, dims, bytes: 0 },
    ...outputs,
  ];
  t.notThrows(() => checkEngineIo('e.trt', engine(5, [1, 240, 320, 3]), info));
  t.throws(() => checkEngineIo('e.trt', engine(0, [1, 3, 128, 160]), info), {
    message: /e\.trt: input input is float32 1x3x128x160, not uint8 NxHxWx3/,
  });
  t.throws(() => checkEngineIo('e.trt', engine(5, [1, 480, 640, 3]), info), {
    message: /e\.trt expects input 1x480x640x3 but the model takes 320x240 frames \(input shape mismatch\)/,
  });
});

test("TensorRT's binding gives a --frame-input engine the frame's bytes (the CPU stand-in of the C ABI with a uint8 input): every frame through, the run says the graph preprocessed", async (t) => {
  const dir = freshDir('frame-input-trt');
  const model = makeModel('frame-input', LAB_CFG_160, 2, undefined, 0);
  const framed = join(dir, 'framed.onnx');
  const video = makeVideo('frame-input-trt.mp4', 12, 320, 240);
  const r = await runCli('jetprof', [
    ...['export', '--cfg', model.cfgPath, '--weights', model.weightsPath, '--frame-input', '320x240'],
    ...['--out', framed],
  ]);
  t.is(r.code, 0, r.stderr);
  // each output value is the engine's constant 5 (a box in every cell), whatever the input
  const engine = boardEngine(join(dir, 'framed.trt'), framed, { gpuMs: [1, 0], outputValue: 5 });
  t.regex(readFileSync(engine, 'utf8'), /^input input 5 1 240 320 3$/m, 'the engine takes uint8 1x240x320x3');
  const json = join(dir, 'run.json');
  const env = { JETPROF_TRT_SHIM: buildCpuEngineLib() };
  const run = await runCli('infer-trt', [video, '--engine', engine, '--model', framed, '--no-write', '--json', json], {
    env,
  });
  t.is(run.code, 0, run.stderr);
  const result = JSON.parse(readFileSync(json, 'utf8'));
  t.like(result.setup, { preprocessing: 'graph', executionProvider: 'tensorrt' });
  t.is(result.frames + result.warmupFrames, 12);
  t.true(result.detections.total > 0, "the engine's outputs were decoded into boxes");
});
