/**
 * Several sources in one run (`infer A.mp4 B.mp4`, `--streams N`), the DeepStream way of asking how many cameras a
 * board holds. Each turn forms a batch: the next frame of each of up to `--batch` streams (in turn, from the stream
 * after the last batch's; how they are read, paced and waited for is `stream-reads.ts`); the batch is preprocessed
 * into one blob and inferred in one run of the model, then each frame is postprocessed and written to its stream's
 * video. A stream that ends leaves the others running. Every frame is one record of one tally (its `stream` column says whose); a frame's preprocess and
 * inference times are its share of its batch's (the batch's time over its frames), so the stages of all frames add
 * up to the wall time, and the batches' own times are kept apart (`batches`).
 */
import { type DetectorSession, imageOutputs, type InferenceResult } from '../backends/types.ts';
import { IouTracker } from '../detect/tracker.ts';
import type { FrameBoxes } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { maxOf, minOf, percentile } from '../util/stats.ts';
import {
  batchBlob,
  drawFrame,
  type FrameLoopOptions,
  noFrameDecoded,
  letterboxFrame,
  openLoopIo,
  pushPopRanges,
  rangeName,
  type RangeOps,
  startEndRanges,
} from './loop-io.ts';
import { LoopTally } from './loop-tally.ts';
import { nsToMs, type PerFrame } from './stages.ts';
import { StreamReads } from './stream-reads.ts';

export interface StreamSpec {
  source: string;
  /** Its annotated video; undefined with --no-write. */
  outputPath?: string;
  /** --detections with several streams: this stream's boxes as COCO results (image_id = its frame index). */
  detectionsPath?: string;
}

/** What one stream did, from its rows of the per-frame columns. */
export interface StreamRecord {
  index: number;
  source: string;
  width: number;
  height: number;
  frames: number;
  /** Measured frames its source gave that were never processed (--realtime: they arrived while the loop was busy). */
  droppedFrames: number;
  endToEndFps: number;
  /** From the start of a frame's read to its boxes (ms), over the measured frames. */
  latencyMs: { p50: number; p90: number; p99: number };
  output?: { path: string; codec: string; width?: number; height?: number };
  /** The source stopped before the run did (a file that ended, a camera that went away). */
  endedEarly?: { framesRead: number; reason: string };
  /** --detections: the file its boxes were written to (relative to the run JSON), set by the caller. */
  detectionsFile?: string;
}

export interface MultiStreamResult {
  tally: LoopTally;
  streams: StreamRecord[];
  interrupted: boolean;
  framesRead: number;
  /** Frames the model ran on (all of them unless --interval). */
  inferredFrames: number;
  /** With keepBoxes: each stream's frames and their boxes, warm-up included (marked), in its own frame indices. */
  boxes: FrameBoxes[][];
  /** One entry per run of the model (warm-up ones marked). */
  batches: BatchRecord[];
  /** The first stream's source facts, for the run's top-level fields. */
  first: { video: ReturnType<typeof openLoopIo>['source']['info']; frameSize: [number, number] };
}

/** One run of the model over a batch of frames. */
export interface BatchRecord {
  /** Frames in the batch (fewer than --batch when streams had ended or not yet delivered). */
  images: number;
  inferenceMs: number;
  /** false when every frame of it was a warm-up frame */
  measured: boolean;
}

/** The run JSON's `batches`: inference per batch and per frame over the measured batches. */
export interface BatchFigures {
  count: number;
  /** Mean frames per batch. */
  meanImages: number;
  /** Inference time of one batch (ms). */
  perBatchMs: { mean: number; p50: number; p99: number };
  /** Inference time over frames inferred (ms): what a frame's inference stage holds. */
  perFrameMs: number;
}

export function batchFigures(batches: readonly BatchRecord[]): BatchFigures | undefined {
  const b = batches.filter((x) => x.measured);
  if (b.length === 0) return undefined;
  const ms = b.map((x) => x.inferenceMs).sort((x, y) => x - y);
  const images = b.reduce((s, x) => s + x.images, 0);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    count: b.length,
    meanImages: round(images / b.length),
    perBatchMs: {
      mean: round(ms.reduce((s, x) => s + x, 0) / ms.length),
      p50: round(percentile(ms, 50)),
      p99: round(percentile(ms, 99)),
    },
    perFrameMs: round(ms.reduce((s, x) => s + x, 0) / images),
  };
}

/** One stream's figures from the shared columns (rows whose `stream` is `i`). */
export function streamFigures(p: PerFrame, i: number): Pick<StreamRecord, 'frames' | 'endToEndFps' | 'latencyMs'> {
  const rows = p.index.map((_, k) => k).filter((k) => p.stream?.[k] === i);
  if (rows.length === 0) return { frames: 0, endToEndFps: 0, latencyMs: { p50: NaN, p90: NaN, p99: NaN } };
  const wall = maxOf(rows.map((k) => p.endMs[k])) - minOf(rows.map((k) => p.startMs[k]));
  // from the frame's arrival (--realtime) or its read to its boxes
  const from = p.captureMs ?? p.startMs;
  const latency = rows.map((k) => p.postprocessStartMs[k] + p.postprocessMs[k] - from[k]).sort((a, b) => a - b);
  return {
    frames: rows.length,
    endToEndFps: wall > 0 ? (rows.length / wall) * 1000 : 0,
    latencyMs: { p50: percentile(latency, 50), p90: percentile(latency, 90), p99: percentile(latency, 99) },
  };
}

