/**
 * The lab report as one document: a sequence of blocks (headings, captions, paragraphs, lists, tables, charts) built
 * once from a LabReport, in one order. markdown.ts and html.ts only draw it, so a section, a sentence or a column is
 * written here once and both files show it in the same place. Pure: a LabReport in, blocks out; charts are data
 * (html.ts draws them; Markdown, which has no pictures, leaves them out).
 */
import { type Bar, type Block, type Chart, type ListItem, right } from './blocks.ts';
import {
  capacityCsv,
  criticalPathCsv,
  fpsCsv,
  layersCsv,
  profileCsvName,
  stagesCsv,
  steadyStateCsv,
  streamsCsv,
  sweepCsv,
  timedCsv,
} from './csv-parts.ts';
import { START_UP_ROW } from './steady-state.ts';
import { CAPACITY_ALIGN, CAPACITY_HEADERS, capacityMachineLine, capacityRows } from './capacity-format.ts';
import type { LabReport, ProfileSection, TimedRow } from './report-types.ts';
import {
  ACCURACY_HEADERS,
  accuracyCaption,
  accuracyRows,
  BOARD_HEADERS,
  boardRows,
  CAPACITY_RULE,
  capacityCaption,
  defaultTitle,
  dropsCell,
  failedSentence,
  fpsCell,
  gapSentence,
  intervalTradeLine,
  labHeaders,
  labRows,
  mixedDevices,
  notComparedLine,
  perFrameLine,
  setupTable,
  skippedSentence,
  speedupLine,
  stageCaption,
  stageHeaders,
  stageRows,
  STEADY_HEADERS,
  steadyStateCaption,
  SWEEP_HEADERS,
  sweepCaption,
  sweepRows,
  sweepDeltas,
  layersCaption,
  layerRows,
  LAYER_HEADERS,
  steadyStateRows,
  streamRows,
  streamsCaption,
  streamsVerdict,
} from './report-text.ts';
import { streamAlign, streamHeaders } from './run-lines.ts';
import { CRITICAL_PATH_HEADERS, criticalPathCells, formatDependencyNs, timedCells, timedHeaders } from './tables.ts';

interface ReportDocument {
  title: string;
  blocks: Block[];
}

/** The lab report, start to end: Speed, streams, sweeps, Capacity, On the board, Stages, Per frame, Profiles, Environment, Definitions. */
export function reportDocument(r: LabReport, title = defaultTitle(r)): ReportDocument {
  return {
    title,
    blocks: [
      { kind: 'heading', level: 1, text: title },
      ...speedBlocks(r),
      ...streamBlocks(r),
      ...sweepBlocks(r),
      ...capacityBlocks(r),
      ...boardBlocks(r),
      ...stageBlocks(r),
      ...perFrameBlocks(r),
      ...profileBlocks(r),
      ...envBlocks(r),
      { kind: 'heading', level: 2, text: 'Definitions' },
      { kind: 'definitions', items: r.definitions },
    ],
  };
}

