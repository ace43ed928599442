/**
 * Nsight Systems statistics -> typed data (schema jetprof.nsys/1). Reads the console output of
 * `nsys profile --stats=true` and `nsys stats` in table (column) or CSV format, from nsys 2019.5 to 2024:
 * report markers (`[3/8] Executing 'nvtxsum' stats report`, `Processing [...] with [.../osrt_sum.py]...`,
 * ` ** OS Runtime Summary (osrt_sum):`, and the old bare titles such as `CUDA API Statistics:` or, older still,
 * `CUDA API Statistics (nanoseconds)`), `SKIPPED:` notices,
 * digit grouping in threes or fours, and `…` truncation (kept as printed). Old report names are canonicalised to the
 * new ones. Pure, line by line, never throws.
 */
import { type Column, ruleColumns, sliceByRule } from './columns.ts';
import {
  cutLineDiagnostic,
  DiagnosticList,
  feedLastLine,
  feedText,
  overlongLineDiagnostic,
  type ParseResult,
} from './diagnostics.ts';
import { splitCsvLine } from './units.ts';
import { canonicalReportName, columnSpec, convert, type Kind, type NsysValue, OLD_TITLES } from './nsys-columns.ts';

export { canonicalReportName } from './nsys-columns.ts';

export type NsysRow = Record<string, NsysValue>;

export interface NsysTable {
  report: string;
  title?: string;
  /** Column headers as printed. */
  columns: string[];
  /** Keys used in `rows`, one per column (`timePct`, `totalNs`, `instances`, `avgNs`, ..., `name`/`range`/`operation`). */
  keys: string[];
  rows: NsysRow[];
}

export interface NsysStats {
  schema: 'jetprof.nsys/1';
  /** The first table of each report, by canonical name. */
  reports: Record<string, { columns: string[]; keys: string[]; rows: NsysRow[] }>;
  /** Every table in order (old --stats output prints one OS runtime table per process). */
  tables: NsysTable[];
  /** Reports nsys skipped, with its reason (`does not contain NV Tools Extension (NVTX) data.`). */
  skipped: Record<string, string>;
  /** nsys's own `WARNING:` lines, and its `ERROR:` lines with their prefix. */
  warnings: string[];
  /**
   * The expert system (`nsys analyze`, or the rules `--stats=true` runs in 2023 and later), by rule name: its title and
   * its message as printed (the advice above a table of what it found, or that it found nothing). The tables
   * themselves are in `tables` and `reports` under the rule's name.
   */
  findings?: Record<string, { title?: string; text: string }>;
}

const RULE = /^\s*-+(\s+-+)*\s*$/;

/** nsys's messages on stderr, which can land inside a row of its buffered stdout (`...  open64   SKIPPED: ...`). */
const STDERR_MESSAGE = /(?:SKIPPED|WARNING|ERROR): /;

/**
 * What a `SKIPPED:` notice says is missing -> the reports that need it. nsys names the data, not the report
 * (`does not contain CUDA kernel data.`), and on stderr a notice can arrive before its report's heading: it goes to a
 * report that was announced, printed no table and needs that data; `first` is the report it names when no announced
 * report takes it (never `unknown` for known data).
 */
const NOTICE_DATA: { data: RegExp; reports: RegExp; first?: string }[] = [
  { data: /NV Tools Extension|NVTX/, reports: /^nvtx/, first: 'nvtx_sum' },
  { data: /OS Runtime/i, reports: /^osrt/, first: 'osrt_sum' },
  { data: /Unified Memory CPU page faults/i, reports: /^um_cpu_page_faults/, first: 'um_cpu_page_faults_sum' },
  { data: /Unified Memory/i, reports: /^um_/, first: 'um_sum' },
  { data: /CUDA kernel/i, reports: /kern/, first: 'cuda_gpu_kern_sum' },
  { data: /GPU memory|memory operation/i, reports: /_mem_/, first: 'cuda_gpu_mem_time_sum' },
  { data: /CUDA/, reports: /^cuda_/, first: 'cuda_api_sum' },
  { data: /OpenMP/i, reports: /^openmp/, first: 'openmp_sum' },
  { data: /KHR|OpenGL/i, reports: /^opengl/ },
  { data: /Vulkan/i, reports: /^vulkan/ },
  { data: /DX1[12]|Direct3D/i, reports: /^dx1/ },
  { data: /WDDM/i, reports: /^wddm/ },
  { data: /MPI/, reports: /^mpi/ },
];

