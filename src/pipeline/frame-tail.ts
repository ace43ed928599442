/**
 * The part of a frame's path every loop shares, written once: once its model outputs are in (or --interval skipped
 * the model for it), postprocess (decode and NMS, or the tracker's boxes), draw, write, record, close its NVTX frame
 * range. And the end of a run, the same for every loop: each stream's output finished (or dropped when it measured
 * nothing) and its record, with whether its source ended early.
 */
import type { DeviceTimings } from '../backends/types.ts';
import type { FramePostprocess, PostprocessThread } from '../detect/postprocess.ts';
import type { IouTracker } from '../detect/tracker.ts';
import type { FrameBoxes } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { isLive } from '../video/sources.ts';
import type { VideoSource } from '../video/reader.ts';
import type { RealTime } from '../video/writer.ts';
import type { Mat } from '../video/opencv.ts';
import { maxOf, minOf } from '../util/stats.ts';
import type { StagedOutput } from '../output/output.ts';
import { drawFrame, type LoopIo } from './loop-shared.ts';
import { type RangeKind, rangeName, type RangeOps } from './nvtx.ts';
import type { LoopTally } from './loop-tally.ts';
import type { FrameWrites } from './frame-writes.ts';
import { arrivalMs, latenciesOf, type Latency, latencyPercentiles, nsToMs, type PerFrame } from './stages.ts';

/** What a loop's frames share on their way out. */
export interface TailContext {
  ios: readonly LoopIo[];
  tally: LoopTally;
  backend: string;
  model: YoloModelInfo;
  warmupFrames: number;
  /** How the postprocess and write ranges open and close (nested, or start/end where frames overlap). */
  ranges: RangeOps;
  /** --interval: each stream's tracker (it carries boxes over the frames the model skips). */
  trackers?: IouTracker[];
  /** --detections: each stream's frames and their boxes, warm-up included (marked). */
  boxes?: FrameBoxes[][];
  /** Each frame records its stream (the run reports per-stream figures). */
  streamColumn: boolean;
  /** How frames are written and their rows recorded: at once (WriteNow) or one model run behind (frame-writes.ts). */
  writes: FrameWrites;
  /** Each inferred frame's raw outputs, before postprocess (infer --heads). */
  onHeads?: (stream: number, index: number, outputs: Map<string, Float32Array>) => void;
  /** Postprocess on a worker thread (the pipelined loop); else each stream's own Postprocessor, on this thread. */
  postprocessThread?: PostprocessThread;
}

/** A frame as its read left it: the one shape both loops carry a frame in, from its read to its tail. */
export interface FrameRead {
  /** Its stream (0 with one). */
  stream: number;
  /** Its index in its stream. */
  index: number;
  frame: Mat;
  /** Closes its `frame` range (opened by its read; with several streams, its `stream-<i>` range with it). */
  closeFrame: () => void;
  /** When its read began (hrtime ns). */
  t0: bigint;
  /** When it arrived (--realtime: its place in the source's pace; a live source: when its read returned). */
  tCapture?: bigint;
  /** Its read stage (in a batch: the time the batch waited for it after the frame before it arrived). */
  readMs: number;
}

/** A frame whose model outputs are in, at its tail: its read, its clock so far and its own outputs. */
interface FrameIn extends FrameRead {
  /** Inference began (hrtime ns). */
  tInference: bigint;
  preprocessMs: number;
  inferenceMs: number;
  /** Its outputs, head by head; undefined where --interval skipped the model (the tracker carries its boxes). */
  outputs?: Map<string, Float32Array>;
  /** Its share of the run's CUDA-event timings (TensorRT). */
  device?: DeviceTimings;
}

