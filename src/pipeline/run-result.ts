/** The run JSON (schema jetprof.run/2), built from the per-frame records (its words: report/run-lines.ts). Pure. */
import { BACKENDS, type BackendName, type Precision } from '../backends/types.ts';
import type { MachineLoad } from '../platform/machine-load.ts';
import type { OutputRecord, StreamRecord } from './frame-tail.ts';
import type { BatchFigures } from './loop-result.ts';
import type { PostprocessOptions } from '../detect/postprocess.ts';
import type { TegrastatsSeries, TegrastatsSummary } from '../platform/tegrastats.ts';
import type { EnvInfo } from '../platform/env.ts';
import type { VideoInfo } from '../video/reader.ts';
import { spreadMs, type StageStats, summarize } from '../util/stats.ts';
import {
  endToEndFps,
  inferenceFps,
  intervalFrames,
  type ModelAlone,
  type IntervalFrames,
  type LoopKind,
} from './figures.ts';
import {
  latenciesOf,
  latencyPercentiles,
  type Latency,
  STAGE_COLUMN,
  STAGES,
  type PerFrame,
  type Stage,
  wallMsOf,
} from './stages.ts';

/** A stage's figures over the measured frames; min and max absent in runs written before they were recorded. */
type StageSummary = Pick<StageStats, 'meanMs' | 'p50Ms' | 'p90Ms' | 'p99Ms' | 'totalMs' | 'covPct'> &
  Partial<Pick<StageStats, 'minMs' | 'maxMs'>>;

export type { Precision } from '../backends/types.ts';
export type ProfilerName = 'none' | 'nsys' | 'nvprof';

/** What was measured, under which conditions: every report row carries it. */
export interface RunSetup {
  /** Names the row; unique per setup (default: backend-precision-ep-loop[-profiler]). */
  label: string;
  /** ONNX Runtime's provider as actually used ('cpu' after a fallback); 'tensorrt' for the TensorRT backend. */
  executionProvider: string;
  precision: Precision;
  /** What ran the model: the GPU (TensorRT, ORT's CUDA/TensorRT providers) or the CPU, by name. */
  device: string;
  loop: LoopKind;
  /** Frames in flight (pipelined loop). */
  inFlight?: number;
  /** Profiler attached while the FPS was measured. */
  profiler: ProfilerName;
  /** --realtime: frames arrived at their source's rate (or --source-fps), and those that came while busy were dropped. */
  realtime?: {
    sourceFps?: number;
    /** --stagger: stream i's frames arrived i/n of a frame time after stream 0's (else all at the same instant). */
    staggered?: boolean;
  };
  /** Whether the annotated video was written (--no-write: false) and drawn (--no-draw: false); absent in older runs. */
  write?: boolean;
  draw?: boolean;
  /**
   * Where the frame became the model's input: 'cpu' (resize, colour order, scaling and layout in jetprof's process) or
   * 'graph' (a model exported with --frame-input: the backend did them, TensorRT on the GPU; the CPU copied the
   * frame, resizing it first only when it was not the size the model takes). Absent in older runs: 'cpu'.
   */
  preprocessing?: 'cpu' | 'graph';
}

/** The postprocess settings as the run used them (the same fields infer's options have), and what they did. */
interface PostprocessSummary extends PostprocessOptions {
  /** Measured frames with more candidates than maxCandidates / more boxes than maxDet after NMS. */
  framesCandidatesCapped: number;
  framesDetectionsCapped: number;
  /** The most candidates one measured frame had. */
  maxCandidatesSeen: number;
  /** Drawing boxes and the overlay: part of the postprocess stage, shown on its own. */
  draw: StageSummary;
}

