/**
 * What nsys calls its reports and columns: old report names and bare titles to the current names, each column's JSON
 * key and kind (nanoseconds, bytes, counts, text), and a cell as its column's kind (nanoseconds exact). Pure.
 */
import { camelKey } from './columns.ts';
import { parseGroupedInteger, parseGroupedNumber } from './units.ts';

/** A cell's value in the JSON: text, a number, or null for an empty cell or `-`. */
export type NsysValue = string | number | null;

/** Old (nsys <= 2022) report names -> current names. */
const NSYS_REPORT_ALIASES: Record<string, string> = {
  nvtxsum: 'nvtx_sum',
  nvtxppsum: 'nvtx_pushpop_sum',
  nvtxpptrace: 'nvtx_pushpop_trace',
  nvtxgpuproj: 'nvtx_gpu_proj_trace',
  nvtxkernsum: 'nvtx_kern_sum',
  osrtsum: 'osrt_sum',
  cudaapisum: 'cuda_api_sum',
  cudaapitrace: 'cuda_api_trace',
  gpukernsum: 'cuda_gpu_kern_sum',
  gpumemtimesum: 'cuda_gpu_mem_time_sum',
  gpumemsizesum: 'cuda_gpu_mem_size_sum',
  gpusum: 'cuda_gpu_sum',
  gputrace: 'cuda_gpu_trace',
  kernexecsum: 'cuda_kern_exec_sum',
  kernexectrace: 'cuda_kern_exec_trace',
  apigpusum: 'cuda_api_gpu_sum',
  openmpevtsum: 'openmp_sum',
  khrdebugsum: 'opengl_khr_range_sum',
  umsum: 'um_sum',
  umtotalsum: 'um_total_sum',
  umcpupagefaults: 'um_cpu_page_faults_sum',
};

/**
 * Titles of the oldest nsys, which print no report name: `CUDA API Statistics:` (2020-2021), or with the unit instead
 * of the colon, `CUDA API Statistics (nanoseconds)` after `Generating CUDA API Statistics...` (2019.5-2020).
 */
export const OLD_TITLES: [RegExp, string][] = [
  [/^NVTX (Push-Pop )?Range Statistics(:| \(nanoseconds\))$/, 'nvtx_sum'],
  [/^Operating System Runtime API Statistics(:| \(nanoseconds\))$/, 'osrt_sum'],
  [/^CUDA API Statistics(:| \(nanoseconds\))$/, 'cuda_api_sum'],
  [/^CUDA Kernel Statistics(:| \(nanoseconds\))$/, 'cuda_gpu_kern_sum'],
  [/^CUDA Memory Operation Statistics( \(by time\):| \(nanoseconds\))$/, 'cuda_gpu_mem_time_sum'],
  [/^CUDA Memory Operation Statistics( \(by size.*\):| \((KiB|MB)\))$/, 'cuda_gpu_mem_size_sum'],
];

export function canonicalReportName(name: string): string {
  return NSYS_REPORT_ALIASES[name] ?? name;
}

/** What a column holds: whole numbers, decimals, or text. */
export type Kind = 'int' | 'float' | 'str';
const TIME_COLUMNS: Record<string, [string, Kind]> = {
  'Time (%)': ['timePct', 'float'],
  'Time(%)': ['timePct', 'float'],
  'Total Time (ns)': ['totalNs', 'int'],
  'Total Time': ['totalNs', 'int'],
  Instances: ['instances', 'int'],
  'Num Calls': ['calls', 'int'],
  Calls: ['calls', 'int'],
  Count: ['count', 'int'],
  Operations: ['count', 'int'],
  'Avg (ns)': ['avgNs', 'float'],
  Average: ['avgNs', 'float'],
  'Med (ns)': ['medNs', 'float'],
  Median: ['medNs', 'float'],
  'Min (ns)': ['minNs', 'int'],
  Minimum: ['minNs', 'int'],
  'Max (ns)': ['maxNs', 'int'],
  Maximum: ['maxNs', 'int'],
  'StdDev (ns)': ['stddevNs', 'float'],
  StdDev: ['stddevNs', 'float'],
  PID: ['pid', 'int'],
  TID: ['tid', 'int'],
  Pid: ['pid', 'int'],
  Tid: ['tid', 'int'],
  Style: ['style', 'str'],
  Range: ['range', 'str'],
  Name: ['name', 'str'],
  Operation: ['operation', 'str'],
};
const SIZE_COLUMNS: Record<string, [string, Kind]> = {
  Total: ['total', 'float'],
  'Total (MB)': ['total', 'float'],
  'Total (KiB)': ['total', 'float'],
  Count: ['count', 'int'],
  Operations: ['count', 'int'],
  'Avg (MB)': ['avg', 'float'],
  Average: ['avg', 'float'],
  'Med (MB)': ['med', 'float'],
  'Min (MB)': ['min', 'float'],
  Minimum: ['min', 'float'],
  'Max (MB)': ['max', 'float'],
  Maximum: ['max', 'float'],
  'StdDev (MB)': ['stddev', 'float'],
  Operation: ['operation', 'str'],
};

/** A column's key in the JSON and its kind, by the report and the label nsys printed. */
export function columnSpec(report: string, label: string): [string, Kind] {
  const table = report === 'cuda_gpu_mem_size_sum' ? SIZE_COLUMNS : TIME_COLUMNS;
  return table[label] ?? [camelKey(label), 'str'];
}

/** A cell as its column's kind; undefined when a numeric column holds something that is not a number. */
export function convert(value: string, kind: Kind, key: string): NsysValue | undefined {
  if (value === '' || value === '-') return null;
  // nanosecond columns: whole numbers exact (through BigInt), nsys's averages, medians and deviations at the
  // precision it printed them (`3597504.7`)
  if (key.endsWith('Ns')) {
    const ns = parseGroupedNs(value);
    // a whole-number column (totals, minimums, maximums) holding a fraction is not what nsys prints: not a number
    const whole = kind === 'int' || /^(total|min|max)Ns$/.test(key);
    return whole && ns !== undefined && !Number.isInteger(ns) ? undefined : ns;
  }
  if (kind === 'int') return parseGroupedInteger(value);
  if (kind === 'float') return parseGroupedNumber(value);
  return value;
}

/**
 * A nanosecond figure as nsys printed it, digit grouping removed: `5,511,756,619` -> 5511756619 (exact, through
 * BigInt), `10,203,978.8` -> 10203978.8 (the printed decimal: a double holds it exactly as written up to 15
 * significant digits, 11 days in nanoseconds with one decimal, so JSON shows the digits of the log).
 */
function parseGroupedNs(token: string): number | undefined {
  const t = token.trim().replace(/,/g, '');
  const m = /^(\d+)(?:\.(\d+))?$/.exec(t);
  if (!m) return undefined;
  return m[2] === undefined ? Number(BigInt(m[1])) : Number(t);
}