/** The lab table, accuracy, what was and was not compared, the FPS chart and what each row measured. */
function speedBlocks(r: LabReport): Block[] {
  if (!(r.fps.length || r.skipped.length || r.failed.length || r.runNotes.length)) return [];
  const headers = labHeaders(r);
  const out: Block[] = [
    { kind: 'heading', level: 2, text: 'Speed' },
    {
      kind: 'table',
      headers,
      rows: labRows(r),
      align: right(headers.length, mixedDevices(r) ? [0, 1, 2] : [0, 1]),
      csv: [fpsCsv(r)],
    },
  ];
  if (r.accuracy.length)
    out.push(
      { kind: 'caption', level: 3, text: 'Accuracy', detail: accuracyCaption(r) },
      { kind: 'table', headers: ACCURACY_HEADERS, rows: accuracyRows(r), align: right(ACCURACY_HEADERS.length) },
    );
  const items: ListItem[] = [
    ...r.failed.map((x) => ({ text: failedSentence(x), tone: 'warn' as const, strong: true })),
    ...r.skipped.map((x) => ({ text: skippedSentence(x), tone: 'skipped' as const })),
    ...r.runNotes.map((n) => ({ text: n, tone: 'warn' as const })),
    ...r.speedups.map((s) => ({ text: speedupLine(s), tone: 'speedup' as const })),
    ...r.intervalTrades.map((t) => ({ text: intervalTradeLine(t) })),
    // a report of many rows has dozens of these: the page folds them away
    ...r.notCompared.map((n) => ({ text: notComparedLine(n), tone: 'quiet' as const })),
    ...r.fps.map((x) => ({ text: gapSentence(x) })),
    ...r.fps.flatMap((x) => (x.modelAlone ? [{ text: `${x.modelType}: ${x.modelAlone}` }] : [])),
    ...r.fps.flatMap((x) => (x.latency ? [{ text: `${x.modelType}: ${x.latency}` }] : [])),
  ];
  const pairs = r.notCompared.length;
  if (items.length)
    out.push({
      kind: 'list',
      items,
      foldSummary: `${pairs} pair${pairs === 1 ? '' : 's'} of rows not compared, and why`,
    });
  const setup = setupTable(r);
  if (r.fps.length)
    out.push(
      {
        kind: 'chart',
        chart: {
          kind: 'bars',
          title: 'FPS per row (mean; ± std in the table where a label ran several times)',
          bars: r.fps.map((x) => ({
            // a paced row that dropped frames says so on its bars, not only further down
            label: x.drops?.dropped
              ? `${x.modelType} (did not keep up: ${dropsCell(x.drops).replace(/ \(no\)$/, '')} of the frames dropped)`
              : x.modelType,
            segments: [
              { name: 'inference FPS', value: x.inferenceFps.mean },
              { name: 'end-to-end FPS', value: x.endToEndFps.mean },
            ],
          })),
          unit: 'FPS',
          stacked: false,
        },
      },
      { kind: 'caption', level: 3, text: 'What each row measured' },
      { kind: 'table', ...setup, align: setup.headers.map(() => 'l') },
      {
        kind: 'page-note',
        lines: r.fps.map(
          (x) => `${x.modelType}: inference ${fpsCell(x.inferenceFps)}, end-to-end ${fpsCell(x.endToEndFps)} FPS`,
        ),
      },
    );
  return out;
}

/** One table per multi-stream run: each stream's FPS, drops and latency. */
function streamBlocks(r: LabReport): Block[] {
  return r.multiStream.flatMap((m): Block[] => {
    const verdict = streamsVerdict(m);
    return [
      { kind: 'caption', level: 3, text: streamsCaption(m) },
      ...(verdict ? [{ kind: 'paragraph' as const, text: verdict }] : []),
      ...(m.intervalLine ? [{ kind: 'paragraph' as const, text: m.intervalLine }] : []),
      {
        kind: 'table',
        headers: streamHeaders(!!m.realtime),
        rows: streamRows(m),
        align: streamAlign(!!m.realtime),
        // a card per stream opens with "Stream i": every card of one file replayed would open with the same path
        key: 0,
        csv: [streamsCsv(m)],
      },
      // each stream's latency over the run: a camera that drifts or a board that throttles shows here first
      ...(m.latency?.length
        ? [{ kind: 'chart' as const, chart: { kind: 'stream-latency' as const, section: m } }]
        : []),
    ];
  });
}

/** One table per sweep: rows that differ only in streams, batch and interval, side by side. */
function sweepBlocks(r: LabReport): Block[] {
  return r.sweeps.flatMap((s, i): Block[] => [
    { kind: 'caption', level: 3, text: sweepCaption(s) },
    {
      kind: 'table',
      headers: SWEEP_HEADERS,
      rows: sweepRows(r, s),
      align: right(SWEEP_HEADERS.length),
      csv: [sweepCsv(r, s, i)],
    },
    { kind: 'list', items: sweepDeltas(r, s).map((text) => ({ text })) },
  ]);
}

