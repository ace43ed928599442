/**
 * What both frame loops count: stage times of measured frames, device timings, detections per class, the wall
 * time from the first measured read to the last measured write, and the first frame's latency. Warm-up frames
 * (index < warmupFrames) only set the first-frame latency.
 */
import type { InferenceResult } from '../backends/types.ts';
import type { Detection } from '../detect/types.ts';
import { nsToMs, StageRecorder, type StageTimes } from './stages.ts';

export class LoopTally {
  readonly recorder = new StageRecorder();
  readonly perClass: Record<string, number> = {};
  total = 0;
  firstFrameMs = 0;
  inferenceMs = 0;
  private wallStart: bigint | undefined;
  private wallEnd = 0n;

  constructor(
    private readonly warmupFrames: number,
    private readonly labels: readonly string[],
  ) {}

  get wallMs(): number {
    return this.wallStart === undefined ? 0 : nsToMs(this.wallEnd - this.wallStart);
  }

  /** Frame `index` read from `start` and written by `end` (hrtime ns). */
  record(index: number, start: bigint, end: bigint, stages: StageTimes, result: InferenceResult, detections: Detection[]): void {
    if (index === 0) this.firstFrameMs = nsToMs(end - start);
    if (index < this.warmupFrames) return;
    this.wallStart ??= start;
    this.wallEnd = end;
    this.recorder.add(stages);
    this.inferenceMs += stages.inference;
    if (result.device) {
      this.recorder.device.h2dMs.push(result.device.h2dMs);
      this.recorder.device.gpuComputeMs.push(result.device.gpuComputeMs);
      this.recorder.device.d2hMs.push(result.device.d2hMs);
    }
    for (const d of detections) {
      const label = this.labels[d.classId] ?? `class${d.classId}`;
      this.perClass[label] = (this.perClass[label] ?? 0) + 1;
    }
    this.total += detections.length;
  }

  /** The live overlay: both FPS so far. */
  overlayText(backend: string, generatedWeights: boolean): string {
    const n = this.recorder.frames;
    const e2e = n > 0 && this.wallMs > 0 ? n / (this.wallMs / 1000) : 0;
    const inf = n > 0 && this.inferenceMs > 0 ? n / (this.inferenceMs / 1000) : 0;
    return `${backend}  inference ${inf.toFixed(1)} FPS  end-to-end ${e2e.toFixed(1)} FPS${generatedWeights ? '  RANDOM WEIGHTS: boxes mean nothing' : ''}`;
  }

  progress(frame: number, totalFrames: number) {
    return { frame, totalFrames, measured: this.recorder.frames, wallMs: this.wallMs, inferenceMs: this.inferenceMs };
  }
}
