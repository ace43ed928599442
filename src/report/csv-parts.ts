/**
 * Each report table's CSV part: the file it goes to and its own columns, at full precision and with machine names
 * (document.ts gives every table its part; markdown.ts csvOf writes the files). Pure.
 */
import type { CsvPart } from './blocks.ts';
import { type CapacityResult, setupLine } from './capacity-format.ts';
import type { LabReport, ProfileSection } from './report-types.ts';
import { f2, stdCell } from './report-text.ts';

const ms3 = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '');

/** fps.csv: one row per row of the lab table. */
export function fpsCsv(r: Pick<LabReport, 'fps'>): CsvPart {
  return {
    file: 'fps.csv',
    headers: [
      'label',
      'model_type',
      'model_input_size',
      'inference_fps',
      'inference_fps_std',
      'end_to_end_fps',
      'end_to_end_fps_std',
      'runs',
      'frames',
      'not_inference_share',
      'loop',
      'profiler',
      'execution_provider',
      'precision',
      'device',
      'machine',
    ],
    rows: r.fps.map((x) => [
      // one run has no spread: its std is unknown (empty), not 0; a typed-in row has no frame count
      x.label,
      x.modelType,
      x.inputSize,
      f2(x.inferenceFps.mean),
      stdCell(x.inferenceFps),
      f2(x.endToEndFps.mean),
      stdCell(x.endToEndFps),
      x.runs,
      x.typedIn ? '' : x.frames,
      x.notInference.toFixed(4),
      x.setup.loop,
      x.setup.profiler,
      x.setup.executionProvider,
      x.setup.precision,
      x.setup.device,
      x.machine,
    ]),
  };
}

/** streams.csv: each stream of a multi-stream run, its FPS, what it dropped and its latency. */
export function streamsCsv(m: LabReport['multiStream'][number]): CsvPart {
  return {
    file: 'streams.csv',
    headers: [
      'label',
      'stream',
      'source',
      'frames',
      'dropped',
      'dropped_share',
      'end_to_end_fps',
      'p50_ms',
      'p90_ms',
      'p99_ms',
    ],
    rows: m.streams.map((s) => [
      m.label,
      s.index,
      s.source,
      s.frames,
      s.droppedFrames,
      (s.droppedFrames / Math.max(1, s.frames + s.droppedFrames)).toFixed(4),
      f2(s.endToEndFps),
      ms3(s.latencyMs.p50),
      ms3(s.latencyMs.p90),
      ms3(s.latencyMs.p99),
    ]),
  };
}

/** stages.csv: the stage tables' rows, unrounded. */
export function stagesCsv(tables: LabReport['stages']): CsvPart {
  return {
    file: 'stages.csv',
    headers: ['label', 'stage', 'part_of', 'mean_ms', 'p50_ms', 'p90_ms', 'p99_ms', 'share_of_wall'],
    rows: tables.flatMap((s) =>
      s.rows.map((x) => [
        s.label,
        x.stage,
        x.partOf ?? '',
        ms3(x.meanMs),
        ms3(x.p50Ms),
        ms3(x.p90Ms),
        ms3(x.p99Ms),
        x.share === undefined ? '' : x.share.toFixed(4),
      ]),
    ),
  };
}

/** sweep.csv: sweep `i`'s rows with streams, batch and interval as columns (the table's figures, unrounded). */
export function sweepCsv(r: LabReport, s: LabReport['sweeps'][number], i: number): CsvPart {
  return {
    file: 'sweep.csv',
    headers: [
      'sweep',
      'row',
      'streams',
      'batch',
      'interval',
      'aggregate_fps',
      'slowest_stream_fps',
      'worst_p99_ms',
      'dropped',
      'delivered',
      'cpu_ms_per_frame',
    ],
    rows: s.rows.map((name) => {
      const x = r.fps.find((y) => y.modelType === name)!;
      const f = x.sweep!;
      return [
        i + 1,
        x.label,
        x.streamSetup!.streams,
        x.streamSetup!.batch,
        x.streamSetup!.interval,
        f.aggregateFps.toFixed(3),
        f.minStreamFps.toFixed(3),
        f.worstP99Ms === undefined ? '' : f.worstP99Ms.toFixed(3),
        x.drops?.dropped ?? '',
        x.drops?.delivered ?? '',
        f.cpuMsPerFrame === undefined ? '' : f.cpuMsPerFrame.toFixed(3),
      ];
    }),
  };
}

/** capacity.csv: one row per count tried, fewest streams first, with the search's setup. */
export function capacityCsv(c: CapacityResult): CsvPart {
  return {
    file: 'capacity.csv',
    headers: [
      'source',
      'source_fps',
      'p99_limit_ms',
      'streams',
      'min_stream_fps',
      'mean_stream_fps',
      'p99_ms',
      'dropped',
      'runs',
      'held_runs',
      'kept_share',
      'held',
      'borderline',
      'why',
      'setup',
    ],
    rows: [...c.points]
      .sort((a, b) => a.streams - b.streams)
      .map((p) => [
        c.source,
        c.sourceFps,
        c.p99LimitMs,
        p.streams,
        f2(p.minStreamFps),
        f2(p.meanStreamFps),
        Number.isFinite(p.p99Ms) ? p.p99Ms.toFixed(0) : '',
        p.dropped,
        p.runs ?? '',
        p.heldRuns ?? '',
        p.keptShare === undefined ? '' : p.keptShare.toFixed(4),
        p.held ? 'yes' : 'no',
        p.borderline ? 'yes' : 'no',
        p.why ?? '',
        c.setup ? setupLine(c.setup) : '',
      ]),
  };
}

