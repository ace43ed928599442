/**
 * The typed data an nvprof log becomes (schema jetprof.nvprof/1): one record per process, each table of the log as
 * rows, every time in integer nanoseconds. nvprof.ts fills it; report/ and jobs/ read it.
 */
import type { TraceRow } from './trace-rows.ts';

export interface SummaryRow {
  /** `GPU activities`, `API calls` or `Range`. */
  type: string;
  timePct: number;
  totalNs: number;
  calls: number;
  avgNs: number;
  minNs: number;
  maxNs: number;
  name: string;
}

export interface DependencyRow {
  criticalPathPct: number;
  criticalPathNs: number;
  waitingNs: number;
  name: string;
}

export interface MetricRow {
  device?: string;
  kernel: string;
  invocations: number;
  /** Metric or event name. */
  metric: string;
  description?: string;
  min: string;
  max: string;
  avg: string;
  total?: string;
}

export interface UnifiedMemoryRow {
  device?: string;
  /** null where nvprof's CSV leaves it empty (its `Gpu page fault groups` rows, whose text form counts them). */
  count: number | null;
  avgSize: string;
  minSize: string;
  maxSize: string;
  totalSize: string;
  /** null where nvprof prints `-`. */
  totalNs: number | null;
  name: string;
}

/** One kernel launch of `--print-gpu-trace --metrics/--events --csv`, with each metric's value. */
export interface MetricTraceRow {
  device: string;
  context: string;
  stream: string;
  kernel: string;
  correlationId?: number;
  /** Metric or event name -> its value; null where nvprof printed a flag instead (see `flags`). */
  values: Record<string, number | null>;
  /** Metric -> its unit (`%`, `GB/s`), from the units row or the cell. */
  units?: Record<string, string>;
  /** Metric -> what nvprof printed instead of a number (`<OVERFLOW>`, `Low (1)`): never read as a number. */
  flags?: Record<string, string>;
}

export interface NvtxRange {
  name: string;
  rows: SummaryRow[];
}
export interface NvtxDomain {
  name: string;
  thread?: string;
  ranges: NvtxRange[];
}

/**
 * `--system-profiling on`: one sampled quantity of one device (`SM Clock (MHz)`, `Power (mW)`, `Temperature (C)`)
 * with its sample count and min/max/avg as printed (numbers, in the unit the name carries).
 */
export interface SystemSampleRow {
  device?: string;
  name: string;
  /** The unit in the name's last parentheses (`MHz`, `mW`, `C`, `%`), when it has one. */
  unit?: string;
  count: number;
  avg: number;
  min: number;
  max: number;
}

export interface NvprofProcess {
  /** null in import mode (`======== `). */
  pid: number | null;
  /** 2, 3 ... for a run of the same process repeated in one log (parse --all-runs). */
  run?: number;
  command?: string;
  summary: SummaryRow[];
  nvtx: { domains: NvtxDomain[] };
  dependency: DependencyRow[];
  metrics: MetricRow[];
  /** `--print-gpu-trace --metrics ... --csv`: one record per kernel launch. */
  metricTrace?: MetricTraceRow[];
  gpuTrace?: TraceRow[];
  apiTrace?: TraceRow[];
  /** Trace rows counted but not kept, beyond the parser's maxTraceRows (a long --print-gpu-trace run has millions). */
  traceRowsOmitted?: number;
  /**
   * Unified Memory: each row with its device; `totals` the counts nvprof prints as lines after the tables (`Total CPU
   * Page faults: 154` as totalCpuPageFaults, `Total remote mappings to CPU: 12` as totalRemoteMappingsToCpu).
   */
  unifiedMemory?: { rows: UnifiedMemoryRow[]; totals: Record<string, number> };
  /** `--system-profiling on`: power, clocks, temperature and fan per device. */
  system?: SystemSampleRow[];
  warnings: string[];
  /** Informational lines such as `No kernels were profiled.` */
  notes: string[];
}

export interface NvprofLog {
  schema: 'jetprof.nvprof/1';
  processes: NvprofProcess[];
}
