/**
 * Several sources in one run (`infer A.mp4 B.mp4`, `--streams N`), the DeepStream way of asking how many cameras a
 * board holds. Each turn forms a batch: the next frame of each of up to `--batch` streams (in turn, from the stream
 * after the last batch's), read one after the other; the batch is preprocessed into one blob and inferred in one
 * run of the model, then each frame is postprocessed and written to its stream's video. With `--realtime` a batch
 * that is not full waits up to `--batch-timeout` for frames still to arrive. A stream that ends leaves the others
 * running. Every frame is one record of one tally (its `stream` column says whose); a frame's preprocess and
 * inference times are its share of its batch's (the batch's time over its frames), so the stages of all frames add
 * up to the wall time, and the batches' own times are kept apart (`batches`).
 */
import { type DetectorSession, imageOutputs, type InferenceResult } from '../backends/types.ts';
import { IouTracker } from '../detect/tracker.ts';
import type { FrameBoxes } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { percentile } from '../util/stats.ts';
import type { Mat } from '../video/opencv.ts';
import { isLive } from '../video/sources.ts';
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
  readNextFrame,
  startEndRanges,
} from './loop-io.ts';
import { LoopTally } from './loop-tally.ts';
import { nsToMs, type PerFrame } from './stages.ts';

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