export interface RunResult {
  schema: 'jetprof.run/2';
  backend: BackendName;
  backendDetail: string;
  setup: RunSetup;
  /** sha256 of the file that ran; onnxSha256 of the ONNX the weights come from (an engine's is the ONNX it was built from). */
  model: {
    path: string;
    inputWidth: number;
    inputHeight: number;
    classes: number;
    sha256: string;
    onnxSha256?: string;
    generatedWeights?: boolean;
    labels?: string[];
  };
  /** The source as opened (the first stream's with several): its size, rate, frame count, rotation, variable rate. */
  video: VideoInfo;
  /** The video written (one stream's; several streams' are in their records). */
  output?: OutputRecord;
  frameSize: [number, number];
  letterbox: boolean;
  /** Frames measured (warm-up excluded). */
  frames: number;
  warmupFrames: number;
  /** frames / sum of inference time. */
  inferenceFps: number;
  /** frames / wall time from the first measured read to the last measured write. */
  endToEndFps: number;
  wallMs: number;
  modelLoadMs: number;
  /** The model by itself after the loop (back-to-back runs on one frame), as trtexec times a bare engine. */
  modelAlone?: ModelAlone;
  firstFrameMs: number;
  stages: Record<Stage, StageSummary>;
  /** TensorRT's CUDA-event timings. */
  gpuTimings?: { h2dMs: StageSummary; gpuComputeMs: StageSummary; d2hMs: StageSummary };
  /** Absent in runs upgraded from jetprof.run/1. */
  postprocess?: PostprocessSummary;
  detections: { total: number; perClass: Record<string, number> };
  nvtx: boolean;
  env: EnvInfo;
  startedAt: string;
  interrupted?: boolean;
  /**
   * Several streams in one run: each stream's figures (its frames, end-to-end FPS, latency from a frame's read to its
   * boxes); the top-level figures are over all streams, and `aggregateFps` is all frames over the wall time.
   */
  streams?: StreamRecord[];
  aggregateFps?: number;
  /** One free-running stream (no per-stream figures): latency from a frame's read to its boxes over the measured frames. */
  latencyMs?: Latency;
  /**
   * --batch: frames per run of the model (one from each of up to `batch` streams; 1: streams take turns), and
   * frames skipped between inferences (0: every frame).
   */
  batch?: number;
  /** Inference per batch and per frame over the measured batches (several streams); each frame's inference stage holds its share. */
  batches?: BatchFigures;
  interval?: number;
  /** Frames that went through the model, warm-up included. */
  inferredFrames?: number;
  /** --interval: the measured frames the model ran on and those the tracker carried, with their latencies apart. */
  intervalFrames?: IntervalFrames;
  /** A live source that stopped sending frames: when (seconds after the first frame's read) and why. */
  endedEarly?: { afterS: number; framesRead: number; reason: string };
  /** tegrastats beside the run (on a Jetson): the samples on the run's clock, and their summary over the measured frames. */
  tegrastats?: { command: string[]; series: TegrastatsSeries; summary: TegrastatsSummary };
  /** How busy the machine was while the run measured (platform/machine-load.ts). */
  machineLoad?: MachineLoad;
  /** `--detections`: the COCO results file, relative to the run JSON's folder. */
  detectionsFile?: string;
  /** The sha256 of the detections file as this run wrote it. */
  detectionsSha256?: string;
  /** The measured frames, one array per field (absent in runs upgraded from jetprof.run/1). */
  perFrame?: PerFrame;
  /** The warm-up frames, the same fields; in no statistic. */
  warmup?: PerFrame;
}

function stageSummary(values: number[]): StageSummary {
  const s = summarize(values);
  return { ...spreadMs(s), totalMs: s.totalMs, covPct: s.covPct };
}

export interface RunFacts {
  backend: BackendName;
  backendDetail: string;
  setup: RunSetup;
  model: RunResult['model'];
  video: RunResult['video'];
  output?: RunResult['output'];
  frameSize: [number, number];
  letterbox: boolean;
  modelLoadMs: number;
  modelAlone?: ModelAlone;
  firstFrameMs: number;
  postprocess: Omit<PostprocessSummary, 'draw'>;
  detections: RunResult['detections'];
  nvtx: boolean;
  env: EnvInfo;
  startedAt: string;
  interrupted: boolean;
  endedEarly?: RunResult['endedEarly'];
  /** A run that reports per-stream figures (several streams, --realtime, --interval, --perf-interval). */
  streams?: StreamRecord[];
  batch?: number;
  batches?: BatchFigures;
  interval?: number;
  inferredFrames?: number;
  tegrastats?: RunResult['tegrastats'];
  machineLoad?: MachineLoad;
}

