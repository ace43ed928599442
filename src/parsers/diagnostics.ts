/** Parsers never throw on bad input: what they do not understand becomes a diagnostic with its 1-indexed line. */
export type DiagnosticCode =
  | 'UNRECOGNIZED_LINE'
  | 'BAD_ROW'
  | 'TRUNCATED'
  | 'NO_DATA'
  | 'UNKNOWN_FORMAT';

export interface Diagnostic {
  severity: 'warning' | 'error';
  code: DiagnosticCode;
  line: number;
  message: string;
}

export interface ParseResult<T> {
  value: T;
  diagnostics: Diagnostic[];
}

/** Lines of a text, without line terminators (LF or CRLF); a final empty line after a trailing newline is dropped. */
export function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** At most this many diagnostics are kept; the rest are counted (a 200 MB log of junk must not fill memory). */
export const MAX_DIAGNOSTICS = 1000;

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

  finish(): Diagnostic[] {
    if (this.omitted === 0) return this.items;
    return [...this.items, { severity: 'warning', code: 'UNRECOGNIZED_LINE', line: this.lastLine, message: `${this.omitted} more diagnostics not listed (only the first ${MAX_DIAGNOSTICS} are kept)` }];
  }
}
