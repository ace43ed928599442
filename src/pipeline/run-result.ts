/** The run JSON (schema jetprof.run/2) and the lab's table row, built from the per-frame records. Pure. */
import { BACKENDS, type BackendName, type Precision } from '../backends/types.ts';
import { busyMachineSentence, type MachineLoad } from '../platform/machine-load.ts';
import type { StreamRecord } from './frame-tail.ts';
import type { BatchFigures } from './sequential-loop.ts';
import type { PostprocessOptions } from '../detect/postprocess.ts';
import type { TegrastatsSeries, TegrastatsSummary } from '../platform/tegrastats.ts';
import type { EnvInfo } from '../platform/env.ts';
import type { VideoInfo } from '../video/reader.ts';
import { spreadMs, type StageStats, sumOf, summarize } from '../util/stats.ts';
import {
  endToEndFps,
  inferenceFps,
  intervalFrames,
  type ModelAlone,
  modelAloneLine,
  type IntervalFrames,
  type LoopKind,
  notInferenceShare,
  roundedPercents,
  shareLabel,
  wallShares,
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
export type StageSummary = Pick<StageStats, 'meanMs' | 'p50Ms' | 'p90Ms' | 'p99Ms' | 'totalMs' | 'covPct'> &
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
  realtime?: { sourceFps?: number };
  /** Whether the annotated video was written (--no-write: false) and drawn (--no-draw: false); absent in older runs. */
  write?: boolean;
  draw?: boolean;
}

/** The postprocess settings as the run used them (the same fields infer's options have), and what they did. */
export interface PostprocessSummary extends PostprocessOptions {
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
  /** The video written; width and height as written (H.264 writes an odd frame size one pixel smaller). */
  output?: { path: string; codec: string; encoder?: string; encoderNote?: string; width?: number; height?: number };
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

/** A stage's mean, min, p50, p90, p99 and max (ms, 2 decimals; min and max blank in runs that did not record them). */
const stageCells = (x: StageSummary): string[] =>
  [x.meanMs, x.minMs, x.p50Ms, x.p90Ms, x.p99Ms, x.maxMs].map((v) => (v === undefined ? '' : v.toFixed(2)));

/** "latency, read to boxes: p50 41.20, p90 44.02, p99 51.93 ms a frame" for a run of one free-running stream. */
export function latencyLine(r: Pick<RunResult, 'latencyMs' | 'frames'>): string | undefined {
  const l = r.latencyMs;
  if (!l) return undefined;
  return `Latency, a frame's read to its boxes: p50 ${l.p50.toFixed(2)}, p90 ${l.p90.toFixed(2)}, p99 ${l.p99.toFixed(2)} ms (${r.frames} frames).`;
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
  // e.g. onnx-fp32-cpu-pipelined3, trt-fp16-gpu-sequential-nsys, onnx-fp32-cpu-sequential-4streams-batch4-interval2
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
  ].join('-');
}

/**
 * A run whose figures count: it ran to its end (not cut short by a signal) and measured at least one frame. The
 * spread of --repeat, the report's rows and infer's summary all keep only these.
 */
export const isCompleteRun = (r: Pick<RunResult, 'interrupted' | 'frames'>) => !r.interrupted && r.frames > 0;

/** The lab's table, as the lab's handout names its columns: the one owner of these words (console and reports). */
export const LAB_HEADERS = ['Model Type', 'Model Input Size', 'Inference Speed (FPS)', 'End-to-end speed (FPS)'];

/** The lab table's "Model Input Size" cell, as the lab writes it: the frame size as (W,H,3). */
export const labInputSize = (size: readonly [number, number]) => `(${size[0]},${size[1]},3)`;

/** The lab's table header on the console. */
export const LAB_TABLE_HEADER = `| ${LAB_HEADERS.join(' | ')} |\n|${' --- |'.repeat(LAB_HEADERS.length)}`;

/** "ONNX Runtime (CPU)", "OpenCV DNN (CUDA)", "TensorRT": where ORT or OpenCV ran is part of the name. */
/**
 * The lab table's "Model Type" of a run, the same on the console and in reports: `ONNX Runtime (CPU, FP32)`,
 * `TensorRT (FP16)` (TensorRT always runs on the GPU, so no provider), `OpenCV DNN (CUDA, FP16)`.
 */
