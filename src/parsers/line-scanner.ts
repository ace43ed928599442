/**
 * Lines of a file as byte ranges, without a string per line: a parser decodes only the lines it keeps, and can judge
 * the ones it only counts (a long --print-gpu-trace log holds millions of rows past the ones it keeps) on the bytes.
 *
 * Splits exactly as node:readline does with `crlfDelay: Infinity` (LF, CRLF and lone CR each end a line; a CRLF split
 * across two reads is one break; a last line without a terminator is handed back instead of emitted, for the caller
 * to judge). UTF-16 files are decoded and re-encoded as UTF-8 first (rare, and then speed matters less).
 */
import { open } from 'node:fs/promises';
import { type DetectedEncoding, textChunks } from '../util/text-input.ts';

/** Receives one line: bytes [start, end) of `buf`, terminator excluded. `buf` is reused after the call returns. */
export type ByteLineHandler = (buf: Buffer, start: number, end: number) => void;

const LF = 0x0a;
const CR = 0x0d;
/** 1 MiB reads into two reused buffers: few calls, flat memory. */
const READ_BYTES = 1 << 20;
/**
 * A line longer than this is cut to it (the rest, up to the next line break, is dropped): no profiler prints such
 * lines, and a file without line breaks (a binary, a .nsys-rep passed by mistake) must not be held whole in memory.
 */
export const MAX_LINE_BYTES = 1 << 20;

/**
 * Takes a run of lines at `pos` in one go (lines ended by LF or CRLF only, wholly inside `buf[pos, len)`) and returns
 * where it stopped; returning `pos` takes none. A parser counting millions of rows skips the call per line this way.
 */
type ByteRunHandler = (buf: Buffer, pos: number, len: number) => number;

/** Receives a line that was longer than MAX_LINE_BYTES: its first MAX_LINE_BYTES only, never to be read as a row. */
type CutLineHandler = (head: Buffer) => void;

/** Splits a stream of chunks into lines. Push chunks with `feed`; `end()` returns the unterminated tail, if any. */
export class LineSplitter {
  private carry: Buffer | undefined;
  /** The line being carried lost bytes past MAX_LINE_BYTES: it goes to `onCut`, whole lines only to `onLine`. */
  private cut = false;
  /** The previous chunk ended with CR: an LF at the start of the next one belongs to it. */
  private skipLf = false;
  constructor(
    private readonly onLine: ByteLineHandler,
    private readonly onRun?: ByteRunHandler,
    private readonly onCut?: CutLineHandler,
  ) {}

  feed(chunk: Buffer): void {
    const len = chunk.length;
    let pos = 0;
    if (this.skipLf) {
      this.skipLf = false;
      if (len > 0 && chunk[0] === LF) pos = 1;
    }
    let nextCr = chunk.indexOf(CR, pos);
    while (pos < len) {
      if (this.onRun !== undefined && this.carry === undefined) {
        pos = this.onRun(chunk, pos, len);
        if (pos >= len) break;
      }
      const lf = chunk.indexOf(LF, pos);
      if (nextCr !== -1 && nextCr < pos) nextCr = chunk.indexOf(CR, pos);
      let end: number;
      let next: number;
      if (nextCr !== -1 && (lf === -1 || nextCr < lf)) {
        end = nextCr;
        if (nextCr + 1 < len) next = chunk[nextCr + 1] === LF ? nextCr + 2 : nextCr + 1;
        else {
          next = len;
          this.skipLf = true;
        }
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      if (this.carry && this.cut) {
        // its middle was dropped: the head alone, as a cut line (the head and the tail spliced would be no line)
        const head = this.carry;
        this.carry = undefined;
        this.cut = false;
        this.onCut?.(head);
      } else if (this.carry) {
        const line = Buffer.concat([this.carry, chunk.subarray(pos, end)]);
        this.carry = undefined;
        if (line.length > MAX_LINE_BYTES) this.onCut?.(line.subarray(0, MAX_LINE_BYTES));
        else this.onLine(line, 0, line.length);
      } else this.onLine(chunk, pos, end);
      pos = next;
    }
    if (pos < len) {
      // a line running into the next chunk: copied, since the caller reuses its buffer; kept to MAX_LINE_BYTES
      const have = this.carry?.length ?? 0;
      if (have + (len - pos) > MAX_LINE_BYTES) this.cut = true;
      if (have < MAX_LINE_BYTES) {
        const rest = Buffer.from(chunk.subarray(pos, Math.min(len, pos + MAX_LINE_BYTES - have)));
        this.carry = this.carry ? Buffer.concat([this.carry, rest]) : rest;
      }
    }
  }

  /** The last line when the input did not end with a line terminator (undefined when it did, or was empty). */
  end(): Buffer | undefined {
    const tail = this.carry;
    this.carry = undefined;
    if (tail && this.cut) {
      this.cut = false;
      this.onCut?.(tail);
      return undefined;
    }
    return tail && tail.length > 0 ? tail : undefined;
  }
}

/**
 * Calls `onLine` for every terminated line of the file (BOM skipped; `onRun` first takes what runs of lines it
 * wants) and returns its unterminated last line, if any.
 * Memory stays flat however large the file: two 1 MiB buffers, plus a line that spans two reads.
 */
export async function scanFileLines(
  path: string,
  detected: DetectedEncoding,
  onLine: ByteLineHandler,
  onRun?: ByteRunHandler,
  onCut?: CutLineHandler,
): Promise<Buffer | undefined> {
  const splitter = new LineSplitter(onLine, onRun, onCut);
  // UTF-16 is decoded first; UTF-8 and Windows-1252 go as bytes, each line decoded as UTF-8 when it is valid UTF-8
  // and as Windows-1252 otherwise (a log pasted together from two machines holds both)
  if (detected.encoding === 'utf16le' || detected.encoding === 'utf16be') {
    for await (const text of textChunks(path, detected)) splitter.feed(Buffer.from(text, 'utf8'));
    return splitter.end();
  }
  const file = await open(path, 'r');
  let reading: Promise<{ bytesRead: number }> | undefined;
  try {
    // two buffers: the next read runs while this chunk is split and parsed
    const bufs = [Buffer.allocUnsafe(READ_BYTES), Buffer.allocUnsafe(READ_BYTES)];
    let which = 0;
    let position = detected.bomBytes;
    reading = file.read(bufs[which], 0, READ_BYTES, position);
    for (;;) {
      const { bytesRead } = await reading;
      if (bytesRead === 0) break;
      position += bytesRead;
      const chunk = bufs[which];
      which ^= 1;
      reading = file.read(bufs[which], 0, READ_BYTES, position);
      splitter.feed(bytesRead === READ_BYTES ? chunk : chunk.subarray(0, bytesRead));
    }
  } finally {
    await reading?.catch(() => undefined); // a read still in flight when parsing failed
    await file.close();
  }
  return splitter.end();
}
