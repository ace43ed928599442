/**
 * nvprof's CSV form (`--csv`): which table a header starts (summary, dependency, metrics and events, unified memory,
 * system profiling, GPU and API traces, metric traces), and each row read into the same typed rows as the text form,
 * times in exact integer nanoseconds from its column's unit (the units row under the header). The parser
 * (nvprof.ts) keeps the state; a row is read here through the few things it needs of it (CsvRowSink).
 */
import type { Diagnostic } from './diagnostics.ts';
import { systemSample } from './nvprof-rows.ts';
import type { MetricRow, MetricTraceRow, NvprofProcess, NvtxRange, SummaryRow } from './nvprof-types.ts';
import { splitTraceName, type TraceRow } from './trace-rows.ts';
import { decimalToBytes, decimalToNs, isSizeUnit, parseDurationNs, parsePercent, splitCsvLine } from './units.ts';

type CsvFlavour =
  | 'summary'
  | 'dependency'
  | 'metrics'
  | 'events'
  | 'unified'
  | 'system'
  | 'gpuTrace'
  | 'apiTrace'
  | 'metricTrace'
  | 'other';

/** A CSV table being read: its header, the keys of its columns, the units row once seen, and which table it is. */
export interface CsvTable {
  kind: 'csv';
  header: string[];
  keys: string[];
  units: string[] | undefined;
  flavour: CsvFlavour;
}

/** System-profiling rows a process keeps (a real summary has a few dozen), and the lists already said to be full. */
export const MAX_SYSTEM_ROWS = 10_000;
const systemCapped = new WeakSet<object>();

/** What a CSV row needs of the parser: where it is, and where its rows go. */
export interface CsvRowSink {
  section(): string;
  range(): NvtxRange | undefined;
  maxTraceRows(): number;
  proc(): NvprofProcess;
  diag(code: Diagnostic['code'], message: string): void;
  keepTraceRow(p: NvprofProcess, target: 'gpuTrace' | 'apiTrace', row: TraceRow): void;
}

/** A cell of an nvprof CSV units row: empty or a unit (`s`, `us`, `%`, `KB`, `GB/s`), never a number. */
function isUnitCell(cell: string): boolean {
  return cell === '' || /^[A-Za-z%/]+$/.test(cell);
}

/** Which table a CSV header starts: nvprof --csv prints every section this way. */
export function csvFlavour(header: string[]): CsvFlavour {
  const [a, b, c, d] = header;
  if (a === 'Type' || a === 'Time(%)') return 'summary';
  if (a === 'Critical path(%)') return 'dependency';
  if (a === 'Device' && b === 'Kernel' && c === 'Invocations' && header.length === 8)
    return d === 'Metric Name' ? 'metrics' : d === 'Event Name' ? 'events' : 'other';
  if (a === 'Device' && b === 'Count' && header.length === 8 && header[6] === 'Total Time') return 'unified';
  // --system-profiling on --csv: a sampled quantity per device, its count, avg, min and max
  // --system-profiling on --csv: `"","Device","Count","Avg","Min","Max"`, the quantity in the unnamed column
  if (header.length === 6 && ['Device', 'Count', 'Avg', 'Min', 'Max'].every((h) => header.includes(h))) return 'system';
  // --print-gpu-trace / --print-api-trace --csv: `"Start","Duration",...,"Name","Correlation_ID"`
  if (a === 'Start' && b === 'Duration')
    return header.some((h) => /^(Grid [XYZ]|Size|Throughput|Device|Stream|SrcMemType)$/.test(h))
      ? 'gpuTrace'
      : 'apiTrace';
  // --print-gpu-trace --metrics/--events --csv: one row per kernel launch, a column per metric
  if (a === 'Device' && b === 'Context' && c === 'Stream' && d === 'Kernel') return 'metricTrace';
  return 'other';
}

