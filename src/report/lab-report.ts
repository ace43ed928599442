/**
 * The lab report as data: the FPS table (one row per label, mean and spread where a label ran several times),
 * what each row measured, speed-ups, where end-to-end time goes, per-stage tables, and for each profile the critical
 * path, waiting time, top kernels and API calls, NVTX ranges and notes drawn from the numbers. Pure: run JSONs and
 * parsed profiles in, a LabReport out; markdown.ts and html.ts render it.
 */
import type { CapacityResult } from './capacity-format.ts';
import type { ReportAccuracy } from './report-accuracy.ts';
import { DEFINITIONS } from '../pipeline/figures.ts';
import { isCompleteRun, type RunResult } from '../pipeline/run-result.ts';
import { intervalLine } from './run-lines.ts';
import { BUSY_ADVICE, busyMachineReasons } from '../platform/machine-load.ts';
import { arrivalMs, frameLatencyMs } from '../pipeline/stages.ts';
import { minOf } from '../util/stats.ts';

import type {
  LabeledProfile,
  FpsRow,
  TypedFps,
  FailedBackend,
  SkippedBackend,
  FrameSeries,
  AccuracyRow,
  LabReport,
  ProfileSection,
  StreamsSection,
} from './report-types.ts';
import { envBlock, fpsRow, frameSeries, groupBySetup, stageTable, typedFpsRow } from './run-rows.ts';
import { DEFAULT_MIN_MATCH, intervalTrades, speedups } from './comparability.ts';
import { profileSection } from './profile-section.ts';
import { reconcile } from './steady-state.ts';
import { sweeps } from './sweep.ts';

interface ReportExtras {
  skipped?: SkippedBackend[];
  failed?: FailedBackend[];
  accuracy?: ReportAccuracy;
  typedFps?: TypedFps[];
  /** Matched share two rows' boxes need before their speeds are compared (default 0.99). */
  minMatch?: number;
  /** Sentences about runs left out before the report was built (files given twice). */
  runNotes?: string[];
  /** `jetprof capacity --json` results. */
  capacity?: CapacityResult[];
  /** `report --reconcile ROW`: the typed-in row the nvprof logs are held against (default: found from the names). */
  reconcileRow?: string;
}

function accuracyRows(fps: FpsRow[], acc: ReportAccuracy | undefined): { rows: AccuracyRow[]; reference?: string } {
  if (!acc || (acc.agreement.length === 0 && acc.maps.length === 0)) return { rows: [] };
  const reference = acc.agreement[0]?.ref;
  const rows = fps
    .map((x) => {
      const a = acc.agreement.find((r) => r.other === x.label);
      const m = acc.maps.find((r) => r.label === x.label)?.map;
      return {
        label: x.label,
        modelType: x.modelType,
        isReference: x.label === reference,
        agreement: a?.agreement,
        note: a?.note,
        map: m,
      };
    })
    .filter((r) => r.isReference || r.agreement || r.note || r.map);
  return { rows, reference };
}

export function buildLabReport(
  allRuns: RunResult[],
  profiles: LabeledProfile[],
  top = 10,
  extras: ReportExtras = {},
): LabReport {
  // An interrupted run (Ctrl-C in run 2 of --repeat 3) measured less than asked: it is kept out of every figure.
  const interrupted = allRuns.filter((r) => !isCompleteRun(r));
  const runs = allRuns.filter(isCompleteRun);
  const runNotes = [
    ...(extras.runNotes ?? []),
    ...busyNotes(runs),
    ...interrupted.map(
      (r) =>
        `left out: a run of ${r.setup.label} started ${r.startedAt} ${r.interrupted ? `was interrupted after ${r.frames} measured frame(s)` : 'measured no frame'}; its figures are in its file, not in this report`,
    ),
  ];
  const groups = groupBySetup(runs);
  const partial = groups.map(fpsRow);
  // Model Type names must tell rows apart: add the label where two rows would read the same.
  const fps: FpsRow[] = [
    ...partial.map(({ baseModelType, ...x }) => ({
      ...x,
      modelType:
        partial.filter((y) => y.baseModelType === baseModelType).length > 1
          ? `${baseModelType} [${x.label}]`
          : baseModelType,
    })),
    ...(extras.typedFps ?? []).map(typedFpsRow),
  ];
  const sweepTables = sweeps(fps);
  const compared = speedups(fps, extras.accuracy?.pairs ?? [], extras.minMatch ?? DEFAULT_MIN_MATCH, sweepTables);
  const accuracy = accuracyRows(fps, extras.accuracy);
  const board = groups
    .map((g, i) => ({ run: g[0], modelType: fps[i].modelType }))
    .filter((x) => x.run.tegrastats)
    .map((x) => ({
      label: x.run.setup.label,
      modelType: x.modelType,
      summary: x.run.tegrastats!.summary,
      series: x.run.tegrastats!.series,
    }));
  return {
    fps,
    board,
    accuracy: accuracy.rows,
    ...(accuracy.reference ? { accuracyReference: accuracy.reference } : {}),
    multiStream: groups
      .map((g, i) => ({ run: g[0], modelType: fps[i].modelType }))
      .filter((x) => x.run.streams?.length)
      .map((x) => {
        const interval = intervalLine(x.run);
        const latency = streamLatency(x.run);
        return {
          label: x.run.setup.label,
          modelType: x.modelType,
          aggregateFps: x.run.aggregateFps ?? x.run.endToEndFps,
          batch: x.run.batch ?? 1,
          ...(x.run.setup.realtime ? { realtime: x.run.setup.realtime } : {}),
          ...(interval ? { intervalLine: interval } : {}),
          ...(x.run.batches ? { batches: x.run.batches } : {}),
          streams: x.run.streams!,
          ...(latency ? { latency } : {}),
        };
      }),
    capacity: extras.capacity ?? [],
    skipped: extras.skipped ?? [],
    failed: extras.failed ?? [],
    notCompared: compared.notCompared,
    sweeps: sweepTables,
    runNotes,
    speedups: compared.speedups,
    intervalTrades: intervalTrades(fps, extras.accuracy?.pairs ?? []),
    stages: groups.map((g, i) => stageTable(g, fps[i].modelType)),
    series: groups
      .flat()
      .map(frameSeries)
      .filter((x): x is FrameSeries => !!x),
    profiles: reconciled(
      profiles.flatMap((p) => profileSection(p, top)),
      fps.filter((x) => x.typedIn),
      extras.reconcileRow,
    ),
    env: groups.map((g) => envBlock(g[0])),
    definitions: DEFINITIONS,
  };
}