const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, Math.ceil(ms))));

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
  const wall = Math.max(...rows.map((k) => p.endMs[k])) - Math.min(...rows.map((k) => p.startMs[k]));
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
  const state = ios.map(() => ({ index: 0, done: false, endOfStream: false, dropped: 0 }));
  let interrupted = false;
  let framesRead = 0;
  // --realtime: frame k of a stream arrives at start + k / fps
  const intervalNs = ios.map((io) => BigInt(Math.round(1e9 / (o.realtime?.fps ?? io.source.info.fps))));
  // --batch-timeout: how long a batch that is not full waits for its other streams' frames (default: one frame
  // time of the fastest source)
  const batchTimeoutNs = BigInt(
    Math.round((o.batchTimeoutMs ?? 1000 / Math.max(...ios.map((io) => o.realtime?.fps ?? io.source.info.fps))) * 1e6),
  );
  const start = process.hrtime.bigint();
  if (o.realtime) tally.begin(start);
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

  /** A frame read for the batch being formed. */
  interface Member {
    i: number;
    index: number;
    frame: Mat;
    ranges: RangeOps;
    frameRange: unknown;
    t0: bigint;
    t1: bigint;
    tCapture?: bigint;
    inferHere: boolean;
  }
  // A live source (camera, RTSP) in a batch is read on libuv's pool, so that one slow camera does not hold up the
  // others: a batch goes when full or --batch-timeout after its first frame arrived, and a read still under way is
  // picked up by a later batch. Files are read at once (or paced by --realtime); one stream at a time needs neither.
  const live = ios.map((io) => batched && isLive(io.source.kind));
  // --realtime paces files and image folders; a live source keeps its own pace
  const paced = ios.map((io) => !!o.realtime && !isLive(io.source.kind));
  interface PendingRead {
    t0: bigint;
    index: number;
    ranges: RangeOps;
    done: boolean;
    got?: { frame: Mat; frameRange: unknown } | null;
    t1?: bigint;
    error?: unknown;
    promise: Promise<void>;
  }
  const pending: (PendingRead | undefined)[] = ios.map(() => undefined);
  const startLiveRead = (i: number): PendingRead => {
    const ranges = streamRanges(i, state[i].index);
    const p = { t0: process.hrtime.bigint(), index: state[i].index, ranges, done: false } as PendingRead;
    p.promise = readNextFrame(() => ios[i].source.readAsync(), 0, p.index, ranges, ios[i].resize, o.warmupFrames).then(
      (got) => {
        Object.assign(p, { got, t1: process.hrtime.bigint(), done: true });
      },
      (error: unknown) => {
        Object.assign(p, { error, done: true });
      },
    );
    pending[i] = p;
    return p;
  };
  /** Reads still under way when the loop ends are waited for (a capture is not released under a read). */
  const settleReads = async () => {
    for (const [i, p] of pending.entries()) {
      if (!p) continue;
      pending[i] = undefined;
      if (!p.done) await Promise.race([p.promise, sleepMs(10_000)]);
      if (p.got) p.ranges.close(p.got.frameRange);
    }
  };
  /**
   * Stream i's next frame: read (inside its ranges), or the moment it arrives (--realtime, not yet there), or the
   * read under way (a live source in a batch), or undefined when the stream is done.
   */
  const take = async (i: number): Promise<Member | bigint | { reading: Promise<void> } | undefined> => {
    const io = ios[i];
    const s = state[i];
    if (s.done) return undefined;
    const inferHere = !o.interval || s.index % (o.interval + 1) === 0;
    if (o.maxFrames !== undefined && s.index >= o.maxFrames && !pending[i]) {
      s.done = true;
      return undefined;
    }
    if (live[i]) {
      const p = pending[i] ?? startLiveRead(i);
      // (wrapped: an async function returning the promise itself would wait for it)
      if (!p.done) return { reading: p.promise };
      pending[i] = undefined;
      if (p.error) throw p.error;
      if (!p.got) {
        s.done = s.endOfStream = true;
        return undefined;
      }
      tally.begin(p.t0);
      // a live frame exists from when its read returned: latency counts from there
      const t1 = p.t1!;
      return {
        i,
        index: s.index,
        frame: p.got.frame,
        ranges: p.ranges,
        frameRange: p.got.frameRange,
        t0: p.t0,
        t1,
        tCapture: t1,
        inferHere,
      };
    }
    let tCapture: bigint | undefined;
    if (paced[i]) {
      const now = process.hrtime.bigint();
      const due = Number((now - start) / intervalNs[i]);
      if (due < s.index) return start + BigInt(s.index) * intervalNs[i]; // its next frame has not arrived yet
      // the frames that arrived while the loop was busy are gone, as from a camera: read and counted
      for (; s.index < due && !s.done; s.index++) {
        if (o.maxFrames !== undefined && s.index >= o.maxFrames) break;
        if (!io.source.read()) s.done = s.endOfStream = true;
        else if (s.index >= o.warmupFrames) s.dropped++;
      }
      if (s.done) return undefined;
      if (o.maxFrames !== undefined && s.index >= o.maxFrames) {
        s.done = true;
        return undefined;
      }
      tCapture = start + BigInt(s.index) * intervalNs[i];
    }
    const t0 = process.hrtime.bigint();
    tally.begin(t0);
    const ranges = streamRanges(i, s.index);
    const got = await readNextFrame(
      () => io.source.read(),
      io.source.info.frameCount,
      s.index,
      ranges,
      io.resize,
      o.warmupFrames,
    );
    if (!got) {
      s.done = true;
      s.endOfStream = true;
      return undefined;
    }
    return {
      i,
      index: s.index,
      frame: got.frame,
      ranges,
      frameRange: got.frameRange,
      t0,
      t1: process.hrtime.bigint(),
      tCapture,
      inferHere,
    };
  };

  let cursor = 0;
  try {
    while (state.some((s) => !s.done)) {
      perf();
      if (o.shouldStop()) {
        interrupted = true;
        break;
      }
      if (o.shouldEnd?.()) break;
      // form a batch: the next streams in turn (from the one after the last batch's), up to --batch frames
      const gatherStart = process.hrtime.bigint();
      const members: Member[] = [];
      const waiting: { i: number; at?: bigint; read?: Promise<void> }[] = [];
      const add = (i: number, m: Awaited<ReturnType<typeof take>>) => {
        if (typeof m === 'bigint') waiting.push({ i, at: m });
        else if (m && 'reading' in m) waiting.push({ i, read: m.reading });
        else if (m) members.push(m);
      };
      for (let k = 0; k < ios.length && members.length < batchSize; k++) {
        const i = (cursor + k) % ios.length;
        add(i, await take(i));
      }
      // a batch not full waits for frames still to come (paced files, live reads under way), up to --batch-timeout
      // after its first frame arrived; a batch with no frame yet waits for the first
      while (members.length < batchSize && waiting.length > 0 && !o.shouldStop()) {
        const first = members.reduce<bigint | undefined>((a, m) => {
          const at = m.tCapture ?? m.t1;
          return a === undefined || at < a ? at : a;
        }, undefined);
        const deadline = first === undefined ? undefined : first + batchTimeoutNs;
        const nextAt = waiting.reduce<bigint | undefined>(
          (a, w) => (w.at !== undefined && (a === undefined || w.at < a) ? w.at : a),
          undefined,
        );
        const reads = waiting.filter((w) => w.read).map((w) => w.read!);
        const now = process.hrtime.bigint();
        if (
          deadline !== undefined &&
          (now >= deadline || (reads.length === 0 && nextAt !== undefined && nextAt > deadline))
        )
          break;
        // wake at the next paced arrival, the deadline or a read's end, and at least every 100 ms to see Ctrl-C
        const until = [nextAt, deadline, now + 100_000_000n].reduce<bigint>(
          (a, t) => (t !== undefined && t < a ? t : a),
          now + 100_000_000n,
        );
        await Promise.race([...reads, sleepMs(Number(until - now) / 1e6)]);
        const ready = process.hrtime.bigint();
        for (const w of waiting.splice(0)) {
          const isReady = w.read ? pending[w.i]?.done : w.at! <= ready;
          if (isReady && members.length < batchSize) add(w.i, await take(w.i));
          else waiting.push(w);
        }
      }
      if (members.length === 0) continue;
      // batched: a frame's read is the time the batch waited for it after the frame before it arrived, so that the
      // reads of a batch add up to the time it took to gather
      const readMs = new Map<Member, number>();
      if (batched) {
        let prev = gatherStart;
        for (const m of [...members].sort((a, b) => (a.t1 < b.t1 ? -1 : a.t1 > b.t1 ? 1 : 0))) {
          const from = m.t0 > prev ? m.t0 : prev;
          readMs.set(m, m.t1 > from ? nsToMs(m.t1 - from) : 0);
          if (m.t1 > prev) prev = m.t1;
        }
      }
      cursor = (members[members.length - 1].i + 1) % ios.length;
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
            readMs: readMs.get(m) ?? nsToMs(m.t1 - m.t0),
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
    await settleReads();
    if (framesRead === 0 && !interrupted) throw noFrameDecoded(o.streams.map((s) => s.source).join(', '));
  } catch (e) {
    await settleReads();
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
