/**
 * nvprof log -> typed data (schema jetprof.nvprof/1). Pure and line by line: `NvprofParser.push(line)` keeps a
 * small state (current process, section, table header), so a log can be streamed; `parseNvprof(text)` wraps it.
 *
 * Reads: the summary (`Type Time(%) Time Calls Avg Min Max Name`, and the old layout without Type followed by a
 * separate `API calls:` table), `NVTX result:` (thread, domain, range tables), `Dependency Analysis:`, `Metric result:`
 * and `Event result:` per device and kernel, `--print-gpu-trace` / `--print-api-trace`, `Unified Memory profiling
 * result:`, CSV mode (with its units row), several processes, `======== ` import mode, warnings (with unprefixed
 * continuation lines), and application output interleaved (reported as diagnostics). Never throws.
 */
import { camelKey, type Column } from './columns.ts';
import {
  type Diagnostic,
  DiagnosticList,
  feedLastLine,
  feedText,
  overlongLineDiagnostic,
  type ParseResult,
} from './diagnostics.ts';
import { isTraceRowStart, TRACE_ROW_START, type TraceRow } from './trace-rows.ts';
import { readTraceName, TraceCells } from './trace-cells.ts';
import { decodeLineBytes } from '../util/text-input.ts';
import { type CsvRowSink, readCsvRow } from './nvprof-csv.ts';
import { type Section, type Table, tableHeader, type TableHeader } from './nvprof-headers.ts';
import {
  readDependencyRow,
  readMetricRow,
  readSummaryRow,
  readUnifiedRow,
  readUnitsRow,
  SYSTEM_ROW,
  systemSample,
} from './nvprof-rows.ts';

export { isTraceRowStart, splitTraceName, type TraceRow } from './trace-rows.ts';

export type {
  DependencyRow,
  MetricRow,
  MetricTraceRow,
  NvprofLog,
  NvprofProcess,
  NvtxDomain,
  NvtxRange,
  SummaryRow,
  SystemSampleRow,
  UnifiedMemoryRow,
} from './nvprof-types.ts';
import type { NvprofLog, NvprofProcess, NvtxRange } from './nvprof-types.ts';

const PREFIX = /^==(\d+)== ?(.*)$/;
/** nvprof -i's prefix: exactly eight `=` and a space (a banner of `=` signs printed by the program is not one). */
const IMPORT_PREFIX = /^========(?: (.*))?$/;
/** Sections of the untyped layout that name an activity type: `OpenACC (excl):`, `OpenMP (incl):`. */
const ACTIVITY_SECTION = /^(OpenACC|OpenMP) \((excl|incl)\):$/;
/** A trace row past the cap whose times are bare numbers (under a units row) or whose duration is `-`. */
const TRACE_ROW_START_LOOSE =
  /^\s*\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:[mun]?s)?\s+(?:-|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:[mun]?s)?)\s/;
/** A compiler's accelerator timing report (PGI/NVHPC `PGI_ACC_TIME=1`, `-ta=tesla:time`) printed before nvprof's. */
const COMPILER_REPORT = /^Accelerator Kernel Timing data$/;
const INFO_LINES = [
  /^Some kernel\(s\) will be replayed/,
  /^Generated result file/,
  /^Replaying kernel/,
  /^Analysis progress/,
  /^Profiling application:/,
];

function newProcess(pid: number | null): NvprofProcess {
  return { pid, summary: [], nvtx: { domains: [] }, dependency: [], metrics: [], warnings: [], notes: [] };
}

const NOT_BLANK = /\S/;

/** Receives kept trace rows in blocks (NvprofParser's `spill`). */
export type TraceSpill = (process: NvprofProcess, table: 'gpuTrace' | 'apiTrace', rows: TraceRow[]) => void;

/** Rows of one trace table held before a block goes to the spill. */
const SPILL_BLOCK = 4096;

/** Trace rows kept per process by default; `jetprof parse --trace-rows all` keeps every one. */
const DEFAULT_MAX_TRACE_ROWS = 20_000;