/** The tail of one frame: postprocess, draw, write, record, close. */
export async function finishFrame(c: TailContext, f: FrameIn): Promise<FramePostprocess> {
  const io = c.ios[f.stream];
  const name = (n: RangeKind) => rangeName(n, f.index, c.warmupFrames);
  const t3 = process.hrtime.bigint();
  const postRange = c.ranges.open(name('postprocess'));
  const tracker = c.trackers?.[f.stream];
  if (f.outputs) c.onHeads?.(f.stream, f.index, f.outputs);
  const post: FramePostprocess = !f.outputs
    ? { detections: tracker?.carried() ?? [], candidates: 0, candidatesCapped: false, detectionsCapped: false }
    : c.postprocessThread
      ? await c.postprocessThread.run(f.outputs)
      : io.post.run(f.outputs);
  if (f.outputs && tracker) post.detections = tracker.update(post.detections);
  const drawMs = drawFrame(io, f.frame, post.detections, c.tally, c.backend, c.model, f.stream);
  c.boxes?.[f.stream].push({ index: f.index, warmup: f.index < c.warmupFrames, detections: post.detections });
  c.ranges.close(postRange);
  const t4 = process.hrtime.bigint();
  c.tally.tailDone(f.index);
  const clock = {
    index: f.index,
    t0: f.t0,
    tInference: f.outputs ? f.tInference : t3,
    tPostprocess: t3,
    tEnd: t4,
    readMs: f.readMs,
    preprocessMs: f.outputs ? f.preprocessMs : 0,
    inferenceMs: f.outputs ? f.inferenceMs : 0,
    postprocessMs: nsToMs(t4 - t3),
    drawMs,
    writeMs: 0,
    ...(f.tCapture !== undefined ? { tCapture: f.tCapture } : {}),
    ...(c.trackers ? { inferred: f.outputs !== undefined } : {}),
  };
  const result = f.outputs && f.device ? { outputs: f.outputs, device: f.device } : { outputs: new Map() };
  const stream = c.streamColumn ? f.stream : undefined;
  // written and recorded now or a model run later; its frame range closes with its write or, written behind, now
  await c.writes.put({
    io,
    frame: f.frame,
    row: { clock, result, post, stream },
    warmup: f.index < c.warmupFrames,
    closeFrame: f.closeFrame,
  });
  return post;
}

/** Where a stream stands when the loop ends. */
export interface StreamState {
  /** Frames it gave (its next frame's index). */
  index: number;
  done: boolean;
  /** Its source gave no more frames. */
  endOfStream: boolean;
  /** Measured frames that arrived while the loop was busy (--realtime). */
  dropped: number;
}

/** What one stream did, from its rows of the per-frame columns (the run JSON's `streams`). */
export interface StreamRecord {
  index: number;
  source: string;
  /** What decoded its frames (the run's `video.decoder` is the first stream's). */
  decoder?: string;
  width: number;
  height: number;
  frames: number;
  /** Measured frames its source gave that were never processed (--realtime: they arrived while the loop was busy). */
  droppedFrames: number;
  endToEndFps: number;
  /** From the start of a frame's read (or its arrival) to its boxes (ms), over the measured frames. */
  latencyMs: Latency;
  output?: OutputRecord;
  /** The source stopped before the run did (a file that ended while others went on, a camera that went away). */
  endedEarly?: { framesRead: number; reason: string };
  /** --detections: the file its boxes were written to (relative to the run JSON), set by the caller. */
  detectionsFile?: string;
  /** The sha256 of that file as this run wrote it. */
  detectionsSha256?: string;
}

/** The video a stream wrote: width and height as written (H.264 writes an odd frame size one pixel smaller). */
export interface OutputRecord {
  path: string;
  codec: string;
  encoder?: string;
  encoderNote?: string;
  /** CPU time of the encoder's own threads over the run (warm-up included), ms; absent where /proc cannot tell. */
  encoderCpuMs?: number;
  width?: number;
  height?: number;
  /** Frames were dropped (--realtime): how the video keeps the camera's time (writer.ts RealTime). */
  realTime?: RealTime;
}

/** A stream at the end of the run: its record and the facts the job says or records about it. */
export interface StreamEnd {
  record: StreamRecord;
  video: VideoSource['info'];
  frameSize: [number, number];
  /** Frames it gave, warm-up included. */
  framesRead: number;
  /** Its source is live (camera, network stream). */
  live: boolean;
  /** When its last frame was done, in ms from the run's origin (for "ended after N s"). */
  lastEndMs: number;
  /** Its output, finished under its temporary name: committed with the run's other files (writeRunFiles). */
  output?: StagedOutput;
}