export function modelTypeName(r: Pick<RunResult, 'backend' | 'setup'>): string {
  const s = r.setup;
  const where = r.backend === 'tensorrt' ? '' : `${s.executionProvider.toUpperCase()}, `;
  return `${BACKENDS[r.backend].title} (${where}${s.precision === 'unknown' ? 'precision unknown' : s.precision.toUpperCase()})`;
}

export function labTableRow(r: RunResult): string {
  return `| ${modelTypeName(r)} | ${labInputSize(r.frameSize)} | ${r.inferenceFps.toFixed(2)} | ${r.endToEndFps.toFixed(2)} |`;
}

/** A short human summary for stderr: the lab row, the per-stage table, and where the gap between the two FPS goes. */
export function formatSummary(r: RunResult): string {
  const lines: string[] = [];
  const s = r.setup;
  const loop = s.loop === 'pipelined' ? `pipelined loop, ${s.inFlight} frames in flight` : 'sequential loop';
  lines.push(
    `${r.setup.label}: ${BACKENDS[r.backend].title} (${r.backendDetail}, ${s.precision}, on ${s.device}, ${loop}${s.profiler !== 'none' ? `, under ${s.profiler}` : ''}), ${r.frames} frames measured after ${r.warmupFrames} warm-up${r.interrupted ? ' (interrupted)' : ''}`,
  );
  lines.push('');
  lines.push(LAB_TABLE_HEADER);
  lines.push(labTableRow(r));
  lines.push('');
  const wallPerFrame = r.frames > 0 ? r.wallMs / r.frames : 0;
  const notInference = notInferenceShare(r.stages.inference.totalMs, r.wallMs);
  if (s.loop === 'sequential') {
    const shares = wallShares(stageTotalsOf(r), r.wallMs);
    const pct = roundedPercents(shares.map((x) => x.share));
    lines.push('| Stage | mean ms | min | p50 | p90 | p99 | max | share of wall |');
    lines.push('| --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const [i, x] of shares.entries()) {
      const st = x.name === 'loop overhead' ? undefined : r.stages[x.name];
      const cells = st
        ? stageCells(st)
        : [((x.share * r.wallMs) / Math.max(1, r.frames)).toFixed(2), '', '', '', '', ''];
      lines.push(`| ${shareLabel(x.name, !!s.realtime)} | ${cells.join(' | ')} | ${pct[i].toFixed(1)}% |`);
    }
    lines.push('');
    // The same rounded shares as the table, so the sentence adds up to what the table says.
    const others = shares.map((x, i) => ({ ...x, pct: pct[i] })).filter((x) => x.name !== 'inference');
    lines.push(
      `Not inference: ${others.reduce((a, x) => a + x.pct, 0).toFixed(1)}% of the wall time (${others.map((x) => `${shareLabel(x.name, !!s.realtime)} ${x.pct.toFixed(1)}%`).join(' + ')})${r.interval ? ': the time besides the model (with --interval, end-to-end FPS counts every frame and inference FPS only those the model ran on, so end-to-end can be the higher)' : ': why end-to-end FPS is below inference FPS'}.`,
    );
  } else {
    lines.push(`| Stage | busy ms per frame (mean) | min | p50 | p90 | p99 | max |`);
    lines.push('| --- | --- | --- | --- | --- | --- | --- |');
    for (const st of STAGES) lines.push(`| ${st} | ${stageCells(r.stages[st]).join(' | ')} |`);
    lines.push(`| wall per frame | ${wallPerFrame.toFixed(2)} | | | | | |`);
    lines.push('');
    lines.push(
      `Stages overlap in the pipelined loop: busy times add up to more than the ${wallPerFrame.toFixed(2)} ms of wall time per frame. The model was not running ${(notInference * 100).toFixed(1)}% of the wall time (end-to-end FPS is ${((1 - notInference) * 100).toFixed(1)}% of inference FPS; compare with --pipeline off).`,
    );
  }
  if (r.streams?.length) {
    lines.push('');
    const b = r.batches;
    const batchLine =
      (r.batch ?? 1) > 1 && b
        ? ` Inference ${b.perBatchMs.mean.toFixed(2)} ms per batch (p50 ${b.perBatchMs.p50.toFixed(2)}, p99 ${b.perBatchMs.p99.toFixed(2)}; ${b.count} batches of ${b.meanImages.toFixed(2)} frames on average), ${b.perFrameMs.toFixed(2)} ms per frame: a frame's preprocess and inference stages hold its share of its batch's.`
        : '';
    lines.push(
      `${r.streams.length} stream${r.streams.length === 1 ? '' : 's'} ${(r.batch ?? 1) > 1 ? `in batches of ${r.batch} (a frame from each of up to ${r.batch} streams per run)` : 'taking turns (batch 1)'}: aggregate ${(r.aggregateFps ?? r.endToEndFps).toFixed(2)} FPS (all frames over the wall time).${batchLine} Per stream:`,
    );
    const verdict = droppedVerdict(r.streams, r.setup.realtime);
    if (verdict) lines.push(verdict);
    lines.push(`| ${STREAM_HEADERS.join(' | ')} |`, `|${' --- |'.repeat(STREAM_HEADERS.length)}`);
    for (const row of streamTableRows(r.streams)) lines.push(`| ${row.join(' | ')} |`);
  }
  const line = intervalLine(r);
  if (line) lines.push('', line);
  const latency = latencyLine(r);
  if (latency) lines.push('', latency);
  const busy = r.machineLoad && busyMachineSentence(r.machineLoad);
  if (r.modelAlone)
    lines.push(
      '',
      modelAloneLine(r.modelAlone, loopInferenceMs(r), { wroteVideo: r.setup.write !== false, busyMachine: !!busy }),
    );
  if (busy) lines.push('', `This run was ${busy}.`);
  const pp = r.postprocess;
  if (pp)
    lines.push(
      `Postprocess: draw ${pp.draw.meanMs.toFixed(2)} ms of it per frame; at most ${pp.maxCandidatesSeen} candidates in a frame.`,
    );
  lines.push(
    `Model load ${r.modelLoadMs.toFixed(0)} ms, first frame ${r.firstFrameMs.toFixed(1)} ms (both excluded). Detections: ${r.detections.total}.`,
  );
  return lines.join('\n');
}