export class NvprofParser {
  private readonly processes = new Map<string, NvprofProcess>();
  /** Reads a text trace row's cells (trace-cells.ts). */
  private readonly cells = new TraceCells();
  /**
   * `allRuns`: a log holding the same process's run twice keeps both (as `run` 1 and 2); default: the first.
   * `spill`: kept trace rows are handed over in blocks as they are read, all but the last of each table, so that a
   * trace of any length is never held whole (`jetprof parse --trace-rows all` writes them out as they come); the
   * rows left in the arrays follow the spilled ones.
   */
  constructor(
    private readonly maxTraceRows = DEFAULT_MAX_TRACE_ROWS,
    private readonly allRuns = false,
    private readonly spill?: TraceSpill,
  ) {}
  /** Rows handed to `spill`, per process and table. */
  private readonly spilled = new Map<NvprofProcess, { gpuTrace: number; apiTrace: number }>();
  /** Processes whose run header was seen, and whether rows came after it. */
  private readonly runs = new Map<string, number>();
  private discarding: string | undefined;
  readonly diagnostics = new DiagnosticList();
  private current: NvprofProcess | undefined;
  private section: Section = 'none';
  private table: Table | undefined;
  private device: string | undefined;
  private kernel: string | undefined;
  private range: NvtxRange | undefined;
  private thread: string | undefined;
  private lastWasWarning = false;
  /** The activity type an untyped layout's section names (`OpenACC (excl)`), for its table's rows. */
  private activityType: string | undefined;
  /** A compiler's timing report being skipped: the line it started on and how many lines it has had. */
  private compilerReport: { line: number; lines: number } | undefined;
  private lineNo = 0;
  /** Lines that were not valid UTF-8 and were read as Windows-1252 (pushBytes). */
  legacyLines = 0;
  /** The line of the last trace row kept, for a name wrapped onto the next line. */
  private lastTraceRowLine = -1;
  /** What a CSV row reads and writes of this parser (nvprof-csv.ts). */
  private readonly csvSink: CsvRowSink = {
    section: () => this.section,
    range: () => this.range,
    maxTraceRows: () => this.maxTraceRows,
    proc: () => this.proc(),
    diag: (code, message) => this.diag(code, message),
    keepTraceRow: (p, target, row) => this.keepTraceRow(p, target, row),
  };

  get lineNumber(): number {
    return this.lineNo;
  }

  /** Rows kept or counted so far, over every process and table (feedLastLine asks whether a line became one). */
  rowCount(): number {
    let n = 0;
    for (const p of this.processes.values()) {
      n +=
        p.summary.length +
        p.dependency.length +
        p.metrics.length +
        (p.metricTrace?.length ?? 0) +
        (p.gpuTrace?.length ?? 0) +
        (p.apiTrace?.length ?? 0) +
        (p.traceRowsOmitted ?? 0) +
        (p.unifiedMemory?.rows.length ?? 0);
      for (const d of p.nvtx.domains) for (const r of d.ranges) n += r.rows.length;
      const s = this.spilled.get(p);
      if (s) n += s.gpuTrace + s.apiTrace;
    }
    return n;
  }

  /** A line longer than the scanner holds: counted, said, never read as a row. */
  overlongLine(head: string, maxBytes: number): void {
    this.lineNo++;
    this.diagnostics.push(overlongLineDiagnostic(this.lineNo, head, maxBytes));
  }

  /** The last line of a log with no newline after it: a row when it parses as one, else a cut line (feedLastLine). */
  lastLine(text: string): void {
    feedLastLine(this, text);
  }

  /**
   * Feeds one line as bytes [start, end) of `buf` (without its terminator). A trace row past maxTraceRows, which is
   * only counted, is recognised on the bytes without making a string; every other line is decoded and goes to push().
   */
  pushBytes(buf: Buffer, start: number, end: number): void {
    const p = this.countingProcess();
    if (p && isTraceRowStart(buf, start, end)) {
      this.lineNo++;
      this.lastWasWarning = false;
      p.traceRowsOmitted = (p.traceRowsOmitted ?? 0) + 1;
      return;
    }
    const decoded = decodeLineBytes(buf, start, end);
    if (decoded.legacy) this.legacyLines++;
    const line = decoded.text;
    // a kept trace row goes straight to its parser (what push() would reach after its checks, which a row passes)
    const t = this.table;
    if (t?.kind === 'trace') {
      this.lineNo++;
      if (this.traceRow(line, t)) {
        this.lastWasWarning = false;
        return;
      }
      this.lineNo--;
    }
    this.push(line);
  }

