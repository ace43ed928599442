/**
 * The one definition of each figure jetprof reports, as text (docs, the report's definitions note) and as code
 * (the run summary, the report, the profile summary all call these). Pure.
 */
import {
  latenciesOf,
  type Latency,
  latencyPercentiles,
  STAGES,
  type PerFrame,
  type Stage,
  wallMsOf,
} from './stages.ts';
import { sumOf } from '../util/stats.ts';

export type LoopKind = 'pipelined' | 'sequential';

export const DEFINITIONS: [string, string][] = [
  [
    'inference FPS',
    'measured frames / the sum of the time each of them spent in the model (ONNX Runtime run, TensorRT infer; host clock)',
  ],
  [
    'end-to-end FPS',
    "measured frames / wall time, from the start of the first measured frame's read to the end of the last one's write",
  ],
  ['wall ms per frame', 'wall time / measured frames = 1000 / end-to-end FPS'],
  ['busy ms per frame', 'the mean time one frame spent in a stage (its p50/p90/p99 are over the same frames)'],
  [
    'not inference',
    '1 - inference time / wall time = 1 - end-to-end FPS / inference FPS: the share of wall time the model was not running (the second form without --interval: with it, inference FPS counts only the frames the model ran on)',
  ],
  [
    'share of wall (sequential loop)',
    "stage time / wall time; read + preprocess + inference + postprocess + write + loop overhead (the loop's own time between the stages) = 100%",
  ],
  [
    'write (sequential loop)',
    "handing the drawn frame to the encoder, just after the next frame's model run, and waiting for the encoder to finish, just before the run after that: the encoding itself runs beside the CPU stages of the next frames and never beside the model",
  ],
  [
    'pipelined loop',
    "read+preprocess, inference and postprocess+write of different frames run at the same time: busy times per frame add up to more than the wall time per frame, so no share of wall is given per stage; a `frame` NVTX range spans a frame from its read to its write, and ranges of consecutive frames overlap; its postprocess stage is the wait for the frame's boxes from the postprocess thread, where decode and NMS run beside the loop's thread, and their drawing",
  ],
  [
    'critical path',
    "nvprof --dependency-analysis: the longest chain of work in the run where each piece waits for the one before it (CPU API calls, GPU kernels and copies); a row's critical-path time is its part of that chain, so shortening a row on the critical path shortens the run, and a row off it does not",
  ],
  [
    'waiting time',
    'nvprof --dependency-analysis: the time a CPU thread or GPU stream spent blocked on another (the host in cudaStreamSynchronize until a kernel ends): time it could have done other work, e.g. read and preprocess the next frame',
  ],
  [
    'warm-up',
    'the first --warmup frames run the same path and are left out of every figure (their NVTX ranges are named warmup-*)',
  ],
  [
    'Model Input Size',
    "the lab's heading, kept as the lab's table has it: the size of the frames the pipeline read and resized, (width,height,3); the network itself takes its own input size (416x416 for YOLOv4-Tiny), given in the Model column of What each row measured for runs measured here (a row typed in with --fps carries only its frame size)",
  ],
];

/**
 * Measured frames the model ran on over the time it spent on them. With --interval only the inferred frames count
 * (a tracked frame's inference stage is empty): the model's rate, not the interval's.
 */
export function inferenceFps(p: PerFrame): number {
  const n = p.inferred ? p.inferred.filter((x) => x === 1).length : p.index.length;
  const ms = sumOf(p.inferenceMs);
  return n > 0 && ms > 0 ? n / (ms / 1000) : 0;
}

/** --interval: how many measured frames went through the model and how many the tracker carried, and their latencies. */
export interface IntervalFrames {
  inferred: number;
  tracked: number;
  /** From a frame's read (or arrival) to its boxes, over the inferred and the tracked frames apart (ms). */
  latencyMs: { inferred: Latency; tracked: Latency };
}

export function intervalFrames(p: PerFrame): IntervalFrames | undefined {
  if (!p.inferred) return undefined;
  const latency = (flag: number) =>
    latencyPercentiles(
      latenciesOf(
        p,
        p.index.map((_, k) => k).filter((k) => p.inferred![k] === flag),
      ),
    );
  const inferred = p.inferred.filter((x) => x === 1).length;
  return {
    inferred,
    tracked: p.inferred.length - inferred,
    latencyMs: { inferred: latency(1), tracked: latency(0) },
  };
}

export function endToEndFps(p: PerFrame): number {
  const n = p.index.length;
  const wall = wallMsOf(p);
  return n > 0 && wall > 0 ? n / (wall / 1000) : 0;
}

/** Share of wall time the model was not running, 0..1. */
export function notInferenceShare(inferenceTotalMs: number, wallMs: number): number {
  return wallMs > 0 ? Math.max(0, 1 - inferenceTotalMs / wallMs) : 0;
}

export type ShareName = Stage | 'loop overhead';

/**
 * A share's name as printed: in a --realtime run the loop waits for frames to arrive, and that wait is where the loop
 * overhead is measured: headroom the machine had when it dropped nothing; when it dropped frames, no headroom.
 */
export function shareLabel(name: ShareName | string, realtime: boolean, dropped = false): string {
  if (name !== 'loop overhead' || !realtime) return name;
  return dropped ? 'waiting for frames and loop overhead' : 'waiting for frames (headroom) and loop overhead';
}