/** `Processing [report.sqlite] with [/opt/.../reports/osrt_sum.py]...`: the script's path (1) and name (2). */
const PROCESSING = /^Processing \[.*\] with \[(.*?)([\w-]+)(?:\.py)?\]\.\.\.$/;

/** The expert system's rules (nsys analyze; 2022 spells them with dashes, 2023 and later with underscores). */
const EXPERT_RULES = new Set([
  'cuda_memcpy_async',
  'cuda_memcpy_sync',
  'cuda_memset_sync',
  'cuda_api_sync',
  'gpu_gaps',
  'gpu_time_util',
  'dx12_mem_ops',
  'cuda-async-memcpy',
  'cuda-sync-memcpy',
  'cuda-sync-memset',
  'cuda-sync-api',
  'gpu-low-util',
  'gpu-starv',
  'dx12-mem-op',
]);

export class NsysParser {
  private readonly tables: NsysTable[] = [];
  private readonly skipped: Record<string, string> = {};
  private readonly warnings: string[] = [];
  readonly diagnostics = new DiagnosticList();
  private pendingReport: string | undefined;
  private pendingTitle: string | undefined;
  private previous = '';
  private previousLineNo = 0;
  /** `width`: the header line's length (nsys pads every row of a column table to it). */
  private table: { t: NsysTable; cols?: Column[]; csv: boolean; kinds: Kind[]; width?: number } | undefined;
  private lineNo = 0;
  /** The expert-system rule being read: its title and the prose lines printed so far (`titled`: a ` ** ` line seen). */
  private finding: { report: string; title?: string; lines: string[]; titled: boolean } | undefined;
  private readonly findings: NonNullable<NsysStats['findings']> = {};
  /** Reports announced (`Executing`, `Processing`, ` ** Title (name):`), in order. */
  private readonly announced: string[] = [];
  /**
   * `SKIPPED:` notices in order, each with the report pending when it came (resolved at the end); `rule`: it came while
   * an expert rule was being read (nsys analyze prints a rule's notice right after its Processing line, in order).
   */
  private readonly notices: { reason: string; pending: string | undefined; rule: boolean }[] = [];
  /** The first part of a row a notice was written into (nsys's stderr inside its buffered stdout): joined to the rest. */
  private held: { text: string; line: number } | undefined;

  /** The rule read so far, kept with its prose (blank lines between paragraphs, the numbered suggestions as printed). */
  private finishFinding(): void {
    const f = this.finding;
    this.finding = undefined;
    if (!f) return;
    while (f.lines.length > 0 && f.lines[f.lines.length - 1] === '') f.lines.pop();
    if (f.lines.length === 0 && !f.title) return;
    this.findings[f.report] = { ...(f.title ? { title: f.title } : {}), text: f.lines.join('\n') };
  }

