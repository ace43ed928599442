/**
 * Parses a profiler output file by streaming its lines as bytes (memory stays flat however large the log), detecting
 * nvprof or nsys from the first lines. The I/O edge of src/parsers; decoding (BOM, UTF-16) is text-input.ts.
 */
import { statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { JetprofError } from '../util/errors.ts';
import { kindOfEntry } from '../util/files.ts';
import type { Diagnostic, ParseResult } from './diagnostics.ts';
import { looksLikeNsys, NsysParser, type NsysStats } from './nsys.ts';
import { looksLikeNvprof, NvprofParser, type NvprofLog, type TraceSpill } from './nvprof.ts';
import { type ByteLineHandler, MAX_LINE_BYTES, scanFileLines } from './line-scanner.ts';
import { FenceReader, isMarkdownPath, unfence } from './markdown-fence.ts';
import {
  decodeLineBytes,
  decodeText,
  detectEncoding,
  ENCODING_NAME,
  type DetectedEncoding,
  endsWithLineBreak,
  readHeadBytes,
  textChunks,
} from '../util/text-input.ts';

export type ProfileKind = 'nvprof' | 'nsys';
type ParsedProfile =
  { kind: 'nvprof'; result: ParseResult<NvprofLog> } | { kind: 'nsys'; result: ParseResult<NsysStats> };

const HEAD_BYTES = 64 * 1024;

function detectProfileKind(head: string): ProfileKind | undefined {
  if (looksLikeNvprof(head)) return 'nvprof';
  if (looksLikeNsys(head)) return 'nsys';
  return undefined;
}

/** The first 64 KiB of a profile file, decoded, and how it was decoded. */
interface ProfileHead {
  text: string;
  detected: DetectedEncoding;
}

/** The head of a profile file, or a one-line JetprofError naming it when it is not a readable file. */
export function readProfileHead(path: string): ProfileHead {
  let isFolder = false;
  try {
    isFolder = statSync(path).isDirectory();
  } catch {
    throw new JetprofError('FILE_NOT_FOUND', `${path}: profiler log not found`, {
      suggestion: 'pass the file written by nvprof --log-file or by nsys stats',
    });
  }
  // a FIFO, /dev/stdin or a device: read twice here (the head, then the whole), so it must be a file
  const kind = kindOfEntry(path);
  if (!isFolder && kind !== 'file')
    throw new JetprofError('BAD_INPUT', `${path}: ${kind}, not a profiler log file`, {
      suggestion: 'save the log to a file first (e.g. nvprof ... --log-file LOG, or cmd > LOG), then parse LOG',
    });
  if (isFolder)
    throw new JetprofError('BAD_INPUT', `${path}: a folder, not a profiler log`, {
      suggestion: 'pass one log file (e.g. profiles/profiling_trt_log.txt); parse each file of a folder in turn',
    });
  const bytes = readHeadBytes(path, HEAD_BYTES);
  const detected = detectEncoding(bytes);
  return { text: decodeText(bytes, detected), detected };
}

/**
 * `maxTraceRows`: nvprof trace rows kept per process (default 20,000; Infinity keeps all). `allRuns`: a log holding
 * the same process's run twice keeps each (default: the first, with a diagnostic). Lines come from the byte scanner
 * (line-scanner.ts); `lineReader: 'readline'` is the old line source, for the equivalence test only.
 */
export async function parseProfileFile(
  path: string,
  kind?: ProfileKind,
  options: {
    maxTraceRows?: number;
    allRuns?: boolean;
    lineReader?: 'bytes' | 'readline';
    kindOption?: boolean;
    /** Kept nvprof trace rows in blocks as they are read, instead of all in memory (see NvprofParser). */
    spill?: TraceSpill;
    /** The head the caller already read (readProfileHead), so the file's head is read once. */
    head?: ProfileHead;
  } = {},
): Promise<ParsedProfile> {
  const { text: rawHead, detected: encoding } = options.head ?? readProfileHead(path);
  // a log kept in Markdown is read from inside its fenced code blocks (the prose around them is not the profiler's)
  let fences = isMarkdownPath(path) ? new FenceReader() : undefined;
  let head = fences ? unfence(rawHead) : rawHead;
  // fences that do not pair, or the output pasted outside them: when the fenced blocks hold no profiler output and the
  // whole note does, the whole note is read
  const wholeNote = !!fences && !kind && !detectProfileKind(head) && !!detectProfileKind(rawHead);
  if (wholeNote) {
    fences = undefined;
    head = rawHead;
  }
  const detected = kind ?? detectProfileKind(head);
  if (!detected) {
    if (rawHead.length > 0 && rawHead.replace(/[\s\0]/g, '').length === 0) {
      throw new JetprofError('BAD_INPUT', `${path}: holds only blank lines or NUL bytes`, {
        suggestion: 'the log was not written (profiler killed?) or was cut: run the profiler again',
      });
    }
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: neither nvprof nor Nsight Systems output (no ==PID== lines, no nsys report tables)`,
      {
        suggestion: `pass an nvprof --log-file output or \`nsys stats\` output${options.kindOption ? ', or force the kind with --kind nvprof|nsys' : ' (jetprof parse --kind nvprof|nsys forces the kind)'}`,
      },
    );
  }
  let legacyLines = 0;
  const parser =
    detected === 'nvprof' ? new NvprofParser(options.maxTraceRows, options.allRuns, options.spill) : new NsysParser();
  if (options.lineReader === 'readline') await feedByReadline(path, encoding, parser);
  else {
    // nvprof's lines go in as bytes (a trace row past the cap is counted without a string), unless fences are read
    const nvprof = parser instanceof NvprofParser && !fences ? parser : undefined;
    const unfenced = (text: string) => (fences ? fences.line(text) : text);
    const onLine: ByteLineHandler = nvprof
      ? (b, s, e) => nvprof.pushBytes(b, s, e)
      : (b, s, e) => {
          const line = decodeLineBytes(b, s, e);
          if (line.legacy) legacyLines++;
          parser.push(unfenced(line.text));
        };
    const tail = await scanFileLines(
      path,
      encoding,
      onLine,
      nvprof && ((b, pos, len) => nvprof.countRows(b, pos, len)),
      (head) => parser.overlongLine(decodeLineBytes(head, 0, head.length).text, MAX_LINE_BYTES),
    );
    // no newline after the last line: kept when it parses as a whole row, else a cut line (half a line is no row)
    if (tail !== undefined) parser.lastLine(unfenced(decodeLineBytes(tail, 0, tail.length).text));
  }
  const parsed: ParsedProfile =
    detected === 'nvprof'
      ? { kind: 'nvprof', result: (parser as NvprofParser).finish() }
      : { kind: 'nsys', result: (parser as NsysParser).finish() };
  if (parser instanceof NvprofParser) legacyLines += parser.legacyLines;
  const assumed = encodingNote(encoding, legacyLines);
  if (assumed) parsed.result.diagnostics.unshift(assumed);
  if (wholeNote)
    parsed.result.diagnostics.unshift({
      severity: 'note',
      code: 'READ_WHOLE_NOTE',
      line: 1,
      message:
        'a Markdown file whose fenced code blocks hold no profiler output (fences that do not pair, or the output pasted outside them): the whole note was read',
    });
  if (fences)
    parsed.result.diagnostics.unshift({
      severity: 'note',
      code: 'READ_FROM_FENCE',
      line: 1,
      message: `a Markdown file: read from inside its ${fences.blocks} fenced code block(s) (${fences.inside} lines); the text around them is not the profiler's and was skipped`,
    });
  return parsed;
}