export function readCsvRow(sink: CsvRowSink, line: string, t: CsvTable): boolean {
  const cells = splitCsvLine(line);
  if (!t.units && cells.length === t.header.length && !line.startsWith('"') && cells.every(isUnitCell)) {
    t.units = cells; // `,%,s,,us,us,ms,`
    return true;
  }
  if (cells.length !== t.header.length) return false;
  const units = t.units ?? [];
  if (t.flavour === 'gpuTrace' || t.flavour === 'apiTrace') return csvTraceRow(sink, line, cells, t, t.flavour);
  if (t.flavour === 'metricTrace') return csvMetricTraceRow(sink, cells, t);
  const ns = (i: number) => decimalToNs(cells[i], units[i] || 'ns');
  if (t.flavour === 'summary') {
    const off = t.header[0] === 'Type' ? 1 : 0;
    const vals = [ns(off + 1), ns(off + 3), ns(off + 4), ns(off + 5)];
    if (vals.some((v) => v === undefined)) {
      sink.diag('BAD_ROW', `a time in this CSV row is not a number: ${line.slice(0, 120)}`);
      return true;
    }
    const [totalNs, avgNs, minNs, maxNs] = vals as number[];
    const type = off ? cells[0] : sink.section() === 'api' ? 'API calls' : 'GPU activities';
    const row: SummaryRow = {
      type,
      timePct: parsePercent(cells[off]) ?? NaN,
      totalNs,
      calls: Number(cells[off + 2]),
      avgNs,
      minNs,
      maxNs,
      name: cells[off + 6],
    };
    if (sink.section() === 'nvtx' && sink.range()) sink.range()!.rows.push(row);
    else sink.proc().summary.push(row);
    return true;
  }
  if (t.flavour === 'dependency') {
    const cp = ns(1);
    const wait = ns(2);
    if (cp === undefined || wait === undefined) return false;
    sink.proc().dependency.push({
      criticalPathPct: parsePercent(cells[0]) ?? NaN,
      criticalPathNs: cp,
      waitingNs: wait,
      name: cells[3],
    });
    return true;
  }
  if (t.flavour === 'metrics' || t.flavour === 'events') {
    // "Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg" (events: "Event Name", no
    // description, then "Total"); values as printed, like the text form's
    if (!/^\d+$/.test(cells[2])) return false;
    const [device, kernel, invocations, metric] = cells;
    const row: MetricRow =
      t.flavour === 'metrics'
        ? {
            device,
            kernel,
            invocations: Number(invocations),
            metric,
            description: cells[4],
            min: cells[5],
            max: cells[6],
            avg: cells[7],
          }
        : {
            device,
            kernel,
            invocations: Number(invocations),
            metric,
            min: cells[4],
            max: cells[5],
            avg: cells[6],
            total: cells[7],
          };
    sink.proc().metrics.push(row);
    return true;
  }
  if (t.flavour === 'unified') return csvUnifiedRow(sink, line, cells, units);
  if (t.flavour === 'system') {
    const at = (h: string) => cells[t.header.indexOf(h)];
    const nameAt = t.header.findIndex((h) => !['Device', 'Count', 'Avg', 'Min', 'Max'].includes(h));
    const nums = [at('Avg'), at('Min'), at('Max')];
    if (!/^\d+$/.test(at('Count')) || nums.some((v) => !/^-?\d+(?:\.\d+)?$/.test(v))) return false;
    const system = (sink.proc().system ??= []);
    // a summary holds a row per device and quantity (a few dozen): past MAX_SYSTEM_ROWS the rows are counted, not
    // kept, so a runaway file (2,000,000 rows, 166 MB) cannot take gigabytes
    if (system.length >= MAX_SYSTEM_ROWS) {
      if (system.length === MAX_SYSTEM_ROWS && !systemCapped.has(system)) {
        systemCapped.add(system);
        sink.diag(
          'TRUNCATED',
          `more than ${MAX_SYSTEM_ROWS} system-profiling rows: the first ${MAX_SYSTEM_ROWS} are kept`,
        );
      }
      return true;
    }
    system.push(systemSample(at('Device') || undefined, cells[nameAt], at('Count'), nums[0], nums[1], nums[2]));
    return true;
  }
  return true; // other CSV tables: recognised, not typed
}

/**
 * A `--print-gpu-trace` / `--print-api-trace` CSV row: Start and Duration in exact nanoseconds from their column's
 * unit, a size column (unit B, KB, MB, GB) in bytes under `<key>Bytes`, a column with another unit (`GB/s`) as
 * printed with its unit, whole numbers as numbers, the correlation id from its own column, and an API row's
 * `cudaLaunchKernel (kernel(args) [id])` split as in the text form. Empty cells are left out.
 */
