/** The lab report as Markdown and as CSV files. Pure: a LabReport in, text out. */
import type { LabReport, ProfileSection, TimedRow } from './lab-report.ts';
import { CRITICAL_PATH_HEADERS, criticalPathCells, csvTable, formatNs, markdownTable, TIMED_HEADERS, timedCells } from './tables.ts';

const f2 = (v: number) => v.toFixed(2);
const pct = (share: number) => `${(share * 100).toFixed(1)}%`;

export function speedupLine(s: LabReport['speedups'][number]): string {
  return `${s.faster} vs ${s.baseline}: ${s.inference.toFixed(1)}x inference, ${s.endToEnd.toFixed(1)}x end to end`;
}

function timedTable(title: string, rows: TimedRow[], nameHeader: string): string[] {
  if (rows.length === 0) return [];
  return [
    `**${title}**`,
    '',
    markdownTable(
      [...TIMED_HEADERS, nameHeader],
      rows.map(timedCells),
      ['r', 'r', 'r', 'l'],
    ),
    '',
  ];
}

function profileMarkdown(p: ProfileSection): string[] {
  const out = [`### ${p.label} (${p.tool})`, ''];
  if (p.criticalPath.length) {
    out.push('**Critical path** (nvprof --dependency-analysis: top rows, then every other row that waits)', '');
    out.push(
      markdownTable(
        CRITICAL_PATH_HEADERS,
        [...p.criticalPath, ...p.waiting].map(criticalPathCells),
        ['r', 'r', 'r', 'l'],
      ),
      '',
    );
    const waiting = [...p.criticalPath, ...p.waiting].filter((d) => d.waitingNs > 0);
    out.push(
      waiting.length
        ? `**Waiting time** (> 0): ${waiting.map((d) => `${d.name} ${formatNs(d.waitingNs)}`).join('; ')}`
        : '**Waiting time**: no row waits (0 ns everywhere).',
      '',
    );
  }
  out.push(...timedTable('Top GPU kernels and copies', p.kernels, 'Name'));
  out.push(...timedTable('Top CUDA API calls', p.apiCalls, 'Name'));
  out.push(...timedTable(p.tool === 'nvprof' ? 'NVTX ranges (TensorRT names them by layer)' : 'NVTX ranges', p.nvtx, 'Range'));
  out.push(...timedTable('OS runtime (top calls)', p.osRuntime, 'Name'));
  if (p.notes.length) out.push('**Notes**', '', ...p.notes.map((n) => `- ${n}`), '');
  return out;
}

export function reportMarkdown(r: LabReport, title = 'YOLOv4-Tiny: ONNX Runtime vs TensorRT'): string {
  const out: string[] = [`# ${title}`, ''];
  if (r.fps.length) {
    out.push('## Speed', '');
    out.push(
      markdownTable(
        ['Model Type', 'Model Input Size', 'Inference Speed (FPS)', 'End-to-end speed (FPS)'],
        r.fps.map((x) => [x.modelType, x.inputSize, f2(x.inferenceFps), f2(x.endToEndFps)]),
      ),
      '',
    );
    for (const s of r.speedups) out.push(`- ${speedupLine(s)}`);
    for (const x of r.fps) {
      const parts = x.otherStages.filter((s) => s.share >= 0.001).map((s) => `${s.stage} ${pct(s.share)}`);
      out.push(`- ${x.modelType}: ${pct(x.nonInferenceShare)} of end-to-end time is not inference (${parts.join(', ')}), over ${x.frames} frames.`);
    }
    out.push('', 'Inference FPS = frames / time in the model only; end-to-end FPS = frames / wall time of read + preprocess + inference + postprocess + write. Warm-up frames are excluded from both.', '');
  }
  if (r.stages.length) {
    out.push('## Stages (ms per frame)', '');
    for (const s of r.stages) {
      out.push(`**${s.modelType}**`, '');
      out.push(
        markdownTable(
          ['Stage', 'mean', 'p50', 'p90', 'p99', 'share of wall'],
          s.rows.map((x) => [x.stage, f2(x.meanMs), f2(x.p50Ms), f2(x.p90Ms), f2(x.p99Ms), pct(x.share)]),
          ['l', 'r', 'r', 'r', 'r', 'r'],
        ),
        '',
      );
    }
  }
  if (r.profiles.length) {
    out.push('## Profiles', '');
    for (const p of r.profiles) out.push(...profileMarkdown(p));
  }
  if (r.env.length) {
    out.push('## Environment', '');
    for (const e of r.env) out.push(`**${e.label}**`, '', markdownTable(['', ''], e.rows), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** CSV files by name: fps.csv, stages.csv, and per profile critical_path / kernels / api_calls / nvtx. */
export function reportCsv(r: LabReport): Record<string, string> {
  const files: Record<string, string> = {};
  files['fps.csv'] = csvTable(
    ['model_type', 'model_input_size', 'inference_fps', 'end_to_end_fps', 'frames', 'non_inference_share'],
    r.fps.map((x) => [x.modelType, x.inputSize, f2(x.inferenceFps), f2(x.endToEndFps), x.frames, x.nonInferenceShare.toFixed(4)]),
  );
  files['stages.csv'] = csvTable(
    ['model_type', 'stage', 'mean_ms', 'p50_ms', 'p90_ms', 'p99_ms', 'share_of_wall'],
    r.stages.flatMap((s) => s.rows.map((x) => [s.modelType, x.stage, x.meanMs.toFixed(3), x.p50Ms.toFixed(3), x.p90Ms.toFixed(3), x.p99Ms.toFixed(3), x.share.toFixed(4)])),
  );
  r.profiles.forEach((p, i) => {
    const base = `profile${i + 1}_${p.label.replace(/[^\w.-]+/g, '_')}`;
    if (p.criticalPath.length) {
      files[`${base}_critical_path.csv`] = csvTable(
        ['critical_path_pct', 'critical_path_ns', 'waiting_ns', 'name'],
        [...p.criticalPath, ...p.waiting].map((d) => [d.criticalPathPct, d.criticalPathNs, d.waitingNs, d.name]),
      );
    }
    for (const [key, rows] of [['kernels', p.kernels], ['api_calls', p.apiCalls], ['nvtx', p.nvtx], ['os_runtime', p.osRuntime]] as const) {
      if (rows.length) files[`${base}_${key}.csv`] = csvTable(['time_pct', 'total_ns', 'calls', 'name'], rows.map((x) => [x.pct ?? '', x.totalNs, x.calls, x.name]));
    }
  });
  return files;
}