/**
 * --interval K: on which frames the model ran, what inference FPS counts, and the latency of inferred and tracked
 * frames apart (the same sentence on the console and in the reports).
 */
export function intervalLine(
  r: Pick<RunResult, 'interval' | 'intervalFrames' | 'frames'> & { setup?: Pick<RunSetup, 'realtime'> },
): string | undefined {
  const f = r.intervalFrames;
  if (!r.interval || !f) return undefined;
  const l = (x: { p50: number; p90: number; p99: number }) => `p50 ${fixed(x.p50, 1)}, p99 ${fixed(x.p99, 1)} ms`;
  // under --realtime the count runs over the frames a source delivered, dropped ones included (stream-reads.ts): the
  // model runs on a delivered frame whose number is a multiple of K+1 when that frame was kept, so the share of kept
  // frames it ran on follows the drops
  const which = r.setup?.realtime
    ? `every ${ordinal(r.interval + 1)} frame each source delivered, when that frame was not dropped: dropped frames count, so the share of processed frames the model ran on follows the drops`
    : `every ${ordinal(r.interval + 1)} frame of each stream`;
  return `--interval ${r.interval}: the model ran on ${f.inferred} of the ${r.frames} measured frames (${which}); the tracker carried the boxes on the other ${f.tracked}. Inference FPS is the model's rate over the ${f.inferred} frames it ran on; end-to-end FPS is over all ${r.frames}, so it can be the higher of the two. Latency, read to boxes: inferred frames ${l(f.latencyMs.inferred)}; tracked frames ${l(f.latencyMs.tracked)}.`;
}

