/**
 * Several sources in one run (`infer A.mp4 B.mp4`, `--streams N`), the DeepStream way of asking how many cameras a
 * board holds: the streams take turns, one frame each, through the same session, and each is read, preprocessed,
 * inferred, postprocessed and written in series (batch 1). A stream that ends leaves the others running. Every frame
 * is one record of one tally (its `stream` column says whose), so the run's figures are over all streams and each
 * stream's figures come from its own rows.
 */
import type { DetectorSession, InferenceResult } from '../backends/types.ts';
import { IouTracker } from '../detect/tracker.ts';
import type { FrameBoxes } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { percentile } from '../util/stats.ts';
import {
  drawFrame,
  type FrameLoopOptions,
  noFrameDecoded,
  openLoopIo,
  preprocessFrame,
  pushPopRanges,
  rangeName,
  type RangeOps,
  readNextFrame,
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
  /** The first stream's source facts, for the run's top-level fields. */
  first: { video: ReturnType<typeof openLoopIo>['source']['info']; frameSize: [number, number] };
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
  const ranges = pushPopRanges(o.nvtx);
  // several streams: each frame's ranges sit inside a `stream-<i>` range opened with its `frame` range (an
  // end-of-stream read gets neither), so a profile shows time per stream and the stage ranges keep their names
  const streamRanges = (i: number, index: number): RangeOps => {
    if (ios.length < 2) return ranges;
    const frameName = rangeName('frame', index, o.warmupFrames);
    return {
      open: (n) => {
        const isFrame = n === frameName;
        if (isFrame) o.nvtx.push(rangeName(`stream-${i}`, index, o.warmupFrames));
        o.nvtx.push(n);
        return isFrame;
      },
      close: (isFrame) => {
        o.nvtx.pop();
        if (isFrame === true) o.nvtx.pop();
      },
    };
  };
  const state = ios.map(() => ({ index: 0, done: false, endOfStream: false, dropped: 0 }));
  let interrupted = false;
  let framesRead = 0;
  // --realtime: frame k of a stream arrives at start + k / fps
  const intervalNs = ios.map((io) => BigInt(Math.round(1e9 / (o.realtime?.fps ?? io.source.info.fps))));
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
  try {
    while (state.some((s) => !s.done)) {
      perf();
      if (o.shouldStop()) {
        interrupted = true;
        break;
      }
      if (o.shouldEnd?.()) break;
      let processed = 0;
      let nextArrival: bigint | undefined;
      for (const [i, io] of ios.entries()) {
        const s = state[i];
        if (s.done) continue;
        let tCapture: bigint | undefined;
        if (o.realtime) {
          const now = process.hrtime.bigint();
          const due = Number((now - start) / intervalNs[i]);
          if (due < s.index) {
            const at = start + BigInt(s.index) * intervalNs[i];
            if (nextArrival === undefined || at < nextArrival) nextArrival = at;
            continue; // its next frame has not arrived yet
          }
          // the frames that arrived while the loop was busy are gone, as from a camera: read and counted
          for (; s.index < due && !s.done; s.index++) {
            if (o.maxFrames !== undefined && s.index >= o.maxFrames) break;
            if (!io.source.read()) s.done = s.endOfStream = true;
            else if (s.index >= o.warmupFrames) s.dropped++;
          }
          if (s.done) continue;
          tCapture = start + BigInt(s.index) * intervalNs[i];
        }
        if (o.maxFrames !== undefined && s.index >= o.maxFrames) {
          s.done = true;
          continue;
        }
        const t0 = process.hrtime.bigint();
        tally.begin(t0);
        const frameRanges = streamRanges(i, s.index);
        const got = await readNextFrame(
          () => io.source.read(),
          io.source.info.frameCount,
          s.index,
          frameRanges,
          io.resize,
          o.warmupFrames,
        );
        if (!got) {
          s.done = true;
          s.endOfStream = true;
          continue;
        }
        const frame = got.frame;
        const name = (n: string) => rangeName(n, s.index, o.warmupFrames);
        const inferHere = !o.interval || s.index % (o.interval + 1) === 0;
        const t1 = process.hrtime.bigint();
        let result: InferenceResult = { outputs: new Map() };
        let t2 = t1;
        if (inferHere) {
          o.nvtx.push(name('preprocess'));
          const { input, blob } = preprocessFrame(io.cv, frame, io.g);
          o.nvtx.pop();
          t2 = process.hrtime.bigint();
          o.nvtx.push(name('inference'));
          result = await session.run(input, blob);
          o.nvtx.pop();
          inferredFrames++;
        }
        const t3 = process.hrtime.bigint();
        o.nvtx.push(name('postprocess'));
        const post = inferHere
          ? io.post.run(result.outputs)
          : { detections: trackers[i].carried(), candidates: 0, candidatesCapped: false, detectionsCapped: false };
        if (inferHere && o.interval) post.detections = trackers[i].update(post.detections);
        const drawMs = drawFrame(io, frame, post.detections, tally, session.backend, model);
        if (o.keepBoxes)
          boxes[i].push({ index: s.index, warmup: s.index < o.warmupFrames, detections: post.detections });
        o.nvtx.pop();
        const t4 = process.hrtime.bigint();
        o.nvtx.push(name('write'));
        io.sink?.write(frame);
        o.nvtx.pop();
        const t5 = process.hrtime.bigint();
        frameRanges.close(got.frameRange);
        tally.record(
          {
            index: s.index,
            t0,
            tInference: t2,
            tPostprocess: t3,
            tEnd: t5,
            readMs: nsToMs(t1 - t0),
            preprocessMs: inferHere ? nsToMs(t2 - t1) : 0,
            inferenceMs: inferHere ? nsToMs(t3 - t2) : 0,
            postprocessMs: nsToMs(t4 - t3),
            drawMs,
            writeMs: nsToMs(t5 - t4),
            ...(tCapture !== undefined ? { tCapture } : {}),
            ...(o.interval ? { inferred: inferHere } : {}),
          },
          result,
          post,
          i,
        );
        s.index++;
        framesRead++;
        processed++;
        perfCounts[i].last++;
        perfCounts[i].total++;
      }
      // nothing had arrived: wait for the next frame instead of spinning
      if (processed === 0 && nextArrival !== undefined) {
        const waitMs = Number(nextArrival - process.hrtime.bigint()) / 1e6;
        if (waitMs > 0) await new Promise((r) => setTimeout(r, Math.ceil(waitMs)));
      }
    }
    if (framesRead === 0 && !interrupted) throw noFrameDecoded(o.streams.map((s) => s.source).join(', '));
  } catch (e) {
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
    first: { video: ios[0].source.info, frameSize: [ios[0].frameW, ios[0].frameH] },
  };
}
