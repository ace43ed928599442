/** The lab report as Markdown and as CSV files (their shared phrasing is report-text.ts). Pure: a LabReport in, text out. */
import { CAPACITY_ALIGN, CAPACITY_HEADERS, capacityRows, setupLine } from './capacity-format.ts';
import type { LabReport, ProfileSection, TimedRow } from './report-types.ts';
import {
  ACCURACY_HEADERS,
  accuracyCaption,
  accuracyRows,
  BOARD_HEADERS,
  boardRows,
  CAPACITY_RULE,
  capacityCaption,
  defaultTitle,
  f2,
  failedSentence,
  gapSentence,
  intervalTradeLine,
  labHeaders,
  labRows,
  notComparedLine,
  SETUP_HEADERS,
  setupRows,
  skippedSentence,
  speedupLine,
  stageCaption,
  stageHeaders,
  stageRows,
  stdCell,
  STEADY_HEADERS,
  steadyStateCaption,
  steadyStateRows,
  perFrameLine,
  STREAM_HEADERS,
  streamRows,
  streamsCaption,
  streamsVerdict,
} from './report-text.ts';
import {
  CRITICAL_PATH_HEADERS,
  criticalPathCells,
  csvTable,
  markdownTable,
  mdInline,
  timedHeaders,
  timedCells,
  formatDependencyNs,
} from './tables.ts';

function timedTable(title: string, rows: TimedRow[], nameHeader: string): string[] {
  if (rows.length === 0) return [];
  return [
    `**${title}**`,
    '',
    markdownTable(
      [...timedHeaders(rows), nameHeader],
      rows.map((r) => timedCells(r, rows)),
      [...timedHeaders(rows).map(() => 'r' as const), 'l'],
    ),
    '',
  ];
}

function profileMarkdown(p: ProfileSection): string[] {
  const out = [`### ${mdInline(p.label)} (${p.tool})`, ''];
  if (p.criticalPath.length) {
    out.push('**Critical path** (nvprof --dependency-analysis: top rows, then every other row that waits)', '');
    out.push(
      markdownTable(CRITICAL_PATH_HEADERS, [...p.criticalPath, ...p.waiting].map(criticalPathCells), [
        'r',
        'r',
        'r',
        'l',
      ]),
      '',
    );
    const waiting = [...p.criticalPath, ...p.waiting].filter((d) => d.waitingNs > 0);
    out.push(
      waiting.length
        ? `**Waiting time** (> 0): ${mdInline(waiting.map((d) => `${d.name} ${formatDependencyNs(d.waitingNs)}`).join('; '))}`
        : '**Waiting time**: no row waits (0 ns everywhere).',
      '',
    );
  }
  if (p.steadyState) {
    const line = perFrameLine(p.steadyState);
    out.push(
      `**${mdInline(steadyStateCaption(p.steadyState))}**`,
      '',
      markdownTable(STEADY_HEADERS, steadyStateRows(p.steadyState), ['r', 'r', 'r', 'l']),
      '',
      ...(line ? [mdInline(line), ''] : []),
    );
  }
  out.push(...timedTable('Top GPU kernels and copies', p.kernels, 'Name'));
  out.push(...timedTable('Top CUDA API calls', p.apiCalls, 'Name'));
  out.push(
    ...timedTable(p.tool === 'nvprof' ? 'NVTX ranges (TensorRT names them by layer)' : 'NVTX ranges', p.nvtx, 'Range'),
  );
  out.push(...timedTable('OS runtime (top calls)', p.osRuntime, 'Name'));
  if (p.notes.length) out.push('**Notes**', '', ...p.notes.map((n) => `- ${mdInline(n)}`), '');
  return out;
}

export function reportMarkdown(r: LabReport, title = defaultTitle(r)): string {
  const out: string[] = [`# ${title}`, ''];
  if (r.fps.length || r.skipped.length || r.failed.length || r.runNotes.length) {
    out.push('## Speed', '');
    out.push(markdownTable(labHeaders(r), labRows(r)), '');
    if (r.accuracy.length)
      out.push(
        `**Accuracy** (${accuracyCaption(r)})`,
        '',
        markdownTable(ACCURACY_HEADERS, accuracyRows(r), ['l', 'r', 'r', 'r', 'r', 'r', 'r']),
        '',
      );
    for (const x of r.failed) out.push(`- **${mdInline(failedSentence(x))}**`);
    for (const x of r.skipped) out.push(`- ${mdInline(skippedSentence(x))}`);
    for (const n of r.runNotes) out.push(`- ${mdInline(n)}`);
    for (const s of r.speedups) out.push(`- ${speedupLine(s)}`);
    for (const t of r.intervalTrades) out.push(`- ${mdInline(intervalTradeLine(t))}`);
    for (const n of r.notCompared) out.push(`- ${mdInline(notComparedLine(n))}`);
    for (const x of r.fps) out.push(`- ${mdInline(gapSentence(x))}`);
    for (const x of r.fps) if (x.modelAlone) out.push(`- ${mdInline(`${x.modelType}: ${x.modelAlone}`)}`);
    out.push('');
    if (r.fps.length) {
      out.push('**What each row measured**', '');
      out.push(markdownTable(SETUP_HEADERS, setupRows(r)), '');
    }
  }
  for (const m of r.multiStream) {
    out.push(`**${mdInline(streamsCaption(m))}**`, '');
    const verdict = streamsVerdict(m);
    if (verdict) out.push(mdInline(verdict), '');
    if (m.intervalLine) out.push(mdInline(m.intervalLine), '');
    out.push(markdownTable(STREAM_HEADERS, streamRows(m), ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'l']), '');
  }
  if (r.capacity.length) {
    out.push('## Capacity (jetprof capacity)', '');
    for (const c of r.capacity) {
      out.push(`**${mdInline(capacityCaption(c))}**`, '');
      out.push(markdownTable(CAPACITY_HEADERS, capacityRows(c), CAPACITY_ALIGN), '');
    }
    out.push(CAPACITY_RULE, '');
  }
  if (r.board.length) {
    out.push('## On the board (tegrastats)', '');
    out.push(markdownTable(BOARD_HEADERS, boardRows(r), ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r']), '');
    out.push(
      'Means over the measured frames (first read to last write); energy per frame = mean input power x wall time per frame.',
      '',
    );
  }
  if (r.stages.length) {
    out.push('## Stages (ms per frame)', '');
    for (const t of r.stages) {
      out.push(`**${mdInline(stageCaption(t))}**`, '');
      out.push(markdownTable(stageHeaders(t), stageRows(t), ['l', 'r', 'r', 'r', 'r', 'r']), '');
    }
  }
  if (r.profiles.length) {
    out.push('## Profiles', '');
    for (const p of r.profiles) out.push(...profileMarkdown(p));
  }
  if (r.env.length) {
    out.push('## Environment', '');
    for (const e of r.env) out.push(`**${mdInline(e.label)}**`, '', markdownTable(['', ''], e.rows), '');
  }
  out.push('## Definitions', '', ...r.definitions.map(([k, v]) => `- **${k}**: ${v}`), '');
  return `${out.join('\n').trimEnd()}\n`;
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
  r.profiles.forEach((p, i) => {
    const base = `profile${i + 1}_${p.label.replace(/[^\w.-]+/g, '_')}`;
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
      if (rows.length)
        files[`${base}_${key}.csv`] = csvTable(
          ['time_pct', 'total_ns', 'calls', 'name'],
          rows.map((x) => [x.pct ?? '', x.totalNs, x.calls, x.name]),
        );
    }
  });
  return files;
}
