/**
 * One text trace row's cells read into a row (`nvprof --print-gpu-trace` / `--print-api-trace`), the hot path of a
 * long trace: cell bounds found in place (right-aligned under each label), the two leading times read without a
 * string, the name split before the row is made (so every row of a kind is a copy of one object: V8 keeps one
 * shape), and the cells kept as text interned (a row's cells would otherwise keep its whole line alive). What a row
 * is kept for, the cap and the spill stay with the parser (nvprof.ts); this holds only what reading a row needs.
 */
import { type Column, rightAlignedBounds } from './columns.ts';
import { cellNs } from './nvprof-rows.ts';
import { digitsValue, splitTraceName, type TraceRow, type TraceTemplates } from './trace-rows.ts';
import { durationNsAt } from './units.ts';

/** Trace columns read and deduplicated per column (nvprof prints at most 17); a wider table is not a trace. */
const MAX_INTERN_COLUMNS = 64;

/** What reading a row needs of its table: its columns, their keys, the row objects and a units row if any. */
interface TraceTableShape {
  cols: Column[];
  keys: string[];
  templates: TraceTemplates;
  units?: string[];
}

export class TraceCells {
  private readonly interned = new Map<string, string>();
  /** Per trace column: the previous row's cell, and how often the map found a value (repeats pay for the map). */
  private readonly lastCells: string[] = new Array<string>(MAX_INTERN_COLUMNS).fill('');
  private readonly internLookups = new Uint32Array(MAX_INTERN_COLUMNS);
  private readonly internHits = new Uint32Array(MAX_INTERN_COLUMNS);
  /** Start and end of each cell of the row being read (reused: no array per row). */
  private readonly cellBounds = new Int32Array(2 * MAX_INTERN_COLUMNS);

  /**
   * The row a line holds under table `t`, or undefined when the line is no row of it: a row is not a row unless its
   * first two cells are times (`Start`, `Duration`; a duration of `-` is a row without one).
   */
  read(line: string, t: TraceTableShape): TraceRow | undefined {
    const n = t.cols.length;
    if (n > MAX_INTERN_COLUMNS || n < 2) return undefined;
    const bounds = this.cellBounds;
    rightAlignedBounds(line, t.cols, bounds);
    let start = durationNsAt(line, bounds[0], bounds[1]);
    let duration: number | null | undefined = durationNsAt(line, bounds[2], bounds[3]);
    if (start === undefined || duration === undefined) {
      // bare numbers under a units row (`-u ms`), or a row nvprof printed without a duration (`-`, a Unified Memory
      // page-fault row): read slowly, cell by cell
      start = cellNs(line.slice(bounds[0], bounds[1]), t.units?.[0]);
      const d = line.slice(bounds[2], bounds[3]);
      duration = d === '-' ? null : cellNs(d, t.units?.[1]);
      if (start === undefined || duration === undefined) return undefined;
    }
    // the name first: it decides which fields the row has, so every row of a kind is a copy of one object
    const nameCell = line.slice(bounds[2 * n - 2], bounds[2 * n - 1]);
    const split =
      t.keys[n - 1] === 'name' && (nameCell.endsWith(']') || nameCell.endsWith('])'))
        ? splitTraceName(nameCell)
        : undefined;
    const row: TraceRow = {
      ...(split?.kernel !== undefined
        ? t.templates.launch
        : split?.correlationId !== undefined
          ? t.templates.withId
          : t.templates.plain),
    };
    row.startNs = start;
    if (duration === null) delete row.durationNs;
    else row.durationNs = duration;
    for (let i = 2; i < n; i++) {
      const a = bounds[2 * i];
      const b = bounds[2 * i + 1];
      const whole = digitsValue(line, a, b);
      row[t.keys[i]] = whole !== undefined ? whole : this.intern(i === n - 1 ? nameCell : line.slice(a, b), i);
    }
    if (split?.kernel !== undefined) {
      row.name = this.intern(split.name, n - 1);
      row.kernel = this.intern(split.kernel, n - 1);
    }
    if (split?.correlationId !== undefined) row.correlationId = split.correlationId;
    if (t.units) withCellUnits(row, t.keys, t.units);
    return row;
  }

  /**
   * A kept cell as its own string (not a slice that keeps its whole line alive), shared with the previous row's or an
   * earlier equal cell where values repeat (devices, streams, grid sizes; not names that carry a correlation id).
   * `column` is below MAX_INTERN_COLUMNS: read() refuses wider tables.
   */
  private intern(v: string, column: number): string {
    const last = this.lastCells[column];
    if (last === v) return last;
    let s: string | undefined;
    // a column whose values rarely repeat (names with a correlation id) stops paying for the map after 1000 rows
    // (the hit test comes first so it runs on every call: code first reached at the 1000th lookup would make V8
    // throw away the optimised parser, ~20 ms of compiling again on a large trace)
    const lookups = this.internLookups[column];
    const useMap = this.internHits[column] * 4 >= lookups || lookups < 1000;
    if (useMap) {
      this.internLookups[column] = lookups + 1;
      s = this.interned.get(v);
      if (s !== undefined) this.internHits[column]++;
    }
    if (s === undefined) {
      s = v.length < 13 ? v : (' ' + v).slice(1); // V8 copies strings shorter than 13 characters when slicing
      if (useMap && this.interned.size < 100_000) this.interned.set(s, s);
    }
    this.lastCells[column] = s;
    return s;
  }
}

/** Under a units row, a bare number in a column with a unit (Size in KB, Throughput in GB/s) gets it back. */
function withCellUnits(row: TraceRow, keys: string[], units: string[]): void {
  for (let i = 2; i < keys.length; i++) {
    const v = row[keys[i]];
    if (units[i] && (typeof v === 'number' || /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(v)))
      row[keys[i]] = `${v}${units[i]}`;
  }
}

/** splitTraceName's fields set on a row already kept (its name completed by a wrapped line). */
export function readTraceName(row: TraceRow, name: string): void {
  const r = splitTraceName(name);
  row.name = r.name;
  if (r.kernel !== undefined) row.kernel = r.kernel;
  if (r.correlationId !== undefined) row.correlationId = r.correlationId;
}
