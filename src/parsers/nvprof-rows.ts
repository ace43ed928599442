/**
 * One row of nvprof's text tables, read from its line (pure): the summary, dependency analysis, metrics and events,
 * Unified Memory and system profiling rows, and the units row nvprof prints under a header when the time unit is
 * fixed. The parser (nvprof.ts) knows which table a line is in and where a row goes; the traces, whose cells are read
 * in place and interned, stay with it.
 */
import { type Column, sliceRightAligned } from './columns.ts';
import type { DependencyRow, MetricRow, SummaryRow, SystemSampleRow, UnifiedMemoryRow } from './nvprof-types.ts';
import type { TraceTemplates } from './trace-rows.ts';
import { decimalToNs, parseDurationNs } from './units.ts';

/**
 * A text table being read (the CSV form's are nvprof-csv.ts's). `units`: the row nvprof prints under the header when
 * its time unit is fixed (`-u ms`, `--normalized-time-unit col`): the cells below it are bare numbers in that unit (`%`
 * for a share).
 */
export type TextTable =
  | { kind: 'summary'; typed: boolean; type: string; units?: string[] }
  | { kind: 'dependency'; units?: string[] }
  | { kind: 'metrics' | 'events'; cols: Column[] }
  | {
      kind: 'trace';
      cols: Column[];
      keys: string[];
      templates: TraceTemplates;
      target: 'gpuTrace' | 'apiTrace';
      units?: string[];
    }
  | { kind: 'unified'; cols: Column[]; units?: string[] }
  | { kind: 'system' };

/** A share as printed (`12.5%`), and under a units row, where it may be bare and in e-notation (`2.3e-05`). */
const SHARE = String.raw`(\d+(?:\.\d+)?)%`;
const SHARE_BARE = String.raw`(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)%?`;
/** A summary row; its type label (`GPU activities:`, `OpenACC (excl):`) only on a type's first row. */
const summaryRow = (share: string) =>
  new RegExp(
    String.raw`^\s*(?:([A-Za-z][A-Za-z ]*?(?: \([a-z]+\))?):)?\s*` +
      share +
      String.raw`\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*?)\s*$`,
  );
const SUMMARY_ROW = summaryRow(SHARE);
const SUMMARY_ROW_BARE = summaryRow(SHARE_BARE);
/** A dependency analysis row: critical-path share, critical-path time, waiting time, name. */
const dependencyRow = (share: string) =>
  new RegExp(String.raw`^\s*` + share + String.raw`\s+(\S+)\s+(\S+)\s+(.*?)\s*$`);
const DEPENDENCY_ROW = dependencyRow(SHARE);
const DEPENDENCY_ROW_BARE = dependencyRow(SHARE_BARE);
/** A units row: only units (`%`, `ms`, `us`, `s`, `KB`, `GB/s`) under a header, at least one. */
const UNITS_ROW = /^\s*(?:(?:%|[mun\u00b5]?s|[KMGT]?B(?:\/s)?)(?:\s+|$))+$/;
/** A Unified Memory row: count, four sizes (or `-`), the total time (or `-`) and the name. */
const UNIFIED_ROW = /^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S.*?)\s*$/;
/** `System profiling result:` rows: a quantity, its sample count, avg, min and max. */
export const SYSTEM_ROW = /^\s*(.*?\S)\s+(\d+)\s+(-?\d+(?:\.\d+)?)\s+(-?\d+(?:\.\d+)?)\s+(-?\d+(?:\.\d+)?)\s*$/;

/** A time cell: with its unit (`1.5ms`), or a bare number (`1.5`, `2.3e-05`) in its column's unit from a units row. */
export function cellNs(cell: string, unit: string | undefined): number | undefined {
  const withUnit = parseDurationNs(cell);
  return withUnit !== undefined || !unit ? withUnit : decimalToNs(cell, unit);
}

/**
 * A units row under the table's header (`-u ms`, `--normalized-time-unit col`): kept on the table (`t.units`), whose
 * cells are then bare numbers; false when the line is not one. Summary and dependency tables take it token by token
 * (`%  ms  ms  ms  ms`: the share, then each time column; Calls has none), trace and unified-memory tables column by
 * column.
 */
export function readUnitsRow(line: string, t: TextTable | { kind: 'csv' }): boolean {
  if (!UNITS_ROW.test(line)) return false;
  if (t.kind === 'summary' || t.kind === 'dependency') {
    if (t.units) return false;
    const tokens = line.trim().split(/\s+/);
    t.units = tokens[0] === '%' ? tokens.slice(1) : tokens;
    return true;
  }
  if (t.kind === 'trace' || t.kind === 'unified') {
    if (t.units) return false;
    t.units = sliceRightAligned(line, t.cols);
    return true;
  }
  return false;
}

