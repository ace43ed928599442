/** Command lines for the profilers, as pure functions (tested apart from spawning). */

interface NvprofArgs {
  logFile: string;
  metrics?: string[];
  /** Needs `%p` in the log file name; off by default since `node <entry>` is the profiled process itself. */
  childProcesses?: boolean;
  command: string[];
}

/** The lab's flags: `nvprof --unified-memory-profiling off --dependency-analysis [--metrics ...] --log-file LOG cmd...` */
export function nvprofArgv(a: NvprofArgs): string[] {
  return [
    ...(a.childProcesses ? ['--profile-child-processes'] : []),
    '--unified-memory-profiling',
    'off',
    '--dependency-analysis',
    ...(a.metrics && a.metrics.length ? ['--metrics', a.metrics.join(',')] : []),
    '--log-file',
    a.logFile,
    ...a.command,
  ];
}

interface NsysProfileArgs {
  /** Report path without extension. */
  output: string;
  trace?: string[];
  command: string[];
}

const NSYS_DEFAULT_TRACE = ['cuda', 'nvtx', 'osrt'];

export function nsysProfileArgv(a: NsysProfileArgs): string[] {
  return [
    'profile',
    '-t',
    (a.trace ?? NSYS_DEFAULT_TRACE).join(','),
    // no CPU sampling, no context-switch trace: jetprof reads neither (its tables are NVTX, OS runtime, CUDA), they
    // slow the profiled run, and nsys 2022.4's agent spun after the application ended (its analysis thread at 90% CPU)
    // in about one try in four with them on a loaded machine, in none of 10 without
    '-s',
    'none',
    '--cpuctxsw',
    'none',
    '--force-overwrite',
    'true',
    '-o',
    a.output,
    ...a.command,
  ];
}

/** The reports jetprof reads, by their current names; nsys before 2023 knows them by the old ones. */
export const NSYS_STATS_REPORTS = [
  'nvtx_sum',
  'osrt_sum',
  'cuda_api_sum',
  'cuda_gpu_kern_sum',
  'cuda_gpu_mem_time_sum',
];
export const NSYS_STATS_REPORTS_OLD = ['nvtxsum', 'osrtsum', 'cudaapisum', 'gpukernsum', 'gpumemtimesum'];

export function nsysStatsArgv(report: string, reports: string[]): string[] {
  return ['stats', '--report', reports.join(','), '--format', 'csv', '--force-export', 'true', report];
}