  /**
   * Counts, in one loop, the trace rows past maxTraceRows that start at `pos` in `buf`, each ended by LF or CRLF (the
   * millions of rows of a long trace). Stops at the first line that is not such a row, or at a lone CR, and returns
   * where it stopped: that line goes through pushBytes as usual.
   */
  countRows(buf: Buffer, pos: number, len: number): number {
    const p = this.countingProcess();
    if (!p) return pos;
    let cr = buf.indexOf(0x0d, pos);
    let n = 0;
    for (;;) {
      const lf = buf.indexOf(0x0a, pos);
      if (lf === -1) break;
      let end = lf;
      if (cr !== -1 && cr < lf) {
        if (cr !== lf - 1) break; // a lone CR ends a line of its own: the line-by-line path splits it
        end = cr;
      }
      if (!isTraceRowStart(buf, pos, end)) break;
      n++;
      pos = lf + 1;
      if (cr !== -1 && cr < pos) cr = buf.indexOf(0x0d, pos);
    }
    if (n > 0) {
      this.lineNo += n;
      this.lastWasWarning = false;
      p.traceRowsOmitted = (p.traceRowsOmitted ?? 0) + n;
    }
    return pos;
  }

  /** The process whose trace is past maxTraceRows while a trace table is open: its rows are only counted. */
  private countingProcess(): NvprofProcess | undefined {
    const t = this.table;
    const p = this.current;
    return t?.kind === 'trace' && p && p[t.target]!.length >= this.maxTraceRows ? p : undefined;
  }

  /** Feeds one line (without its terminator). */
  push(raw: string): void {
    this.lineNo++;
    const line = raw.charCodeAt(raw.length - 1) === 0x0d ? raw.slice(0, -1) : raw;
    const wasWarning = this.lastWasWarning;
    this.lastWasWarning = false;
    // both prefixes start with `=`: most lines (rows) skip the two regexes
    const m = line.charCodeAt(0) === 0x3d ? PREFIX.exec(line) : null;
    const im = m || line.charCodeAt(0) !== 0x3d ? undefined : IMPORT_PREFIX.exec(line);
    if (m || im) {
      const pid = m ? Number(m[1]) : null;
      const rest = (m ? m[2] : (im![1] ?? '')).trim();
      // The same process's run header again after its tables: the log holds the run twice (a file concatenated
      // with itself, or two nvprof runs that got the same PID).
      if (/^NVPROF is profiling process \d+/.test(rest)) this.startRun(pid);
      if (this.discarding === String(pid)) return;
      this.switchProcess(pid);
      this.prefixed(rest, line);
      return;
    }
    if (this.discarding !== undefined && this.current === undefined) return;
    this.unprefixed(line, wasWarning);
  }

  finish(): ParseResult<NvprofLog> {
    for (const p of this.processes.values()) {
      if (p.traceRowsOmitted)
        p.warnings.push(
          `${p.traceRowsOmitted} trace rows counted but not kept (the first ${this.maxTraceRows} are; jetprof parse --trace-rows all keeps every one)`,
        );
    }
    return {
      value: { schema: 'jetprof.nvprof/1', processes: [...this.processes.values()] },
      diagnostics: this.diagnostics.finish(),
    };
  }

  /**
   * The current process; a log with no `==PID==` line (cut away, or a table pasted alone) gets one without a PID, and
   * the table whose first row created it stays open.
   */
  private proc(): NvprofProcess {
    if (!this.current) {
      const table = this.table;
      this.switchProcess(null);
      this.table = table;
    }
    return this.current!;
  }

  private startRun(pid: number | null): void {
    const key = String(pid);
    this.discarding = undefined;
    const p = this.processes.get(key);
    // any table counts, traces and unified memory too (as keptAnyTable counts them)
    const hasRows =
      p &&
      (p.summary.length ||
        p.dependency.length ||
        p.nvtx.domains.length ||
        p.metrics.length ||
        p.metricTrace?.length ||
        p.gpuTrace?.length ||
        p.apiTrace?.length ||
        p.traceRowsOmitted ||
        p.unifiedMemory?.rows.length);
    if (!hasRows) return;
    const n = (this.runs.get(key) ?? 1) + 1;
    this.runs.set(key, n);
    if (this.allRuns) {
      // a process entry of its own for the repeated run
      const copy = newProcess(pid);
      copy.run = n;
      this.processes.set(`${key}#${n}`, copy);
      this.current = copy;
      this.table = undefined;
      return;
    }
    this.diag(
      'DUPLICATE_RUN',
      `process ${pid ?? '?'} starts again here: the log holds its run ${n} times (a file concatenated with itself?); the first copy is kept (jetprof parse --all-runs keeps each)`,
    );
    this.discarding = key;
    this.current = undefined;
    this.table = undefined;
  }

