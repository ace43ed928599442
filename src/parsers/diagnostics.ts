/** Parsers never throw on bad input: what they do not understand becomes a diagnostic with its 1-indexed line. */
type DiagnosticCode =
  | 'UNRECOGNIZED_LINE'
  | 'BAD_ROW'
  | 'TRUNCATED'
  | 'NO_DATA'
  | 'UNKNOWN_FORMAT'
  | 'TRUNCATED_LINE'
  | 'NO_FINAL_NEWLINE'
  | 'DUPLICATE_RUN'
  | 'JOINED_LINE'
  | 'ENCODING_ASSUMED'
  /** a block that is not the profiler's (a compiler's timing report before nvprof's output), skipped whole */
  | 'SKIPPED_BLOCK'
  /** the log was read from inside the fenced code blocks of a Markdown file */
  | 'READ_FROM_FENCE'
  | 'READ_WHOLE_NOTE';

export interface Diagnostic {
  /** `note`: nothing lost, but the reader should know (a Markdown file read from its fences); `--strict` passes. */
  severity: 'warning' | 'error' | 'note';
  code: DiagnosticCode;
  line: number;
  message: string;
}

export interface ParseResult<T> {
  value: T;
  diagnostics: Diagnostic[];
}

/** Lines of a text, without line terminators (LF or CRLF); a final empty line after a trailing newline is dropped. */
function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * A log that does not end with a newline may have been cut mid-line (a copy that stopped, a full disk): its last line
 * is kept only when it is evidently whole, a CSV row closed by a quote (as nvprof --csv ends its rows). Otherwise it
 * becomes a diagnostic: half an NVTX name must not become a row.
 */
function lastLineIsWhole(line: string): boolean {
  const t = line.trim();
  return t.endsWith('"') && (t.match(/"/g)?.length ?? 0) % 2 === 0 && t.includes(',');
}

export function cutLineDiagnostic(line: number, text: string): Diagnostic {
  return {
    severity: 'warning',
    code: 'TRUNCATED_LINE',
    line,
    message: `the log ends mid-line (no newline after its last line), so that line was not used: ${text.trim().slice(0, 120)}`,
  };
}

/** A line longer than the scanner holds (MAX_LINE_BYTES): cut, so never a row, and said with its start. */
export function overlongLineDiagnostic(line: number, head: string, maxBytes: number): Diagnostic {
  return {
    severity: 'warning',
    code: 'TRUNCATED_LINE',
    line,
    message: `a line of more than ${Math.round(maxBytes / 1048576)} MiB (no profiler prints one): not read as a row; it starts: ${head.trim().slice(0, 120)}`,
  };
}

function keptLastLineDiagnostic(line: number, text: string): Diagnostic {
  return {
    severity: 'warning',
    code: 'NO_FINAL_NEWLINE',
    line,
    message: `the log has no newline after its last line; the line parses as a complete row, so it was kept (if the file was cut there, its last cell may be cut too): ${text.trim().slice(0, 120)}`,
  };
}

/** What both parsers offer for the last line of a log that has no newline after it. */
interface LastLineParser {
  push(line: string): void;
  /** Rows kept or counted so far: a push that adds one took the line as a row. */
  rowCount(): number;
  readonly diagnostics: DiagnosticList;
  readonly lineNumber: number;
}

/**
 * The last line of a log with no newline after it (many saved logs end so; so does a log cut mid-line): a CSV row
 * closed by its quote is whole; any other line is kept when it parses as a complete row (with a note), and is a
 * TRUNCATED_LINE diagnostic otherwise: half an NVTX name or half a number must not become a row.
 */
export function feedLastLine(parser: LastLineParser, text: string): void {
  if (lastLineIsWhole(text)) {
    parser.push(text);
    return;
  }
  const rows = parser.rowCount();
  const mark = parser.diagnostics.mark();
  parser.push(text);
  if (parser.rowCount() > rows) {
    parser.diagnostics.push(keptLastLineDiagnostic(parser.lineNumber, text));
    return;
  }
  const after = parser.diagnostics.mark();
  if (after.items === mark.items && after.omitted === mark.omitted) return; // understood, not a row (SKIPPED: ..., a title)
  parser.diagnostics.rollback(mark);
  parser.diagnostics.push(cutLineDiagnostic(parser.lineNumber, text));
}

/** Feeds `text` line by line; a last line without a newline goes to the parser's lastLine (feedLastLine's rule). */
export function feedText(text: string, parser: { push(line: string): void; lastLine(text: string): void }): void {
  const lines = splitLines(text);
  const terminated = text.endsWith('\n') || text.endsWith('\r');
  lines.forEach((line, i) => {
    if (i === lines.length - 1 && !terminated) parser.lastLine(line);
    else parser.push(line);
  });
}

/** At most this many diagnostics are kept; the rest are counted (a 200 MB log of junk must not fill memory). */
const MAX_DIAGNOSTICS = 1000;

/** A diagnostics list that keeps the first MAX_DIAGNOSTICS and ends with one line counting the others. */
export class DiagnosticList {
  readonly items: Diagnostic[] = [];
  private omitted = 0;
  private lastLine = 0;

  push(d: Diagnostic): void {
    if (this.items.length < MAX_DIAGNOSTICS) this.items.push(d);
    else {
      this.omitted++;
      this.lastLine = d.line;
    }
  }

  /** Where the list stands now, for `rollback`. */
  mark(): { items: number; omitted: number } {
    return { items: this.items.length, omitted: this.omitted };
  }

  /** Forgets what was pushed since `mark` (a line tried as a row and not taken). */
  rollback(m: { items: number; omitted: number }): void {
    this.items.length = m.items;
    this.omitted = m.omitted;
  }

  finish(): Diagnostic[] {
    if (this.omitted === 0) return this.items;
    return [
      ...this.items,
      {
        severity: 'warning',
        code: 'UNRECOGNIZED_LINE',
        line: this.lastLine,
        message: `${this.omitted} more diagnostics not listed (only the first ${MAX_DIAGNOSTICS} are kept)`,
      },
    ];
  }
}
