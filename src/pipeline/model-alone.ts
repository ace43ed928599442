/**
 * The model by itself, as trtexec times a bare engine: back-to-back runs on one preprocessed frame after the loop,
 * left out of every loop figure. Beside the loop's inference stage it says what the other stages cost the model
 * (cores, memory bandwidth, an encoder's threads working during the next inference).
 */
import type { DetectorSession } from '../backends/types.ts';
import { percentile } from '../util/stats.ts';
import type { Cv } from '../video/opencv.ts';
import { batchBlob } from './loop-io.ts';
import type { ModelAlone } from './figures.ts';

/**
 * `runs` timed runs of the session on one gray frame (letterbox grey, the network's size), repeated `batch` times
 * in the blob as the loop batches; stops early once `budgetMs` is spent (at least 3 runs). Undefined for runs 0.
 */
export async function timeModelAlone(
  session: DetectorSession,
  cv: Cv,
  net: { width: number; height: number },
  batch: number,
  runs: number,
  budgetMs = 1000,
): Promise<ModelAlone | undefined> {
  if (runs <= 0) return undefined;
  const n = session.batchSize === 'dynamic' ? batch : session.batchSize;
  const frame = new cv.Mat(net.height, net.width, cv.CV_8UC3, [127, 127, 127]);
  const { input, blob } = batchBlob(
    cv,
    Array.from({ length: n }, () => frame),
    net.width,
    net.height,
  );
  await session.run(input, blob); // the loop warmed the model; one run settles this input
  const times: number[] = [];
  const start = process.hrtime.bigint();
  while (times.length < runs) {
    const t0 = process.hrtime.bigint();
    await session.run(input, blob);
    const t1 = process.hrtime.bigint();
    times.push(Number(t1 - t0) / 1e6);
    if (times.length >= 3 && Number(t1 - start) / 1e6 > budgetMs) break;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const meanMs = times.reduce((a, b) => a + b, 0) / times.length;
  return {
    runs: times.length,
    batch: n,
    meanMs,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    perFrameMs: meanMs / n,
  };
}