  private switchProcess(pid: number | null): void {
    if (this.allRuns && (this.runs.get(String(pid)) ?? 1) > 1) {
      const repeated = this.processes.get(`${pid}#${this.runs.get(String(pid))}`);
      if (repeated) {
        if (repeated !== this.current) {
          this.current = repeated;
          this.table = undefined;
        }
        return;
      }
    }
    const key = String(pid);
    let p = this.processes.get(key);
    if (!p) {
      p = newProcess(pid);
      this.processes.set(key, p);
    }
    if (p !== this.current) {
      this.current = p;
      this.table = undefined;
    }
  }

  private diag(code: Diagnostic['code'], message: string, severity: Diagnostic['severity'] = 'warning'): void {
    this.diagnostics.push({ severity, code, line: this.lineNo, message });
  }

  private prefixed(rest: string, line: string): void {
    this.endCompilerReport();
    const p = this.proc();
    let m: RegExpExecArray | null;
    if ((m = /^NVPROF is profiling process (\d+), command: (.*)$/.exec(rest))) {
      p.command = m[2];
    } else if ((m = /^Profiling application: (.*)$/.exec(rest))) {
      p.command ??= m[1];
    } else if (rest === 'Profiling result:') {
      this.enter('result');
    } else if (rest === 'API calls:') {
      this.enter('api');
    } else if (rest === 'NVTX result:') {
      this.enter('nvtx');
    } else if (rest === 'Dependency Analysis:') {
      this.enter('dependency');
    } else if (rest === 'Metric result:') {
      this.enter('metrics');
    } else if (rest === 'Event result:') {
      this.enter('events');
    } else if (rest === 'Unified Memory profiling result:') {
      this.enter('unified');
    } else if (rest === 'System profiling result:') {
      this.enter('system');
      this.table = { kind: 'system' };
    } else if (ACTIVITY_SECTION.test(rest)) {
      // the untyped layout's `OpenACC (excl):` section: its rows are of that type, never API calls
      this.enter('activity');
      this.activityType = rest.slice(0, -1);
    } else if ((m = /^(Warning|Error): (.*)$/.exec(rest))) {
      // nvprof's own fatal errors (e.g. "incompatible CUDA driver version." without a GPU) are kept with the
      // warnings, with their prefix.
      p.warnings.push(m[1] === 'Error' ? `Error: ${m[2]}` : m[2]);
      this.lastWasWarning = true;
    } else if (this.section === 'nvtx' && (m = /^Thread "(.*)" \(id = (\d+)\)$/.exec(rest))) {
      this.thread = `${m[1]} (id = ${m[2]})`;
    } else if (this.section === 'nvtx' && (m = /^Domain "(.*)"$/.exec(rest))) {
      p.nvtx.domains.push({ name: m[1], ...(this.thread ? { thread: this.thread } : {}), ranges: [] });
      this.range = undefined;
    } else if (this.section === 'nvtx' && (m = /^Range "(.*)"$/.exec(rest))) {
      let domain = p.nvtx.domains[p.nvtx.domains.length - 1];
      if (!domain) {
        domain = { name: '<default>', ranges: [] };
        p.nvtx.domains.push(domain);
      }
      this.range = { name: m[1], rows: [] };
      domain.ranges.push(this.range);
      this.table = undefined;
    } else if (INFO_LINES.some((re) => re.test(rest))) {
      // informational; nothing to keep
    } else if (rest === '') {
      this.table = undefined;
    } else if (!this.tableLine(rest)) {
      this.diag('UNRECOGNIZED_LINE', `not understood: ${line.slice(0, 120)}`);
    }
  }

  private enter(section: Section): void {
    this.section = section;
    this.table = undefined;
    this.device = undefined;
    this.kernel = undefined;
    if (section === 'nvtx') {
      this.thread = undefined;
      this.range = undefined;
    }
  }