function csvTraceRow(
  sink: CsvRowSink,
  line: string,
  cells: string[],
  t: CsvTable,
  target: 'gpuTrace' | 'apiTrace',
): boolean {
  const units = t.units ?? [];
  const startNs = decimalToNs(cells[0], units[0] || 'ns');
  // a row printed without a duration (a Unified Memory CPU page fault): kept without one
  const noDuration = cells[1] === '' || cells[1] === '-';
  const durationNs = noDuration ? null : decimalToNs(cells[1], units[1] || 'ns');
  if (startNs === undefined || durationNs === undefined) {
    sink.diag('BAD_ROW', `start or duration in this CSV trace row is not a number: ${line.slice(0, 120)}`);
    return true;
  }
  const p = sink.proc();
  if (p[target]!.length >= sink.maxTraceRows()) {
    p.traceRowsOmitted = (p.traceRowsOmitted ?? 0) + 1;
    return true;
  }
  const row: TraceRow = durationNs === null ? { startNs } : { startNs, durationNs };
  for (let i = 2; i < cells.length; i++) {
    const cell = cells[i];
    const key = t.keys[i];
    const unit = units[i] ?? '';
    if (cell === '') continue;
    if (isSizeUnit(unit)) {
      const bytes = decimalToBytes(cell, unit);
      row[`${key}Bytes`] = bytes ?? cell;
    } else if (key === 'name') {
      const split = splitTraceName(cell);
      row.name = split.name;
      if (split.kernel !== undefined) row.kernel = split.kernel;
      if (split.correlationId !== undefined) row.correlationId = split.correlationId;
    } else if (/^\d+$/.test(cell)) row[key] = unit ? `${cell}${unit}` : Number(cell);
    else row[key] = unit ? `${cell}${unit}` : cell;
  }
  sink.keepTraceRow(p, target, row);
  return true;
}

/**
 * A `--print-gpu-trace --metrics ... --csv` row: the launch (device, context, stream, kernel, correlation id) and
 * each metric's value as a number, its unit from the units row or from the cell (`85.50%`, `1.1655GB/s`); a cell
 * that is not a number (`<OVERFLOW>`, `Low (1)`) is kept in `flags`, its value null.
 */
function csvMetricTraceRow(sink: CsvRowSink, cells: string[], t: CsvTable): boolean {
  const units = t.units ?? [];
  const idIndex = t.keys.indexOf('correlationId');
  const row: MetricTraceRow = {
    device: cells[0],
    context: cells[1],
    stream: cells[2],
    kernel: cells[3],
    ...(idIndex >= 0 && /^\d+$/.test(cells[idIndex]) ? { correlationId: Number(cells[idIndex]) } : {}),
    values: {},
  };
  for (let i = 4; i < cells.length; i++) {
    if (i === idIndex) continue;
    const metric = t.header[i];
    const cell = cells[i].trim();
    const m = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([A-Za-z%/]+)?$/.exec(cell);
    if (m) {
      row.values[metric] = Number(m[1]);
      const unit = m[2] ?? units[i] ?? '';
      if (unit) (row.units ??= {})[metric] = unit;
    } else {
      row.values[metric] = null;
      (row.flags ??= {})[metric] = cell;
    }
  }
  sink.proc().metricTrace!.push(row);
  return true;
}

/**
 * `"Device","Count","Avg Size","Min Size","Max Size","Total Size","Total Time","Name"`: a size keeps its unit (from the
 * cell or the units row) as the text form prints it; the time becomes nanoseconds; an empty cell is `-`.
 */
function csvUnifiedRow(sink: CsvRowSink, line: string, cells: string[], units: string[]): boolean {
  if (!/^\d*$/.test(cells[1])) return false;
  const size = (i: number) =>
    cells[i] === '' || cells[i] === '-' ? '-' : /[A-Za-z]$/.test(cells[i]) ? cells[i] : `${cells[i]}${units[i] ?? ''}`;
  const time = cells[6];
  const totalNs =
    time === '' || time === '-'
      ? null
      : (parseDurationNs(time) ?? (units[6] ? decimalToNs(time, units[6]) : undefined));
  if (totalNs === undefined) {
    sink.diag('BAD_ROW', `the total time in this unified-memory CSV row has no unit: ${line.slice(0, 120)}`);
    return true;
  }
  sink.proc().unifiedMemory!.rows.push({
    ...(cells[0] ? { device: cells[0] } : {}),
    count: cells[1] === '' ? null : Number(cells[1]),
    avgSize: size(2),
    minSize: size(3),
    maxSize: size(4),
    totalSize: size(5),
    totalNs,
    name: cells[7],
  });
  return true;
}