const ordinal = (n: number) =>
  `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;

/** The loop's inference stage per frame the model ran on (--interval: the inferred frames only). */
export function loopInferenceMs(r: Pick<RunResult, 'stages' | 'frames' | 'intervalFrames'>): number {
  const n = r.intervalFrames?.inferred ?? r.frames;
  return n > 0 ? r.stages.inference.totalMs / n : 0;
}

/** A figure that may be missing (a stream that processed no frame has no latency; JSON keeps NaN as null). */
const fixed = (v: number | null | undefined, digits: number) =>
  typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '-';

/** The per-stream table, the same on the console and in the reports. */
export const STREAM_HEADERS = [
  'Stream',
  'Source',
  'Frames processed',
  'Delivered FPS',
  'Processed FPS',
  'Dropped',
  'Latency p50 / p90 / p99 (ms)',
  'Ended early',
];

/**
 * Delivered FPS: the frames its source gave over the stream's wall time (processed and dropped); processed FPS: the
 * frames that went through the pipeline over the same time; dropped: count and share of what was delivered.
 */
export function streamTableRows(streams: readonly StreamRecord[]): string[][] {
  return streams.map((s) => {
    const delivered = s.frames + (s.droppedFrames ?? 0);
    const deliveredFps = s.frames > 0 ? (s.endToEndFps * delivered) / s.frames : NaN;
    const l = s.latencyMs ?? {};
    return [
      String(s.index),
      s.source,
      String(s.frames),
      fixed(deliveredFps, 2),
      fixed(s.endToEndFps, 2),
      delivered > 0 ? `${s.droppedFrames ?? 0} (${(((s.droppedFrames ?? 0) / delivered) * 100).toFixed(0)}%)` : '0',
      [l.p50, l.p90, l.p99].map((v) => fixed(v, 1)).join(' / '),
      s.endedEarly ? `after ${s.endedEarly.framesRead} frames: ${s.endedEarly.reason}` : '',
    ];
  });
}

/**
 * One line above the per-stream table of a --realtime run: whether the machine kept up with what the sources
 * delivered, and how much it dropped. Undefined for a free-running run (it reads as fast as it processes).
 */
export function droppedVerdict(
  streams: readonly StreamRecord[],
  realtime: RunSetup['realtime'] | undefined,
): string | undefined {
  if (!realtime) return undefined;
  const rate = realtime.sourceFps !== undefined ? `${realtime.sourceFps} FPS` : "each source's own rate";
  const dropped = sumOf(streams.map((s) => s.droppedFrames ?? 0));
  const delivered = sumOf(streams.map((s) => s.frames + (s.droppedFrames ?? 0)));
  if (dropped === 0)
    return `Kept up: every frame the ${streams.length === 1 ? 'source' : `${streams.length} sources`} delivered at ${rate} was processed, none dropped (the time spent waiting for frames is headroom, not a cost).`;
  const worst = streams.reduce((a, s) => ((s.droppedFrames ?? 0) > (a.droppedFrames ?? 0) ? s : a));
  const same = streams.every((s) => (s.droppedFrames ?? 0) === (worst.droppedFrames ?? 0));
  // one stream, or streams that all dropped as many: no stream "dropped the most"
  const most =
    streams.length === 1
      ? ''
      : same
        ? `; every stream dropped ${worst.droppedFrames} of ${worst.frames + (worst.droppedFrames ?? 0)}`
        : `; stream ${worst.index} dropped the most (${worst.droppedFrames} of ${worst.frames + (worst.droppedFrames ?? 0)})`;
  return `Did not keep up: ${dropped} of the ${delivered} frames delivered at ${rate} were dropped (${((dropped / delivered) * 100).toFixed(0)}%), as a camera's frames are when the pipeline is busy${most}.`;
}

/** The caps that bound, in one line each (the console says it once per run). */
/** A note per paced stream whose video was written with frames dropped: stretched to the camera's time, or why not. */
export function realTimeNotes(r: Pick<RunResult, 'streams'>): string[] {
  return (r.streams ?? []).flatMap((s) => {
    const t = s.output?.realTime;
    if (!t) return [];
    const of = `stream ${s.index} dropped ${s.droppedFrames} of the frames its camera delivered`;
    return [
      t.stretched
        ? `${of}: its video (${s.output!.path}) is stretched ${t.scale.toFixed(2)}x to the camera's time, each written frame standing for the frames dropped after it`
        : `${of}: its video (${s.output!.path}) plays ${t.scale.toFixed(2)}x faster than the camera ran (not stretched: ${t.why})`,
    ];
  });
}

export function capNotes(r: RunResult): string[] {
  const pp = r.postprocess;
  const notes: string[] = [];
  if (!pp) return notes;
  if (pp.framesCandidatesCapped > 0) {
    notes.push(
      `${pp.framesCandidatesCapped} of ${r.frames} frames had more than --max-candidates ${pp.maxCandidates} candidates (up to ${pp.maxCandidatesSeen}): only the top ${pp.maxCandidates} by score entered NMS`,
    );
  }
  if (pp.framesDetectionsCapped > 0) {
    notes.push(
      `${pp.framesDetectionsCapped} of ${r.frames} frames kept more than --max-det ${pp.maxDet} boxes after NMS: the lowest-scoring ones were dropped`,
    );
  }
  return notes;
}