/** Each capacity search: its answer, the FPS and p99 charts per count of streams, the table. */
function capacityBlocks(r: LabReport): Block[] {
  if (!r.capacity.length) return [];
  const out: Block[] = [{ kind: 'heading', level: 2, text: 'Capacity (jetprof capacity)' }];
  for (const c of r.capacity) {
    // one bar per count of streams tried, fewest first, in both charts
    const points = [...c.points].sort((a, b) => a.streams - b.streams);
    // a count that failed says why on its bars (drops show in neither chart: the FPS and p99 bars can look fine)
    const bar = (p: (typeof points)[number], name: string, value: number): Bar => ({
      label: `${p.streams} stream${p.streams === 1 ? '' : 's'}: ${p.held ? 'held' : `no: ${(p.why ?? 'did not hold').split(';')[0].replace(/ \(.*\)$/, '')}`}`,
      fullLabel: `${p.streams} streams: ${p.held ? 'held' : `did not hold (${p.why})`}`,
      segments: [{ name, value }],
    });
    out.push(
      { kind: 'caption', level: 3, text: capacityCaption(c) },
      {
        kind: 'chart',
        chart: {
          kind: 'bars',
          title: `Slowest stream's FPS per count of streams (each stream must keep ${c.sourceFps} FPS)`,
          bars: points.map((p) => bar(p, p.held ? 'held' : 'did not hold', p.minStreamFps)),
          unit: 'FPS',
          stacked: false,
          limit: { value: c.sourceFps, label: `the target, ${c.sourceFps} FPS` },
        },
      },
      {
        kind: 'chart',
        chart: {
          kind: 'bars',
          title: `Worst stream's p99 latency per count of streams (limit ${c.p99LimitMs} ms)`,
          bars: points.map((p) => bar(p, p.p99Ms <= c.p99LimitMs ? 'within the limit' : 'over the limit', p.p99Ms)),
          unit: 'ms',
          stacked: false,
          limit: { value: c.p99LimitMs, label: `the limit, ${c.p99LimitMs} ms` },
        },
      },
      { kind: 'table', headers: CAPACITY_HEADERS, rows: capacityRows(c), align: CAPACITY_ALIGN, csv: [capacityCsv(c)] },
    );
    const machine = capacityMachineLine(c);
    if (machine) out.push({ kind: 'paragraph', text: machine, small: true });
  }
  out.push({ kind: 'paragraph', text: CAPACITY_RULE, small: true });
  return out;
}

function boardBlocks(r: LabReport): Block[] {
  if (!r.board.length) return [];
  return [
    { kind: 'heading', level: 2, text: 'On the board (tegrastats)' },
    { kind: 'table', headers: BOARD_HEADERS, rows: boardRows(r), align: right(BOARD_HEADERS.length) },
    {
      kind: 'paragraph',
      text: 'Means over the measured frames (first read to last write); energy per frame = mean input power x wall time per frame.',
    },
    ...r.board.map((b): Block => ({ kind: 'chart', chart: { kind: 'board-over-time', board: b } })),
  ];
}

/** The stacked bar of the sequential runs, the timeline of the pipelined ones, then a table per run. */
function stageBlocks(r: LabReport): Block[] {
  if (!r.stages.length) return [];
  const out: Block[] = [{ kind: 'heading', level: 2, text: 'Stages (ms per frame)' }];
  const sequential = r.stages.filter((t) => !t.pipelined);
  if (sequential.length)
    out.push({
      kind: 'chart',
      chart: {
        kind: 'bars',
        title: 'Mean time per frame by stage, sequential loop (stages run one after another, so the bar is the frame)',
        bars: sequential.map((t) => ({
          label: t.modelType,
          segments: t.rows.filter((x) => !x.partOf).map((x) => ({ name: x.stage, value: x.meanMs })),
        })),
        unit: 'ms',
        stacked: true,
      },
    });
  for (const s of r.series.filter((x) => x.pipelined))
    out.push({ kind: 'chart', chart: { kind: 'pipeline-timeline', series: s } });
  for (const t of r.stages) {
    const headers = stageHeaders(t);
    out.push(
      { kind: 'caption', level: 3, text: stageCaption(t) },
      { kind: 'table', headers, rows: stageRows(t), align: right(headers.length), csv: [stagesCsv([t])] },
    );
  }
  return out;
}