  private unprefixed(line: string, wasWarning: boolean): void {
    if (this.compilerReport) {
      this.compilerReport.lines++;
      return;
    }
    if (!NOT_BLANK.test(line)) {
      this.table = undefined;
      return;
    }
    if (COMPILER_REPORT.test(line.trim())) {
      this.compilerReport = { line: this.lineNo, lines: 1 };
      return;
    }
    if (this.tableLine(line)) return;
    if (wasWarning) {
      const w = this.proc().warnings;
      w[w.length - 1] = `${w[w.length - 1]} ${line.trim()}`;
      return;
    }
    this.diag('UNRECOGNIZED_LINE', `not understood (application output?): ${line.slice(0, 120)}`);
  }

  /** The end of a compiler's timing report (at nvprof's next line): one note for the lines skipped. */
  private endCompilerReport(): void {
    const r = this.compilerReport;
    if (!r) return;
    this.compilerReport = undefined;
    this.diagnostics.push({
      severity: 'note',
      code: 'SKIPPED_BLOCK',
      line: r.line,
      message: `a compiler's accelerator timing report (${r.lines} lines, PGI_ACC_TIME or -ta=tesla:time) is not nvprof's output: skipped`,
    });
  }

  /** Headers, context lines and rows of the current section. Returns false when the line is none of these. */
  private tableLine(line: string): boolean {
    // The process is created only where something is stored: a line that is none of these must not leave an empty
    // PID-less process behind (the shell prompt and program output before a log's first ==PID== line).
    const p = this.current;
    // a trace row first: it starts with a time, which no header or context line below does
    if (this.table?.kind === 'trace' && (this.traceRow(line, this.table) || this.traceRowContinued(line, this.table)))
      return true;
    const trimmed = line.trim();
    let m: RegExpExecArray | null;
    const header = tableHeader(line, trimmed, this.section, this.activityType);
    if (header) {
      this.openTable(header);
      return true;
    }
    // a units row under its header (`-u ms`: only units, which no header above is)
    if (this.table && readUnitsRow(line, this.table)) return true;
    // context lines
    if ((m = /^Device "(.*)"$/.exec(trimmed))) {
      this.device = m[1];
      return true;
    }
    if ((m = /^Kernel: (.*)$/.exec(trimmed))) {
      this.kernel = m[1];
      return true;
    }
    if (trimmed === 'No kernels were profiled.' || trimmed === 'No API activities were profiled.') {
      this.proc().notes.push(trimmed);
      return true;
    }
    // the counts nvprof prints as lines after its Unified Memory tables (page faults, thrashes, throttles, remote
    // mappings), each a figure of its own
    if ((m = /^(Total [A-Za-z][A-Za-z ]*?): (\d+)$/.exec(trimmed)) && p?.unifiedMemory) {
      p.unifiedMemory.totals[camelKey(m[1])] = Number(m[2]);
      return true;
    }
    if (
      /^(Regs|SSMem|DSMem|SrcMemType|DstMemType|Size|Throughput|Context|Stream|Device): /.test(trimmed) &&
      (p?.gpuTrace || p?.apiTrace)
    ) {
      return true; // the trace legend
    }
    // rows
    const t = this.table;
    if (!t) return false;
    switch (t.kind) {
      case 'summary':
        return this.summaryRow(line, t);
      case 'dependency':
        return this.dependencyRow(line, t.units);
      case 'metrics':
      case 'events':
        return this.metricRow(line, t.cols, t.kind);
      case 'trace':
        return false; // tried first, above
      case 'unified':
        return this.unifiedRow(line, t.units);
      case 'system':
        return this.systemRow(line);
      case 'csv':
        return readCsvRow(this.csvSink, trimmed, t);
    }
  }

  /** A table opened by its header: the process's row list made ready, and the section the header starts. */
  private openTable(h: TableHeader): void {
    if (h.section) this.section = h.section;
    if (h.rows === 'unifiedMemory') this.proc().unifiedMemory ??= { rows: [], totals: {} };
    else if (h.rows) this.proc()[h.rows] ??= [];
    this.table = h.table;
  }

