/**
 * How a text file users pass around is decoded, in one place: UTF-8 with or without a byte-order mark, UTF-16 LE/BE
 * with a BOM (what Windows PowerShell's `>` writes) or without one (recognised by the NUL in every other byte), and
 * Windows-1252 for a file that is not valid UTF-8 (a log saved in a Windows console's code page: nsys's `…` is the
 * byte 0x85 there).
 * Line endings (LF, CRLF, lone CR) are left to readline, which splits on all three.
 */
import { isUtf8 } from 'node:buffer';
import { closeSync, createReadStream, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { JetprofError } from './errors.ts';
import { kindOfEntry } from './files.ts';

type TextEncodingName = 'utf8' | 'utf16le' | 'utf16be' | 'windows1252';

export interface DetectedEncoding {
  encoding: TextEncodingName;
  /** Bytes of byte-order mark at the start of the file (0, 2 or 3). */
  bomBytes: number;
}

const DECODER_LABEL: Record<Exclude<TextEncodingName, 'windows1252'>, string> = {
  utf8: 'utf-8',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
};

/** What each encoding is called in a note to the user. */
export const ENCODING_NAME: Record<TextEncodingName, string> = {
  utf8: 'UTF-8',
  utf16le: 'UTF-16 LE',
  utf16be: 'UTF-16 BE',
  windows1252: 'Windows-1252',
};

/** Windows-1252's bytes 0x80-0x9F (where it differs from Latin-1); undefined bytes stay as their C1 code point. */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8d, 0x017d,
  0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x9d,
  0x017e, 0x0178,
];

/** Bytes as Windows-1252 (a single-byte code: any chunking decodes the same). Pure. */
function decodeWindows1252(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return latin1.replace(/[\x80-\x9f]/g, (c) => String.fromCharCode(CP1252_HIGH[c.charCodeAt(0) - 0x80]));
}

/**
 * One line's bytes as text: UTF-8, or Windows-1252 when they are not valid UTF-8 (a log whose first invalid byte lies
 * past the head that decided its encoding). `legacy` says which.
 */
export function decodeLineBytes(buf: Buffer, start: number, end: number): { text: string; legacy: boolean } {
  const text = buf.toString('utf8', start, end);
  if (!text.includes('\uFFFD') || isUtf8(buf.subarray(start, end))) return { text, legacy: false };
  return { text: decodeWindows1252(buf.subarray(start, end)), legacy: true };
}

/** Whether the head of a file is UTF-8, allowing a character cut at its end (the head stops at a fixed size). */
function headIsUtf8(head: Uint8Array): boolean {
  for (let cut = 0; cut <= Math.min(3, head.length); cut++)
    if (isUtf8(head.subarray(0, head.length - cut))) return true;
  return false;
}

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
  return { encoding: headIsUtf8(head) ? 'utf8' : 'windows1252', bomBytes: 0 };
}

/** Bytes to text in a detected encoding, without its BOM. Pure. */
export function decodeText(bytes: Uint8Array, detected: DetectedEncoding = detectEncoding(bytes)): string {
  if (detected.encoding === 'windows1252') return decodeWindows1252(bytes);
  return new TextDecoder(DECODER_LABEL[detected.encoding], { ignoreBOM: true }).decode(
    bytes.subarray(detected.bomBytes),
  );
}

/** A whole (small) text file, decoded: for JSON inputs a user may have re-saved with a BOM or as UTF-16. */
function readTextFile(path: string): string {
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
  const width = encoding === 'utf8' || encoding === 'windows1252' ? 1 : 2;
  if (size < width) return true;
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(width);
    readSync(fd, b, 0, width, size - width);
    const code = width === 1 ? b[0] : encoding === 'utf16le' ? b.readUInt16LE(0) : b.readUInt16BE(0);
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
  if (detected.encoding === 'windows1252') {
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 16 }))
      yield decodeWindows1252(chunk as Buffer);
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
  // a FIFO or a device would block the read (and Ctrl-C with it): said, never opened
  const kind = kindOfEntry(path);
  if (kind !== 'file' && kind !== 'a broken link or a file that is gone')
    throw new JetprofError('BAD_INPUT', `${path}: ${kind}, not a ${what}`, {
      suggestion: `save it to a file first, then pass that file (${suggestion})`,
    });
  let text: string;
  try {
    text = readTextFile(path);
  } catch (e) {
    throw unreadable(path, what, e, suggestion);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    // the parser's message quotes the file's first bytes: said without them (the file may not be the user's own)
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    throw new JetprofError('BAD_INPUT', `${path}: not valid JSON${at ? ` (at byte ${at})` : ''}, not a ${what}`, {
      suggestion,
    });
  }
}

/** Why a file that was asked for could not be read, in its own words: missing, unreadable, a link loop, too large. */
export function unreadable(path: string, what: string, e: unknown, suggestion: string): JetprofError {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') return new JetprofError('FILE_NOT_FOUND', `${path}: ${what} not found`, { suggestion });
  const why =
    code === 'EACCES' || code === 'EPERM'
      ? 'not readable (permission denied)'
      : code === 'ELOOP'
        ? 'a symbolic link that loops (ELOOP)'
        : code === 'EISDIR'
          ? 'a folder'
          : code === 'ERR_FS_FILE_TOO_LARGE' || code === 'ERR_STRING_TOO_LONG' || e instanceof RangeError
            ? 'too large to read as one file'
            : `cannot be read (${code ?? (e as Error)?.message ?? e})`;
  return new JetprofError('BAD_INPUT', `${path}: ${why}, so it cannot be read as a ${what}`, { suggestion });
}

/**
 * Control characters shown, not obeyed: a shared log or run file can hold terminal escapes (ESC sequences that move
 * the cursor, retitle the window, or write the clipboard), bare CRs that overwrite a line, and Unicode's bidi controls
 * (U+202E turns `onnx-fp16` into `61pf-xnno` on screen). Each becomes a visible `\xNN` or `\uNNNN` (`\r`, `\n` as
 * such); tab stays, and so does newline unless `singleLine`.
 */
export function escapeControls(text: string, singleLine = false): string {
  return text.replace(
    singleLine
      ? /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
      : /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => {
      const code = c.charCodeAt(0);
      if (c === '\r') return '\\r';
      if (c === '\n') return '\\n';
      return code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
    },
  );
}