/** Latency over time and per-stage histograms: pictures only. */
function perFrameBlocks(r: LabReport): Block[] {
  if (!r.series.length) return [];
  return [
    { kind: 'heading', level: 2, text: 'Per frame', pageOnly: true },
    ...r.series.flatMap((s): Block[] => [
      { kind: 'chart', chart: { kind: 'latency-over-time', series: s } },
      { kind: 'chart', chart: { kind: 'stage-histograms', series: s } },
    ]),
  ];
}

function timedBlocks(title: string, rows: TimedRow[], nameHeader: string, csvFile: string): Block[] {
  if (rows.length === 0) return [];
  const headers = timedHeaders(rows);
  return [
    { kind: 'caption', level: 4, text: title },
    {
      kind: 'table',
      headers: [...headers, nameHeader],
      rows: rows.map((x) => timedCells(x, rows)),
      align: [...headers.map(() => 'r' as const), 'l'],
      csv: [timedCsv(csvFile, rows)],
    },
  ];
}

/** The waiting chart's unit, the one the table's largest waiting time is printed in (s or ms). */
const waitUnit = (rows: { waitingNs: number }[]): [string, number] =>
  Math.max(...rows.map((r) => r.waitingNs)) >= 1e9 ? ['s', 1e9] : ['ms', 1e6];

/** Critical-path bars cut long names to this many characters (the whole name is the tooltip). */
const short = (name: string) => (name.length > 24 ? `${name.slice(0, 23)}…` : name);

/**
 * The critical-path chart: the steady state's shares where the log has one (start-up and tear-down rows such as
 * cudaMalloc would lead it otherwise, which every note sets aside), else every row with start-up ones marked.
 */
function criticalPathChart(p: ProfileSection, rows: ProfileSection['criticalPath']): Chart {
  const steady = p.steadyState;
  const bars = steady
    ? steady.rows.map((d) => ({ name: d.name, pct: d.pct, mark: '' }))
    : rows.map((d) => ({ name: d.name, pct: d.criticalPathPct, mark: START_UP_ROW.test(d.name) ? ' (start-up)' : '' }));
  return {
    kind: 'bars',
    title: steady
      ? `Critical path, steady state (share of what start-up and tear-down leave): ${p.label}`
      : `Critical path: ${p.label}`,
    bars: bars.slice(0, 10).map((d) => ({
      label: short(d.name) + d.mark,
      fullLabel: d.name + d.mark,
      segments: [{ name: steady ? 'share of the rest %' : 'critical path %', value: d.pct }],
    })),
    unit: '%',
    stacked: false,
  };
}

/** The NVTX table's caption: where the log also has the layers' GPU table, which of the two says which layer is slow. */
const nvtxCaption = (p: ProfileSection) =>
  p.steadyState?.layers?.length
    ? "NVTX ranges: the host's time inside each range (launching the layer's work), not the GPU's: which layer is slowest is the GPU table above"
    : p.tool === 'nvprof'
      ? 'NVTX ranges (TensorRT names them by layer)'
      : 'NVTX ranges';

