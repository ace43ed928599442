/**
 * How a text file users pass around is decoded, in one place: UTF-8 with or without a byte-order mark, UTF-16 LE/BE
 * with a BOM (what Windows PowerShell's `>` writes) or without one (recognised by the NUL in every other byte).
 * Line endings (LF, CRLF, lone CR) are left to readline, which splits on all three.
 */
import { closeSync, createReadStream, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { JetprofError } from './errors.ts';

export type TextEncodingName = 'utf8' | 'utf16le' | 'utf16be';

export interface DetectedEncoding {
  encoding: TextEncodingName;
  /** Bytes of byte-order mark at the start of the file (0, 2 or 3). */
  bomBytes: number;
}

const DECODER_LABEL: Record<TextEncodingName, string> = { utf8: 'utf-8', utf16le: 'utf-16le', utf16be: 'utf-16be' };

/** The encoding of a file from its first bytes. Pure. */
export function detectEncoding(head: Uint8Array): DetectedEncoding {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf8', bomBytes: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf16le', bomBytes: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf16be', bomBytes: 2 };
  // UTF-16 without a BOM: mostly-ASCII text has a NUL in every other byte, on the odd side for LE, the even for BE
  const n = Math.min(head.length, 4096) & ~1;
  const pairs = n / 2;
  if (pairs < 2) return { encoding: 'utf8', bomBytes: 0 };
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < n; i++) {
    if (head[i] === 0) {
      if (i % 2 === 0) evenNul++;
      else oddNul++;
    }
  }
  if (oddNul >= pairs * 0.4 && evenNul <= pairs * 0.05) return { encoding: 'utf16le', bomBytes: 0 };
  if (evenNul >= pairs * 0.4 && oddNul <= pairs * 0.05) return { encoding: 'utf16be', bomBytes: 0 };
  return { encoding: 'utf8', bomBytes: 0 };
}

/** Bytes to text in a detected encoding, without its BOM. Pure. */
export function decodeText(bytes: Uint8Array, detected: DetectedEncoding = detectEncoding(bytes)): string {
  return new TextDecoder(DECODER_LABEL[detected.encoding], { ignoreBOM: true }).decode(
    bytes.subarray(detected.bomBytes),
  );
}

/** A whole (small) text file, decoded: for JSON inputs a user may have re-saved with a BOM or as UTF-16. */
export function readTextFile(path: string): string {
  return decodeText(readFileSync(path));
}

/** The first `maxBytes` of a file, raw. */
export function readHeadBytes(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(maxBytes);
    const n = readSync(fd, buf, 0, maxBytes, 0);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** Whether the file's last character is a line terminator (a log that does not end with one may have been cut). */
export function endsWithLineBreak(path: string, encoding: TextEncodingName): boolean {
  const size = statSync(path).size;
  const width = encoding === 'utf8' ? 1 : 2;
  if (size < width) return true;
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(width);
    readSync(fd, b, 0, width, size - width);
    const code = encoding === 'utf8' ? b[0] : encoding === 'utf16le' ? b.readUInt16LE(0) : b.readUInt16BE(0);
    return code === 0x0a || code === 0x0d;
  } finally {
    closeSync(fd);
  }
}

/**
 * The file's text in chunks of about 64 KiB (memory stays flat however large the log), BOM skipped. UTF-8 goes
 * through the stream's own decoder (the fast path); UTF-16 through a streaming TextDecoder, which keeps a character
 * split across two chunks whole.
 */
export async function* textChunks(path: string, detected: DetectedEncoding): AsyncGenerator<string> {
  if (detected.encoding === 'utf8') {
    // 64 KiB chunks: faster than 1 MiB here and half the peak RSS
    for await (const chunk of createReadStream(path, {
      encoding: 'utf8',
      start: detected.bomBytes,
      highWaterMark: 1 << 16,
    }))
      yield chunk as string;
    return;
  }
  const decoder = new TextDecoder(DECODER_LABEL[detected.encoding], { ignoreBOM: true });
  for await (const chunk of createReadStream(path, { start: detected.bomBytes, highWaterMark: 1 << 16 })) {
    const text = decoder.decode(chunk as Buffer, { stream: true });
    if (text) yield text;
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}

/**
 * A JSON file a user passes in (run, detections, ground truth), decoded as above: a missing file and invalid JSON are
 * each one line naming the file, with `suggestion` as the fix.
 */
export function readJsonFile(path: string, what: string, suggestion: string): unknown {
  let text: string;
  try {
    text = readTextFile(path);
  } catch {
    throw new JetprofError('FILE_NOT_FOUND', `${path}: ${what} not found`, { suggestion });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new JetprofError('BAD_INPUT', `${path}: not valid JSON (${(e as Error).message.split('\n')[0]})`, {
      suggestion,
    });
  }
}