/**
 * The runs measured on a busy machine (platform/machine-load.ts), in one note: each label with why and, of several
 * runs, how many; the advice once (six rows of one busy session read as one note, not six identical bullets).
 */
function busyNotes(runs: RunResult[]): string[] {
  const byLabel = new Map<string, { busy: string[][]; all: number }>();
  for (const r of runs) {
    const entry = byLabel.get(r.setup.label) ?? { busy: [], all: 0 };
    entry.all++;
    const why = r.machineLoad ? busyMachineReasons(r.machineLoad) : [];
    if (why.length) entry.busy.push(why);
    byLabel.set(r.setup.label, entry);
  }
  const said = [...byLabel]
    .filter(([, e]) => e.busy.length > 0)
    .map(([label, e]) => ({
      label,
      why: `${e.all > 1 ? `${e.busy.length} of its ${e.all} runs: ` : ''}${e.busy[0].join('; ')}`,
    }));
  if (said.length === 0) return [];
  if (said.length === 1) return [`${said[0].label}: measured on a busy machine (${said[0].why})${BUSY_ADVICE}`];
  const all = said.map((x) => `${x.label} (${x.why})`).join(', ');
  return [`measured on a busy machine: ${all}${BUSY_ADVICE.replace('its figures are', 'their figures are')}`];
}

/**
 * Each stream's latency over the run, from the per-frame columns: a frame's arrival (or read) in seconds from the
 * first measured frame's, and the time from it to the frame's boxes; undefined without per-frame streams.
 */
function streamLatency(r: RunResult): StreamsSection['latency'] {
  const p = r.perFrame;
  if (!p?.stream || p.index.length === 0) return undefined;
  const from = arrivalMs(p);
  // no spread into Math.min: a long run has hundreds of thousands of frames
  const t0 = minOf(from);
  const out = new Map<number, { stream: number; atS: number[]; ms: number[] }>();
  p.index.forEach((_, k) => {
    const s = out.get(p.stream![k]) ?? { stream: p.stream![k], atS: [], ms: [] };
    s.atS.push((from[k] - t0) / 1000);
    s.ms.push(frameLatencyMs(p, k));
    out.set(s.stream, s);
  });
  return [...out.values()].sort((a, b) => a.stream - b.stream);
}

/**
 * Which typed-in row an nvprof log with a steady-state view belongs to, and why: the row `--reconcile` names; else the
 * one row whose name says TensorRT (TensorRT, TRT, trt_inference) when the log is TensorRT's (its
 * ExecutionContext::enqueue ranges); else the only typed-in row. Undefined, with the reason, when none fits.
 */
function matchTypedRow(typed: FpsRow[], asked?: string): { row?: FpsRow; why: string } {
  const names = typed.map((x) => x.label).join(', ');
  if (asked !== undefined) {
    const row = typed.find((x) => x.label.toLowerCase() === asked.toLowerCase());
    return row
      ? { row, why: `the row --reconcile names` }
      : { why: `--reconcile ${asked} names no typed-in row (the rows: ${names || 'none'})` };
  }
  const trt = typed.filter((x) => /tensorrt|\btrt/i.test(x.label));
  if (trt.length === 1)
    return { row: trt[0], why: "its name says TensorRT and the log has TensorRT's ExecutionContext::enqueue ranges" };
  if (typed.length === 1) return { row: typed[0], why: 'the only typed-in row' };
  return {
    why: `${trt.length > 1 ? `${trt.length} rows' names say TensorRT` : `none of the ${typed.length} rows' names says TensorRT or TRT`} (${names}): pass --reconcile ROW to say which row this log was measured with`,
  };
}

/**
 * Each nvprof profile with a steady-state view, held against the lab's typed-in figures (`--fps`): the row matched
 * (matchTypedRow), said with why; or why none was.
 */
function reconciled(sections: ProfileSection[], typed: FpsRow[], asked?: string): ProfileSection[] {
  if (typed.length === 0 && asked === undefined) return sections;
  const { row, why } = matchTypedRow(typed, asked);
  return sections.map((s) => {
    if (!s.steadyState?.frames) return s;
    const line = row
      ? reconcile(s.steadyState, {
          modelType: row.modelType,
          inferenceFps: row.inferenceFps.mean,
          endToEndFps: row.endToEndFps.mean,
        })
      : undefined;
    const said = row ? `held against the typed-in row ${row.label}: ${why}` : `not held against a typed-in row: ${why}`;
    return { ...s, notes: [...s.notes, line ? `${line} This log is ${said}.` : `This log is ${said}.`] };
  });
}
