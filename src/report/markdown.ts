/** The lab report as Markdown and as CSV files (their shared phrasing is report-text.ts). Pure: a LabReport in, text out. */
import { setupLine } from './capacity-format.ts';
import { type Block, reportDocument } from './document.ts';
import type { LabReport } from './report-types.ts';
import { f2, stdCell } from './report-text.ts';
import { csvTable, markdownTable, mdInline } from './tables.ts';

/** The report document as Markdown: charts and the page's notes are left out, everything else in the same order. */
function blockMarkdown(b: Block): string[] {
  switch (b.kind) {
    case 'heading':
      if (b.pageOnly) return [];
      return [`${'#'.repeat(b.level)} ${mdInline(b.text)}${b.aside ? ` (${mdInline(b.aside)})` : ''}`, ''];
    case 'caption':
      return [`**${mdInline(b.text)}**${b.detail ? ` (${mdInline(b.detail)})` : ''}`, ''];
    case 'paragraph':
      return [`${b.lead ? `**${mdInline(b.lead)}**` : ''}${mdInline(b.text)}`, ''];
    case 'list':
      return [...b.items.map((x) => `- ${x.strong ? `**${mdInline(x.text)}**` : mdInline(x.text)}`), ''];
    case 'table':
      return [markdownTable(b.headers, b.rows, b.align), ''];
    case 'group':
      return b.blocks.flatMap(blockMarkdown);
    case 'definitions':
      return [...b.items.map(([k, v]) => `- **${mdInline(k)}**: ${mdInline(v)}`), ''];
    case 'chart':
    case 'page-note':
      return [];
  }
}

export function reportMarkdown(r: LabReport, title?: string): string {
  return `${reportDocument(r, title).blocks.flatMap(blockMarkdown).join('\n').trimEnd()}\n`;
}

/** capacity.csv: one row per count tried of every capacity result, with its setup. */
function capacityCsv(results: LabReport['capacity']): string {
  return csvTable(
    [
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
    results.flatMap((c) =>
      [...c.points]
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
    ),
  );
}

/** CSV files by name: fps.csv, stages.csv, and per profile critical_path / kernels / api_calls / nvtx. */
export function reportCsv(r: LabReport): Record<string, string> {
  const files: Record<string, string> = {};
  if (r.capacity.length) files['capacity.csv'] = capacityCsv(r.capacity);
  files['fps.csv'] = csvTable(
    [
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
    r.fps.map((x) => [
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
  );
  const ms3 = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '');
  // each stream of a multi-stream run: its FPS, what it dropped and its latency, beside fps.csv and stages.csv
  if (r.multiStream.length)
    files['streams.csv'] = csvTable(
      [
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
      r.multiStream.flatMap((m) =>
        m.streams.map((s) => [
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
      ),
    );
  files['stages.csv'] = csvTable(
    ['label', 'stage', 'part_of', 'mean_ms', 'p50_ms', 'p90_ms', 'p99_ms', 'share_of_wall'],
    r.stages.flatMap((s) =>
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
  );
  if (r.sweeps.length) files['sweep.csv'] = sweepCsv(r);
  r.profiles.forEach((p, i) => Object.assign(files, profileCsvFiles(p, i)));
  return files;
}

/** Each sweep's rows with streams, batch and interval as columns (the table's figures, unrounded). */
function sweepCsv(r: LabReport): string {
  return csvTable(
    [
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
    r.sweeps.flatMap((s, i) =>
      s.rows.map((name) => {
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
    ),
  );
}

/** One profile's tables as CSV files, named `profile<i>_<its name>_<table>.csv`. */
function profileCsvFiles(p: LabReport['profiles'][number], i: number): Record<string, string> {
  const files: Record<string, string> = {};
  // the profile's name without its file's extension: profile1_profiling_trt_log_kernels.csv
  const base = `profile${i + 1}_${p.label.replace(/\.(txt|log|md|json|csv|qdrep|nsys-rep)$/i, '').replace(/[^\w.-]+/g, '_')}`;
  if (p.criticalPath.length) {
    files[`${base}_critical_path.csv`] = csvTable(
      ['critical_path_pct', 'critical_path_ns', 'waiting_ns', 'name'],
      [...p.criticalPath, ...p.waiting].map((d) => [d.criticalPathPct, d.criticalPathNs, d.waitingNs, d.name]),
    );
  }
  for (const [key, rows] of [
    ['kernels', p.kernels],
    ['api_calls', p.apiCalls],
    ['nvtx', p.nvtx],
    ['os_runtime', p.osRuntime],
  ] as const) {
    // a time_pct column only where the profiler printed one (nvprof's NVTX ranges have none)
    const pct = rows.some((x) => x.pct !== undefined);
    if (rows.length)
      files[`${base}_${key}.csv`] = csvTable(
        [...(pct ? ['time_pct'] : []), 'total_ns', 'calls', 'name'],
        rows.map((x) => [...(pct ? [x.pct ?? ''] : []), x.totalNs, x.calls, x.name]),
      );
  }
  const s = p.steadyState;
  if (s?.rows.length)
    files[`${base}_steady_state.csv`] = csvTable(
      ['share_of_rest_pct', 'critical_path_ns', 'waiting_ns', 'name'],
      s.rows.map((d) => [d.pct.toFixed(2), d.criticalPathNs, d.waitingNs, d.name]),
    );
  if (s?.frames) files[`${base}_per_frame.csv`] = perFrameCsv(s, s.frames);
  if (s?.layers?.length)
    files[`${base}_layers.csv`] = csvTable(
      ['gpu_ns', 'gpu_ns_per_frame', 'share_of_layers_gpu', 'host_ns', 'calls', 'layer'],
      s.layers.map((l) => [
        l.gpuNs,
        s.frames ? Math.round(l.gpuNs / s.frames) : '',
        s.layersGpuNs ? (l.gpuNs / s.layersGpuNs).toFixed(4) : '',
        l.hostNs,
        l.calls,
        l.name,
      ]),
    );
  return files;
}

/**
 * The log's per-frame figures (the report's "Per frame, from the log" line) as rows: what each counts, its total over
 * the log and its share of one frame, in integer nanoseconds (a frame's share rounded to the nanosecond).
 */
function perFrameCsv(s: NonNullable<LabReport['profiles'][number]['steadyState']>, frames: number): string {
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
  return csvTable(['figure', 'total_ns', 'ns_per_frame', 'frames_or_calls'], rows);
}
