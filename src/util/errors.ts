/**
 * One error type for every expected failure (bad input, missing tool, wrong model).
 * The CLI prints `message` on one line (plus the suggestion when there is one) and exits with `exitCode`.
 * Programmer errors stay plain Errors and print a stack.
 */
export type ErrorCode =
  | 'FILE_NOT_FOUND'
  | 'BAD_CFG'
  | 'BAD_WEIGHTS'
  | 'BAD_MODEL'
  | 'BAD_VIDEO'
  | 'BAD_OUTPUT'
  | 'BAD_OPTION'
  | 'TOOL_MISSING'
  | 'TOOL_FAILED'
  | 'TENSORRT_UNAVAILABLE'
  | 'BAD_ENGINE'
  | 'BAD_INPUT'
  | 'NOTHING_TO_COMPARE'
  | 'INTERRUPTED'
  | 'RESOURCE';

export class JetprofError extends Error {
  readonly code: ErrorCode;
  readonly suggestion?: string;
  readonly exitCode: number;

  constructor(
    code: ErrorCode,
    message: string,
    options: { suggestion?: string; exitCode?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'JetprofError';
    this.code = code;
    this.suggestion = options.suggestion;
    this.exitCode = options.exitCode ?? 2;
  }
}

/** Native modules (OpenCV) throw plain strings; turn anything thrown into a message. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e).trim();
}
