/** The lab report's types: what report rows, tables, profile sections and notes hold (built by lab-report.ts). */
import type { StreamRecord } from '../pipeline/frame-tail.ts';
import type { BatchFigures } from '../pipeline/loop-result.ts';
import type { Agreement } from '../accuracy/agree.ts';
import type { MapResult } from '../accuracy/map.ts';
import type { NsysStats } from '../parsers/nsys.ts';
import type { TegrastatsSeries, TegrastatsSummary } from '../platform/tegrastats.ts';
import type { DependencyRow, NvprofLog } from '../parsers/nvprof.ts';
import { type ShareName } from '../pipeline/figures.ts';
import { type RunResult } from '../pipeline/run-result.ts';
import { type Stage } from '../pipeline/stages.ts';
import { type Spread } from '../util/stats.ts';
import type { CapacityResult } from './capacity-format.ts';

export interface LabeledProfile {
  /** Shown in headings: the file name, or the label of a `jetprof profile` result. */
  label: string;
  nvprof?: NvprofLog;
  nsys?: NsysStats;
  /** The run this profile recorded, when known (a `jetprof profile` result carries it). */
  run?: RunResult;
  /** A `jetprof profile` result: its tool, and what it said about its run (shown even when nothing else is). */
  tool?: 'nvprof' | 'nsys';
  notes?: string[];
}

/** What one row measured, under which conditions. */
export interface RowSetup {
  loop: string;
  profiler: string;
  executionProvider: string;
  precision: string;
  device: string;
  model: string;
  /** The video, and what decoded its frames: "vtest.avi (FFmpeg)". */
  video: string;
  frameSize: string;
  /** How frames came in and went out: free-running or --realtime; writing the drawn video, undrawn, or not writing. */
  pacing: string;
  frames: string;
}

export interface FpsRow {
  label: string;
  /** The machine the row was measured on (the board, else the CPU); for a typed-in row, what --fps said. */
  machine: string;
  /** The model by itself beside the loop's inference stage (runs that timed it), in one sentence. */
  modelAlone?: string;
  /** One free-running stream: its latency from a frame's read to its boxes, in one sentence (the first run's). */
  latency?: string;
  /** The lab table's first column, unique among the rows. */
  modelType: string;
  backendDetail: string;
  inputSize: string;
  inferenceFps: Spread;
  endToEndFps: Spread;
  /** Runs of this label. */
  runs: number;
  frames: number;
  setup: RowSetup;
  profiled: boolean;
  pipelined: boolean;
  /** Share of wall time the model was not running, 0..1 (mean over runs). */
  notInference: number;
  /**
   * Sequential loop: every stage's share of the wall time and the loop overhead, adding up to 1; all but inference
   * are the parts of `notInference`. Empty for the pipelined loop, where stages overlap.
   */
  wallShares: { name: ShareName; share: number }[];
  /** Pipelined loop: busy ms per frame of each stage, and wall ms per frame. */
  busyMs?: Record<Stage, number>;
  wallMsPerFrame: number;
  /** Figures typed in with `report --fps` (no run JSON behind them: no stages, no setup). */
  typedIn?: boolean;
  /** What must be equal for two measured rows' FPS to be compared (absent for typed-in rows). */
  basis?: ComparisonBasis;
  /** Whether the row's runs kept their detections (infer --detections). */
  keptBoxes?: boolean;
  /** Streams that took turns, their batch and --interval (one stream, batch 1, interval 0 for an ordinary run). */
  streamSetup?: { streams: number; batch: number; interval: number };
  /** Paced runs (--realtime, cameras): the frames dropped, over every run and stream of the row, and of how many. */
  drops?: { dropped: number; delivered: number };
  /** What a sweep table shows of the row (measured rows). */
  sweep?: SweepFigures;
}

/** The conditions two measured rows must share before a speed-up between them means anything. */
export interface ComparisonBasis {
  /** The machine: host name where recorded, else the board, CPU and GPU. */
  machine: string;
  /** The ONNX the model's weights come from (an engine is compared by the ONNX it was built from). */
  model: string;
  video: string;
  /** What decoded the frames (FFmpeg, GStreamer's software decoder, a Jetson's NVDEC). */
  decoder: string;
  frameSize: string;
  /** The loop and its frames in flight. */
  loop: string;
  profiler: string;
  /** One stream, or how many took turns (and at which batch). */
  streams: string;
  /** Free-running, or --realtime at the source's rate or --source-fps. */
  pacing: string;
  /** Writing the drawn video, writing undrawn frames (--no-draw), or not writing (--no-write). */
  output: string;
}

