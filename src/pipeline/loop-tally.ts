/**
 * What the frame loops count: one record per frame into the per-frame columns (warm-up frames in columns of their
 * own), detections per class, and how often a postprocess cap bound. Warm-up frames (index < warmupFrames) are kept
 * apart and enter no statistic.
 */
import type { InferenceResult } from '../backends/types.ts';
import type { FramePostprocess } from '../detect/postprocess.ts';
import { emptyPerFrame, nsToMs, type PerFrame, roundMs, wallMsOf } from './stages.ts';
import { mainThreadCpuNs } from '../platform/machine-load.ts';

/** One frame's clock readings (hrtime ns) and the stage durations measured between them (ms). */
export interface FrameClock {
  index: number;
  /** read began */
  t0: bigint;
  /** inference began */
  tInference: bigint;
  /** postprocess began */
  tPostprocess: bigint;
  /** write ended */
  tEnd: bigint;
  /** --realtime: when the frame arrived (as a camera delivers it), which latency counts from */
  tCapture?: bigint;
  /** --interval: whether the model ran on this frame (else the tracker carried its boxes) */
  inferred?: boolean;
  readMs: number;
  preprocessMs: number;
  inferenceMs: number;
  postprocessMs: number;
  drawMs: number;
  writeMs: number;
}

/** A frame's row before it is recorded: its clock, its model result (device timings) and its boxes. */
export interface FrameRow {
  clock: FrameClock;
  result: InferenceResult;
  post: FramePostprocess;
  /** Its stream, where the run reports streams. */
  stream?: number;
}

export class LoopTally {
  readonly measured: PerFrame = emptyPerFrame();
  readonly warmup: PerFrame = emptyPerFrame();
  readonly perClass: Record<string, number> = {};
  total = 0;
  framesCandidatesCapped = 0;
  framesDetectionsCapped = 0;
  maxCandidates = 0;
  private origin: bigint | undefined;
  private inferenceMs = 0;
  /** Several streams: each stream's measured frames so far and when its first began and its last ended (ms). */
  private readonly perStream = new Map<number, { frames: number; firstMs: number; lastMs: number }>();

  constructor(
    private readonly warmupFrames: number,
    private readonly labels: readonly string[],
  ) {}

  get frames(): number {
    return this.measured.index.length;
  }

  get wallMs(): number {
    return wallMsOf(this.measured);
  }

  /**
   * Frame 0's read to its boxes (postprocess and drawing done), excluded from every statistic: what a cold start
   * costs. Not to its write's end: the sequential loop writes a frame behind the next one's inference.
   */
  get firstFrameMs(): number {
    const p = this.warmup.index.length ? this.warmup : this.measured;
    return p.index.length ? p.postprocessStartMs[0] + p.postprocessMs[0] - p.startMs[0] : 0;
  }

  /** When the last frame (warm-up or measured) was written, in ms from the start of frame 0's read. */
  get lastEndMs(): number | undefined {
    const last = (p: { endMs: number[] }) => p.endMs[p.endMs.length - 1];
    return this.measured.endMs.length ? last(this.measured) : this.warmup.endMs.length ? last(this.warmup) : undefined;
  }

  /** The moment every `...Ms` time of the run counts from (hrtime ns), once frame 0's read began. */
  get originNs(): bigint | undefined {
    return this.origin;
  }

  /** Marks the moment times count from (the start of frame 0's read); the first record sets it otherwise. */
  begin(t: bigint): void {
    this.origin ??= t;
    if (this.warmupFrames === 0) this.measuredCpuFromNs ??= mainThreadCpuNs();
  }

  /** The main thread's CPU time when the measured frames began (the last warm-up frame's tail done), for machineLoad. */
  measuredCpuFromNs?: number;

  /**
   * A frame's tail is done (its boxes drawn): after the last warm-up frame's, the main thread's CPU time counts for
   * the measured frames. Here, not at its record, which the sequential loop makes a model run later.
   */
  tailDone(index: number): void {
    if (index === this.warmupFrames - 1) this.measuredCpuFromNs ??= mainThreadCpuNs();
  }