/**
 * Sequential loop: each stage's share of the wall time and the loop overhead, adding up to 1. (Meaningless for the
 * pipelined loop, where stages overlap: callers give busy times there instead.)
 */
export function wallShares(stageTotalsMs: Record<Stage, number>, wallMs: number): { name: ShareName; share: number }[] {
  if (wallMs <= 0) return [];
  const stages = STAGES.map((s) => ({ name: s as ShareName, share: stageTotalsMs[s] / wallMs }));
  const overhead = Math.max(0, 1 - sumOf(stages.map((s) => s.share)));
  return [...stages, { name: 'loop overhead', share: overhead }];
}

/**
 * Percentages rounded so that the rounded parts add up to the rounded total (largest remainder): a breakdown that
 * says "31% = 12% + 10% + 9%" adds up as printed.
 */
export function roundedPercents(shares: readonly number[], decimals = 1): number[] {
  const scale = 10 ** decimals;
  const scaled = shares.map((s) => s * 100 * scale);
  const target = Math.round(sumOf(scaled));
  const floors = scaled.map(Math.floor);
  let rest = target - sumOf(floors);
  const order = scaled.map((v, i) => [v - Math.floor(v), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of order) {
    if (rest <= 0) break;
    floors[i]++;
    rest--;
  }
  return floors.map((v) => v / scale);
}

/** The model by itself after the loop (src/pipeline/model-alone.ts times it). */
export interface ModelAlone {
  /** Timed runs (after one untimed run), each of `batch` images. */
  runs: number;
  batch: number;
  /** Per run; min, p90 and max absent in runs written before they were recorded. */
  meanMs: number;
  minMs?: number;
  p50Ms: number;
  p90Ms?: number;
  p99Ms: number;
  maxMs?: number;
  /** meanMs / batch: what the loop's inference stage holds per frame. */
  perFrameMs: number;
}

/**
 * "model alone 21.60 ms; in the loop 22.10 ms a frame, 2% slower": the loop's inference stage held against the model
 * by itself, and why they differ when they do by more than 10%.
 */
export function modelAloneLine(
  alone: ModelAlone,
  loopInferenceMs: number,
  run: { wroteVideo: boolean; busyMachine: boolean; ofRuns?: number } = { wroteVideo: true, busyMachine: false },
): string {
  const diff = loopInferenceMs / alone.perFrameMs - 1;
  const rel =
    Math.abs(diff) < 0.005 ? 'the same' : `${Math.abs(diff * 100).toFixed(0)}% ${diff > 0 ? 'slower' : 'faster'}`;
  // what can make the loop's inference slower than the model alone, in this run: never an encoder that did not run
  const causes = [
    'other stages competing for the cores and memory',
    ...(run.wroteVideo ? ['a video encoder still working during the next inference'] : []),
    ...(run.busyMachine ? ['other processes on this busy machine'] : []),
  ];
  // faster in the loop: nothing in the loop speeds the model up; the two figures are measured at different times
  const faster = `: the model alone is ${alone.runs} runs on one frame just after the loop and the loop's figure is every measured frame before them, so the machine's state (clock, caches, ${run.busyMachine ? 'the other processes of this busy machine' : 'other processes'}) differs between them; repeats (--repeat) tell whether it holds`;
  const why = diff > 0.1 ? `: ${causes.join(', or ')}` : diff < -0.1 ? faster : '';
  const few = alone.runs < 10 ? `; only ${alone.runs} runs, so a rough figure` : '';
  const which = run.ofRuns && run.ofRuns > 1 ? ` (the first of ${run.ofRuns} runs)` : '';
  // as trtexec prints a bare engine's latency: min, median, percentiles, max (what an older run recorded)
  const spread =
    alone.minMs !== undefined && alone.p90Ms !== undefined && alone.maxMs !== undefined
      ? `min ${alone.minMs.toFixed(2)}, p50 ${alone.p50Ms.toFixed(2)}, p90 ${alone.p90Ms.toFixed(2)}, p99 ${alone.p99Ms.toFixed(2)}, max ${alone.maxMs.toFixed(2)} ms a run`
      : `p99 ${alone.p99Ms.toFixed(2)} ms a run`;
  return `Model alone${which} ${alone.perFrameMs.toFixed(2)} ms a frame (${alone.runs} back-to-back runs on one frame${alone.batch > 1 ? ` in batches of ${alone.batch}` : ''}, ${spread}${few}); in the loop ${loopInferenceMs.toFixed(2)} ms, ${rel}${why}.`;
}

/** A CPU stage that takes longer a frame than the model: it, not the model, sets the end-to-end rate. */
export interface CpuBound {
  stage: Exclude<Stage, 'inference'>;
  ms: number;
  inferenceMs: number;
}

/**
 * The longest CPU stage when it takes longer than inference (ms a frame, or busy ms in the pipelined loop; other
 * keys such as loop overhead are not stages), else undefined: the one rule the report and capacity both say. Pure.
 */
export function cpuBound(msByStage: Partial<Record<string, number>>): CpuBound | undefined {
  const inferenceMs = msByStage.inference;
  if (inferenceMs === undefined) return undefined;
  let top: CpuBound | undefined;
  for (const stage of STAGES) {
    const ms = msByStage[stage];
    if (stage === 'inference' || ms === undefined) continue;
    if (ms > inferenceMs && (top === undefined || ms > top.ms)) top = { stage, ms, inferenceMs };
  }
  return top;
}
