/**
 * Parsed profiler data as tables (Markdown for reading, CSV with exact nanoseconds for spreadsheets).
 * Used by `jetprof parse --format md|csv` and by the report.
 */
import type { NsysStats, NsysTable } from '../parsers/nsys.ts';
import type {
  MetricTraceRow,
  NvprofLog,
  NvprofProcess,
  SummaryRow,
  SystemSampleRow,
  UnifiedMemoryRow,
} from '../parsers/nvprof.ts';
import { type Cell, criticalPathCells, csvTable, formatNs, formatPct, markdownTable, mdInline } from './tables.ts';

export const NVPROF_SECTIONS = [
  'summary',
  'nvtx',
  'dependency',
  'metrics',
  'metric-trace',
  'gpu-trace',
  'api-trace',
  'unified-memory',
  'system',
] as const;
export type NvprofSection = (typeof NVPROF_SECTIONS)[number];

export interface Table {
  title: string;
  headers: string[];
  /** Cells for Markdown (times formatted with units). */
  display: Cell[][];
  /** Cells for CSV (times in integer nanoseconds). */
  raw: Cell[][];
  /** Headers for CSV when they differ from the Markdown ones (nsys' `Total Time (ns)` over integer nanoseconds). */
  rawHeaders?: string[];
  align?: ('l' | 'r')[];
}

const procLabel = (p: NvprofProcess) =>
  (p.pid === null ? 'imported log' : `process ${p.pid}`) + (p.command ? ` (${p.command})` : '');

function summaryTable(title: string, rows: SummaryRow[]): Table {
  return {
    title,
    headers: ['Type', 'Time(%)', 'Time', 'Calls', 'Avg', 'Min', 'Max', 'Name'],
    display: rows.map((r) => [
      r.type,
      formatPct(r.timePct),
      formatNs(r.totalNs),
      r.calls,
      formatNs(r.avgNs),
      formatNs(r.minNs),
      formatNs(r.maxNs),
      r.name,
    ]),
    raw: rows.map((r) => [r.type, r.timePct, r.totalNs, r.calls, r.avgNs, r.minNs, r.maxNs, r.name]),
    align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
  };
}

/** A process's tables of one section (none when it has no rows of it). */
const SECTION_TABLES: Record<NvprofSection, (p: NvprofProcess, who: string) => Table[]> = {
  summary: (p, who) => (p.summary.length ? [summaryTable(`Summary, ${who}`, p.summary)] : []),
  nvtx: (p, who) =>
    p.nvtx.domains.flatMap((d) => d.ranges.map((r) => summaryTable(`NVTX ${d.name} / ${r.name}, ${who}`, r.rows))),
  dependency: (p, who) =>
    p.dependency.length
      ? [
          {
            title: `Dependency analysis, ${who}`,
            headers: ['Critical path(%)', 'Critical path', 'Waiting time', 'Name'],
            display: p.dependency.map(criticalPathCells),
            raw: p.dependency.map((d) => [d.criticalPathPct, d.criticalPathNs, d.waitingNs, d.name]),
            align: ['r', 'r', 'r', 'l'],
          },
        ]
      : [],
  metrics: (p, who) => {
    if (!p.metrics.length) return [];
    const rows = p.metrics.map((m) => [
      ...[m.device ?? '', m.kernel, m.invocations, m.metric, m.description ?? ''],
      ...[m.min, m.max, m.avg, m.total ?? ''],
    ]);
    const headers = ['Device', 'Kernel', 'Invocations', 'Metric', 'Description', 'Min', 'Max', 'Avg', 'Total'];
    return [{ title: `Metrics and events, ${who}`, headers, display: rows, raw: rows }];
  },
  'metric-trace': (p, who) => (p.metricTrace?.length ? [metricTraceTable(p.metricTrace, who)] : []),
  'gpu-trace': (p, who) => (p.gpuTrace?.length ? [traceTable(p.gpuTrace, `GPU trace, ${who}`)] : []),
  'api-trace': (p, who) => (p.apiTrace?.length ? [traceTable(p.apiTrace, `API trace, ${who}`)] : []),
  'unified-memory': (p, who) => {
    const um = p.unifiedMemory?.rows;
    if (!um?.length) return [];
    return [
      {
        title: `Unified memory, ${who}`,
        headers: ['Device', 'Count', 'Avg Size', 'Min Size', 'Max Size', 'Total Size', 'Total Time', 'Name'],
        // the same cells, the total time with its unit in Markdown and as integer nanoseconds in the CSV
        display: um.map((r) => umCells(r, r.totalNs === null ? '-' : formatNs(r.totalNs))),
        raw: um.map((r) => umCells(r, r.totalNs)),
      },
    ];
  },
  system: (p, who) => (p.system?.length ? [systemTable(p.system, who)] : []),
};

export function nvprofTables(log: NvprofLog, section: NvprofSection): Table[] {
  return log.processes.flatMap((p) => SECTION_TABLES[section](p, procLabel(p)));
}

/**
 * One row per launch, a column per metric (unit in the header where the units row gave one); a flag (`<OVERFLOW>`)
 * stands where nvprof printed it, never as a number.
 */
