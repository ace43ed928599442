/**
 * The sequential loop, for one source or several (`infer A.mp4 B.mp4`, `--streams N`: the DeepStream way of asking how
 * many cameras a board holds). Each turn forms a batch: the next frame of each of up to `--batch` streams (one stream:
 * its next frame; how frames are read, paced and waited for is `stream-reads.ts`); the batch is preprocessed into one
 * blob and inferred in one run of the model, then each frame goes through the tail every loop shares
 * (`frame-tail.ts`: postprocess, draw, write, record). A stream that ends leaves the others running. A frame's
 * preprocess and inference times are its share of its batch's (the batch's time over its frames), so the stages of
 * all frames add up to the wall time; the batches' own times are kept apart (`batches`).
 */
import { type DetectorSession, imageOutputs, type InferenceResult } from '../backends/types.ts';
import { IouTracker } from '../detect/tracker.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { sumOf } from '../util/stats.ts';
import { finishFrame, finishStreams, type TailContext } from './frame-tail.ts';
import { abortStreams, type LoopIo, noFrameDecoded, planned } from './loop-shared.ts';
import { type LoopOptions } from './loop-options.ts';
import { pushPopRanges, type RangeKind, type RangeName, type RangeOps, startEndRanges, warmRange } from './nvtx.ts';
import { ModelStep } from './model-step.ts';
import { LoopTally } from './loop-tally.ts';
import { type StreamFrame, StreamReads } from './stream-reads.ts';
import { WriteBehind } from './frame-writes.ts';
import { turnEventLoop } from '../util/process.ts';
import type { BatchRecord, LoopResult } from './loop-result.ts';

/**
 * deepstream-app's **PERF lines: a header naming the columns once, then each stream's FPS over the last interval and
 * (in brackets) since the start.
 */
function perfPrinter(o: LoopOptions, streams: number) {
  const counts = Array.from({ length: streams }, () => ({ last: 0, total: 0 }));
  const start = process.hrtime.bigint();
  let at = start;
  let headed = false;
  return {
    count(i: number) {
      counts[i].last++;
      counts[i].total++;
    },
    maybePrint() {
      if (!o.perf) return;
      const now = process.hrtime.bigint();
      const s = Number(now - at) / 1e9;
      if (s < o.perf.everyS) return;
      const all = Number(now - start) / 1e9;
      if (!headed) o.perf.onPerf(`**PERF:  ${counts.map((_, i) => `FPS ${i} (Avg)`).join('\t')}`);
      headed = true;
      o.perf.onPerf(
        `**PERF:  ${counts.map((c) => `${(c.last / s).toFixed(2)} (${(c.total / all).toFixed(2)})`).join('\t')}`,
      );
      for (const c of counts) c.last = 0;
      at = now;
    },
  };
}

/** One frame's share of its batch's device timings (h2d, compute, d2h), or undefined when the backend gave none. */
function deviceShare(result: InferenceResult, n: number): InferenceResult['device'] {
  const d = result.device;
  return d && n > 0 ? { h2dMs: d.h2dMs / n, gpuComputeMs: d.gpuComputeMs / n, d2hMs: d.d2hMs / n } : undefined;
}

/**
 * The frames the model runs on (all, unless --interval) preprocessed into one blob and run through the model at once
 * (model-step.ts, which waits for the encoder first and hands it the frames written so far after). Nothing runs when
 * no frame of the batch is inferred.
 */
async function runBatch(
  step: ModelStep,
  ios: LoopIo[],
  inferred: StreamFrame[],
  name: (stage: RangeKind) => RangeName,
) {
  if (inferred.length === 0) return undefined;
  const frames = inferred.map((m) => ({ frame: m.frame, g: ios[m.stream].g }));
  const pre = await step.preprocess(frames, name('preprocess'));
  return { ...(await step.run(pre.input, inferred.length, name('inference'))), preprocessMs: pre.ms };
}

/** What finishing a frame needs of the run: its streams, tally, model, ranges and writer (frame-tail.ts). */
function tailContext(
  ios: readonly LoopIo[],
  tally: LoopTally,
  session: DetectorSession,
  model: YoloModelInfo,
  o: LoopOptions,
  ranges: RangeOps,
  writes: WriteBehind,
): TailContext {
  return {
    ios,
    tally,
    backend: session.backend,
    model,
    warmupFrames: o.warmup,
    ranges,
    trackers: o.interval ? ios.map(() => new IouTracker()) : undefined,
    boxes: o.keepBoxes ? ios.map(() => []) : undefined,
    streamColumn: !!o.streamColumn,
    onHeads: o.onHeads,
    writes,
  };
}

