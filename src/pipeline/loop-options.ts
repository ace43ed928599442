/** What a frame loop is given: the run's options, declared once for both loops; each stream's source and outputs. */
import type { SourceArg } from '../video/sources.ts';
import type { PostprocessOptions } from '../detect/postprocess.ts';
import type { Nvtx } from './nvtx.ts';
import type { VideoIo } from '../video/gstreamer.ts';

/** Where a run is after a frame: frames done over all streams, and the run's figures so far (the progress line). */
export interface FrameProgress {
  frame: number;
  totalFrames: number;
  measured: number;
  wallMs: number;
  inferenceMs: number;
  /** Several streams (or --realtime): frames read per stream and frames dropped so far. */
  streams?: number[];
  dropped?: number;
}

/** One source of a run and where its results go. */
export interface StreamSpec {
  source: string;
  /** What the source names, classified once where the run's sources are read from the command line. */
  arg: SourceArg;
  /** Its annotated video (or image folder); undefined with --no-write. */
  outputPath?: string;
  /** --detections: its boxes as COCO results (image_id = its frame index). */
  detectionsPath?: string;
}

/**
 * What a frame loop is asked to do: every setting of the loops, declared once (the job's options, infer.ts, take
 * these; stream-reads.ts takes the few it needs).
 */
export interface LoopOptions {
  /** The sources, one or more; each its own stream with its own output. */
  streams: StreamSpec[];
  /** The model file, named in errors (NaN outputs). */
  modelName?: string;
  /** Resize frames to this size first (the lab used 960x540); default: the source's size. */
  frameSize?: [number, number];
  letterbox: boolean;
  postprocess: PostprocessOptions;
  /** Keep every box of every frame (for --detections). */
  keepBoxes?: boolean;
  /** Frames per stream at most (warm-up included). */
  maxFrames?: number;
  warmup: number;
  nvtx: Nvtx;
  /** Polled between frames; true stops reading (Ctrl-C): the run is marked interrupted. */
  shouldStop: () => boolean;
  /** Polled between frames; true ends the run normally (--duration on an endless source). */
  shouldEnd?: () => boolean;
  /** --no-draw: write the frames without boxes or overlay (default: draw). */
  draw?: boolean;
  /** --video-io: what encodes the annotated video (auto: GStreamer's x264enc where it can, else FFmpeg). */
  videoIo?: VideoIo;
  /** After each frame: frames done over all streams, and the run's figures so far (the progress line). */
  onFrame?: (p: FrameProgress) => void;
  /** The pipelined loop: frames between the start of their read and the end of their write (the run plan's). */
  inFlight: number;
  /**
   * --realtime: files read at their frame rate (or `fps`, --source-fps), as a camera delivers them: a frame that
   * arrives while the loop is busy is replaced by the next one and counted as dropped, as a live source drops it.
   */
  realtime?: { fps?: number; staggered?: boolean };
  /** --interval K: the model runs on every (K+1)-th frame of a stream; an IoU tracker carries the boxes between. */
  interval?: number;
  /** --batch B: one frame from each of up to B streams through the model in one run (the run plan's). */
  batch: number;
  /** --batch-timeout MS: how long a batch not yet full waits for frames (default: one frame time of the fastest source). */
  batchTimeout?: number;
  /** --perf-interval: each stream's FPS every `everyS` seconds (deepstream-app's **PERF lines). */
  perf?: { everyS: number; onPerf: (line: string) => void };
  /** Each frame records the stream it came from (the run reports per-stream figures). */
  streamColumn?: boolean;
  /** Each inferred frame's raw outputs, before postprocess (infer --heads). */
  onHeads?: (stream: number, index: number, outputs: Map<string, Float32Array>) => void;
}
