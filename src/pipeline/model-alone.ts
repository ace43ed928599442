/**
 * The model by itself, as trtexec times a bare engine: back-to-back runs on the loop's last input after the loop,
 * left out of every loop figure. Beside the loop's inference stage it says what the other stages cost the model
 * (cores, memory bandwidth, an encoder's threads working during the next inference).
 */
import type { DetectorSession } from '../backends/types.ts';
import { spreadMs, summarize } from '../util/stats.ts';
import type { ModelAlone } from './figures.ts';
import type { LastInput } from './loop-result.ts';

/**
 * `runs` timed runs of the session on the last input the loop gave it (one preprocessed frame, or the last batch),
 * after one untimed run; stops early once `budgetMs` is spent (at least 3 runs). Undefined for runs 0 or no input.
 */
export async function timeModelAlone(
  session: DetectorSession,
  last: LastInput | undefined,
  runs: number,
  budgetMs = 1000,
): Promise<ModelAlone | undefined> {
  if (runs <= 0 || !last) return undefined;
  const { input, blob } = last;
  await session.run(input, blob);
  const times: number[] = [];
  const start = process.hrtime.bigint();
  while (times.length < runs) {
    const t0 = process.hrtime.bigint();
    await session.run(input, blob);
    const t1 = process.hrtime.bigint();
    times.push(Number(t1 - t0) / 1e6);
    if (times.length >= 3 && Number(t1 - start) / 1e6 > budgetMs) break;
  }
  const s = summarize(times);
  return {
    runs: times.length,
    batch: last.images,
    ...spreadMs(s),
    perFrameMs: s.meanMs / last.images,
  };
}
