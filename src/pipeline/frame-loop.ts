/**
 * The sequential frame loop: read -> preprocess -> inference -> postprocess (decode, NMS, draw) -> write, one
 * frame at a time, each stage timed with process.hrtime.bigint() and wrapped in an NVTX range inside a `frame`
 * range. Warm-up frames run the same path but are left out of every statistic.
 */
import type { DetectorSession } from '../backends/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import {
  drawFrame,
  finishLoop,
  type FrameLoopOptions,
  type FrameLoopResult,
  noFrameDecoded,
  openLoopIo,
  preprocessFrame,
  pushPopRanges,
  rangeName,
  readNextFrame,
} from './loop-io.ts';
import { LoopTally } from './loop-tally.ts';
import { nsToMs } from './stages.ts';

export async function runFrameLoop(
  session: DetectorSession,
  model: YoloModelInfo,
  o: FrameLoopOptions,
): Promise<FrameLoopResult> {
  const io = openLoopIo(model, o);
  const { cv, source, resize, g, sink } = io;
  const tally = new LoopTally(o.warmupFrames, model.labels, o.keepBoxes);
  let framesRead = 0;
  let interrupted = false;
  let endOfStream = false;
  const totalFrames = o.maxFrames
    ? Math.min(o.maxFrames, source.info.frameCount || o.maxFrames)
    : source.info.frameCount;
  const { nvtx } = o;
  const ranges = pushPopRanges(nvtx);
  try {
    for (;;) {
      if (o.maxFrames !== undefined && framesRead >= o.maxFrames) break;
      if (o.shouldEnd?.()) break;
      if (o.shouldStop()) {
        interrupted = true;
        break;
      }
      const t0 = process.hrtime.bigint();
      tally.begin(t0);
      const frame = (
        await readNextFrame(() => source.read(), source.info.frameCount, framesRead, ranges, resize, o.warmupFrames)
      )?.frame;
      if (!frame) {
        endOfStream = true;
        break;
      }
      const name = (n: string) => rangeName(n, framesRead, o.warmupFrames);
      const t1 = process.hrtime.bigint();
      nvtx.push(name('preprocess'));
      const { input, blob } = preprocessFrame(cv, frame, g);
      nvtx.pop();
      const t2 = process.hrtime.bigint();
      nvtx.push(name('inference'));
      const result = await session.run(input, blob);
      nvtx.pop();
      const t3 = process.hrtime.bigint();
      nvtx.push(name('postprocess'));
      const frameResult = io.post.run(result.outputs);
      const drawMs = drawFrame(io, frame, frameResult.detections, tally, session.backend, model);
      nvtx.pop();
      const t4 = process.hrtime.bigint();
      nvtx.push(name('write'));
      sink?.write(frame);
      nvtx.pop();
      const t5 = process.hrtime.bigint();
      nvtx.pop();
      tally.record(
        {
          index: framesRead,
          t0,
          tInference: t2,
          tPostprocess: t3,
          tEnd: t5,
          readMs: nsToMs(t1 - t0),
          preprocessMs: nsToMs(t2 - t1),
          inferenceMs: nsToMs(t3 - t2),
          postprocessMs: nsToMs(t4 - t3),
          drawMs,
          writeMs: nsToMs(t5 - t4),
        },
        result,
        frameResult,
      );
      framesRead++;
      o.onFrame?.(tally.progress(framesRead, totalFrames));
    }
    if (framesRead === 0 && !interrupted) throw noFrameDecoded(o.videoPath);
  } catch (e) {
    sink?.abort();
    source.close();
    throw e;
  }
  return { ...(await finishLoop(io, tally, framesRead, interrupted)), endOfStream };
}
