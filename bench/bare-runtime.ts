/**
 * The "bare runtime" row of `npm run bench`: the same ONNX Runtime session jetprof opens (createOnnxSession, same
 * options and threads), run back to back on one real preprocessed vtest frame, nothing else in the process. Prints
 * JSON {runs, meanMs, medianMs}. Usage: node --import=tsx bench/bare-runtime.ts MODEL.onnx THREADS RUNS
 */
import { createOnnxSession } from '../src/backends/onnx.ts';
import { stretchGeometry } from '../src/detect/geometry.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { cvCalls, preprocessFrame } from '../src/pipeline/preprocess.ts';
import { percentile } from '../src/util/stats.ts';
import { loadOpenCv } from '../src/video/opencv.ts';

const [model, threads, runs] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 100)];
const cv = loadOpenCv();
const cap = new cv.VideoCapture(new URL('../videos/vtest.avi', import.meta.url).pathname);
const frame = cap.read().resize(540, 960);
cap.release();
const info = readModelInfo(model);
const { input } = await preprocessFrame(
  cvCalls(cv),
  frame,
  stretchGeometry(960, 540, info.inputWidth, info.inputHeight),
);
const session = await createOnnxSession(model, { threads });
for (let i = 0; i < 5; i++) await session.run(input);
const ms: number[] = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  await session.run(input);
  ms.push(performance.now() - t0);
}
await session.dispose();
process.stdout.write(
  `${JSON.stringify({
    runs,
    meanMs: ms.reduce((a, b) => a + b, 0) / runs,
    medianMs: percentile(
      ms.sort((a, b) => a - b),
      50,
    ),
  })}\n`,
);