  /** An unquoted CSV header (`Duration (ns),Start (ns),PID,TID,API Name`) right after a rule's Processing line. */
  private csvRuleHeader(line: string): boolean {
    const cells = splitCsvLine(line);
    return cells.length >= 2 && cells.every((c) => /^[A-Za-z][\w ()%#/.-]*$/.test(c.trim()));
  }

  push(raw: string): void {
    this.lineNo++;
    let line = raw.replace(/\r$/, '');
    // `nsys profile --stats=true > log 2>&1`: the notices go to stderr as they happen, the tables to stdout in blocks,
    // so a notice can land in the middle of a row. It is taken out, and the row's two parts joined.
    const spliced = STDERR_MESSAGE.exec(line);
    if (spliced && spliced.index > 0 && line.slice(0, spliced.index).trim() !== '') {
      this.held = {
        text: (this.held?.text ?? '') + line.slice(0, spliced.index),
        line: this.held?.line ?? this.lineNo,
      };
      this.message(line.slice(spliced.index));
      return;
    }
    if (this.held) {
      if (STDERR_MESSAGE.exec(line)?.index === 0) {
        this.message(line);
        return;
      }
      // a blank line a message brought (nsys ends an ERROR with one) while the held part is shorter than the rows of
      // its table (padded to the header's width): the rest of the row is still to come
      const width = this.table && !this.table.csv ? this.table.width : this.previous ? this.previous.length : undefined;
      if (line.trim() === '' && width !== undefined && this.held.text.length < width) return;
      const held = this.held;
      this.held = undefined;
      // the held part is a whole row already (padded to the header's width) and this line is the next row: the notice
      // came after the row's padding, and each row stands on its own
      if (
        line.trim() !== '' &&
        width !== undefined &&
        held.text.trimEnd().length < held.text.length &&
        held.text.length >= width
      ) {
        this.pushLine(held.text);
        this.pushLine(line);
        return;
      }
      line = held.text + line;
      this.diagnostics.push({
        severity: 'note',
        code: 'JOINED_LINE',
        line: held.line,
        message: `a row nsys's own message was written into, joined back (lines ${held.line}-${this.lineNo})`,
      });
    }
    this.pushLine(line);
  }

  /** One of nsys's stderr messages taken out of a row it was written into. */
  private message(text: string): void {
    const t = text.trim();
    if (t.startsWith('SKIPPED: ')) this.notice(t.slice('SKIPPED: '.length));
    else if (t.startsWith('WARNING: ')) this.warnings.push(t.slice('WARNING: '.length));
    else this.warnings.push(t);
  }

  /** A `SKIPPED:` notice: the path goes (`/tmp/report1.sqlite does not contain ...` -> `does not contain ...`). */
  private notice(text: string): void {
    const reason = text.trim().replace(/^(?:.+?\.(?:sqlite|nsys-rep|qdrep)|\S+) does not contain/, 'does not contain');
    this.notices.push({
      reason,
      pending: this.pendingReport,
      rule: this.finding !== undefined && this.finding.report === this.pendingReport,
    });
  }

  /** Reports announced and skipped: each notice to the first announced report that printed no table and needs its data. */
  private resolveNotices(): void {
    const withTable = new Set(this.tables.map((t) => t.report));
    const given = new Set<string>();
    for (const n of this.notices) {
      const kinds = NOTICE_DATA.filter((k) => k.data.test(n.reason));
      const fits = (r: string) =>
        !withTable.has(r) && !given.has(r) && (kinds.length === 0 || kinds.some((k) => k.reports.test(r)));
      // a rule's notice is its own: the rules print in order, each notice after its Processing line
      const own = n.rule && n.pending !== undefined && !given.has(n.pending) ? n.pending : undefined;
      const name =
        own ??
        this.announced.find(fits) ??
        (n.pending !== undefined && !withTable.has(n.pending) ? n.pending : undefined) ??
        kinds.find((k) => k.first)?.first ??
        'unknown';
      given.add(name);
      this.skipped[name] = n.reason;
    }
  }

  private pushLine(line: string): void {
    const trimmed = line.trim();
    let m: RegExpExecArray | null;

    if (this.table) {
      if (trimmed === '') {
        this.table = undefined;
        return;
      }
      if (this.row(line)) return;
      this.table = undefined;
    }
    if (RULE.test(line) && this.previous !== '') {
      this.startColumnTable(this.previous, line);
      this.previous = '';
      return;
    }
    // the line before was not a table header after all: the expert system's prose, or not understood
    if (this.previous !== '') {
      if (this.finding) this.finding.lines.push(this.previous.trimEnd());
      else this.noteUnrecognized(this.previousLineNo, this.previous);
    }
    this.previous = '';
    if (trimmed === '' && this.finding && this.finding.lines.length > 0) this.finding.lines.push('');
    if ((m = /^\[\d+\/\d+\] Executing '([\w-]+)' stats report/.exec(trimmed))) {
      this.pendingReport = canonicalReportName(m[1]);
      this.pendingTitle = undefined;
      this.announced.push(this.pendingReport);
    } else if ((m = PROCESSING.exec(trimmed))) {
      // the script's path with either separator (nsys on Windows prints `C:\...\reports\osrt_sum.py`)
      this.finishFinding();
      this.pendingReport = canonicalReportName(m[2]);
      this.pendingTitle = undefined;
      this.announced.push(this.pendingReport);
      if (/[\\/]rules[\\/]/.test(m[1]) || EXPERT_RULES.has(m[2]))
        this.finding = { report: this.pendingReport, lines: [], titled: false };
    } else if ((m = /^\*\* (.*) \(([\w-]+)\):$/.exec(trimmed))) {
      this.pendingReport = canonicalReportName(m[2]);
      this.pendingTitle = m[1];
      if (this.announced[this.announced.length - 1] !== this.pendingReport) this.announced.push(this.pendingReport);
      if (this.finding?.report === this.pendingReport || EXPERT_RULES.has(m[2])) {
        if (this.finding?.report !== this.pendingReport) this.finishFinding();
        this.finding = { report: this.pendingReport, title: m[1], lines: [], titled: true };
      }
    } else if ((m = /^SKIPPED: (.*)$/.exec(trimmed))) {
      // `SKIPPED: /tmp/report1.sqlite does not contain ...` (or `C:\Users\A B\report1.sqlite ...`)
      this.notice(m[1]);
    } else if (this.finding && !this.finding.titled && this.finding.lines.length === 0 && this.csvRuleHeader(trimmed)) {
      // `nsys analyze --format csv`: the rule's table follows its Processing line, with an unquoted header
      this.startCsvTable(trimmed);
    } else if (OLD_TITLES.some(([re]) => re.test(trimmed))) {
      const found = OLD_TITLES.find(([re]) => re.test(trimmed))!;
      this.pendingTitle = trimmed.replace(/:$/, '').replace(/ \(nanoseconds\)$/, '');
      this.pendingReport ??= found[1]; // a name from an `Executing` line wins over the title's
    } else if (
      /^"?Time ?\(%\)"?,/.test(trimmed) ||
      /^"?Total \((MB|KiB)\)"?,/.test(trimmed) ||
      /^"?Total"?,"?(Count|Operations)"?,/.test(trimmed)
    ) {
      this.startCsvTable(trimmed);
    } else if ((m = /^ERROR: (.*)$/.exec(trimmed))) {
      this.warnings.push(trimmed); // nsys's own error (`ERROR: Report 'umsum' could not be found.`), kept as said
    } else if (trimmed === '' || this.isKnownNoise(trimmed)) {
      if ((m = /^WARNING: (.*)$/.exec(trimmed))) this.warnings.push(m[1]);
    } else {
      // a possible table header: kept until the next line shows whether a rule follows
      this.previous = line;
      this.previousLineNo = this.lineNo;
    }
  }

  get lineNumber(): number {
    return this.lineNo;
  }

  /** Rows kept so far, over every table (feedLastLine asks whether a line became one). */
  rowCount(): number {
    return this.tables.reduce((n, t) => n + t.rows.length, 0);
  }

  /** A line longer than the scanner holds: counted, said, never read as a row. */
  overlongLine(head: string, maxBytes: number): void {
    this.lineNo++;
    this.diagnostics.push(overlongLineDiagnostic(this.lineNo, head, maxBytes));
  }

  /** The last line of a log with no newline after it: a row when it parses as one, else a cut line (feedLastLine). */
  lastLine(text: string): void {
    feedLastLine(this, text);
    // kept as a possible table header, which no rule line will follow: the end of a cut line, not a header
    if (this.previous === text) {
      this.previous = '';
      this.diagnostics.push(cutLineDiagnostic(this.lineNo, text));
    }
  }

  finish(): ParseResult<NsysStats> {
    if (this.held) {
      // the rest of a row never came: what was held is a cut line
      this.diagnostics.push(cutLineDiagnostic(this.held.line, this.held.text));
      this.held = undefined;
    }
    if (this.previous !== '') {
      if (this.finding) this.finding.lines.push(this.previous.trimEnd());
      else this.noteUnrecognized(this.previousLineNo, this.previous);
      this.previous = '';
    }
    this.finishFinding();
    this.resolveNotices();
    const reports: NsysStats['reports'] = {};
    // Old --stats output repeats a report once per process; a table identical to an earlier one of the same report
    // is the same output twice (a file concatenated with itself): noted, and the first one is used.
    const seen = new Set<string>();
    let duplicates = 0;
    for (const t of this.tables) {
      const key = `${t.report}\0${JSON.stringify(t.rows)}`;
      if (t.rows.length && seen.has(key)) duplicates++;
      seen.add(key);
      reports[t.report] ??= { columns: t.columns, keys: t.keys, rows: t.rows };
    }
    if (duplicates) {
      this.diagnostics.push({
        severity: 'warning',
        code: 'DUPLICATE_RUN',
        line: this.lineNo,
        message: `${duplicates} table(s) appear twice with the same rows (a file concatenated with itself?): each report uses its first table`,
      });
    }
    return {
      value: {
        schema: 'jetprof.nsys/1',
        reports,
        tables: this.tables,
        skipped: this.skipped,
        warnings: this.warnings,
        ...(Object.keys(this.findings).length > 0 ? { findings: this.findings } : {}),
      },
      diagnostics: this.diagnostics.finish(),
    };
  }

  private noteUnrecognized(line: number, text: string): void {
    this.diagnostics.push({
      severity: 'warning',
      code: 'UNRECOGNIZED_LINE',
      line,
      message: `not understood (application output?): ${text.trim().slice(0, 120)}`,
    });
  }

  /** Lines nsys prints around its tables that carry nothing to keep. */
  private isKnownNoise(t: string): boolean {
    return (
      /^(WARNING:|Generating |Generated:|Exporting |Exported successfully|Collecting data|Processing events|Capturing symbol files|Creating final output files|Saved report file|Saving |Report file|Importing|\[\d+\/\d+\]|NOTICE:|Failed to create|The target application|Processing \[)/.test(
        t,
      ) || /\.(nsys-rep|qdrep|sqlite|qdstrm)$/.test(t)
    );
  }

  private newTable(columns: string[]): NsysTable {
    const report = this.pendingReport ?? 'unknown';
    const t: NsysTable = {
      report,
      ...(this.pendingTitle ? { title: this.pendingTitle } : {}),
      columns,
      keys: [],
      rows: [],
    };
    t.keys = columns.map((c) => columnSpec(report, c)[0]);
    this.tables.push(t);
    this.pendingReport = undefined;
    return t;
  }

  private startColumnTable(header: string, rule: string): void {
    const cols = ruleColumns(rule, header);
    // the header of the last column may be wider than its rule (a centred `Name`): read it to the end of the line
    if (cols.length > 1) cols[cols.length - 1].label = header.slice(cols[cols.length - 2].end).trim();
    const t = this.newTable(cols.map((c) => c.label));
    this.table = { t, cols, csv: false, kinds: t.columns.map((c) => columnSpec(t.report, c)[1]), width: header.length };
  }

  private startCsvTable(header: string): void {
    const columns = splitCsvLine(header);
    const t = this.newTable(columns);
    this.table = { t, csv: true, kinds: columns.map((c) => columnSpec(t.report, c)[1]) };
  }

  private row(line: string): boolean {
    const tb = this.table!;
    const cells = tb.csv ? splitCsvLine(line.trim()) : sliceByRule(line, tb.cols!);
    if (cells.length !== tb.t.columns.length) return false;
    if (!tb.csv && RULE.test(line)) return false;
    const values = cells.map((cell, i) => convert(cell, tb.kinds[i], tb.t.keys[i]));
    // a line whose every number is missing is not a row (`   ....` where an author cut the table short)
    const numeric = tb.kinds.some((k) => k !== 'str');
    if (numeric && values.every((v, i) => tb.kinds[i] === 'str' || v === undefined || v === null)) return false;
    const row: NsysRow = {};
    const bad: string[] = [];
    cells.forEach((cell, i) => {
      const v = values[i];
      if (v === undefined) bad.push(`${tb.t.columns[i]}=${cell.trim()}`);
      // a numeric field holds a number or nothing, never the text it could not read
      row[tb.t.keys[i]] = v === undefined ? null : v;
    });
    if (bad.length) {
      this.diagnostics.push({
        severity: 'warning',
        code: 'BAD_ROW',
        line: this.lineNo,
        message: `not a number: ${bad.join(', ').slice(0, 120)} (left empty)`,
      });
    }
    tb.t.rows.push(row);
    return true;
  }
}

export function parseNsysStats(text: string): ParseResult<NsysStats> {
  const parser = new NsysParser();
  feedText(text, parser);
  return parser.finish();
}

/** True when the text looks like nsys statistics output. */
export function looksLikeNsys(head: string): boolean {
  return /Executing '\w+' stats report|Processing \[.*\.(?:sqlite|nsys-rep|qdrep)\] with|\*\* .* \(\w+_sum\):|Operating System Runtime API Statistics[: ]|CUDA API Statistics[: ]|NVTX Range Statistics:|^Generating CUDA (API|Kernel) Statistics\.\.\.$|^"?Time \(%\)"?,"?Total Time \(ns\)"?/m.test(
    head,
  );
}