/** The frames the run will read over all streams, for the progress line (0 where a source does not say). */
function framesToRead(ios: LoopIo[], o: LoopOptions): number {
  const count = (io: LoopIo) =>
    o.maxFrames ? Math.min(o.maxFrames, io.source.info.frameCount || o.maxFrames) : io.source.info.frameCount;
  return sumOf(ios.map(count));
}

/** The sequential loop over the streams the job opened (`ios`, loop-shared.ts openStreams); it closes them. */
export async function runSequentialLoop(
  session: DetectorSession,
  model: YoloModelInfo,
  o: LoopOptions,
  ios: LoopIo[],
): Promise<LoopResult> {
  const tally = new LoopTally(o.warmup, model.labels);
  // --batch B: one frame from each of up to B streams goes through the model in one run
  const batchSize = Math.min(planned(o.batch, 'batch'), ios.length);
  const batched = batchSize > 1;
  // one frame at a time: nested ranges; a batch: its frames' ranges overlap (read one after the other, inferred
  // together, written one after the other), so they are start/end ranges
  const ranges: RangeOps = batched ? startEndRanges(o.nvtx) : pushPopRanges(o.nvtx);
  // each frame is written after the model's next run and its encoding waited for before the run after that
  const writes = new WriteBehind(tally, ranges);
  const tail = tailContext(ios, tally, session, model, o, ranges, writes);
  const reads = new StreamReads(ios, o, { batched, ranges, begin: (t) => tally.begin(t) });
  const perf = perfPrinter(o, ios.length);
  const totalFrames = framesToRead(ios, o);
  let interrupted = false;
  let framesRead = 0;
  let inferredFrames = 0;
  const batches: BatchRecord[] = [];
  // one input alive at a time: the model has run on it before the next batch is preprocessed
  const step = new ModelStep(session, model, ranges, writes, { cv: ios[0].cv, alive: 1, pooled: false });
  try {
    while (!reads.allDone) {
      perf.maybePrint();
      // Rule (signals): a signal is heard between frames whatever the backend; OpenCV DNN's run() gives the event loop
      // no turn, so without this Ctrl-C waits for the whole video (test/signals.test.ts, the OpenCV DNN backend)
      await turnEventLoop();
      if (o.shouldStop()) {
        interrupted = true;
        break;
      }
      if (o.shouldEnd?.()) break;
      // --duration bounds the wall time: a wait for a frame still to come ends with it
      const members = await reads.gather(batchSize, () => o.shouldStop() || !!o.shouldEnd?.());
      if (members.length === 0) continue;
      const allWarmup = members.every((m) => m.index < o.warmup);
      const batchRange = batched
        ? ranges.open(warmRange(`batch streams ${members.map((m) => m.stream).join(',')}`, allWarmup))
        : undefined;
      // preprocess and infer the frames the model runs on (all, unless --interval) in one run
      const inferred = members.filter((m) => m.inferHere);
      const batchName = (n: RangeKind) => warmRange(n, allWarmup);
      const run = await runBatch(step, ios, inferred, batchName);
      // a turn the model skipped (--interval): the frames drawn before go to their encoders all the same
      if (!run) writes.handOff();
      const n = inferred.length;
      inferredFrames += n;
      if (run) batches.push({ images: n, inferenceMs: run.ms, measured: !allWarmup });
      // a frame's share of its batch's preprocess, inference and device timings, so the stages of all frames add up
      const share = (x: number) => (n > 0 ? x / n : 0);
      const device = run && deviceShare(run.result, n);
      for (const m of members) {
        await finishFrame(tail, {
          ...m,
          tInference: run?.tInference ?? 0n,
          preprocessMs: share(run?.preprocessMs ?? 0),
          inferenceMs: share(run?.ms ?? 0),
          outputs: run && m.inferHere ? imageOutputs(run.result.outputs, inferred.indexOf(m), n) : undefined,
          device,
        });
        framesRead++;
        perf.count(m.stream);
        o.onFrame?.({
          ...tally.progress(framesRead, totalFrames),
          ...(o.streamColumn
            ? { streams: reads.state.map((s) => s.index), dropped: sumOf(reads.state.map((s) => s.dropped)) }
            : {}),
        });
      }
      if (batched) ranges.close(batchRange);
    }
    await reads.settle();
    writes.finish();
    if (framesRead === 0 && !interrupted) throw noFrameDecoded(o.streams.map((s) => s.source).join(', '));
  } catch (e) {
    await reads.settle();
    writes.drop();
    abortStreams(ios);
    throw e;
  }
  const streams = await finishStreams(ios, tally, reads.state, interrupted);
  const boxes = tail.boxes ?? [];
  return { tally, streams, interrupted, framesRead, inferredFrames, boxes, batches, lastInput: step.lastInput };
}
