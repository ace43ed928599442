/** The five timed stages of one frame, in order. Every report, JSON and NVTX range uses these names. */
export const STAGES = ['read', 'preprocess', 'inference', 'postprocess', 'write'] as const;
export type Stage = (typeof STAGES)[number];

/** Per-frame stage durations in milliseconds (from process.hrtime.bigint). */
export type StageTimes = Record<Stage, number>;

export class StageRecorder {
  readonly samples: Record<Stage, number[]> = { read: [], preprocess: [], inference: [], postprocess: [], write: [] };
  /** Optional device-side timings (TensorRT). */
  readonly device: { h2dMs: number[]; gpuComputeMs: number[]; d2hMs: number[] } = { h2dMs: [], gpuComputeMs: [], d2hMs: [] };

  add(t: StageTimes): void {
    for (const s of STAGES) this.samples[s].push(t[s]);
  }
  get frames(): number {
    return this.samples.read.length;
  }
}

export const nsToMs = (ns: bigint): number => Number(ns) / 1e6;
