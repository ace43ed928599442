/**
 * The lab report as data: the FPS table (one row per label, mean and spread where a label ran several times),
 * what each row measured, speed-ups, where end-to-end time goes, per-stage tables, and for each profile the critical
 * path, waiting time, top kernels and API calls, NVTX ranges and notes drawn from the numbers. Pure: run JSONs and
 * parsed profiles in, a LabReport out; markdown.ts and html.ts render it.
 */
import type { Agreement } from '../accuracy/agree.ts';
import type { MapResult } from '../accuracy/map.ts';
import type { ReportAccuracy } from './report-accuracy.ts';
import type { NsysRow, NsysStats } from '../parsers/nsys.ts';
import { jetpackOf } from '../platform/board.ts';
import type { TegrastatsSeries, TegrastatsSummary } from '../platform/tegrastats.ts';
import type { DependencyRow, NvprofLog } from '../parsers/nvprof.ts';
import { DEFINITIONS, notInferenceShare, type ShareName, wallShares } from '../pipeline/figures.ts';
import { modelTypeName, type RunResult, stageTotalsOf } from '../pipeline/run-result.ts';
import { STAGES, type Stage } from '../pipeline/stages.ts';
import { spread, type Spread } from '../util/stats.ts';
import { formatNs, formatPct } from './tables.ts';

export interface LabeledProfile {
  /** Shown in headings: the file name, or the label of a `jetprof profile` result. */
  label: string;
  nvprof?: NvprofLog;
  nsys?: NsysStats;
  /** The run this profile recorded, when known (a `jetprof profile` result carries it). */
  run?: RunResult;
}

/** What one row measured, under which conditions. */
export interface RowSetup {
  loop: string;
  profiler: string;
  executionProvider: string;
  precision: string;
  device: string;
  model: string;
  video: string;
  frameSize: string;
  frames: string;
}

export interface FpsRow {
  label: string;
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
}

/** The conditions two measured rows must share before a speed-up between them means anything. */
export interface ComparisonBasis {
  /** The machine: host name where recorded, else the board, CPU and GPU. */
  machine: string;
  /** The ONNX the model's weights come from (an engine is compared by the ONNX it was built from). */
  model: string;
  video: string;
  frameSize: string;
  /** The loop and its frames in flight. */
  loop: string;
  profiler: string;
}

export function comparisonBasis(r: RunResult): ComparisonBasis {
  const e = r.env;
  const machine = e.host ? `host ${e.host}` : [e.jetson?.model, e.cpu, e.gpu && e.gpu !== e.jetson?.model ? e.gpu : undefined].filter(Boolean).join(', ');
  const onnx = r.model.onnxSha256 ?? (r.backend === 'tensorrt' ? undefined : r.model.sha256);
  return {
    machine,
    model: onnx ? `model ${onnx.slice(0, 12)}` : `engine ${r.model.sha256.slice(0, 12)} (built from an unrecorded ONNX)`,
    video: r.video.path.split('/').pop() ?? r.video.path,
    frameSize: `${r.frameSize[0]}x${r.frameSize[1]}`,
    loop: r.setup.loop === 'pipelined' ? `pipelined loop, ${r.setup.inFlight ?? '?'} in flight` : 'sequential loop',
    profiler: r.setup.profiler === 'none' ? 'no profiler' : `under ${r.setup.profiler}`,
  };
}

const BASIS_WORDS: [keyof ComparisonBasis, string][] = [
  ['machine', 'different machine'],
  ['model', 'different model'],
  ['video', 'different video'],
  ['frameSize', 'different frame size'],
  ['loop', 'different loop'],
  ['profiler', 'different profiler'],
];

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

/**
 * Why rows `a` and `b` may not be compared, or undefined when they may: both measured by jetprof on the same
 * machine, model, video and frame size, loop and profiler, and where both kept boxes, the boxes agree (matched share
 * at least `minMatch`). Typed-in rows compare only with each other (the user typed them from one board).
 */
