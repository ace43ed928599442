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