/** Every aggregate from the per-frame columns: the same totals and percentiles anyone gets from the arrays. */
export function buildRunResult(perFrame: PerFrame, warmup: PerFrame, facts: RunFacts): RunResult {
  const stages = Object.fromEntries(STAGES.map((s) => [s, stageSummary(perFrame[STAGE_COLUMN[s]])])) as Record<
    Stage,
    StageSummary
  >;
  const {
    interrupted,
    postprocess,
    endedEarly,
    streams,
    batch,
    batches,
    interval,
    inferredFrames,
    tegrastats,
    ...rest
  } = facts;
  const e2e = endToEndFps(perFrame);
  const result: RunResult = {
    schema: 'jetprof.run/2',
    ...rest,
    frames: perFrame.index.length,
    warmupFrames: warmup.index.length,
    inferenceFps: inferenceFps(perFrame),
    endToEndFps: e2e,
    wallMs: wallMsOf(perFrame),
    stages,
    postprocess: { ...postprocess, draw: stageSummary(perFrame.drawMs) },
    perFrame,
    warmup,
    ...(endedEarly ? { endedEarly } : {}),
    // several streams: the top-level figures are over every stream; end-to-end FPS is the aggregate
    ...(streams
      ? { streams, aggregateFps: e2e, batch, ...(batches ? { batches } : {}), interval, inferredFrames }
      : {}),
    // one free-running stream: its latency here (several streams, or paced ones, carry theirs per stream)
    ...(!streams && perFrame.index.length > 0 ? { latencyMs: latencyPercentiles(latenciesOf(perFrame)) } : {}),
    ...(interval ? { intervalFrames: intervalFrames(perFrame) } : {}),
    ...(tegrastats ? { tegrastats } : {}),
    ...(facts.machineLoad ? { machineLoad: facts.machineLoad } : {}),
  };
  if (perFrame.gpuComputeMs?.length) {
    result.gpuTimings = {
      h2dMs: stageSummary(perFrame.h2dMs!),
      gpuComputeMs: stageSummary(perFrame.gpuComputeMs),
      d2hMs: stageSummary(perFrame.d2hMs!),
    };
  }
  if (interrupted) result.interrupted = true;
  return result;
}

/**
 * The videos a run read, by file name: one name, or each source of several streams once with its count
 * ("cam1.avi + cam2.avi + 2x vtest.avi"), in the order the streams were given.
 */
export function videoNames(r: Pick<RunResult, 'video' | 'streams'>): string {
  const base = (p: string) => p.split('/').pop() ?? p;
  if (!r.streams?.length) return base(r.video.path);
  const counts = new Map<string, number>();
  for (const s of r.streams) {
    // a hand-made file may leave a stream's source out: the run's video stands for it
    const name = base(s.source ?? r.video.path);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].map(([name, n]) => (n > 1 ? `${n}x ${name}` : name)).join(' + ');
}

/** Each stage's total time (the same sums the per-frame arrays give). */
export function stageTotalsOf(r: RunResult): Record<Stage, number> {
  return Object.fromEntries(STAGES.map((s) => [s, r.stages[s].totalMs])) as Record<Stage, number>;
}

/**
 * The default label: backend, precision, provider, loop, profiler, and the streams and --interval when not one stream
 * at interval 0, so no two different setups share one (the report merges the runs of one label into one row).
 */
export function defaultLabel(
  backend: BackendName,
  s: Omit<RunSetup, 'label' | 'device' | 'write' | 'draw'>,
  streams: { count: number; interval: number; batch?: number } = { count: 1, interval: 0 },
): string {
  const loop = s.loop === 'pipelined' ? `pipelined${s.inFlight ?? ''}` : 'sequential';
  const ep = backend === 'tensorrt' ? 'gpu' : s.executionProvider;
  // e.g. onnx-fp32-cpu-pipelined3, trt-fp16-gpu-sequential-nsys, onnx-fp32-cpu-sequential-4streams-batch4-interval2,
  // trt-fp16-gpu-pipelined3-graphpre (preprocessing in the model's graph)
  return [
    BACKENDS[backend].tag,
    s.precision,
    ep,
    loop,
    ...(s.profiler !== 'none' ? [s.profiler] : []),
    ...(streams.count > 1 ? [`${streams.count}streams`] : []),
    // several streams always name their batch (the default, one frame from every stream, too): a sweep reads apart
    ...(streams.count > 1 && streams.batch !== undefined ? [`batch${streams.batch}`] : []),
    ...(streams.interval > 0 ? [`interval${streams.interval}`] : []),
    ...(s.realtime ? [`realtime${s.realtime.sourceFps !== undefined ? `${s.realtime.sourceFps}fps` : ''}`] : []),
    ...(s.realtime?.staggered ? ['staggered'] : []),
    ...(s.preprocessing === 'graph' ? ['graphpre'] : []),
  ].join('-');
}

/**
 * A run whose figures count: it ran to its end (not cut short by a signal) and measured at least one frame. The
 * spread of --repeat, the report's rows and infer's summary all keep only these.
 */
export const isCompleteRun = (r: Pick<RunResult, 'interrupted' | 'frames'>) => !r.interrupted && r.frames > 0;

/** The loop's inference stage per frame the model ran on (--interval: the inferred frames only). */
export function loopInferenceMs(r: Pick<RunResult, 'stages' | 'frames' | 'intervalFrames'>): number {
  const n = r.intervalFrames?.inferred ?? r.frames;
  return n > 0 ? r.stages.inference.totalMs / n : 0;
}