/** A pair of rows the report did not compare, and why (one line each in the report). */
export interface NotCompared {
  a: string;
  b: string;
  reason: string;
}

/** Agreement between two labels' boxes (any pair), for the speed-up rule. */
export interface PairAgreement {
  a: string;
  b: string;
  matchedShare?: number;
  /** Boxes on either side in the frames compared. */
  boxes?: number;
  /** Why no agreement was computed. */
  note?: string;
}

/** `report --fps "TensorRT@960x540=10.45/4.99"`: the lab's own figures when there is no run JSON (the off-board route). */
export interface TypedFps {
  name: string;
  inputSize?: [number, number];
  /** The board or machine the figures come from (`--fps NAME@WxH@DEVICE=...`). */
  device?: string;
  inferenceFps: number;
  endToEndFps: number;
}

/** What --interval K buys (end-to-end FPS against the same setup at interval 0) and costs (boxes still found). */
export interface IntervalTrade {
  withInterval: string;
  base: string;
  interval: number;
  /** End-to-end FPS of the interval row and of the interval-0 row. */
  endToEndFps: [number, number];
  ratio: number;
  /** Share of boxes matched between the two rows on the same frames. */
  matchedShare?: number;
  /** Why no matched share is given. */
  note?: string;
}

export interface Speedup {
  faster: string;
  baseline: string;
  inference: number;
  endToEnd: number;
}

export interface StageRow {
  stage: string;
  meanMs: number;
  /** The fastest and slowest frame over every run (absent for runs that did not record them, and for loop overhead). */
  minMs?: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs?: number;
  /** Share of wall time (sequential loop only; rows that are part of another stage have none). */
  share?: number;
  /** 'postprocess' for draw, 'inference' for GPU timings. */
  partOf?: Stage;
}

export interface StageTable {
  label: string;
  modelType: string;
  pipelined: boolean;
  /** Frames per run of the model (several streams in batches); 1 otherwise. */
  batch: number;
  runs: number;
  rows: StageRow[];
  wallMsPerFrame: number;
}

export interface TimedRow {
  name: string;
  calls: number;
  totalNs: number;
  /** Share of its table, 0..100, as the profiler printed it when it did. */
  pct?: number;
}

export interface ProfileSection {
  label: string;
  tool: 'nvprof' | 'nsys';
  /** nvprof --dependency-analysis: the top-N rows, then every other row with waiting time (the lab's picks). */
  criticalPath: DependencyRow[];
  waiting: DependencyRow[];
  kernels: TimedRow[];
  apiCalls: TimedRow[];
  nvtx: TimedRow[];
  osRuntime: TimedRow[];
  notes: string[];
  /**
   * nvprof with --dependency-analysis: the critical path without the rows jetprof classifies as start-up and tear-down
   * (allocation, context, streams), re-normalised to the rest, and what the log gives per frame.
   */
  steadyState?: SteadyState;
  /**
   * Activation layers that launched GPU work of their own (TensorRT's layer ranges named for an activation, e.g.
   * darknet's `*_convolutional_lrelu`): not fused into their convolutions. Undefined without layer ranges.
   */
  activations?: { kind: string; layers: number; kernels: string[]; calls: number; gpuNs: number; frames?: number };
  /** Every GPU row of the log (not only the listed top ones): its total, and the memory copies and sets by kind. */
  gpu?: { totalNs: number; copies: { kind: string; totalNs: number }[] };
}

export interface SteadyState {
  /** The rows left out, by name (start-up and tear-down), and the critical-path time they held (ns). */
  removed: string[];
  removedNs: number;
  /** Rows also left out because the summary counts fewer calls than there are frames: not once a frame. */
  occasional?: { name: string; calls: number }[];
  occasionalNs?: number;
  /** The rest, top rows first: their critical-path time and its share of what remains. */
  rows: { name: string; criticalPathNs: number; pct: number; waitingNs: number }[];
  remainingNs: number;
  /** `<Other>`'s critical-path time: host time outside any CUDA call, over the whole process. */
  otherNs?: number;
  /** Frames the log ran: the calls of the NVTX range `ExecutionContext::enqueue` (TensorRT's inference). */
  frames?: number;
  /** The host's time inside TensorRT's enqueue, a frame (its Range row's total over the frames). */
  enqueuePerFrameNs?: number;
  /** The enqueue range's slowest and fastest call (a first call can hold seconds of start-up). */
  enqueueMaxNs?: number;
  enqueueMinNs?: number;
  /** GPU activities (kernels and copies) in all, and per frame; per frame by kind (kernels, HtoD, DtoH, ...). */
  gpuNs?: number;
  gpuPerFrameNs?: number;
  gpuByKind?: { kind: string; perFrameNs: number }[];
  /** The host waiting on the GPU: cuStreamSynchronize's (or cudaStreamSynchronize's) mean time per call, and calls. */
  sync?: { name: string; avgNs: number; calls: number };
  /**
   * TensorRT's layer ranges, the top ones by GPU time: the GPU time of the work launched inside each, the host's time in
   * it, its calls; and the GPU time of all layer ranges together.
   */
  layers?: { name: string; gpuNs: number; hostNs: number; calls: number }[];
  layersGpuNs?: number;
}