/**
 * A summary row (the table's current type kept on it: nvprof names a type on its first row only); a string when the
 * line is a row whose times do not read (said as a diagnostic); undefined when it is not a row.
 */
export function readSummaryRow(
  line: string,
  t: Extract<TextTable, { kind: 'summary' }>,
): SummaryRow | string | undefined {
  const m = (t.units ? SUMMARY_ROW_BARE : SUMMARY_ROW).exec(line);
  if (!m) return undefined;
  if (m[1]) t.type = m[1];
  // under a units row: Time, Avg, Min, Max each in its unit (one unit for all when the row gives one)
  const u = t.units;
  const unitOf = (i: number) => (u ? (u[i] ?? u[0]) : undefined);
  const [totalNs, avgNs, minNs, maxNs] = [m[3], m[5], m[6], m[7]].map((c, i) => cellNs(c, unitOf(i)));
  if (totalNs === undefined || avgNs === undefined || minNs === undefined || maxNs === undefined)
    return `a time in this row is not a number with a unit: ${line.trim().slice(0, 120)}`;
  return {
    type: t.type || (t.typed ? 'GPU activities' : t.type),
    timePct: Number(m[2]),
    totalNs,
    calls: Number(m[4]),
    avgNs,
    minNs,
    maxNs,
    name: m[8],
  };
}

/** A dependency analysis row; a string when its times do not read; undefined when the line is not a row. */
export function readDependencyRow(line: string, units: string[] | undefined): DependencyRow | string | undefined {
  const m = (units ? DEPENDENCY_ROW_BARE : DEPENDENCY_ROW).exec(line);
  if (!m) return undefined;
  const cp = cellNs(m[2], units?.[0]);
  const wait = cellNs(m[3], units?.[1] ?? units?.[0]);
  if (cp === undefined || wait === undefined)
    return `critical path or waiting time is not a time: ${line.trim().slice(0, 120)}`;
  return { criticalPathPct: Number(m[1]), criticalPathNs: cp, waitingNs: wait, name: m[4] };
}

/** A `Metric result:` or `Event result:` row of `kernel` on `device`, or undefined when the line is not one. */
export function readMetricRow(
  line: string,
  cols: Column[],
  kind: 'metrics' | 'events',
  kernel: string,
  device: string | undefined,
): MetricRow | undefined {
  const cells = sliceRightAligned(line, cols);
  if (!/^\d+$/.test(cells[0] ?? '') || cells.some((c) => c === '') || cells.length !== 6) return undefined;
  const common = { ...(device ? { device } : {}), kernel, invocations: Number(cells[0]), metric: cells[1] };
  return kind === 'metrics'
    ? { ...common, description: cells[2], min: cells[3], max: cells[4], avg: cells[5] }
    : { ...common, min: cells[2], max: cells[3], avg: cells[4], total: cells[5] };
}

/**
 * A Unified Memory row. Under a units row a bare cell takes its column's unit (a size kept as printed with it:
 * `28.90234KB`), while a cell that carries its own unit (`0.293664ms`, nvprof mixes both) is read as it is.
 */
export function readUnifiedRow(
  line: string,
  units: string[] | undefined,
  device: string | undefined,
): UnifiedMemoryRow | undefined {
  // by tokens, not by the header's positions: under `-u ms` a time (`6.0360e-03ms`) is wider than its column
  const m = UNIFIED_ROW.exec(line);
  if (!m) return undefined;
  const c = m.slice(1);
  const totalNs = c[5] === '-' ? null : cellNs(c[5], units?.[5]);
  if (totalNs === undefined) return undefined;
  const size = (i: number) => (c[i] !== '-' && units?.[i] && /\d$/.test(c[i]) ? `${c[i]}${units[i]}` : c[i]);
  return {
    ...(device ? { device } : {}),
    count: Number(c[0]),
    avgSize: size(1),
    minSize: size(2),
    maxSize: size(3),
    totalSize: size(4),
    totalNs,
    name: c[6],
  };
}

/** A `System profiling result:` sample (`SM Clock (MHz)   6  705.0000  705.0000  705.0000`), text or CSV. */
export function systemSample(
  device: string | undefined,
  name: string,
  count: string,
  avg: string,
  min: string,
  max: string,
): SystemSampleRow {
  const unit = /\(([^()]+)\)$/.exec(name)?.[1];
  return {
    ...(device ? { device } : {}),
    name,
    ...(unit ? { unit } : {}),
    count: Number(count),
    avg: Number(avg),
    min: Number(min),
    max: Number(max),
  };
}
