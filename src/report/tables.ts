/** Markdown and CSV tables from rows of cells, and the cells of the profile tables every view shows. Pure. */
import type { DependencyRow } from '../parsers/nvprof.ts';
import { escapeControls } from '../util/text-input.ts';

export type Cell = string | number | null | undefined;

/**
 * Text outside code spans, never live: `<` `>` (HTML) escaped; a `]` that would close a link or an image (`](`, `][`)
 * escaped, so `[x](url)` and `![x](url)` stay text while `[CUDA memcpy HtoD]` reads as it is; a backslash that would
 * escape the next character escaped itself (`\\x1b` stays as printed).
 */
function mdText(s: string): string {
  return s
    .replace(/\\(?=[!-/:-@[-\x60\x7b-~])/g, '\\\\')
    .replace(/[<>]/g, (c) => `\\${c}`)
    .replace(/\](?=[([])/g, '\\]');
}

function mdEscape(v: Cell): string {
  if (v === null || v === undefined) return '';
  // `<Other>` would vanish as an HTML tag, `[x](url)` be a link; `|` would split the cell; a CR or newline would end
  // the row (a cell is one line: escapeControls shows them)
  return mdText(escapeControls(String(v), true)).replace(/\|/g, '\\|');
}

/**
 * Running text for Markdown, with text from outside in it (labels, kernel and API names, paths): code spans are
 * paired by CommonMark's rule (a run of n backticks closes only at the next run of exactly n) and kept verbatim; a
 * backtick CommonMark would not pair is escaped, and in the text between, `<` `>` `[` `]` and backslashes are: no
 * label or kernel name can put live HTML, a link or an image into a report.
 */
export function mdInline(text: string): string {
  const s = escapeControls(text, true);
  let out = '';
  let from = 0;
  for (let i = s.indexOf('`'); i >= 0;) {
    let j = i;
    while (s[j] === '`') j++;
    const n = j - i;
    // the closing run: the next run of exactly n backticks
    let close = -1;
    for (let k = s.indexOf('`', j); k >= 0;) {
      let e = k;
      while (s[e] === '`') e++;
      if (e - k === n) {
        close = k;
        break;
      }
      k = s.indexOf('`', e);
    }
    out += mdText(s.slice(from, i));
    if (close >= 0) {
      out += s.slice(i, close + n); // a code span: literal in every renderer
      from = close + n;
    } else {
      out += '\\`'.repeat(n); // no partner: literal backticks
      from = j;
    }
    i = s.indexOf('`', from);
  }
  out += mdText(s.slice(from));
  // a paragraph or list item that starts `[x]: url` would define a link instead of showing it
  return out.startsWith('[') ? `\\${out}` : out;
}

/** A GitHub-flavoured Markdown table; `align` per column: 'l' (default) or 'r'. */
export function markdownTable(headers: string[], rows: Cell[][], align: ('l' | 'r')[] = []): string {
  const rule = headers.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [
    `| ${headers.map(mdEscape).join(' | ')} |`,
    `| ${rule.join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(mdEscape).join(' | ')} |`),
  ].join('\n');
}

/**
 * One CSV cell. Text from other people's logs and run files (labels, kernel and NVTX names) that starts with =, +, -,
 * @, a tab or a carriage return would be a live formula in a spreadsheet: it gets a leading ' and quotes, as OWASP
 * recommends (numbers, "-0.5" included, stay numbers).
 */
function csvEscape(v: Cell): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  const number = typeof v === 'number' || /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s);
  if (!number && /^[=+\-@\t\r]/.test(s)) return `"'${s.replace(/"/g, '""')}"`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvTable(headers: string[], rows: Cell[][]): string {
  return [headers, ...rows].map((r) => r.map(csvEscape).join(',')).join('\n') + '\n';
}

/** Nanoseconds as the profilers print them, with an adaptive unit: 197397023000 -> "197.397 s". */
export function formatNs(ns: number | null | undefined): string {
  if (ns === null || ns === undefined || !Number.isFinite(ns)) return '';
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(3)} us`;
  return `${ns} ns`;
}

/**
 * A dependency-analysis time as nvprof prints it (`197.397023s`, `16.082453ms`, `29.532000us`, `0ns`): six decimals
 * in the largest unit that fits, from the integer nanoseconds by string arithmetic (no float rounding); digits finer
 * than the six are kept when they are not zero.
 */
export function formatDependencyNs(ns: number | null | undefined): string {
  if (ns === null || ns === undefined || !Number.isFinite(ns)) return '';
  const a = Math.abs(ns);
  const [unit, digits] = a >= 1e9 ? ['s', 9] : a >= 1e6 ? ['ms', 6] : a >= 1e3 ? ['us', 3] : ['ns', 0];
  if (digits === 0) return `${ns} ns`;
  const s = String(a).padStart(digits + 1, '0');
  const frac = s
    .slice(-digits)
    .padEnd(6, '0')
    .replace(/(?<=\d{6})0+$/, '');
  return `${ns < 0 ? '-' : ''}${s.slice(0, -digits)}.${frac} ${unit}`;
}

export function formatPct(p: number): string {
  if (!Number.isFinite(p)) return '';
  return `${p.toFixed(2)}%`;
}

/** nvprof's dependency-analysis columns, as it prints them. */
export const CRITICAL_PATH_HEADERS = ['Critical path(%)', 'Critical path', 'Waiting time', 'Name'];

export function criticalPathCells(d: DependencyRow): Cell[] {
  return [formatPct(d.criticalPathPct), formatDependencyNs(d.criticalPathNs), formatDependencyNs(d.waitingNs), d.name];
}

/** A timed row (kernel, API call, NVTX range): share when the profiler printed one, total, calls, name. */
type TimedCellsRow = { pct?: number; totalNs: number; calls: number; name: string };

/** Time(%), Total, Calls: Time(%) only when the profiler gave one (nvprof's NVTX ranges have none). */
export function timedHeaders(rows: readonly TimedCellsRow[]): string[] {
  return rows.some((r) => r.pct !== undefined) ? ['Time(%)', 'Total', 'Calls'] : ['Total', 'Calls'];
}

/** One row's cells under timedHeaders(rows). */
export function timedCells(r: TimedCellsRow, rows: readonly TimedCellsRow[]): Cell[] {
  const cells: Cell[] = [formatNs(r.totalNs), r.calls, r.name];
  return rows.some((x) => x.pct !== undefined) ? [r.pct === undefined ? '' : formatPct(r.pct), ...cells] : cells;
}