export function whyNotComparable(a: FpsRow, b: FpsRow, agreement: PairAgreement | undefined, minMatch: number): string | undefined {
  if (a.typedIn && b.typedIn) return undefined;
  if (a.typedIn || b.typedIn) {
    const [typed, measured] = a.typedIn ? [a, b] : [b, a];
    return `${typed.modelType} was typed in (device and loop unknown), ${measured.modelType} was measured by jetprof`;
  }
  const diffs = BASIS_WORDS.filter(([k]) => a.basis![k] !== b.basis![k]).map(([k, words]) => `${words} (${a.basis![k]} / ${b.basis![k]})`);
  if (diffs.length) return diffs.join('; ');
  if (a.keptBoxes && b.keptBoxes) {
    if (!agreement || agreement.matchedShare === undefined) return `boxes not checked (${agreement?.note ?? 'no agreement computed'})`;
    if (!agreement.boxes) return 'boxes not checked: neither found a box (random weights or a high --conf?), so nothing says they compute the same thing';
    if (agreement.matchedShare < minMatch) return `boxes disagree, ${(agreement.matchedShare * 100).toFixed(agreement.matchedShare > 0.99 ? 2 : 0)}% matched (at least ${(minMatch * 100).toFixed(0)}% needed)`;
  }
  return undefined;
}

/** `report --fps "TensorRT@960x540=10.45/4.99"`: the lab's own figures when there is no run JSON (the off-board route). */
export interface TypedFps {
  name: string;
  inputSize?: [number, number];
  inferenceFps: number;
  endToEndFps: number;
}

export function typedFpsRow(x: TypedFps): FpsRow {
  const one = (v: number) => spread([v]);
  return {
    label: x.name,
    modelType: x.name,
    backendDetail: 'typed in',
    inputSize: x.inputSize ? `(${x.inputSize[0]},${x.inputSize[1]},3)` : '',
    inferenceFps: one(x.inferenceFps),
    endToEndFps: one(x.endToEndFps),
    runs: 1,
    frames: 0,
    setup: { loop: 'unknown', profiler: 'unknown', executionProvider: '', precision: '', device: 'unknown (typed in)', model: '', video: '', frameSize: x.inputSize ? `${x.inputSize[0]}x${x.inputSize[1]}` : '', frames: '' },
    profiled: false,
    pipelined: false,
    notInference: notInferenceShare(1000 / x.inferenceFps, 1000 / x.endToEndFps),
    wallShares: [],
    wallMsPerFrame: 1000 / x.endToEndFps,
    typedIn: true,
  };
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
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Share of wall time (sequential loop only; rows that are part of another stage have none). */
  share?: number;
  /** 'postprocess' for draw, 'inference' for GPU timings. */
  partOf?: Stage;
}

