/** bench section 7: see bench/run.ts for what each section measures. */
import { join } from 'node:path';
import { createOnnxSession } from '../../src/backends/onnx.ts';
import { stretchGeometry } from '../../src/detect/geometry.ts';
import { readModelInfo } from '../../src/model/model-info.ts';
import { percentile } from '../../src/util/stats.ts';
import { drawOnFrame } from '../../src/detect/draw.ts';
import type { Detection } from '../../src/detect/types.ts';
import { type Cv, type Mat, loadOpenCv } from '../../src/video/opencv.ts';
import {
  FRAMES,
  THREADS,
  VIDEO,
  WORK,
  benchModel,
  benchPostprocessor,
  log,
  results,
  row,
  runInfer,
  runPeer,
  state,
} from '../common.ts';
import { drawnByOpenCv } from '../../test/helpers/draw-reference.ts';

/**
 * 7. A model that fires almost everywhere (seeded weights, objectness bias +2: about 195,000 candidates a frame at
 * --conf 0.3, all 202,800 at 0.001): postprocess on real vtest frames, end to end against the demo model in both
 * loops, and the Python peer on the same weights. Frames: --frames, else 200.
 */
export async function benchDense() {
  state.section = 7;
  log('7. dense model: postprocess on real frames, end to end vs the demo model, the Python peer');
  const denseWeights = join(WORK, 'yolov4-tiny-seed1-dense.weights');
  const dense = benchModel(denseWeights, 2);
  const frames = FRAMES ?? 200;

  // Postprocess (decode + top-N + NMS, no drawing) on the dense model's real outputs for 20 vtest frames.
  const cv = loadOpenCv();
  const info = readModelInfo(dense);
  const g = stretchGeometry(960, 540, info.inputWidth, info.inputHeight);
  const ort = await createOnnxSession(dense, { threads: THREADS });
  const cap = new cv.VideoCapture(VIDEO);
  const outputs: Map<string, Float32Array>[] = [];
  const frames960: Mat[] = [];
  for (let i = 0; i < 20; i++) {
    const frame = cap.read().resize(540, 960);
    frames960.push(frame);
    for (let k = 0; k < 20; k++) cap.read(); // frames across the clip
    const blob = cv.blobFromImage(frame, 1 / 255, new cv.Size(416, 416), new cv.Vec3(0, 0, 0), true, false);
    const d = blob.flattenFloat(1, 3 * 416 * 416).getData();
    outputs.push((await ort.run(new Float32Array(d.buffer, d.byteOffset, d.byteLength / 4))).outputs);
  }
  cap.release();
  await ort.dispose();
  const postprocess: Record<string, unknown> = {};
  for (const conf of [0.3, 0.001]) {
    const post = benchPostprocessor(info, g, conf);
    const times: number[] = [];
    let candidates = 0;
    for (let rep = 0; rep < 12; rep++) {
      for (const o of outputs) {
        const t0 = performance.now();
        const r = post.run(o);
        if (rep >= 2) times.push(performance.now() - t0);
        candidates = Math.max(candidates, r.candidates);
      }
    }
    const sorted = times.sort((a, b) => a - b);
    postprocess[`conf${conf}`] = {
      frames: outputs.length,
      maxCandidates: candidates,
      msP50: percentile(sorted, 50),
      msP99: percentile(sorted, 99),
      msMax: sorted[sorted.length - 1],
    };
    const p99 = percentile(sorted, 99);
    row(
      `dense postprocess --conf ${conf}: up to ${candidates} candidates, p99 (ms)`,
      p99.toFixed(2),
      '< 5 ms',
      p99 < 5,
    );
  }

  postprocess.drawing = benchDrawing(cv, frames960, outputs, benchPostprocessor(info, g, 0.3), info.labels);

  // End to end: dense vs demo model, both loops.
  const summary = (r: Record<string, any>) => ({
    frames: r.frames,
    inferenceFps: r.inferenceFps,
    endToEndFps: r.endToEndFps,
    postprocessP99Ms: r.stages.postprocess.p99Ms,
    drawMeanMs: r.postprocess.draw.meanMs,
    maxCandidatesSeen: r.postprocess.maxCandidatesSeen,
    framesCandidatesCapped: r.postprocess.framesCandidatesCapped,
    framesDetectionsCapped: r.postprocess.framesDetectionsCapped,
  });
  // three alternating rounds of the three runs (demo, dense at 0.3, dense at 0.001) per loop, each figure the median of
  // its runs: a ratio of two runs made minutes apart would carry the machine's drift between them
  const endToEnd: Record<string, unknown> = {};
  for (const pipeline of ['on', 'off'] as const) {
    const loop = pipeline === 'on' ? 'pipelined' : 'sequential';
    const cases = [
      { key: `demo-${loop}`, run: () => runInfer(pipeline, { frames, conf: 0.3, tag: 'demo' }) },
      ...[0.3, 0.001].map((conf) => ({
        key: `dense-${loop}-conf${conf}`,
        run: () => runInfer(pipeline, { model: dense, conf, tag: 'dense', frames }),
      })),
    ];
    const runs = new Map<string, Record<string, any>[]>(cases.map((c) => [c.key, []]));
    for (let round = 0; round < 3; round++)
      for (let k = 0; k < cases.length; k++) {
        const c = cases[(k + round) % cases.length];
        runs.get(c.key)!.push(c.run());
      }
    const medianOf = (key: string) => {
      const rs = runs.get(key)!;
      const fps = rs.map((r) => r.endToEndFps as number);
      const mid = rs[fps.indexOf([...fps].sort((x, y) => x - y)[(fps.length - 1) >> 1])]; // the median run
      return { ...summary(mid), endToEndFpsRuns: fps, drawMeanMsRuns: rs.map((r) => r.postprocess.draw.meanMs) };
    };
    const demo = medianOf(`demo-${loop}`);
    endToEnd[`demo-${loop}`] = demo;
    for (const conf of [0.3, 0.001]) {
      const d = medianOf(`dense-${loop}-conf${conf}`);
      endToEnd[`dense-${loop}-conf${conf}`] = d;
      const ratio = d.endToEndFps / demo.endToEndFps;
      row(
        `dense / demo end-to-end FPS, ${loop}, --conf ${conf}, medians of 3 alternating (draw ${d.drawMeanMs.toFixed(1)} ms/frame)`,
        `${d.endToEndFps.toFixed(2)} / ${demo.endToEndFps.toFixed(2)} = ${ratio.toFixed(2)}`,
        '>= 0.9',
        ratio >= 0.9,
      );
    }
  }
  // The Python peer (cv2.dnn, best class per box, NMSBoxes, drawing every kept box) on the same dense weights.
  const peer = runPeer(denseWeights, 'dense', 0.3, frames);
  const jet = endToEnd['dense-pipelined-conf0.3'] as { endToEndFps: number };
  results.dense = {
    model: 'yolov4-tiny.cfg, seed 1, objectness bias +2',
    frames,
    postprocess,
    endToEnd,
    pythonPeer: peer
      ? { ...peer, jetprofEndToEndFps: jet.endToEndFps, ratio: jet.endToEndFps / peer.endToEndFps }
      : { skipped: 'python3-opencv is not installed' },
  };
  if (peer)
    row(
      'dense: jetprof / Python peer end-to-end FPS (--conf 0.3)',
      `${jet.endToEndFps.toFixed(2)} / ${peer.endToEndFps.toFixed(2)} = ${(jet.endToEndFps / peer.endToEndFps).toFixed(2)}`,
      '>= 1.5',
      jet.endToEndFps / peer.endToEndFps >= 1.5,
    );
}

