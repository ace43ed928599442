/**
 * The lab report as data: the FPS table per backend, speed-ups, where end-to-end time goes, per-stage tables,
 * and for each profile the critical path, waiting time, top kernels and API calls, NVTX ranges and notes drawn
 * from the numbers. Pure: run JSONs and parsed profiles in, a LabReport out; markdown.ts and html.ts render it.
 */
import type { NsysRow, NsysStats } from '../parsers/nsys.ts';
import type { DependencyRow, NvprofLog } from '../parsers/nvprof.ts';
import { MODEL_TYPE_NAMES, type RunResult } from '../pipeline/run-result.ts';
import { STAGES, type Stage } from '../pipeline/stages.ts';
import { formatNs, formatPct } from './tables.ts';

export interface LabeledProfile {
  /** Shown in headings: the file name, or the backend of a `jetprof profile` result. */
  label: string;
  nvprof?: NvprofLog;
  nsys?: NsysStats;
}

export interface FpsRow {
  modelType: string;
  backendDetail: string;
  inputSize: string;
  inferenceFps: number;
  endToEndFps: number;
  frames: number;
  /** Share of end-to-end wall time not spent in inference, 0..1. */
  nonInferenceShare: number;
  /** Stages other than inference, largest share of wall time first. */
  otherStages: { stage: Stage; share: number }[];
}

export interface Speedup {
  faster: string;
  baseline: string;
  inference: number;
  endToEnd: number;
}

export interface StageTable {
  modelType: string;
  rows: { stage: string; meanMs: number; p50Ms: number; p90Ms: number; p99Ms: number; share: number }[];
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

export interface LabReport {
  fps: FpsRow[];
  speedups: Speedup[];
  stages: StageTable[];
  profiles: ProfileSection[];
  env: EnvBlock[];
}

export function fpsRow(r: RunResult): FpsRow {
  const wall = r.wallMs;
  const share = (ms: number) => (wall > 0 ? ms / wall : 0);
  return {
    modelType: MODEL_TYPE_NAMES[r.backend],
    backendDetail: r.backendDetail,
    inputSize: `(${r.frameSize[0]},${r.frameSize[1]},3)`,
    inferenceFps: r.inferenceFps,
    endToEndFps: r.endToEndFps,
    frames: r.frames,
    nonInferenceShare: wall > 0 ? Math.max(0, 1 - r.stages.inference.totalMs / wall) : 0,
    otherStages: STAGES.filter((s) => s !== 'inference')
      .map((stage) => ({ stage, share: share(r.stages[stage].totalMs) }))
      .sort((a, b) => b.share - a.share),
  };
}

/** Every faster backend against every slower one (by inference FPS): "TensorRT vs ONNX Runtime: 9.6x ...". */
export function speedups(rows: FpsRow[]): Speedup[] {
  const out: Speedup[] = [];
  for (const a of rows) {
    for (const b of rows) {
      if (a === b || a.modelType === b.modelType || a.inferenceFps <= b.inferenceFps || b.inferenceFps <= 0 || b.endToEndFps <= 0) continue;
      out.push({ faster: a.modelType, baseline: b.modelType, inference: a.inferenceFps / b.inferenceFps, endToEnd: a.endToEndFps / b.endToEndFps });
    }
  }
  return out;
}

function stageTable(r: RunResult): StageTable {
  const row = (stage: string, s: RunResult['stages'][Stage]) => ({ stage, meanMs: s.meanMs, p50Ms: s.p50Ms, p90Ms: s.p90Ms, p99Ms: s.p99Ms, share: r.wallMs > 0 ? s.totalMs / r.wallMs : 0 });
  const rows = STAGES.map((stage) => row(stage, r.stages[stage]));
  if (r.device) rows.push(row('h2d copy', r.device.h2dMs), row('gpu compute', r.device.gpuComputeMs), row('d2h copy', r.device.d2hMs));
  return { modelType: MODEL_TYPE_NAMES[r.backend], rows };
}

const JETPACK_OF_L4T: [RegExp, string][] = [
  [/^32\.7/, '4.6.x'],
  [/^32\.6/, '4.6'],
  [/^32\.5/, '4.5'],
  [/^32\./, '4.x'],
  [/^35\./, '5.x'],
  [/^36\./, '6.x'],
];

function envBlock(r: RunResult): EnvBlock {
  const e = r.env;
  const rows: [string, string][] = [];
  if (e.jetson?.model) rows.push(['Device', e.jetson.model]);
  if (e.jetson?.l4t) rows.push(['L4T (JetPack)', `${e.jetson.l4t} (JetPack ${JETPACK_OF_L4T.find(([re]) => re.test(e.jetson!.l4t!))?.[1] ?? '?'})`]);
  if (e.powerMode) rows.push(['Power mode', e.powerMode]);
  rows.push(['CPU', e.cpu]);
  if (e.gpu && e.gpu !== e.jetson?.model) rows.push(['GPU', e.gpu]);
  if (e.tensorrt) rows.push(['TensorRT', e.tensorrt]);
  if (e.onnxruntime) rows.push(['ONNX Runtime', `${e.onnxruntime} (${r.backendDetail.replace(/^.*\((\w+)\)$/, '$1')})`]);
  if (e.opencv) rows.push(['OpenCV', e.opencv]);
  rows.push(['Node.js', e.node]);
  rows.push(['Model', `${r.model.path} (${r.model.inputWidth}x${r.model.inputHeight}, ${r.model.classes} classes${r.model.generatedWeights ? ', RANDOM weights' : ''})`]);
  rows.push(['Video', `${r.video.path} (${r.video.width}x${r.video.height}, ${r.frames} frames measured after ${r.warmupFrames} warm-up)`]);
  return { label: MODEL_TYPE_NAMES[r.backend], rows };
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
export function profileNotes(p: Omit<ProfileSection, 'notes'>): string[] {
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
  if (frame && inference && frame.totalNs > 0) {
    notes.push(`inference is ${((inference.totalNs / frame.totalNs) * 100).toFixed(1)}% of the time inside frame ranges (${formatNs(inference.totalNs)} of ${formatNs(frame.totalNs)}); the rest is read, preprocess, postprocess and write.`);
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
  return out.map((s) => ({ ...s, notes: profileNotes(s) }));
}

export function buildLabReport(runs: RunResult[], profiles: LabeledProfile[], top = 10): LabReport {
  const fps = runs.map(fpsRow);
  return {
    fps,
    speedups: speedups(fps),
    stages: runs.map(stageTable),
    profiles: profiles.flatMap((p) => profileSection(p, top)),
    env: runs.map(envBlock),
  };
}
