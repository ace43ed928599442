/**
 * The five timed stages of one frame, in order, and the per-frame records both frame loops keep. Every report, JSON
 * and NVTX range uses these names. Every aggregate of a run (FPS, stage statistics) is computed from the per-frame
 * columns, so what the run JSON says in its summary is exactly what its `perFrame` arrays give.
 */
import { percentile } from '../util/stats.ts';

export const STAGES = ['read', 'preprocess', 'inference', 'postprocess', 'write'] as const;
export type Stage = (typeof STAGES)[number];

export const nsToMs = (ns: bigint): number => Number(ns) / 1e6;

/** Milliseconds kept to the microsecond: the JSON stays short, and the aggregates are computed from these values. */
export const roundMs = (ms: number): number => Math.round(ms * 1000) / 1000;

/**
 * Columnar per-frame records (one array per field, one entry per frame) for a long video to stay small.
 * Times are milliseconds; `startMs`, `inferenceStartMs`, `postprocessStartMs` and `endMs` count from the start of
 * frame 0's read (warm-up included), so a timeline can be drawn from them.
 */
export interface PerFrame {
  index: number[];
  /** The frame's read began. */
  startMs: number[];
  readMs: number[];
  preprocessMs: number[];
  inferenceMs: number[];
  postprocessMs: number[];
  writeMs: number[];
  /** Boxes kept after NMS (and --max-det). */
  detections: number[];
  /** When inference began (after the frame waited for the model, in the pipelined loop). */
  inferenceStartMs: number[];
  /** When postprocess began; write follows it at once. */
  postprocessStartMs: number[];
  /** The frame's write ended. */
  endMs: number[];
  /** Drawing boxes and overlay, a part of postprocessMs (0 with --no-write). */
  drawMs: number[];
  /** Candidates above --conf before --max-candidates. */
  candidates: number[];
  /** Several streams in one run: the stream each frame came from (0-based); `index` then counts per stream. */
  stream?: number[];
  /** --realtime: when the frame arrived at its source's pace (latency counts from it). */
  captureMs?: number[];
  /** --interval: 1 where the model ran, 0 where the tracker carried the boxes. */
  inferred?: number[];
  /** TensorRT's CUDA-event timings, when the backend measures them. */
  h2dMs?: number[];
  gpuComputeMs?: number[];
  d2hMs?: number[];
}

export function emptyPerFrame(): PerFrame {
  return {
    index: [],
    startMs: [],
    readMs: [],
    preprocessMs: [],
    inferenceMs: [],
    postprocessMs: [],
    writeMs: [],
    detections: [],
    inferenceStartMs: [],
    postprocessStartMs: [],
    endMs: [],
    drawMs: [],
    candidates: [],
  };
}

export const STAGE_COLUMN: Record<Stage, 'readMs' | 'preprocessMs' | 'inferenceMs' | 'postprocessMs' | 'writeMs'> = {
  read: 'readMs',
  preprocess: 'preprocessMs',
  inference: 'inferenceMs',
  postprocess: 'postprocessMs',
  write: 'writeMs',
};

/**
 * Wall time of the measured frames: from the start of the first one's read to the end of the last one's write.
 * Frames are written in read order in every loop, so the last frame ends last.
 */
export function wallMsOf(p: PerFrame): number {
  const n = p.index.length;
  return n === 0 ? 0 : p.endMs[n - 1] - p.startMs[0];
}

/** Latency percentiles (ms) from a frame's arrival (--realtime, a live source) or its read to its boxes. */
export interface Latency {
  p50: number;
  p90: number;
  p99: number;
}

/** When each frame's latency counts from (ms from the run's origin): its arrival (--realtime, a live source), else its read. */
export const arrivalMs = (p: PerFrame): number[] => p.captureMs ?? p.startMs;

/** Frame k's latency: from its arrival or read to its boxes (ms). */
export const frameLatencyMs = (p: PerFrame, k: number): number =>
  p.postprocessStartMs[k] + p.postprocessMs[k] - arrivalMs(p)[k];

/** p50, p90 and p99 of latencies sorted ascending. */
export const latencyPercentiles = (sorted: readonly number[]): Latency => ({
  p50: percentile(sorted, 50),
  p90: percentile(sorted, 90),
  p99: percentile(sorted, 99),
});

/**
 * The latency of the given rows (every row by default), sorted ascending; throws when one is negative or not finite
 * (a frame's boxes come after its arrival: a negative latency is a clock mixed up, never a figure to print).
 */
export function latenciesOf(p: PerFrame, rows: readonly number[] = p.index.map((_, k) => k)): number[] {
  const latency = rows.map((k) => frameLatencyMs(p, k)).sort((a, b) => a - b);
  if (latency[0] < -0.01 || latency.some((x) => !Number.isFinite(x)))
    throw new Error(`a latency of ${latency[0]} ms (the latency clock is mixed up)`);
  return latency;
}
