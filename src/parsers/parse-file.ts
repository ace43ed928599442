/**
 * Parses a profiler output file by streaming its lines (memory stays flat however large the log), detecting
 * nvprof or nsys from the first lines. The I/O edge of src/parsers; decoding (BOM, UTF-16) is text-input.ts.
 */
import { statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { JetprofError } from '../util/errors.ts';
import { lastLineIsWhole, type ParseResult } from './diagnostics.ts';
import { looksLikeNsys, NsysParser, type NsysStats } from './nsys.ts';
import { looksLikeNvprof, NvprofParser, type NvprofLog } from './nvprof.ts';
import { decodeText, detectEncoding, type DetectedEncoding, endsWithLineBreak, readHeadBytes, textChunks } from './text-input.ts';

export type ProfileKind = 'nvprof' | 'nsys';
export type ParsedProfile = { kind: 'nvprof'; result: ParseResult<NvprofLog> } | { kind: 'nsys'; result: ParseResult<NsysStats> };

const HEAD_BYTES = 64 * 1024;

export function detectProfileKind(head: string): ProfileKind | undefined {
  if (looksLikeNvprof(head)) return 'nvprof';
  if (looksLikeNsys(head)) return 'nsys';
  return undefined;
}

/** The first 64 KiB of a profile file, decoded, or a one-line JetprofError naming it when it is not a readable file. */
export function readProfileHead(path: string): string {
  return readHead(path).text;
}

function readHead(path: string): { text: string; detected: DetectedEncoding } {
  try {
    if (!statSync(path).isFile()) throw new Error();
  } catch {
    throw new JetprofError('FILE_NOT_FOUND', `${path}: profiler log not found`, { suggestion: 'pass the file written by nvprof --log-file or by nsys stats' });
  }
  const bytes = readHeadBytes(path, HEAD_BYTES);
  const detected = detectEncoding(bytes);
  return { text: decodeText(bytes, detected), detected };
}

/**
 * `maxTraceRows`: nvprof trace rows kept per process (default 20,000; Infinity keeps all). `allRuns`: a log holding
 * the same process's run twice keeps each (default: the first, with a diagnostic).
 */
export async function parseProfileFile(path: string, kind?: ProfileKind, options: { maxTraceRows?: number; allRuns?: boolean } = {}): Promise<ParsedProfile> {
  const { text: head, detected: encoding } = readHead(path);
  const detected = kind ?? detectProfileKind(head);
  if (!detected) {
    if (head.length > 0 && head.replace(/[\s\0]/g, '').length === 0) {
      throw new JetprofError('BAD_INPUT', `${path}: holds only blank lines or NUL bytes`, { suggestion: 'the log was not written (profiler killed?) or was cut: run the profiler again' });
    }
    throw new JetprofError('BAD_INPUT', `${path}: neither nvprof nor Nsight Systems output (no ==PID== lines, no nsys report tables)`, {
      suggestion: 'pass an nvprof --log-file output or `nsys stats` output, or force the kind with --kind nvprof|nsys',
    });
  }
  const parser = detected === 'nvprof' ? new NvprofParser(options.maxTraceRows, options.allRuns) : new NsysParser();
  const terminated = endsWithLineBreak(path, encoding.encoding);
  const lines = createInterface({ input: Readable.from(textChunks(path, encoding)), crlfDelay: Infinity });
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

/** Whether a parse kept any table row (a trace counted but not kept counts): a log that yields none lost its data. */
export function keptAnyTable(parsed: ParsedProfile): boolean {
  if (parsed.kind === 'nsys') return parsed.result.value.tables.length > 0;
  return parsed.result.value.processes.some(
    (p) =>
      p.summary.length > 0 ||
      p.nvtx.domains.length > 0 ||
      p.dependency.length > 0 ||
      p.metrics.length > 0 ||
      (p.gpuTrace?.length ?? 0) > 0 ||
      (p.apiTrace?.length ?? 0) > 0 ||
      (p.traceRowsOmitted ?? 0) > 0 ||
      (p.unifiedMemory?.rows.length ?? 0) > 0,
  );
}

/** Why a parse kept nothing, in a few words from the log itself (nvprof's Error lines, nsys's skipped reports). */
export function emptyParseReason(parsed: ParsedProfile): string {
  if (parsed.kind === 'nsys') {
    const skipped = Object.entries(parsed.result.value.skipped).map(([name, why]) => `${name} ${why}`);
    return skipped.length > 0 ? `nsys skipped every report (${skipped.slice(0, 2).join('; ')})` : 'no nsys report table';
  }
  const said = parsed.result.value.processes.flatMap((p) => [...p.warnings, ...p.notes]);
  return said.length > 0 ? `nvprof said: ${said[0]}` : 'no nvprof table';
}
