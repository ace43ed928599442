/** Short, pasteable views of a profile: the NVTX stage table (nsys) and the top of the critical path (nvprof). */
import type { NsysStats } from '../parsers/nsys.ts';
import type { NvprofLog } from '../parsers/nvprof.ts';
import { notInferenceShare } from '../pipeline/figures.ts';
import type { RunResult } from '../pipeline/run-result.ts';
import { pickCriticalPath } from './profile-section.ts';
import { CRITICAL_PATH_HEADERS, criticalPathCells, formatNs, markdownTable } from './tables.ts';

/**
 * Stage ranges jetprof pushes, in frame order. `encoder-wait`: the sequential loop's wait, before a model run, for the
 * encoder of the frames written behind it; the run JSON counts it in the write stage.
 */
const NVTX_STAGE_ORDER = [
  'model-load',
  'frame',
  'read',
  'preprocess',
  'encoder-wait',
  'inference',
  'postprocess',
  'write',
];

interface NvtxStageRow {
  range: string;
  instances: number;
  totalNs: number;
  avgNs: number;
  medNs?: number;
  minNs?: number;
  maxNs?: number;
}

/** jetprof's stage ranges from nsys' nvtx_sum (names may carry a domain prefix such as `jetprof:`). */
export function nvtxStageRows(stats: NsysStats): NvtxStageRow[] {
  const rows = stats.reports.nvtx_sum?.rows ?? [];
  const out: NvtxStageRow[] = [];
  for (const stage of NVTX_STAGE_ORDER) {
    const r = rows.find((x) => String(x.range ?? x.name ?? '').replace(/^[\w-]+:/, '') === stage);
    if (!r) continue;
    out.push({
      range: stage,
      instances: Number(r.instances ?? 0),
      totalNs: Number(r.totalNs ?? 0),
      avgNs: Number(r.avgNs ?? 0),
      ...(typeof r.medNs === 'number' ? { medNs: r.medNs } : {}),
      ...(typeof r.minNs === 'number' ? { minNs: r.minNs } : {}),
      ...(typeof r.maxNs === 'number' ? { maxNs: r.maxNs } : {}),
    });
  }
  return out;
}

export function nvtxStageMarkdown(stats: NsysStats): string {
  const rows = nvtxStageRows(stats);
  if (rows.length === 0)
    return 'No jetprof NVTX ranges in this profile (was the run made with --no-nvtx, or without libnvToolsExt?).';
  return markdownTable(
    ['NVTX range', 'Instances', 'Total', 'Avg', 'Med', 'Min', 'Max'],
    rows.map((r) => [
      r.range,
      r.instances,
      formatNs(r.totalNs),
      formatNs(Math.round(r.avgNs)),
      formatNs(r.medNs),
      formatNs(r.minNs),
      formatNs(r.maxNs),
    ]),
    ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
}

/**
 * The profiled run in one line, with the same figures as the run JSON and the report (so the profile's view and the
 * run's never disagree): both FPS, the share of wall time the model was not running, and what the frame ranges mean.
 */
export function profiledRunLine(run: RunResult): string {
  const notRunning = (notInferenceShare(run.stages.inference.totalMs, run.wallMs) * 100).toFixed(1);
  const loop =
    run.setup.loop === 'pipelined'
      ? 'pipelined loop: frame ranges overlap, so their total exceeds the wall time'
      : 'sequential loop: frame ranges follow one another';
  const interrupted = run.interrupted ? ', interrupted (the frames done before the signal)' : '';
  return `${run.setup.label}: ${run.frames} frames measured${interrupted} (warm-up ranges are named warmup-*), inference ${run.inferenceFps.toFixed(2)} FPS, end-to-end ${run.endToEndFps.toFixed(2)} FPS under ${run.setup.profiler}; the model was not running ${notRunning}% of the wall time (${loop}).`;
}

export function criticalPathMarkdown(log: NvprofLog, top = 10): string {
  const parts: string[] = [];
  for (const p of log.processes) {
    if (p.dependency.length === 0) continue;
    const { criticalPath, waiting } = pickCriticalPath(p.dependency, top);
    parts.push(
      markdownTable(CRITICAL_PATH_HEADERS, [...criticalPath, ...waiting].map(criticalPathCells), ['r', 'r', 'r', 'l']),
    );
  }
  return parts.join('\n\n') || 'No dependency analysis in this log.';
}
