/**
 * nvprof's table headers, read: which table a line opens (the summary, old and new layout, the dependency analysis,
 * metrics or events, a GPU or API trace, unified memory, system profiling, or one of the CSV form's) and which of the
 * process's row lists its rows go to, to be made ready before the first. Pure: the parser (nvprof.ts) keeps the state.
 */
import { camelKey, headerColumns } from './columns.ts';
import { csvFlavour, type CsvTable } from './nvprof-csv.ts';
import type { TextTable } from './nvprof-rows.ts';
import { traceTemplates } from './trace-rows.ts';
import { splitCsvLine } from './units.ts';

/** The part of a log being read, from nvprof's `==PID== Profiling result:`-style lines. */
export type Section =
  'none' | 'result' | 'api' | 'activity' | 'nvtx' | 'dependency' | 'metrics' | 'events' | 'unified' | 'system';

/** A table being read: one of the text tables, or one of the CSV form's. */
export type Table = TextTable | CsvTable;

/** A header: its table; the process's row list its rows fill, if one may not exist yet; a section it starts. */
export interface TableHeader {
  table: Table;
  rows?: 'gpuTrace' | 'apiTrace' | 'unifiedMemory' | 'metricTrace';
  section?: Section;
}

/**
 * The table a header line opens, or undefined when the line is no header. `section` and `activityType` (an untyped
 * layout's `OpenACC (excl)`) name the untyped summary's rows.
 */
export function tableHeader(
  line: string,
  trimmed: string,
  section: Section,
  activityType: string | undefined,
): TableHeader | undefined {
  if (/^Type\s+Time\(%\)\s+Time\s+Calls\s+Avg\s+Min\s+Max\s+Name$/.test(trimmed))
    return { table: { kind: 'summary', typed: true, type: '' } };
  if (/^Time\(%\)\s+Time\s+Calls\s+Avg\s+Min\s+Max\s+Name$/.test(trimmed)) {
    const type =
      section === 'api' ? 'API calls' : section === 'activity' && activityType ? activityType : 'GPU activities';
    return { table: { kind: 'summary', typed: false, type } };
  }
  if (section === 'system' && /^(?:.*\S\s{2,})?Count\s+Avg\s+Min\s+Max$/.test(trimmed))
    return { table: { kind: 'system' } };
  if (/^Critical path\(%\)\s+Critical path\s+Waiting time\s+Name$/.test(trimmed))
    return { table: { kind: 'dependency' }, section: 'dependency' };
  if (/^Invocations\s+(Metric|Event) Name\s+/.test(trimmed)) {
    const kind = section === 'events' || /Event Name/.test(trimmed) ? 'events' : 'metrics';
    return { table: { kind, cols: headerColumns(line) } };
  }
  if (/^Start\s+Duration\s+/.test(trimmed)) {
    const cols = headerColumns(line);
    const isGpu =
      cols.some((c) => /Grid Size|Size|Throughput|Device/.test(c.label)) && !/^Start\s+Duration\s+Name$/.test(trimmed);
    const target = isGpu ? 'gpuTrace' : 'apiTrace';
    const keys = cols.map((c) => camelKey(c.label));
    // every row a copy of one object with all the keys: stores into existing fields, not a new shape per key
    return { table: { kind: 'trace', cols, keys, templates: traceTemplates(keys), target }, rows: target };
  }
  if (/^Count\s+Avg Size\s+Min Size\s+Max Size\s+Total Size\s+Total Time\s+Name$/.test(trimmed))
    return { table: { kind: 'unified', cols: headerColumns(line) }, rows: 'unifiedMemory' };
  // (system profiling's header starts with an unnamed column: `"","Device","Count",...`)
  if (/^"[^"]+"(,"[^"]*")+$/.test(trimmed) || /^""(,"[^"]+")+$/.test(trimmed)) {
    const header = splitCsvLine(trimmed);
    const flavour = csvFlavour(header);
    const rows =
      flavour === 'unified'
        ? 'unifiedMemory'
        : flavour === 'gpuTrace' || flavour === 'apiTrace' || flavour === 'metricTrace'
          ? flavour
          : undefined;
    return { table: { kind: 'csv', header, keys: header.map(camelKey), units: undefined, flavour }, rows };
  }
  return undefined;
}