/** One stream's figures from the shared columns (its rows; every row when the columns name no stream). */
export function streamFigures(p: PerFrame, i: number): Pick<StreamRecord, 'frames' | 'endToEndFps' | 'latencyMs'> {
  const rows = p.index.map((_, k) => k).filter((k) => p.stream === undefined || p.stream[k] === i);
  if (rows.length === 0) return { frames: 0, endToEndFps: 0, latencyMs: { p50: NaN, p90: NaN, p99: NaN } };
  const wall = maxOf(rows.map((k) => p.endMs[k])) - minOf(rows.map((k) => p.startMs[k]));
  let latency: number[];
  try {
    latency = latenciesOf(p, rows);
  } catch (e) {
    throw new Error(`stream ${i}: ${(e as Error).message}`);
  }
  return {
    frames: rows.length,
    endToEndFps: wall > 0 ? (rows.length / wall) * 1000 : 0,
    latencyMs: latencyPercentiles(latency),
  };
}

/**
 * A source ended early when it gave no more frames before the run ended: while other streams went on, or, for a live
 * source, at all (a file's end is its normal end). Not when the run was stopped (Ctrl-C) first.
 */
export function endedEarly(
  state: readonly StreamState[],
  i: number,
  live: boolean,
  interrupted: boolean,
): StreamRecord['endedEarly'] {
  const s = state[i];
  if (!s.endOfStream || interrupted) return undefined;
  if (state.some((x, k) => k !== i && x.index > s.index))
    return { framesRead: s.index, reason: 'its source gave no more frames while other streams went on' };
  if (live)
    return { framesRead: s.index, reason: 'the source stopped sending frames (it closed, or the connection dropped)' };
  return undefined;
}

/** The camera's time from stream i's first measured frame's arrival (or read) to its last one's, in seconds. */
function cameraSpanS(p: PerFrame, i: number): number {
  const at = arrivalMs(p).filter((_, k) => p.stream === undefined || p.stream[k] === i);
  return at.length > 1 ? (maxOf(at) - minOf(at)) / 1000 : 0;
}

/**
 * The end of a run that did not fail: each source closed, each output finished when its stream measured frames (a
 * stream that measured none leaves the previous file as it was), and each stream's record. The outputs stay under
 * their temporary names: the run commits them with its JSON and detections, or drops them (StreamEnd.output).
 */
export async function finishStreams(
  ios: readonly LoopIo[],
  tally: LoopTally,
  state: readonly StreamState[],
  interrupted: boolean,
): Promise<StreamEnd[]> {
  const ends: StreamEnd[] = [];
  // a run that ends normally keeps its outputs only when it measured what it reports (runInference then says why
  // not): every stream a frame, and with --interval a frame through the model; a stopped run keeps what it did
  const p = tally.measured;
  const complete =
    ios.every((_, i) => streamFigures(p, i).frames > 0) && (!p.inferred || p.inferred.some((x) => x === 1));
  for (const [i, io] of ios.entries()) {
    io.source.close();
    const figures = streamFigures(tally.measured, i);
    const keep = figures.frames > 0 && (interrupted || complete);
    // a paced stream that dropped frames: its video stretched to the camera's time
    if (io.sink && keep)
      await io.sink.finish(state[i].dropped ? { cameraSpanS: cameraSpanS(tally.measured, i) } : undefined);
    else io.sink?.abort();
    const sink = io.sink && keep ? io.sink : undefined;
    const live = isLive(io.source.kind);
    const early = endedEarly(state, i, live, interrupted);
    const ownEnds = [tally.measured, tally.warmup].flatMap((p) =>
      p.endMs.filter((_, k) => p.stream === undefined || p.stream[k] === i),
    );
    ends.push({
      record: {
        index: i,
        source: io.spec.source,
        ...(io.source.info.decoder ? { decoder: io.source.info.decoder } : {}),
        width: io.frameW,
        height: io.frameH,
        ...figures,
        droppedFrames: state[i].dropped,
        ...(sink
          ? {
              output: {
                path: sink.path,
                codec: sink.codec,
                ...(sink.encoder ? { encoder: sink.encoder } : {}),
                ...(sink.encoderNote ? { encoderNote: sink.encoderNote } : {}),
                ...(sink.encoderCpuMs !== undefined ? { encoderCpuMs: sink.encoderCpuMs } : {}),
                ...(sink.written ?? {}),
                ...(sink.realTime ? { realTime: sink.realTime } : {}),
              },
            }
          : {}),
        ...(early ? { endedEarly: early } : {}),
      },
      video: io.source.info,
      frameSize: [io.frameW, io.frameH],
      framesRead: state[i].index,
      live,
      lastEndMs: ownEnds.length ? maxOf(ownEnds) : 0,
      ...(sink ? { output: sink } : {}),
    });
  }
  return ends;
}
