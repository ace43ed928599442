/** bench section 1: see bench/run.ts for what each section measures. */
import { readFileSync } from 'node:fs';
import { createOnnxSession } from '../../src/backends/onnx.ts';
import { darknetHeadNames } from '../../src/backends/opencv.ts';
import { convFlops, parseCfg } from '../../src/model/cfg.ts';
import { readModelInfo } from '../../src/model/model-info.ts';
import { loadOpenCv } from '../../src/video/opencv.ts';
import { CFG, THREADS, VIDEO, log, median, onnx, peakGflops, results, row, state, weights } from '../common.ts';

export async function benchInference() {
  state.section = 1;
  log('1. inference: ONNX Runtime vs OpenCV DNN (darknet)');
  const cv = loadOpenCv();
  const cap = new cv.VideoCapture(VIDEO);
  const frames = Array.from({ length: 10 }, () => cap.read().resize(540, 960));
  cap.release();
  const blobs = frames.map((f) =>
    cv.blobFromImage(f, 1 / 255, new cv.Size(416, 416), new cv.Vec3(0, 0, 0), true, false),
  );
  const inputs = blobs.map((b) => {
    const d = b.flattenFloat(1, 3 * 416 * 416).getData();
    return new Float32Array(d.buffer, d.byteOffset, d.byteLength / 4);
  });
  const runs = 30;
  const ort = await createOnnxSession(onnx, { threads: THREADS });
  for (let i = 0; i < 5; i++) await ort.run(inputs[i % inputs.length]);
  const ortMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await ort.run(inputs[i % inputs.length]);
    ortMs.push(performance.now() - t0);
  }
  await ort.dispose();
  cv.setNumThreads(THREADS);
  const net = cv.readNetFromDarknet(CFG, weights);
  // the raw heads (the layers feeding the [yolo] region layers), as infer --backend opencv asks for them
  const outNames = darknetHeadNames(
    net.getLayerNames(),
    readModelInfo(onnx).heads.map((h) => h.output),
  );
  for (let i = 0; i < 5; i++) {
    net.setInput(blobs[i % blobs.length]);
    net.forward(outNames);
  }
  const cvMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    net.setInput(blobs[i % blobs.length]);
    const t0 = performance.now();
    net.forward(outNames);
    cvMs.push(performance.now() - t0);
  }
  const flops = convFlops(parseCfg(readFileSync(CFG, 'utf8'), CFG));
  const peak = peakGflops();
  const ortMed = median(ortMs);
  const cvMed = median(cvMs);
  const ortGflops = flops / (ortMed / 1000) / 1e9;
  results.inference = {
    runs,
    onnxRuntimeMsMedian: ortMed,
    opencvDnnMsMedian: cvMed,
    ratioOpencvOverOrt: cvMed / ortMed,
    modelGflop: flops / 1e9,
    onnxRuntimeGflops: ortGflops,
    opencvDnnGflops: flops / (cvMed / 1000) / 1e9,
    peakGflopsEstimate: peak.gflops,
    peakHow: peak.how,
  };
  row('inference, ONNX Runtime (ms/frame, median)', ortMed.toFixed(1), '', undefined);
  row('inference, OpenCV DNN darknet (ms/frame, median)', cvMed.toFixed(1), 'ORT faster', ortMed < cvMed);
  row(
    'ONNX Runtime GFLOP/s (of est. peak)',
    `${ortGflops.toFixed(1)} (${((ortGflops / peak.gflops) * 100).toFixed(0)}% of ${peak.gflops.toFixed(0)})`,
    '',
    undefined,
  );
}
