/**
 * The lab report as one self-contained HTML page: inline CSS, inline SVG charts (FPS per backend, stacked stage
 * times, critical path), no script and no network. Prints on A4. Pure: a LabReport in, a string out.
 */
import type { LabReport, ProfileSection, TimedRow } from './lab-report.ts';
import { speedupLine } from './markdown.ts';
import { type Cell, CRITICAL_PATH_HEADERS, criticalPathCells, TIMED_HEADERS, timedCells } from './tables.ts';

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];

export function escapeHtml(s: string | number): string {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

interface Bar {
  label: string;
  segments: { name: string; value: number }[];
}

/**
 * Horizontal bars, one per item; `stacked` puts the segments end to end, otherwise each segment is its own bar
 * under the item's label (grouped). Values are printed at the bar ends.
 */
export function barChart(title: string, bars: Bar[], unit: string, stacked: boolean): string {
  const labelW = 190;
  const width = 720;
  const plotW = width - labelW - 90;
  const rowH = 22;
  const seriesNames = [...new Set(bars.flatMap((b) => b.segments.map((s) => s.name)))];
  const color = (name: string) => PALETTE[seriesNames.indexOf(name) % PALETTE.length];
  const max = Math.max(1e-9, ...bars.map((b) => (stacked ? b.segments.reduce((t, s) => t + s.value, 0) : Math.max(0, ...b.segments.map((s) => s.value)))));
  const parts: string[] = [];
  let y = 8;
  for (const b of bars) {
    if (stacked) {
      let x = labelW;
      parts.push(`<text x="${labelW - 8}" y="${y + 15}" text-anchor="end">${escapeHtml(b.label)}</text>`);
      for (const s of b.segments) {
        const w = (s.value / max) * plotW;
        parts.push(`<rect x="${x.toFixed(1)}" y="${y}" width="${Math.max(0, w).toFixed(1)}" height="${rowH - 4}" fill="${color(s.name)}"><title>${escapeHtml(`${s.name}: ${s.value.toFixed(2)} ${unit}`)}</title></rect>`);
        x += w;
      }
      const total = b.segments.reduce((t, s) => t + s.value, 0);
      parts.push(`<text x="${(x + 6).toFixed(1)}" y="${y + 15}">${total.toFixed(2)} ${escapeHtml(unit)}</text>`);
      y += rowH;
    } else {
      parts.push(`<text x="${labelW - 8}" y="${y + 15}" text-anchor="end" font-weight="bold">${escapeHtml(b.label)}</text>`);
      for (const s of b.segments) {
        const w = (s.value / max) * plotW;
        parts.push(`<rect x="${labelW}" y="${y}" width="${Math.max(0, w).toFixed(1)}" height="${rowH - 4}" fill="${color(s.name)}"><title>${escapeHtml(`${b.label} ${s.name}: ${s.value.toFixed(2)} ${unit}`)}</title></rect>`);
        parts.push(`<text x="${(labelW + w + 6).toFixed(1)}" y="${y + 15}">${s.value.toFixed(2)} ${escapeHtml(unit)}</text>`);
        y += rowH;
      }
      y += 6;
    }
  }
  const legendY = y + 10;
  seriesNames.forEach((name, i) => {
    const x = labelW + (i % 4) * 130;
    const ly = legendY + Math.floor(i / 4) * 18;
    parts.push(`<rect x="${x}" y="${ly}" width="12" height="12" fill="${color(name)}"/><text x="${x + 16}" y="${ly + 11}">${escapeHtml(name)}</text>`);
  });
  const height = legendY + Math.ceil(seriesNames.length / 4) * 18 + 8;
  return [
    `<figure><figcaption>${escapeHtml(title)}</figcaption>`,
    `<svg class="chart" role="img" aria-label="${escapeHtml(title)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="12">`,
    `<title>${escapeHtml(title)}</title>`,
    ...parts,
    '</svg></figure>',
  ].join('\n');
}

function table(headers: string[], rows: Cell[][], numeric: boolean[] = []): string {
  const th = headers.map((h, i) => `<th${numeric[i] ? ' class="n"' : ''}>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c, i) => `<td${numeric[i] ? ' class="n"' : ''}>${escapeHtml(c ?? '')}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function timed(title: string, rows: TimedRow[]): string {
  if (rows.length === 0) return '';
  return `<h4>${escapeHtml(title)}</h4>${table([...TIMED_HEADERS, 'Name'], rows.map(timedCells), [true, true, true, false])}`;
}

function profileHtml(p: ProfileSection): string {
  const parts = [`<section class="profile"><h3>${escapeHtml(p.label)} <small>(${p.tool})</small></h3>`];
  if (p.criticalPath.length) {
    const rows = [...p.criticalPath, ...p.waiting];
    parts.push(barChart(`Critical path: ${p.label}`, rows.slice(0, 10).map((d) => ({ label: d.name.length > 24 ? `${d.name.slice(0, 23)}…` : d.name, segments: [{ name: 'critical path %', value: d.criticalPathPct }] })), '%', false));
    parts.push(table(CRITICAL_PATH_HEADERS, rows.map(criticalPathCells), [true, true, true, false]));
  }
  parts.push(timed('Top GPU kernels and copies', p.kernels), timed('Top CUDA API calls', p.apiCalls), timed('NVTX ranges', p.nvtx), timed('OS runtime (top calls)', p.osRuntime));
  if (p.notes.length) parts.push(`<ul class="notes">${p.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul>`);
  parts.push('</section>');
  return parts.join('\n');
}

const CSS = `
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
thead { background: #f3f3f3; } figure { margin: 1rem 0; } figcaption { font-weight: bold; margin-bottom: .3rem; }
.speedups li { font-weight: bold; } .notes li { margin: .2rem 0; } small { color: #666; font-weight: normal; }
@media print { body { margin: 0; max-width: none; } section.profile, figure, table { break-inside: avoid; } @page { size: A4; margin: 15mm; } }
`;

export function reportHtml(r: LabReport, title = 'YOLOv4-Tiny: ONNX Runtime vs TensorRT'): string {
  const body: string[] = [`<h1>${escapeHtml(title)}</h1>`];
  if (r.fps.length) {
    body.push('<h2>Speed</h2>');
    body.push(table(['Model Type', 'Model Input Size', 'Inference Speed (FPS)', 'End-to-end speed (FPS)'], r.fps.map((x) => [x.modelType, x.inputSize, x.inferenceFps.toFixed(2), x.endToEndFps.toFixed(2)]), [false, false, true, true]));
    if (r.speedups.length) body.push(`<ul class="speedups">${r.speedups.map((s) => `<li>${escapeHtml(speedupLine(s))}</li>`).join('')}</ul>`);
    body.push(`<ul>${r.fps.map((x) => `<li>${escapeHtml(`${x.modelType}: ${(x.nonInferenceShare * 100).toFixed(1)}% of end-to-end time is not inference`)}</li>`).join('')}</ul>`);
    body.push(barChart('FPS per backend', r.fps.map((x) => ({ label: x.modelType, segments: [{ name: 'inference FPS', value: x.inferenceFps }, { name: 'end-to-end FPS', value: x.endToEndFps }] })), 'FPS', false));
  }
  if (r.stages.length) {
    body.push('<h2>Stages</h2>');
    body.push(barChart('Mean time per frame by stage', r.stages.map((s) => ({ label: s.modelType, segments: s.rows.filter((x) => !/copy|compute/.test(x.stage)).map((x) => ({ name: x.stage, value: x.meanMs })) })), 'ms', true));
    for (const s of r.stages) {
      body.push(`<h3>${escapeHtml(s.modelType)} <small>ms per frame</small></h3>`);
      body.push(table(['Stage', 'mean', 'p50', 'p90', 'p99', 'share of wall'], s.rows.map((x) => [x.stage, x.meanMs.toFixed(2), x.p50Ms.toFixed(2), x.p90Ms.toFixed(2), x.p99Ms.toFixed(2), `${(x.share * 100).toFixed(1)}%`]), [false, true, true, true, true, true]));
    }
  }
  if (r.profiles.length) body.push('<h2>Profiles</h2>', ...r.profiles.map(profileHtml));
  if (r.env.length) {
    body.push('<h2>Environment</h2>');
    for (const e of r.env) body.push(`<h3>${escapeHtml(e.label)}</h3>`, table(['', ''], e.rows));
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${CSS}</style></head>
<body>
${body.join('\n')}
<footer><small>Written by jetprof. Inference FPS = frames / time in the model; end-to-end FPS = frames / wall time of the whole pipeline; warm-up excluded.</small></footer>
</body></html>
`;
}