/**
 * Drawing the boxes --conf 0.3 keeps on the 20 real frames (--max-det 300) with their labels and the two overlay
 * lines: jetprof's drawing (drawOnFrame) and OpenCV's own calls, box by box (how jetprof drew before), alternating,
 * on copies of the same frames; the two frames are checked pixel for pixel first.
 */
function benchDrawing(
  cv: Cv,
  frames: Mat[],
  outputs: Map<string, Float32Array>[],
  post: ReturnType<typeof benchPostprocessor>,
  labels: readonly string[],
) {
  const overlay = ['trt  so far: inference 24.6 FPS  end-to-end 22.7 FPS', 'RANDOM WEIGHTS: a timing demo'];
  const boxes = outputs.map((o) => post.run(o).detections);
  const ways = {
    jetprof: (frame: Mat, d: Detection[]) => drawOnFrame(cv, frame, d, labels, overlay),
    opencvCalls: (frame: Mat, d: Detection[]) => drawnByOpenCv(cv, frame, d, labels, overlay),
  };
  frames.forEach((frame, i) => {
    const [a, b] = [frame.copy(), frame.copy()];
    ways.jetprof(a, boxes[i]);
    ways.opencvCalls(b, boxes[i]);
    if (a.absdiff(b).cvtColor(cv.COLOR_BGR2GRAY).countNonZero() !== 0)
      throw new Error(`bench 7: drawOnFrame and OpenCV's calls differ on frame ${i}`);
    a.release();
    b.release();
  });
  const times = { jetprof: [] as number[], opencvCalls: [] as number[] };
  for (let rep = 0; rep < 12; rep++)
    frames.forEach((frame, i) => {
      const order = rep % 2 ? (['opencvCalls', 'jetprof'] as const) : (['jetprof', 'opencvCalls'] as const);
      for (const way of order) {
        const copy = frame.copy();
        const t0 = performance.now();
        ways[way](copy, boxes[i]);
        if (rep >= 2) times[way].push(performance.now() - t0);
        copy.release();
      }
    });
  const [jet, calls] = [times.jetprof.sort((x, y) => x - y), times.opencvCalls.sort((x, y) => x - y)];
  const drawn = Math.max(...boxes.map((b) => b.length));
  const result = {
    boxesAFrame: drawn,
    msP50: percentile(jet, 50),
    msP99: percentile(jet, 99),
    opencvCallsMsP50: percentile(calls, 50),
    opencvCallsMsP99: percentile(calls, 99),
  };
  row(
    `dense drawing: ${drawn} labelled boxes a frame, p50 (ms; OpenCV's calls box by box ${result.opencvCallsMsP50.toFixed(2)})`,
    result.msP50.toFixed(2),
    '< 1 ms',
    result.msP50 < 1,
  );
  return result;
}