/**
 * The note that says a log was not UTF-8 and which encoding was assumed (a log saved in a Windows console's code
 * page: nsys's `…` is the byte 0x85 there); undefined for UTF-8 and UTF-16 files, which need no guess.
 */
function encodingNote(detected: DetectedEncoding, legacyLines: number): Diagnostic | undefined {
  if (legacyLines === 0) return undefined;
  // each line is read as UTF-8 when it is valid UTF-8, as Windows-1252 otherwise: a log pasted together from two
  // machines keeps both kinds of names right
  return {
    severity: 'warning',
    code: 'ENCODING_ASSUMED',
    line: 1,
    message:
      detected.encoding === 'windows1252'
        ? `not UTF-8 or UTF-16: ${legacyLines} line(s) read as ${ENCODING_NAME.windows1252} (a Windows console's code page; nsys's \u2026 is the byte 0x85 there), the others as UTF-8`
        : `${legacyLines} line(s) not valid UTF-8: read as ${ENCODING_NAME.windows1252} (a Windows console's code page)`,
  };
}

/**
 * The line source before the byte scanner (readline over decoded text), kept only so a test can check that both give
 * the same result on every fixture; remove it with that test.
 */
async function feedByReadline(
  path: string,
  encoding: DetectedEncoding,
  parser: { push(line: string): void; lastLine(text: string): void },
): Promise<void> {
  const terminated = endsWithLineBreak(path, encoding.encoding);
  const lines = createInterface({ input: Readable.from(textChunks(path, encoding)), crlfDelay: Infinity });
  let pending: string | undefined;
  for await (const line of lines) {
    if (pending !== undefined) parser.push(pending);
    pending = line;
  }
  if (pending !== undefined) {
    if (terminated) parser.push(pending);
    else parser.lastLine(pending);
  }
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
      (p.metricTrace?.length ?? 0) > 0 ||
      (p.gpuTrace?.length ?? 0) > 0 ||
      (p.apiTrace?.length ?? 0) > 0 ||
      (p.traceRowsOmitted ?? 0) > 0 ||
      (p.unifiedMemory?.rows.length ?? 0) > 0 ||
      (p.system?.length ?? 0) > 0,
  );
}

/**
 * The one rule for a log that yielded no table, for `jetprof parse` and `jetprof report --profile` alike: a one-line
 * error naming the file and what the log itself said (nvprof's Error line, nsys's skipped reports), exit 2.
 */
export function requireTables(path: string, parsed: ParsedProfile, allowEmptyOption?: string): void {
  if (keptAnyTable(parsed)) return;
  throw new JetprofError(
    'BAD_INPUT',
    `${path}: no table could be read from this ${parsed.kind} log (${emptyParseReason(parsed)})`,
    {
      suggestion: `check that the profiler ran to the end and printed its results into this file${allowEmptyOption ? `; ${allowEmptyOption} writes the empty result anyway` : ''}`,
    },
  );
}

/** Why a parse kept nothing, in a few words from the log itself (nvprof's Error lines, nsys's skipped reports). */
function emptyParseReason(parsed: ParsedProfile): string {
  if (parsed.kind === 'nsys') {
    const skipped = Object.entries(parsed.result.value.skipped).map(([name, why]) => `${name} ${why}`);
    return skipped.length > 0
      ? `nsys skipped every report (${skipped.slice(0, 2).join('; ')})`
      : 'no nsys report table';
  }
  const said = parsed.result.value.processes.flatMap((p) => [...p.warnings, ...p.notes]);
  return said.length > 0 ? `nvprof said: ${said[0]}` : 'no nvprof table';
}