  private summaryRow(line: string, t: Extract<Table, { kind: 'summary' }>): boolean {
    const row = readSummaryRow(line, t);
    if (row === undefined) return false;
    if (typeof row === 'string') this.diag('BAD_ROW', row);
    else if (this.section === 'nvtx' && this.range) this.range.rows.push(row);
    else this.proc().summary.push(row);
    return true;
  }

  private dependencyRow(line: string, units: string[] | undefined): boolean {
    const row = readDependencyRow(line, units);
    if (row === undefined) return false;
    if (typeof row === 'string') this.diag('BAD_ROW', row);
    else this.proc().dependency.push(row);
    return true;
  }

  private metricRow(line: string, cols: Column[], kind: 'metrics' | 'events'): boolean {
    const row = readMetricRow(line, cols, kind, this.kernel ?? '', this.device);
    if (row) this.proc().metrics.push(row);
    return row !== undefined;
  }

  private traceRow(line: string, t: Extract<Table, { kind: 'trace' }>): boolean {
    const p = this.proc();
    const rows = p[t.target]!;
    if (rows.length >= this.maxTraceRows) {
      // Past the cap a row is only counted: a cheap look at its two leading times instead of the full parse.
      if (!TRACE_ROW_START.test(line) && !((t.units || line.includes(' -')) && TRACE_ROW_START_LOOSE.test(line)))
        return false;
      p.traceRowsOmitted = (p.traceRowsOmitted ?? 0) + 1;
      return true;
    }
    const row = this.cells.read(line, t);
    if (!row) return false;
    this.keepTraceRow(p, t.target, row);
    this.lastTraceRowLine = this.lineNo;
    return true;
  }

  /** A trace row kept (the caller checked the cap), and a block of them handed to the spill when one is full. */
  private keepTraceRow(p: NvprofProcess, target: 'gpuTrace' | 'apiTrace', row: TraceRow): void {
    const rows = p[target]!;
    rows.push(row);
    if (this.spill && rows.length >= SPILL_BLOCK) {
      // the last row stays: a name wrapped onto the next line is joined to it
      const block = rows.splice(0, rows.length - 1);
      const counts = this.spilled.get(p) ?? { gpuTrace: 0, apiTrace: 0 };
      counts[target] += block.length;
      this.spilled.set(p, counts);
      this.spill(p, target, block);
    }
  }

  /**
   * The rest of the previous trace row's name, wrapped onto this line when the log was copied through a page or an
   * editor (`cudaLaunchKernel (vector_add(float*,` then `float*, float*, int) [112])`): joined when the row just
   * before left a parenthesis open, with a diagnostic saying so.
   */
  private traceRowContinued(line: string, t: Extract<Table, { kind: 'trace' }>): boolean {
    const rows = this.current?.[t.target];
    const last = rows?.[rows.length - 1];
    if (!last || this.lastTraceRowLine !== this.lineNo - 1 || typeof last.name !== 'string') return false;
    const open = (last.name.match(/\(/g)?.length ?? 0) - (last.name.match(/\)/g)?.length ?? 0);
    const rest = line.trim();
    if (open <= 0 || rest === '') return false;
    readTraceName(last, `${last.name} ${rest}`);
    this.lastTraceRowLine = this.lineNo;
    this.diag(
      'JOINED_LINE',
      `joined to the trace row above (its name was wrapped onto this line): ${rest.slice(0, 120)}`,
    );
    return true;
  }

  private unifiedRow(line: string, units: string[] | undefined): boolean {
    const row = readUnifiedRow(line, units, this.device);
    if (row) this.proc().unifiedMemory!.rows.push(row);
    return row !== undefined;
  }

  private systemRow(line: string): boolean {
    const m = SYSTEM_ROW.exec(line);
    if (!m) return false;
    (this.proc().system ??= []).push(systemSample(this.device, m[1], m[2], m[3], m[4], m[5]));
    return true;
  }
}

export function parseNvprof(text: string, options: { allRuns?: boolean } = {}): ParseResult<NvprofLog> {
  const parser = new NvprofParser(DEFAULT_MAX_TRACE_ROWS, options.allRuns);
  feedText(text, parser);
  return parser.finish();
}

/** True when the text looks like nvprof output (a `==PID==` or `======== ` line, or nvprof's CSV header). */
export function looksLikeNvprof(head: string): boolean {
  return /^(==\d+==|========) /m.test(head) || /^"Type","Time\(%\)"/m.test(head);
}
