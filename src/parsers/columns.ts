/**
 * Fixed-width tables. nvprof right-aligns every column under its header label except the last (a name, left
 * aligned, running to the end of the line); nsys marks its columns with a rule of dashes. Values may contain single
 * spaces (`Idle (0)`, `(4097 1 1)`, `Tesla V100-SXM2`), so splitting on whitespace is wrong; slicing by position is not.
 */

export interface Column {
  label: string;
  start: number;
  end: number;
}

/** Header labels separated by two or more spaces (a label may hold single spaces: `Metric Name`). */
export function headerColumns(header: string): Column[] {
  const cols: Column[] = [];
  const re = /\S+(?: \S+)*/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(header))) cols.push({ label: m[0], start: m.index, end: m.index + m[0].length });
  return cols;
}

/** Columns from an nsys rule line (`-------  ---------  ----`). */
export function ruleColumns(rule: string, header: string): Column[] {
  const cols: Column[] = [];
  const re = /-+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(rule))) {
    cols.push({
      label: header.slice(m.index, m.index + m[0].length).trim(),
      start: m.index,
      end: m.index + m[0].length,
    });
  }
  return cols;
}

/** What String.prototype.trim removes (ECMAScript WhiteSpace and LineTerminator). */
function isTrimmedSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * Where each cell of a row whose columns are right-aligned to their header labels starts and ends (the last column
 * runs to the end of the line), spaces trimmed: cell i is `line.slice(out[2i], out[2i + 1])`. `out` is reused by the
 * caller, so reading a row allocates nothing.
 */
export function rightAlignedBounds(line: string, cols: Column[], out: Int32Array): void {
  const n = cols.length;
  let from = 0;
  for (let i = 0; i < n; i++) {
    let a = from;
    let b = i === n - 1 ? line.length : Math.min(cols[i].end, line.length);
    while (a < b && isTrimmedSpace(line.charCodeAt(a))) a++;
    while (b > a && isTrimmedSpace(line.charCodeAt(b - 1))) b--;
    out[2 * i] = a;
    out[2 * i + 1] = b;
    from = cols[i].end;
  }
}

/** The cells of such a row: each `line.slice(from, to).trim()`, made as one string instead of two. */
export function sliceRightAligned(line: string, cols: Column[]): string[] {
  const bounds = new Int32Array(2 * cols.length);
  rightAlignedBounds(line, cols, bounds);
  const cells = new Array<string>(cols.length);
  for (let i = 0; i < cols.length; i++) cells[i] = line.slice(bounds[2 * i], bounds[2 * i + 1]);
  return cells;
}

/** Cells of an nsys row: each column spans its rule; the last column runs to the end of the line. */
export function sliceByRule(line: string, cols: Column[]): string[] {
  return cols.map((c, i) => {
    const start = i === 0 ? 0 : cols[i - 1].end;
    return (i === cols.length - 1 ? line.slice(start) : line.slice(start, c.end)).trim();
  });
}

/** `Metric Description` -> `metricDescription`, `Regs*` -> `regs`, `Total Time (ns)` -> `totalTimeNs`, `API Name` -> `apiName`. */
const KEY_OVERRIDES: Record<string, string> = { 'SSMem*': 'ssmem', 'DSMem*': 'dsmem', 'Regs*': 'regs' };

export function camelKey(label: string): string {
  if (KEY_OVERRIDES[label]) return KEY_OVERRIDES[label];
  const words = label
    .replace(/\(%\)/g, ' pct')
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
  // a leading acronym is lowered whole: `API Name` -> `apiName`, `PID` -> `pid` (not `aPIName`)
  return words
    .map((w, i) =>
      i === 0
        ? /^[A-Z]{2,}$/.test(w)
          ? w.toLowerCase()
          : w.charAt(0).toLowerCase() + w.slice(1)
        : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase(),
    )
    .join('');
}