function metricTraceTable(mt: MetricTraceRow[], who: string): Table {
  const metrics = [...new Set(mt.flatMap((r) => Object.keys(r.values)))];
  const unitOf = (m: string) => mt.find((r) => r.units?.[m])?.units?.[m];
  const rows = mt.map((r) => [
    ...[r.device, r.context, r.stream, r.kernel, r.correlationId ?? ''],
    ...metrics.map((m) => r.values[m] ?? r.flags?.[m] ?? ''),
  ]);
  return {
    title: `Metrics per kernel launch, ${who}`,
    headers: [
      ...['Device', 'Context', 'Stream', 'Kernel', 'Correlation ID'],
      ...metrics.map((m) => (unitOf(m) ? `${m} (${unitOf(m)})` : m)),
    ],
    display: rows,
    raw: rows,
  };
}

/** A GPU or API trace: every key any row has, in first-seen order (only rows that launched a kernel have `kernel`). */
function traceTable(rows: NonNullable<NvprofProcess['gpuTrace']>, title: string): Table {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  // a row nvprof printed without a duration (a page fault) has none: `-` as nvprof shows it
  const shown = (r: (typeof rows)[number], k: string) =>
    k === 'startNs' || k === 'durationNs' ? (r[k] === undefined ? '-' : formatNs(r[k] as number)) : (r[k] ?? '');
  return {
    title,
    headers: keys,
    display: rows.map((r) => keys.map((k) => shown(r, k))),
    raw: rows.map((r) => keys.map((k) => r[k] ?? '')),
  };
}

/** A unified-memory row's cells, with its total time given as shown (formatted, or the raw nanoseconds). */
function umCells(r: UnifiedMemoryRow, totalTime: Cell): Cell[] {
  return [r.device ?? '', r.count, r.avgSize, r.minSize, r.maxSize, r.totalSize, totalTime, r.name];
}

/** `--system-profiling on`: a sampled quantity per device, with its count, avg, min and max as nvprof printed them. */
function systemTable(system: SystemSampleRow[], who: string): Table {
  const rows = system.map((r) => [r.device ?? '', r.name, r.count, r.avg, r.min, r.max]);
  return {
    title: `System profiling (power, clocks, temperature), ${who}`,
    headers: ['Device', 'Quantity', 'Count', 'Avg', 'Min', 'Max'],
    display: rows,
    raw: rows,
    align: ['l', 'l', 'r', 'r', 'r', 'r'],
  };
}

function nsysTable(t: NsysTable, index: number): Table {
  const rows = t.rows.map((r) => t.keys.map((k) => r[k]));
  // in Markdown, nanosecond columns carry units as nvprof's do (`600.000 ms`); the CSV keeps the integers
  const isNs = t.keys.map((k) => /Ns$/.test(k));
  const isNum = t.keys.map((k, i) => isNs[i] || t.rows.some((r) => typeof r[k] === 'number'));
  return {
    title: `${t.report}${t.title ? ` (${t.title})` : ''}${index > 0 ? ` #${index + 1}` : ''}`,
    headers: t.columns.map((c, i) => (isNs[i] ? c.replace(/\s*\((ns|nsec)\)/i, '') : c)),
    rawHeaders: t.columns,
    display: rows.map((r) => r.map((v, i) => (isNs[i] && typeof v === 'number' ? formatNs(v) : v))),
    raw: rows,
    align: isNum.map((n) => (n ? 'r' : 'l')),
  };
}

/**
 * What nsys's expert system said per rule (its advice above a table, or that it found nothing), as Markdown
 * paragraphs; `report` selects one rule. Empty when the log has no expert-system output.
 */
export function nsysFindingsMarkdown(stats: NsysStats, report?: string): string {
  return Object.entries(stats.findings ?? {})
    .filter(([rule]) => !report || rule === report)
    .map(
      ([rule, f]) =>
        `### ${mdInline(rule)}${f.title ? ` (${mdInline(f.title)})` : ''}\n\n${f.text
          .split('\n')
          .map((l) => `> ${mdInline(l)}`.trimEnd())
          .join('\n')}\n`,
    )
    .join('\n');
}

/** nsys tables; `report` selects one report by its canonical name. */
export function nsysTables(stats: NsysStats, report?: string): Table[] {
  const seen = new Map<string, number>();
  const out: Table[] = [];
  for (const t of stats.tables) {
    const n = seen.get(t.report) ?? 0;
    seen.set(t.report, n + 1);
    if (!report || t.report === report) out.push(nsysTable(t, n));
  }
  return out;
}

const csvHeaders = (t: Table) => t.rawHeaders ?? t.headers;

export function tablesToMarkdown(tables: Table[]): string {
  return tables.map((t) => `### ${t.title}\n\n${markdownTable(t.headers, t.display, t.align)}\n`).join('\n');
}

/** One CSV: when there are several tables, a first column `table` says which table a row belongs to. */
export function tablesToCsv(tables: Table[]): string {
  if (tables.length === 1) return csvTable(csvHeaders(tables[0]), tables[0].raw);
  const headers = ['table', ...(tables[0] ? csvHeaders(tables[0]) : [])];
  const sameShape = tables.every((t) => t.headers.join('\u0000') === csvHeaders(tables[0]).join('\u0000'));
  if (!sameShape)
    return tables
      .map((t) =>
        csvTable(
          ['table', ...csvHeaders(t)],
          t.raw.map((r) => [t.title, ...r]),
        ),
      )
      .join('\n');
  return csvTable(
    headers,
    tables.flatMap((t) => t.raw.map((r) => [t.title, ...r])),
  );
}
