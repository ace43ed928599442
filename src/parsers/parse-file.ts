/**
 * Parses a profiler output file by streaming its lines (memory stays flat however large the log), detecting
 * nvprof or nsys from the first lines. The I/O edge of src/parsers.
 */
import { createReadStream, openSync, readSync, closeSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { JetprofError } from '../util/errors.ts';
import { lastLineIsWhole, type ParseResult } from './diagnostics.ts';
import { looksLikeNsys, NsysParser, type NsysStats } from './nsys.ts';
import { looksLikeNvprof, NvprofParser, type NvprofLog } from './nvprof.ts';

export type ProfileKind = 'nvprof' | 'nsys';
export type ParsedProfile = { kind: 'nvprof'; result: ParseResult<NvprofLog> } | { kind: 'nsys'; result: ParseResult<NsysStats> };

const HEAD_BYTES = 64 * 1024;

export function detectProfileKind(head: string): ProfileKind | undefined {
  if (looksLikeNvprof(head)) return 'nvprof';
  if (looksLikeNsys(head)) return 'nsys';
  return undefined;
}

/** The first 64 KiB of a profile file, or a one-line JetprofError naming it when it is not a readable file. */
export function readProfileHead(path: string): string {
  try {
    if (!statSync(path).isFile()) throw new Error();
  } catch {
    throw new JetprofError('FILE_NOT_FOUND', `${path}: profiler log not found`, { suggestion: 'pass the file written by nvprof --log-file or by nsys stats' });
  }
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = readSync(fd, buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Whether the file's last byte is a line terminator (a log that does not end with one may have been cut). */
function endsWithNewline(path: string): boolean {
  const size = statSync(path).size;
  if (size === 0) return true;
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, size - 1);
    return b[0] === 0x0a || b[0] === 0x0d;
  } finally {
    closeSync(fd);
  }
}

/**
 * `maxTraceRows`: nvprof trace rows kept per process (default 20,000; Infinity keeps all). `allRuns`: a log holding
 * the same process's run twice keeps each (default: the first, with a diagnostic).
 */
export async function parseProfileFile(path: string, kind?: ProfileKind, options: { maxTraceRows?: number; allRuns?: boolean } = {}): Promise<ParsedProfile> {
  const head = readProfileHead(path);
  const detected = kind ?? detectProfileKind(head);
  if (!detected) {
    throw new JetprofError('BAD_INPUT', `${path}: neither nvprof nor Nsight Systems output (no ==PID== lines, no nsys report tables)`, {
      suggestion: 'pass an nvprof --log-file output or `nsys stats` output, or force the kind with --kind nvprof|nsys',
    });
  }
  const parser = detected === 'nvprof' ? new NvprofParser(options.maxTraceRows, options.allRuns) : new NsysParser();
  const terminated = endsWithNewline(path);
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 16 }), crlfDelay: Infinity }); // 64 KiB chunks: faster than 1 MiB here and half the peak RSS
  // one line behind, so the last one can be judged: a log cut mid-line must not turn half a line into a row
  let pending: string | undefined;
  for await (const line of lines) {
    if (pending !== undefined) parser.push(pending);
    pending = line;
  }
  if (pending !== undefined) {
    if (terminated || lastLineIsWhole(pending)) parser.push(pending);
    else parser.cutLine(pending);
  }
  return detected === 'nvprof' ? { kind: 'nvprof', result: (parser as NvprofParser).finish() } : { kind: 'nsys', result: (parser as NsysParser).finish() };
}