export async function runMultiStreamLoop(
  session: DetectorSession,
  model: YoloModelInfo,
  o: FrameLoopOptions & {
    streams: StreamSpec[];
    /**
     * Read each file at its frame rate (or `fps`), as a camera delivers it: a frame that arrives while the loop is
     * busy is replaced by the next one and counted as dropped, as a live source drops it.
     */
    realtime?: { fps?: number };
    /** --interval K: the model runs on every (K+1)-th frame of a stream; an IoU tracker carries the boxes between. */
    interval?: number;
    /** --batch B: frames of up to B streams go through the model in one run (default 1). */
    batch?: number;
    /** --batch-timeout MS (--realtime): how long a batch not yet full waits for frames to arrive. */
    batchTimeoutMs?: number;
    /** Every `everyS` seconds, each stream's FPS over the last interval and since the start (deepstream-app's **PERF). */
    perf?: { everyS: number; onPerf: (line: string) => void };
  },
): Promise<MultiStreamResult> {
  const ios: ReturnType<typeof openLoopIo>[] = [];
  try {
    for (const s of o.streams) ios.push(openLoopIo(model, { ...o, videoPath: s.source, outputPath: s.outputPath }));
  } catch (e) {
    for (const io of ios) {
      io.sink?.abort();
      io.source.close();
    }
    throw e;
  }
  // boxes for --detections are kept per stream (each stream counts its own frame indices)
  const tally = new LoopTally(o.warmupFrames, model.labels);
  const boxes: FrameBoxes[][] = ios.map(() => []);
  const trackers = ios.map(() => new IouTracker());
  let inferredFrames = 0;
  // --batch B: one frame from each of up to B streams goes through the model in one run
  const batchSize = Math.max(1, Math.min(o.batch ?? 1, ios.length));
  const batched = batchSize > 1;
  // one stream at a time: nested ranges; a batch: its frames' ranges overlap (read one after the other, inferred
  // together, written one after the other), so they are start/end ranges
  const base: RangeOps = batched ? startEndRanges(o.nvtx) : pushPopRanges(o.nvtx);
  // several streams: each frame's `frame` range opens with a `stream-<i>` range around it (an end-of-stream read
  // gets neither), so a profile shows time per stream and the stage ranges keep their names
  const streamRanges = (i: number, index: number): RangeOps => {
    if (ios.length < 2) return base;
    const frameName = rangeName('frame', index, o.warmupFrames);
    return {
      open: (n) =>
        n === frameName
          ? { pair: [base.open(rangeName(`stream-${i}`, index, o.warmupFrames)), base.open(n)] }
          : base.open(n),
      close: (h) => {
        if (h && typeof h === 'object' && 'pair' in h) {
          const [stream, frame] = (h as { pair: unknown[] }).pair;
          base.close(frame);
          base.close(stream);
        } else base.close(h);
      },
    };
  };
  let interrupted = false;
  let framesRead = 0;
  const reads = new StreamReads(ios, {
    batched,
    realtime: o.realtime,
    maxFrames: o.maxFrames,
    warmupFrames: o.warmupFrames,
    interval: o.interval,
    batchTimeoutMs: o.batchTimeoutMs,
    rangesFor: streamRanges,
    begin: (t) => tally.begin(t),
  });
  const { state } = reads;
  const perfCounts = ios.map(() => ({ last: 0, total: 0 }));
  let perfAt = process.hrtime.bigint();
  const perfStart = perfAt;
  const perf = () => {
    if (!o.perf) return;
    const now = process.hrtime.bigint();
    const s = Number(now - perfAt) / 1e9;
    if (s < o.perf.everyS) return;
    const all = Number(now - perfStart) / 1e9;
    o.perf.onPerf(
      `**PERF: ${perfCounts.map((c) => `${(c.last / s).toFixed(2)} (${(c.total / all).toFixed(2)})`).join('\t')}`,
    );
    for (const c of perfCounts) c.last = 0;
    perfAt = now;
  };
  const batches: BatchRecord[] = [];
  try {
    while (!reads.allDone) {
      perf();
      if (o.shouldStop()) {
        interrupted = true;
        break;
      }
      if (o.shouldEnd?.()) break;
      const members = await reads.gather(batchSize, o.shouldStop);
      if (members.length === 0) continue;
      const allWarmup = members.every((m) => m.index < o.warmupFrames);
      const batchRange = batched
        ? base.open(`${allWarmup ? 'warmup-' : ''}batch streams ${members.map((m) => m.i).join(',')}`)
        : undefined;
      // preprocess and infer the frames the model runs on (all, unless --interval) in one run
      const inferred = members.filter((m) => m.inferHere);
      const batchName = (n: string) => (allWarmup ? `warmup-${n}` : n);
      const tPre = process.hrtime.bigint();
      let tInf = tPre;
      let result: InferenceResult = { outputs: new Map() };
      if (inferred.length > 0) {
        const pre = base.open(batchName('preprocess'));
        const images = inferred.map((m) => letterboxFrame(ios[m.i].cv, m.frame, ios[m.i].g));
        const { input, blob } = batchBlob(ios[0].cv, images, model.inputWidth, model.inputHeight);
        base.close(pre);
        tInf = process.hrtime.bigint();
        const inf = base.open(batchName('inference'));
        result = await session.run(input, blob);
        base.close(inf);
        inferredFrames += inferred.length;
      }
      const tPost = process.hrtime.bigint();
      const n = inferred.length;
      // a frame's share of its batch's preprocess and inference, so that the stages of all frames add up to the wall time
      const preprocessMs = n > 0 ? nsToMs(tInf - tPre) / n : 0;
      const inferenceMs = n > 0 ? nsToMs(tPost - tInf) / n : 0;
      if (n > 0) batches.push({ images: n, inferenceMs: nsToMs(tPost - tInf), measured: !allWarmup });
      const share: InferenceResult = {
        outputs: new Map(),
        ...(result.device
          ? {
              device: {
                h2dMs: result.device.h2dMs / n,
                gpuComputeMs: result.device.gpuComputeMs / n,
                d2hMs: result.device.d2hMs / n,
              },
            }
          : {}),
      };
      for (const m of members) {
        const { i, frame } = m;
        const io = ios[i];
        const name = (x: string) => rangeName(x, m.index, o.warmupFrames);
        const t3 = process.hrtime.bigint();
        const postRange = base.open(name('postprocess'));
        const post = m.inferHere
          ? io.post.run(imageOutputs(result.outputs, inferred.indexOf(m), n))
          : { detections: trackers[i].carried(), candidates: 0, candidatesCapped: false, detectionsCapped: false };
        if (m.inferHere && o.interval) post.detections = trackers[i].update(post.detections);
        const drawMs = drawFrame(io, frame, post.detections, tally, session.backend, model);
        if (o.keepBoxes)
          boxes[i].push({ index: m.index, warmup: m.index < o.warmupFrames, detections: post.detections });
        base.close(postRange);
        const t4 = process.hrtime.bigint();
        const writeRange = base.open(name('write'));
        io.sink?.write(frame);
        base.close(writeRange);
        const t5 = process.hrtime.bigint();
        m.ranges.close(m.frameRange);
        tally.record(
          {
            index: m.index,
            t0: m.t0,
            tInference: m.inferHere ? tInf : t3,
            tPostprocess: t3,
            tEnd: t5,
            readMs: m.readMs,
            preprocessMs: m.inferHere ? preprocessMs : 0,
            inferenceMs: m.inferHere ? inferenceMs : 0,
            postprocessMs: nsToMs(t4 - t3),
            drawMs,
            writeMs: nsToMs(t5 - t4),
            ...(m.tCapture !== undefined ? { tCapture: m.tCapture } : {}),
            ...(o.interval ? { inferred: m.inferHere } : {}),
          },
          m.inferHere ? share : { outputs: new Map() },
          post,
          i,
        );
        state[i].index++;
        framesRead++;
        perfCounts[i].last++;
        perfCounts[i].total++;
      }
      if (batched) base.close(batchRange);
    }
    await reads.settle();
    if (framesRead === 0 && !interrupted) throw noFrameDecoded(o.streams.map((s) => s.source).join(', '));
  } catch (e) {
    await reads.settle();
    for (const io of ios) {
      io.sink?.abort();
      io.source.close();
    }
    throw e;
  }
  const streams: StreamRecord[] = [];
  for (const [i, io] of ios.entries()) {
    io.source.close();
    const figures = streamFigures(tally.measured, i);
    // a stream's video is kept when the stream measured frames: a failed or empty one leaves nothing
    if (io.sink && figures.frames > 0) await io.sink.finish();
    else io.sink?.abort();
    const sink = io.sink && figures.frames > 0 ? io.sink : undefined;
    const s = state[i];
    const earlyEnd = s.endOfStream && state.some((x, k) => k !== i && x.index > s.index);
    streams.push({
      index: i,
      source: o.streams[i].source,
      width: io.frameW,
      height: io.frameH,
      ...figures,
      droppedFrames: state[i].dropped,
      ...(sink ? { output: { path: sink.path, codec: sink.codec, ...(sink.written ?? {}) } } : {}),
      ...(earlyEnd
        ? { endedEarly: { framesRead: s.index, reason: 'its source gave no more frames while other streams went on' } }
        : {}),
    });
  }
  return {
    tally,
    streams,
    interrupted,
    framesRead,
    inferredFrames,
    boxes,
    batches,
    first: { video: ios[0].source.info, frameSize: [ios[0].frameW, ios[0].frameH] },
  };
}