/** Profile i's file names: `profile<i>_<its name without the log's extension>_<table>.csv`. */
export function profileCsvName(p: ProfileSection, i: number): (table: string) => string {
  const base = `profile${i + 1}_${p.label.replace(/\.(txt|log|md|json|csv|qdrep|nsys-rep)$/i, '').replace(/[^\w.-]+/g, '_')}`;
  return (table) => `${base}_${table}.csv`;
}

/** A profile's critical-path table: its top rows, then every other row that waits. */
export function criticalPathCsv(name: (t: string) => string, rows: ProfileSection['criticalPath']): CsvPart {
  return {
    file: name('critical_path'),
    headers: ['critical_path_pct', 'critical_path_ns', 'waiting_ns', 'name'],
    rows: rows.map((d) => [d.criticalPathPct, d.criticalPathNs, d.waitingNs, d.name]),
  };
}

/** A profile's kernels, API calls, NVTX ranges or OS runtime calls (`key`). */
export function timedCsv(file: string, rows: ProfileSection['kernels']): CsvPart {
  // a time_pct column only where the profiler printed one (nvprof's NVTX ranges have none)
  const pct = rows.some((x) => x.pct !== undefined);
  return {
    file,
    headers: [...(pct ? ['time_pct'] : []), 'total_ns', 'calls', 'name'],
    rows: rows.map((x) => [...(pct ? [x.pct ?? ''] : []), x.totalNs, x.calls, x.name]),
  };
}

type SteadyState = NonNullable<ProfileSection['steadyState']>;

/** The steady state's table, and its per-frame figures (the "Per frame, from the log" line), where the log has them. */
export function steadyStateCsv(name: (t: string) => string, s: SteadyState): CsvPart[] {
  return [
    ...(s.rows.length
      ? [
          {
            file: name('steady_state'),
            headers: ['share_of_rest_pct', 'critical_path_ns', 'waiting_ns', 'name'],
            rows: s.rows.map((d) => [d.pct.toFixed(2), d.criticalPathNs, d.waitingNs, d.name]),
          },
        ]
      : []),
    ...(s.frames ? [perFrameCsv(name('per_frame'), s, s.frames)] : []),
  ];
}

/** The layers' GPU table. */
export function layersCsv(name: (t: string) => string, s: SteadyState): CsvPart {
  return {
    file: name('layers'),
    headers: ['gpu_ns', 'gpu_ns_per_frame', 'share_of_layers_gpu', 'host_ns', 'calls', 'layer'],
    rows: (s.layers ?? []).map((l) => [
      l.gpuNs,
      s.frames ? Math.round(l.gpuNs / s.frames) : '',
      s.layersGpuNs ? (l.gpuNs / s.layersGpuNs).toFixed(4) : '',
      l.hostNs,
      l.calls,
      l.name,
    ]),
  };
}

/**
 * The log's per-frame figures as rows: what each counts, its total over the log and its share of one frame, in
 * integer nanoseconds (a frame's share rounded to the nanosecond).
 */
function perFrameCsv(file: string, s: SteadyState, frames: number): CsvPart {
  const rows: (string | number)[][] = [];
  const add = (figure: string, totalNs: number | undefined, perFrameNs: number | undefined, calls: number) => {
    if (perFrameNs !== undefined) rows.push([figure, totalNs ?? '', Math.round(perFrameNs), calls]);
  };
  add('gpu_activities', s.gpuNs, s.gpuPerFrameNs, frames);
  // a total that is a per-frame figure times the frames is given back whole; the wait's total stays in the API calls'
  // CSV (the log gives its average, which is what a frame holds)
  const whole = (perFrameNs: number | undefined) =>
    perFrameNs === undefined ? undefined : Math.round(perFrameNs * frames);
  for (const k of s.gpuByKind ?? []) add(`gpu_${k.kind}`, whole(k.perFrameNs), k.perFrameNs, frames);
  add('tensorrt_enqueue_host', whole(s.enqueuePerFrameNs), s.enqueuePerFrameNs, frames);
  if (s.enqueueMaxNs !== undefined && s.enqueuePerFrameNs !== undefined && frames > 1)
    add(
      'tensorrt_enqueue_host_without_slowest',
      Math.round(s.enqueuePerFrameNs * frames - s.enqueueMaxNs),
      (s.enqueuePerFrameNs * frames - s.enqueueMaxNs) / (frames - 1),
      frames - 1,
    );
  if (s.sync) add(`host_wait_${s.sync.name}`, undefined, s.sync.avgNs, s.sync.calls);
  return { file, headers: ['figure', 'total_ns', 'ns_per_frame', 'frames_or_calls'], rows };
}