/** Profile i's section; its tables' CSV files are named after it (csv-parts.ts profileCsvName). */
function profileSectionBlocks(p: ProfileSection, i: number): Block[] {
  const csvName = profileCsvName(p, i);
  const out: Block[] = [{ kind: 'heading', level: 3, text: p.label, aside: p.tool }];
  if (p.criticalPath.length) {
    const rows = [...p.criticalPath, ...p.waiting];
    const waiting = rows.filter((d) => d.waitingNs > 0);
    const [unit, scale] = waitUnit(waiting);
    out.push(
      {
        kind: 'caption',
        level: 4,
        text: 'Critical path',
        detail: 'nvprof --dependency-analysis: top rows, then every other row that waits',
      },
      // with a steady state its chart stands by its table below: start-up rows would lead this one
      ...(p.steadyState ? [] : [{ kind: 'chart' as const, chart: criticalPathChart(p, rows) }]),
      ...(waiting.length
        ? [
            {
              kind: 'chart' as const,
              chart: {
                kind: 'bars' as const,
                title: `Waiting time (${unit}): ${p.label}`,
                bars: waiting.slice(0, 10).map((d) => ({
                  label: short(d.name),
                  fullLabel: d.name,
                  segments: [{ name: `waiting ${unit}`, value: d.waitingNs / scale }],
                })),
                unit: unit,
                stacked: false,
              },
            },
          ]
        : []),
      {
        kind: 'table',
        headers: CRITICAL_PATH_HEADERS,
        rows: rows.map(criticalPathCells),
        align: ['r', 'r', 'r', 'l'],
        csv: [criticalPathCsv(csvName, rows)],
      },
      waiting.length
        ? {
            kind: 'paragraph',
            lead: 'Waiting time',
            text: ` (> 0): ${waiting.map((d) => `${d.name} ${formatDependencyNs(d.waitingNs)}`).join('; ')}`,
          }
        : { kind: 'paragraph', lead: 'Waiting time', text: ': no row waits (0 ns everywhere).' },
    );
  }
  if (p.steadyState) {
    const line = perFrameLine(p.steadyState);
    out.push(
      { kind: 'caption', level: 4, text: steadyStateCaption(p.steadyState) },
      { kind: 'chart', chart: criticalPathChart(p, p.criticalPath) },
      {
        kind: 'table',
        headers: STEADY_HEADERS,
        rows: steadyStateRows(p.steadyState),
        align: ['r', 'r', 'r', 'l'],
        csv: steadyStateCsv(csvName, p.steadyState),
      },
      ...(line ? [{ kind: 'paragraph' as const, text: line }] : []),
    );
    if (p.steadyState.layers?.length)
      out.push(
        { kind: 'caption', level: 4, text: layersCaption(p.steadyState) },
        {
          kind: 'table',
          headers: LAYER_HEADERS,
          rows: layerRows(p.steadyState),
          align: ['r', 'r', 'r', 'r', 'r', 'l'],
          csv: [layersCsv(csvName, p.steadyState)],
        },
      );
  }
  out.push(
    ...timedBlocks('Top GPU kernels and copies', p.kernels, 'Name', csvName('kernels')),
    ...timedBlocks('Top CUDA API calls', p.apiCalls, 'Name', csvName('api_calls')),
    ...timedBlocks(nvtxCaption(p), p.nvtx, 'Range', csvName('nvtx')),
    ...timedBlocks('OS runtime (top calls)', p.osRuntime, 'Name', csvName('os_runtime')),
  );
  if (p.notes.length)
    out.push({ kind: 'caption', level: 4, text: 'Notes' }, { kind: 'list', items: p.notes.map((n) => ({ text: n })) });
  return [{ kind: 'group', cls: 'profile', blocks: out }];
}

function profileBlocks(r: LabReport): Block[] {
  if (!r.profiles.length) return [];
  return [{ kind: 'heading', level: 2, text: 'Profiles' }, ...r.profiles.flatMap(profileSectionBlocks)];
}

/** The environment of each row; rows whose environment reads the same share one table (their labels above it). */
function envBlocks(r: LabReport): Block[] {
  if (!r.env.length) return [];
  const same = new Map<string, { labels: string[]; rows: [string, string][] }>();
  for (const e of r.env) {
    const key = JSON.stringify(e.rows);
    const entry = same.get(key) ?? { labels: [], rows: e.rows };
    entry.labels.push(e.label);
    same.set(key, entry);
  }
  return [
    { kind: 'heading', level: 2, text: 'Environment' },
    ...[...same.values()].flatMap((e): Block[] => [
      { kind: 'caption', level: 3, text: e.labels.join(', ') },
      { kind: 'table', headers: ['', ''], rows: e.rows, align: ['l', 'l'] },
    ]),
  ];
}
