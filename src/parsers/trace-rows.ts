/**
 * Trace rows (`nvprof --print-gpu-trace` / `--print-api-trace`), the part of a log that runs to millions of lines: the
 * row start recognised on bytes for the rows that are only counted, the row objects the kept ones are copied from,
 * and the name split (API name, kernel, correlation id). Pure.
 */

/** A `--print-gpu-trace` / `--print-api-trace` row: columns by header; `Start` and `Duration` in ns. */
export type TraceRow = Record<string, string | number>;

/** The start of a trace row: two times (start, duration) and a space. */
export const TRACE_ROW_START = /^\s*\d+(\.\d+)?[mun]?s\s+\d+(\.\d+)?[mun]?s\s/;

/**
 * The number a cell of digits holds (`Number(cell)`, as `/^\d+$/` cells are kept), read in place; undefined for any
 * other cell. Up to 15 digits the value is exact by accumulation; longer runs go through Number() like the string.
 */
export function digitsValue(s: string, from: number, to: number): number | undefined {
  if (to <= from) return undefined;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
    v = v * 10 + (c - 0x30);
  }
  return to - from <= 15 ? v : Number(s.slice(from, to));
}

/** ASCII whitespace as `\s` has it (tab, LF, VT, FF, CR, space); other bytes, and non-ASCII spaces, are not. */
function isAsciiSpace(b: number): boolean {
  return b === 0x20 || (b >= 0x09 && b <= 0x0d);
}

/** The end of a time (`12`, `3.5`, then `m`, `u` or `n`, then `s`) starting at `i`, or -1. */
function timeEnd(buf: Uint8Array, i: number, end: number): number {
  let k = i;
  while (k < end && buf[k] >= 0x30 && buf[k] <= 0x39) k++;
  if (k === i || k >= end) return -1;
  if (buf[k] === 0x2e && k + 1 < end && buf[k + 1] >= 0x30 && buf[k + 1] <= 0x39) {
    k++;
    while (k < end && buf[k] >= 0x30 && buf[k] <= 0x39) k++;
    if (k >= end) return -1;
  }
  const c = buf[k];
  if (c === 0x73) return k + 1;
  if ((c === 0x6d || c === 0x75 || c === 0x6e) && k + 1 < end && buf[k + 1] === 0x73) return k + 2;
  return -1;
}

/**
 * TRACE_ROW_START on bytes: true only where the regex surely matches the decoded line (ASCII whitespace and digits),
 * so a caller that falls back to the string path on false gets exactly the regex's answer.
 */
export function isTraceRowStart(buf: Uint8Array, start: number, end: number): boolean {
  let i = start;
  while (i < end && isAsciiSpace(buf[i])) i++;
  i = timeEnd(buf, i, end);
  if (i < 0 || i >= end || !isAsciiSpace(buf[i])) return false;
  while (i < end && isAsciiSpace(buf[i])) i++;
  i = timeEnd(buf, i, end);
  return i >= 0 && i < end && isAsciiSpace(buf[i]);
}

/**
 * Trace rows are copies of one of three objects with every key already there (stores into existing fields, not a new
 * shape per key or per row): plain, with the correlation id a GPU row's name carries, and an API row that launched a
 * kernel (the kernel and the id).
 */
export interface TraceTemplates {
  plain: TraceRow;
  withId: TraceRow;
  launch: TraceRow;
}

export function traceTemplates(keys: string[]): TraceTemplates {
  const plain: TraceRow = { startNs: 0, durationNs: 0 };
  for (const k of keys.slice(2)) plain[k] = '';
  return { plain, withId: { ...plain, correlationId: 0 }, launch: { ...plain, kernel: '', correlationId: 0 } };
}

/**
 * A trace row's name, read: an API row that launched a kernel prints `cudaLaunchKernel (kernel(args) [129])` and becomes
 * the API name, the kernel and the correlation id; a GPU row `kernel(args) [129]` keeps its name as printed (names are
 * exact) and gains the id, which pairs it with its launch. Names without an id are left as they are.
 */
export function splitTraceName(name: string): { name: string; kernel?: string; correlationId?: number } {
  // string scans, not a regex per row: a long trace keeps tens of thousands of rows
  const apiLaunch = name.endsWith('])');
  if (!apiLaunch && !name.endsWith(']')) return { name };
  const closing = name.length - (apiLaunch ? 2 : 1);
  const open = name.lastIndexOf(' [', closing);
  const id = open > 0 ? digitsValue(name, open + 2, closing) : undefined;
  if (id === undefined) return { name };
  if (apiLaunch) {
    const paren = name.indexOf(' (');
    if (paren > 0 && paren < open && /^[A-Za-z_]\w*$/.test(name.slice(0, paren)))
      return { name: name.slice(0, paren), kernel: name.slice(paren + 2, open), correlationId: id };
    return { name };
  }
  return { name, correlationId: id };
}