export interface EnvBlock {
  label: string;
  rows: [string, string][];
}

/** A backend that was asked for and failed (crashed, or failed under a profiler). */
export interface FailedBackend {
  modelType: string;
  exitCode: number;
  /** The last line it printed. */
  lastLine?: string;
}

/** A backend that did not run, with why and what would make it run. */
export interface SkippedBackend {
  modelType: string;
  reason: string;
  /** What makes it run, one command each, in order. */
  commands?: string[];
}

/** Per-frame series of one run, for charts (latency over time, histograms, the pipelined timeline). */
export interface FrameSeries {
  label: string;
  pipelined: boolean;
  index: number[];
  startMs: number[];
  stages: Record<Stage, number[]>;
  inferenceStartMs: number[];
  postprocessStartMs: number[];
  endMs: number[];
}

/** Accuracy read with the speed: one row per label, against the reference label's boxes and against ground truth. */
export interface AccuracyRow {
  label: string;
  modelType: string;
  /** The reference itself has no agreement (it is the yardstick). */
  isReference: boolean;
  agreement?: Agreement;
  /** Why there is no agreement, when there is none and this is not the reference. */
  note?: string;
  map?: MapResult;
}

/** tegrastats beside a run: what the board did while it was measured. */
export interface BoardRow {
  label: string;
  modelType: string;
  summary: TegrastatsSummary;
  series: TegrastatsSeries;
}

/** A run of several streams: each stream's figures (report's per-stream table). */
export interface StreamsSection {
  label: string;
  modelType: string;
  aggregateFps: number;
  batch: number;
  /** Inference per batch and per frame (runs that recorded it). */
  batches?: BatchFigures;
  /** --realtime: frames arrived at the source's rate (or --source-fps); what arrived while busy was dropped. */
  realtime?: { sourceFps?: number };
  /** --interval: on which frames the model ran, and their latencies apart from the tracked frames'. */
  intervalLine?: string;
  streams: StreamRecord[];
  /** Each stream's measured frames: when each arrived (or was read), s from the first, and its latency to boxes (ms). */
  latency?: { stream: number; atS: number[]; ms: number[] }[];
}

export interface LabReport {
  /** Empty unless a run had several streams. */
  multiStream: StreamsSection[];
  /** `jetprof capacity` results given with --capacity, in the order given. */
  capacity: CapacityResult[];
  fps: FpsRow[];
  /** Empty unless a run recorded tegrastats (on a Jetson). */
  board: BoardRow[];
  /** Empty when no run kept its detections. */
  accuracy: AccuracyRow[];
  /** The label the others were checked against. */
  accuracyReference?: string;
  skipped: SkippedBackend[];
  failed: FailedBackend[];
  /** Pairs of rows not compared, with the reason. */
  notCompared: NotCompared[];
  /** Rows that differ only in streams, batch and interval, one table each. */
  sweeps: Sweep[];
  /** Runs left out of the figures (interrupted, given twice), one sentence each. */
  runNotes: string[];
  speedups: Speedup[];
  /** Rows run with --interval K against the same setup at interval 0. */
  intervalTrades: IntervalTrade[];
  stages: StageTable[];
  series: FrameSeries[];
  profiles: ProfileSection[];
  env: EnvBlock[];
  definitions: [string, string][];
}

/** What a sweep table shows of a row, over its runs. */
export interface SweepFigures {
  /** Frames of every stream over the wall time (the row's end-to-end FPS for one stream), mean of the runs. */
  aggregateFps: number;
  /** The slowest stream's end-to-end FPS, lowest over the runs. */
  minStreamFps: number;
  /** The worst stream's p99 latency (arrival or read to boxes), highest over the runs; absent when not recorded. */
  worstP99Ms?: number;
  /** infer's CPU time over the frames it ran (warm-up included), mean of the runs; absent when not recorded. */
  cpuMsPerFrame?: number;
}

export interface Sweep {
  /** What the rows share, in words (videos, frame size, loop, pacing, output, backend). */
  setup: string;
  /** The rows' model types, fewest streams first, then batch, then interval. */
  rows: string[];
}