  /** Records a frame's row, once, when its write is done (frame-writes.ts). */
  record({ clock, result, post, stream }: FrameRow): void {
    this.origin ??= clock.t0;
    const at = (t: bigint) => roundMs(nsToMs(t - this.origin!));
    const p = clock.index < this.warmupFrames ? this.warmup : this.measured;
    p.index.push(clock.index);
    if (stream !== undefined) (p.stream ??= []).push(stream);
    // one clock for every stream kind: a live or paced frame counts from its arrival, a file's from its read, and
    // the column stays aligned with the others when the two kinds share a run (earlier frames are filled in)
    if (clock.tCapture !== undefined) p.captureMs ??= [...p.startMs];
    if (p.captureMs) p.captureMs.push(at(clock.tCapture ?? clock.t0));
    if (clock.inferred !== undefined) (p.inferred ??= []).push(clock.inferred ? 1 : 0);
    p.startMs.push(at(clock.t0));
    p.readMs.push(roundMs(clock.readMs));
    p.preprocessMs.push(roundMs(clock.preprocessMs));
    p.inferenceMs.push(roundMs(clock.inferenceMs));
    p.postprocessMs.push(roundMs(clock.postprocessMs));
    p.writeMs.push(roundMs(clock.writeMs));
    p.detections.push(post.detections.length);
    p.inferenceStartMs.push(at(clock.tInference));
    p.postprocessStartMs.push(at(clock.tPostprocess));
    p.endMs.push(at(clock.tEnd));
    p.drawMs.push(roundMs(clock.drawMs));
    p.candidates.push(post.candidates);
    if (result.device) {
      (p.h2dMs ??= []).push(roundMs(result.device.h2dMs));
      (p.gpuComputeMs ??= []).push(roundMs(result.device.gpuComputeMs));
      (p.d2hMs ??= []).push(roundMs(result.device.d2hMs));
    }
    if (p === this.warmup) return;
    if (stream !== undefined) {
      const s = this.perStream.get(stream) ?? { frames: 0, firstMs: at(clock.t0), lastMs: 0 };
      s.frames++;
      s.lastMs = at(clock.tEnd);
      this.perStream.set(stream, s);
    }
    this.inferenceMs += p.inferenceMs[p.inferenceMs.length - 1];
    if (post.candidatesCapped) this.framesCandidatesCapped++;
    if (post.detectionsCapped) this.framesDetectionsCapped++;
    if (post.candidates > this.maxCandidates) this.maxCandidates = post.candidates;
    for (const d of post.detections) {
      const label = this.labels[d.classId] ?? `class${d.classId}`;
      this.perClass[label] = (this.perClass[label] ?? 0) + 1;
    }
    this.total += post.detections.length;
  }

  /**
   * The live overlay, a line each: both FPS so far (running figures, which the final ones in the summary need not
   * equal), and under them what random weights mean. With several streams, a stream's video shows its own end-to-end
   * FPS (its frames over its own time) and the figures over all streams beside it: the aggregate is not the stream's.
   */
  overlayText(backend: string, generatedWeights: boolean, stream?: number): string[] {
    const n = this.frames;
    const e2e = n > 0 && this.wallMs > 0 ? n / (this.wallMs / 1000) : 0;
    const inf = n > 0 && this.inferenceMs > 0 ? n / (this.inferenceMs / 1000) : 0;
    const own = stream !== undefined && this.perStream.size > 1 ? this.perStream.get(stream) : undefined;
    const ownFps = own && own.lastMs > own.firstMs ? own.frames / ((own.lastMs - own.firstMs) / 1000) : 0;
    return [
      own
        ? `${backend}  stream ${stream} so far: ${ownFps.toFixed(1)} FPS  (all ${this.perStream.size} streams: ${e2e.toFixed(1)} FPS, inference ${inf.toFixed(1)} FPS)`
        : `${backend}  so far: inference ${inf.toFixed(1)} FPS  end-to-end ${e2e.toFixed(1)} FPS`,
      ...(generatedWeights ? ['RANDOM WEIGHTS: a timing demo, no real detections'] : []),
    ];
  }

  progress(frame: number, totalFrames: number) {
    return { frame, totalFrames, measured: this.frames, wallMs: this.wallMs, inferenceMs: this.inferenceMs };
  }
}