export interface StageTable {
  label: string;
  modelType: string;
  pipelined: boolean;
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

export interface LabReport {
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
  /** Runs left out of the figures (interrupted, given twice), one sentence each. */
  runNotes: string[];
  speedups: Speedup[];
  stages: StageTable[];
  series: FrameSeries[];
  profiles: ProfileSection[];
  env: EnvBlock[];
  definitions: [string, string][];
}


/** Runs by label, in first-seen order. */
export function groupByLabel(runs: RunResult[]): RunResult[][] {
  const groups = new Map<string, RunResult[]>();
  for (const r of runs) {
    const g = groups.get(r.setup.label);
    if (g) g.push(r);
    else groups.set(r.setup.label, [r]);
  }
  return [...groups.values()];
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);

/**
 * Sequential loop: the mean over runs of each part's share of wall time (stages and loop overhead). Each run's shares
 * add up to 1, so their means do too, and the parts still add up to the mean not-inference share.
 */
function meanWallShares(runs: RunResult[]): { name: ShareName; share: number }[] {
  const shares = runs.map((x) => wallShares(stageTotalsOf(x), x.wallMs));
  return shares[0].map((x) => ({ name: x.name, share: mean(shares.map((sh) => sh.find((y) => y.name === x.name)?.share ?? 0)) }));
}

const meanWallMsPerFrame = (runs: RunResult[]) => mean(runs.map((x) => (x.frames > 0 ? x.wallMs / x.frames : 0)));

function rowSetup(runs: RunResult[]): RowSetup {
  const r = runs[0];
  const s = r.setup;
  const frames = [...new Set(runs.map((x) => x.frames))].join('/');
  return {
    loop: s.loop === 'pipelined' ? `pipelined (${s.inFlight ?? '?'} in flight)` : 'sequential',
    profiler: s.profiler,
    executionProvider: s.executionProvider,
    precision: s.precision,
    device: s.device,
    model: `${r.model.path.split('/').pop()} ${r.model.sha256.slice(0, 8)}${r.model.generatedWeights ? ' (random weights)' : ''}`,
    video: r.video.path.split('/').pop() ?? r.video.path,
    frameSize: `${r.frameSize[0]}x${r.frameSize[1]}`,
    frames: `${frames} measured + ${r.warmupFrames} warm-up`,
  };
}

const baseModelType = modelTypeName;

export function fpsRow(runs: RunResult[]): Omit<FpsRow, 'modelType'> & { baseModelType: string } {
  const r = runs[0];
  const pipelined = r.setup.loop === 'pipelined';
  const notInference = mean(runs.map((x) => notInferenceShare(x.stages.inference.totalMs, x.wallMs)));
  return {
    label: r.setup.label,
    baseModelType: baseModelType(r),
    backendDetail: r.backendDetail,
    inputSize: `(${r.frameSize[0]},${r.frameSize[1]},3)`,
    inferenceFps: spread(runs.map((x) => x.inferenceFps)),
    endToEndFps: spread(runs.map((x) => x.endToEndFps)),
    runs: runs.length,
    frames: runs.reduce((t, x) => t + x.frames, 0),
    setup: rowSetup(runs),
    profiled: r.setup.profiler !== 'none',
    pipelined,
    notInference,
    wallShares: pipelined ? [] : meanWallShares(runs),
    ...(pipelined ? { busyMs: Object.fromEntries(STAGES.map((st) => [st, mean(runs.map((x) => x.stages[st].meanMs))])) as Record<Stage, number> } : {}),
    wallMsPerFrame: meanWallMsPerFrame(runs),
    basis: comparisonBasis(r),
    keptBoxes: runs.every((x) => !!x.detectionsFile),
  };
}

const pairKey = (a: string, b: string) => (a < b ? `${a}\n${b}` : `${b}\n${a}`);

/**
 * Every faster row against every slower one (by inference FPS) that may be compared; every other pair goes to
 * `notCompared` with its reason.
 */
export function speedups(rows: FpsRow[], agreements: PairAgreement[] = [], minMatch = DEFAULT_MIN_MATCH): { speedups: Speedup[]; notCompared: NotCompared[] } {
  const byPair = new Map(agreements.map((x) => [pairKey(x.a, x.b), x]));
  const out: Speedup[] = [];
  const notCompared: NotCompared[] = [];
  rows.forEach((x, i) => {
    for (const y of rows.slice(i + 1)) {
      const reason = whyNotComparable(x, y, byPair.get(pairKey(x.label, y.label)), minMatch);
      if (reason) {
        notCompared.push({ a: x.modelType, b: y.modelType, reason });
        continue;
      }
      const [a, b] = x.inferenceFps.mean >= y.inferenceFps.mean ? [x, y] : [y, x];
      if (b.inferenceFps.mean <= 0 || b.endToEndFps.mean <= 0) continue;
      out.push({ faster: a.modelType, baseline: b.modelType, inference: a.inferenceFps.mean / b.inferenceFps.mean, endToEnd: a.endToEndFps.mean / b.endToEndFps.mean });
    }
  });
  return { speedups: out, notCompared };
}

/** The matched share two rows' boxes need before their speeds are compared (`report --min-match`). */
export const DEFAULT_MIN_MATCH = 0.99;

function stageTable(runs: RunResult[], modelType: string): StageTable {
  const r = runs[0];
  const pipelined = r.setup.loop === 'pipelined';
  const avg = (f: (x: RunResult) => number) => mean(runs.map(f));
  const stat = (pick: (x: RunResult) => RunResult['stages'][Stage] | undefined) => ({
    meanMs: avg((x) => pick(x)?.meanMs ?? 0),
    p50Ms: avg((x) => pick(x)?.p50Ms ?? 0),
    p90Ms: avg((x) => pick(x)?.p90Ms ?? 0),
    p99Ms: avg((x) => pick(x)?.p99Ms ?? 0),
  });
  const shares = pipelined ? [] : meanWallShares(runs);
  const shareOf = (name: ShareName) => (pipelined ? undefined : (shares.find((y) => y.name === name)?.share ?? 0));
  const rows: StageRow[] = STAGES.map((stage) => ({ stage, ...stat((x) => x.stages[stage]), share: shareOf(stage) }));
  if (!pipelined) {
    const perFrame = avg((x) => (x.frames > 0 ? (x.wallMs - Object.values(stageTotalsOf(x)).reduce((a, b) => a + b, 0)) / x.frames : 0));
    rows.push({ stage: 'loop overhead', meanMs: Math.max(0, perFrame), p50Ms: NaN, p90Ms: NaN, p99Ms: NaN, share: shareOf('loop overhead') });
  }
  if (r.postprocess) rows.push({ stage: 'draw', ...stat((x) => x.postprocess?.draw), partOf: 'postprocess' });
  if (r.gpuTimings) {
    rows.push(
      { stage: 'h2d copy', ...stat((x) => x.gpuTimings?.h2dMs), partOf: 'inference' },
      { stage: 'gpu compute', ...stat((x) => x.gpuTimings?.gpuComputeMs), partOf: 'inference' },
      { stage: 'd2h copy', ...stat((x) => x.gpuTimings?.d2hMs), partOf: 'inference' },
    );
  }
  return { label: r.setup.label, modelType, pipelined, runs: runs.length, rows, wallMsPerFrame: meanWallMsPerFrame(runs) };
}

function frameSeries(r: RunResult): FrameSeries | undefined {
  const p = r.perFrame;
  if (!p || p.index.length === 0) return undefined;
  return {
    label: r.setup.label,
    pipelined: r.setup.loop === 'pipelined',
    index: p.index,
    startMs: p.startMs,
    stages: { read: p.readMs, preprocess: p.preprocessMs, inference: p.inferenceMs, postprocess: p.postprocessMs, write: p.writeMs },
    inferenceStartMs: p.inferenceStartMs,
    postprocessStartMs: p.postprocessStartMs,
    endMs: p.endMs,
  };
}


function envBlock(r: RunResult): EnvBlock {
  const e = r.env;
  const rows: [string, string][] = [];
  if (e.jetson?.model) rows.push(['Device', e.jetson.model]);
  if (e.jetson?.l4t) rows.push(['L4T (JetPack)', `${e.jetson.l4t} (JetPack ${jetpackOf(e.jetson.l4t) ?? '?'})`]);
  if (e.powerMode) rows.push(['Power mode', e.powerMode]);
  rows.push(['CPU', e.cpu]);
  if (e.gpu && e.gpu !== e.jetson?.model) rows.push(['GPU', e.gpu]);
  if (e.tensorrt) rows.push(['TensorRT', e.tensorrt]);
  if (e.onnxruntime) rows.push(['ONNX Runtime', `${e.onnxruntime} (${r.setup.executionProvider})`]);
  if (e.opencv) rows.push(['OpenCV', e.opencv]);
  rows.push(['Node.js', e.node]);
  rows.push(['Model', `${r.model.path} (${r.model.inputWidth}x${r.model.inputHeight}, ${r.model.classes} classes${r.model.generatedWeights ? ', RANDOM weights' : ''})`]);
  rows.push(['Video', `${r.video.path} (${r.video.width}x${r.video.height}, ${r.frames} frames measured after ${r.warmupFrames} warm-up)`]);
  return { label: r.setup.label, rows };
}

function nsysTimed(rows: NsysRow[] | undefined, nameKeys: string[]): TimedRow[] {
  return (rows ?? []).map((r) => ({
    name: String(nameKeys.map((k) => r[k]).find((v) => v !== undefined && v !== null) ?? ''),
    calls: Number(r.instances ?? r.calls ?? r.count ?? 0),
    totalNs: Number(r.totalNs ?? 0),
    ...(typeof r.timePct === 'number' ? { pct: r.timePct } : {}),
  }));
}

const byTotal = (a: TimedRow, b: TimedRow) => b.totalNs - a.totalNs;

/** Notes a reader would otherwise have to work out from the tables. Each is tied to a number in them. */
export function profileNotes(p: Omit<ProfileSection, 'notes'>, run?: RunResult): string[] {
  const notes: string[] = [];
  const cp = p.criticalPath;
  const setup = cp.filter((d) => /^(cudaMalloc|cudaFree|cuCtx(Create|Detach|Destroy)|cudaStreamCreate|cudaHostAlloc|cudaMallocHost)/.test(d.name) && d.criticalPathPct >= 1);
  for (const d of setup.slice(0, 3)) {
    const name = d.name.replace(/_v\d+$/, '');
    notes.push(`${name} is ${formatPct(d.criticalPathPct)} of the critical path (${formatNs(d.criticalPathNs)}): start-up and tear-down (allocation, context), outside the frame loop; the per-frame cost is in the NVTX ranges and the FPS table.`);
  }
  const other = cp.find((d) => d.name === '<Other>');
  if (other && other.criticalPathPct >= 1) {
    notes.push(`<Other> is ${formatPct(other.criticalPathPct)} of the critical path: CPU work outside CUDA calls (decoding, resizing, drawing, encoding, Python/Node itself).`);
  }
  const waits = [...p.waiting].sort((a, b) => b.waitingNs - a.waitingNs);
  if (waits[0]) {
    notes.push(`${waits[0].name} waits ${formatNs(waits[0].waitingNs)} in all: the host blocks there until the GPU is done; overlapping the next frame's read and preprocess with it hides that time (jetprof's pipelined loop).`);
  }
  const convLike = p.kernels.filter((k) => /conv|cudnn|winograd|gemm|implicit/i.test(k.name));
  const fused = convLike.filter((k) => /relu|leaky|swish|mish/i.test(k.name));
  const separate = p.kernels.filter((k) => !convLike.includes(k) && /leaky|relu|activation|sigmoid/i.test(k.name));
  if (fused.length > 0 && separate.length === 0) {
    notes.push(`conv and activation fused in TensorRT: ${fused.length} of the top convolution kernels carry the activation (e.g. ${fused[0].name.slice(0, 60)}); no separate activation kernels.`);
  }
  const gpuTotal = p.kernels.reduce((s, k) => s + k.totalNs, 0);
  const copies = p.kernels.filter((k) => /\[CUDA mem(cpy|set)/.test(k.name));
  if (copies.length && gpuTotal > 0) {
    const c = copies.reduce((s, k) => s + k.totalNs, 0);
    notes.push(`memory copies are ${((c / gpuTotal) * 100).toFixed(1)}% of the GPU time listed (${formatNs(c)}).`);
  }
  if (p.tool === 'nsys' && p.kernels.length === 0 && p.apiCalls.length === 0) {
    notes.push('no CUDA activity in this profile (ONNX Runtime on the CPU, or no GPU): the NVTX and OS runtime tables carry the timing.');
  }
  const frame = p.nvtx.find((r) => r.name === 'frame');
  const inference = p.nvtx.find((r) => r.name === 'inference');
  const runNote = run ? ` The run's figure: the model was not running ${(notInferenceShare(run.stages.inference.totalMs, run.wallMs) * 100).toFixed(1)}% of the wall time.` : '';
  if (frame && inference && frame.totalNs > 0 && frame.calls > 0) {
    if (run?.setup.loop === 'pipelined') {
      notes.push(
        `frame ranges overlap in the pipelined loop (a frame's range spans its read to its write while the next frames are read): the mean frame range is ${formatNs(Math.round(frame.totalNs / frame.calls))} against ${formatNs(Math.round((run.wallMs / Math.max(1, run.frames)) * 1e6))} of wall time per frame, so shares of the summed frame ranges mean nothing here.${runNote}`,
      );
    } else {
      notes.push(`inference is ${((inference.totalNs / frame.totalNs) * 100).toFixed(1)}% of the time inside frame ranges (${formatNs(inference.totalNs)} of ${formatNs(frame.totalNs)}); the rest is read, preprocess, postprocess and write.${runNote}`);
    }
  }
  if (frame && run && frame.calls !== run.frames) {
    notes.push(`the profile has ${frame.calls} frame ranges where the run measured ${run.frames} frames (runs before this version counted warm-up frames as frame ranges).`);
  }
  return notes;
}

/** The lab's picks from a dependency table: the top `top` rows, then every other row that waits. */
export function pickCriticalPath(dependency: DependencyRow[], top: number): { criticalPath: DependencyRow[]; waiting: DependencyRow[] } {
  return { criticalPath: dependency.slice(0, top), waiting: dependency.slice(top).filter((d) => d.waitingNs > 0) };
}

export function profileSection(p: LabeledProfile, top: number): ProfileSection[] {
  const out: Omit<ProfileSection, 'notes'>[] = [];
  if (p.nvprof) {
    const procs = p.nvprof.processes.filter((x) => x.summary.length || x.dependency.length || x.nvtx.domains.length);
    for (const proc of procs) {
      const label = procs.length > 1 ? `${p.label} (process ${proc.pid ?? '?'})` : p.label;
      const timed = (type: string) =>
        proc.summary
          .filter((r) => r.type === type)
          .map((r) => ({ name: r.name, calls: r.calls, totalNs: r.totalNs, pct: r.timePct }))
          .sort(byTotal)
          .slice(0, top);
      const nvtx = proc.nvtx.domains.flatMap((d) =>
        d.ranges.flatMap((rg) => rg.rows.filter((r) => r.type === 'Range').map((r) => ({ name: d.name && d.name !== '<unnamed>' ? `${d.name}: ${rg.name}` : rg.name, calls: r.calls, totalNs: r.totalNs }))),
      );
      out.push({
        label,
        tool: 'nvprof',
        ...pickCriticalPath(proc.dependency, top),
        kernels: timed('GPU activities'),
        apiCalls: timed('API calls'),
        nvtx: nvtx.sort(byTotal).slice(0, top),
        osRuntime: [],
      });
    }
  }
  if (p.nsys) {
    const r = p.nsys.reports;
    out.push({
      label: p.label,
      tool: 'nsys',
      criticalPath: [],
      waiting: [],
      kernels: nsysTimed(r.cuda_gpu_kern_sum?.rows, ['name']).concat(nsysTimed(r.cuda_gpu_mem_time_sum?.rows, ['operation', 'name'])).sort(byTotal).slice(0, top),
      apiCalls: nsysTimed(r.cuda_api_sum?.rows, ['name']).sort(byTotal).slice(0, top),
      nvtx: nsysTimed(r.nvtx_sum?.rows, ['range', 'name']).map((x) => ({ ...x, name: x.name.replace(/^:/, '') })).sort(byTotal).slice(0, top),
      osRuntime: nsysTimed(r.osrt_sum?.rows, ['name']).sort(byTotal).slice(0, top),
    });
  }
  return out.map((s) => ({ ...s, notes: profileNotes(s, p.run) }));
}

export interface ReportExtras {
  skipped?: SkippedBackend[];
  failed?: FailedBackend[];
  accuracy?: ReportAccuracy;
  typedFps?: TypedFps[];
  /** Matched share two rows' boxes need before their speeds are compared (default 0.99). */
  minMatch?: number;
  /** Sentences about runs left out before the report was built (files given twice). */
  runNotes?: string[];
}

function accuracyRows(fps: FpsRow[], acc: ReportAccuracy | undefined): { rows: AccuracyRow[]; reference?: string } {
  if (!acc || (acc.agreement.length === 0 && acc.maps.length === 0)) return { rows: [] };
  const reference = acc.agreement[0]?.ref;
  const rows = fps
    .map((x) => {
      const a = acc.agreement.find((r) => r.other === x.label);
      const m = acc.maps.find((r) => r.label === x.label)?.map;
      return { label: x.label, modelType: x.modelType, isReference: x.label === reference, agreement: a?.agreement, note: a?.note, map: m };
    })
    .filter((r) => r.isReference || r.agreement || r.note || r.map);
  return { rows, reference };
}

export function buildLabReport(allRuns: RunResult[], profiles: LabeledProfile[], top = 10, extras: ReportExtras = {}): LabReport {
  // An interrupted run (Ctrl-C in run 2 of --repeat 3) measured less than asked: it is kept out of every figure.
  const interrupted = allRuns.filter((r) => r.interrupted);
  const runs = allRuns.filter((r) => !r.interrupted);
  const runNotes = [
    ...(extras.runNotes ?? []),
    ...interrupted.map((r) => `left out: a run of ${r.setup.label} started ${r.startedAt} was interrupted after ${r.frames} measured frame(s); its figures are in its file, not in this report`),
  ];
  const groups = groupByLabel(runs);
  const partial = groups.map(fpsRow);
  // Model Type names must tell rows apart: add the label where two rows would read the same.
  const fps: FpsRow[] = [
    ...partial.map(({ baseModelType, ...x }) => ({
      ...x,
      modelType: partial.filter((y) => y.baseModelType === baseModelType).length > 1 ? `${baseModelType} [${x.label}]` : baseModelType,
    })),
    ...(extras.typedFps ?? []).map(typedFpsRow),
  ];
  const compared = speedups(fps, extras.accuracy?.pairs ?? [], extras.minMatch ?? DEFAULT_MIN_MATCH);
  const accuracy = accuracyRows(fps, extras.accuracy);
  const board = groups
    .map((g, i) => ({ run: g[0], modelType: fps[i].modelType }))
    .filter((x) => x.run.tegrastats)
    .map((x) => ({ label: x.run.setup.label, modelType: x.modelType, summary: x.run.tegrastats!.summary, series: x.run.tegrastats!.series }));
  return {
    fps,
    board,
    accuracy: accuracy.rows,
    ...(accuracy.reference ? { accuracyReference: accuracy.reference } : {}),
    skipped: extras.skipped ?? [],
    failed: extras.failed ?? [],
    notCompared: compared.notCompared,
    runNotes,
    speedups: compared.speedups,
    stages: groups.map((g, i) => stageTable(g, fps[i].modelType)),
    series: runs.map(frameSeries).filter((x): x is FrameSeries => !!x),
    profiles: profiles.flatMap((p) => profileSection(p, top)),
    env: groups.map((g) => envBlock(g[0])),
    definitions: DEFINITIONS,
  };
}
