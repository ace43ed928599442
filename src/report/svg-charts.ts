/**
 * The report's charts as inline SVG (no script, no network): per-stage histograms and a timeline of the pipelined
 * loop's frames here, with the frame, palette and legend every chart uses; lines over the run in svg-over-time.ts, the
 * FPS and stage bars (HTML) in bar-chart.ts. Pure: figures in, markup out. The page around them is html.ts.
 */
import { STAGES } from '../pipeline/stages.ts';
import type { FrameSeries } from './report-types.ts';
import { maxOf, minOf } from '../util/stats.ts';

export const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];
/** Streams' lines: none of the stages' colours (PALETTE's first five), so a colour means one thing on a page. */
export const STREAM_PALETTE = ['#9c755f', '#b07aa1', '#edc948', '#17becf', '#bcbd22', '#7f7f7f', '#8c564b', '#e377c2'];

export function escapeHtml(s: string | number): string {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function svg(title: string, width: number, height: number, parts: string[]): string {
  return [
    // the chart scales with the page (viewBox) down to 32rem, where values and legends are still legible; on a
    // narrower screen its figure scrolls sideways on its own, and the page does not
    `<figure class="scroll"><figcaption>${escapeHtml(title)}</figcaption>`,
    `<svg class="chart" role="img" aria-label="${escapeHtml(title)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" preserveAspectRatio="xMinYMin meet" style="width: 100%; min-width: min(32rem, ${width}px); max-width: ${width}px; height: auto" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="12">`,
    `<title>${escapeHtml(title)}</title>`,
    ...parts,
    '</svg></figure>',
  ].join('\n');
}

export const STAGE_COLOR = Object.fromEntries(STAGES.map((s, i) => [s, PALETTE[i]])) as Record<
  (typeof STAGES)[number],
  string
>;

export function legend(x: number, y: number, names: [string, string][]): string[] {
  return names.map(
    ([name, color], i) =>
      `<rect x="${x + (i % 5) * 120}" y="${y + Math.floor(i / 5) * 18}" width="12" height="12" fill="${color}"/><text x="${x + (i % 5) * 120 + 16}" y="${y + Math.floor(i / 5) * 18 + 11}">${escapeHtml(name)}</text>`,
  );
}

/** One histogram per stage (30 bins between that stage's min and max), stacked as small multiples. */
export function stageHistograms(s: FrameSeries): string {
  const left = 100;
  const plotW = 420;
  const rowH = 56;
  const width = left + plotW + 150;
  const parts: string[] = [];
  STAGES.forEach((st, row) => {
    const v = s.stages[st];
    const lo = minOf(v);
    const hi = maxOf(v);
    const bins = new Array<number>(30).fill(0);
    for (const x of v) bins[hi > lo ? Math.min(29, Math.floor(((x - lo) / (hi - lo)) * 30)) : 0]++;
    const top = Math.max(1, ...bins);
    const y0 = 8 + row * rowH;
    parts.push(`<text x="${left - 8}" y="${y0 + 30}" text-anchor="end">${st}</text>`);
    bins.forEach((c, i) => {
      const h = (c / top) * (rowH - 22);
      parts.push(
        `<rect x="${(left + (i * plotW) / 30).toFixed(1)}" y="${(y0 + rowH - 18 - h).toFixed(1)}" width="${(plotW / 30 - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${STAGE_COLOR[st]}"><title>${c} frames</title></rect>`,
      );
    });
    parts.push(
      `<text x="${left}" y="${y0 + rowH - 4}">${lo.toFixed(2)} ms</text><text x="${left + plotW}" y="${y0 + rowH - 4}" text-anchor="end">${hi.toFixed(2)} ms</text>`,
    );
    parts.push(`<text x="${left + plotW + 10}" y="${y0 + 30}">${v.length} frames</text>`);
  });
  return svg(`Latency histogram per stage: ${s.label}`, width, 16 + STAGES.length * rowH, parts);
}

/**
 * The pipelined loop on a clock: a window of consecutive frames, one row each, with read+preprocess, inference
 * and postprocess+write where they really happened. Overlap between rows is the pipelining.
 */
export function pipelineTimeline(s: FrameSeries, frames = 10): string {
  const n = s.index.length;
  const first = Math.max(0, Math.floor(n / 2) - Math.floor(frames / 2));
  const rows = Array.from({ length: Math.min(frames, n) }, (_, k) => first + k);
  const t0 = s.startMs[rows[0]];
  const t1 = Math.max(t0 + 1e-6, maxOf(rows.map((i) => s.endMs[i])));
  const left = 90;
  const plotW = 600;
  const rowH = 18;
  const width = left + plotW + 20;
  const x = (t: number) => left + ((t - t0) / (t1 - t0)) * plotW;
  const parts: string[] = [];
  rows.forEach((i, k) => {
    const y = 6 + k * rowH;
    parts.push(`<text x="${left - 8}" y="${y + 12}" text-anchor="end">frame ${s.index[i]}</text>`);
    const segs: [string, string, number, number][] = [
      ['read+preprocess', STAGE_COLOR.read, s.startMs[i], s.startMs[i] + s.stages.read[i] + s.stages.preprocess[i]],
      ['inference', STAGE_COLOR.inference, s.inferenceStartMs[i], s.inferenceStartMs[i] + s.stages.inference[i]],
      [
        'postprocess+write',
        STAGE_COLOR.write,
        s.postprocessStartMs[i],
        s.postprocessStartMs[i] + s.stages.postprocess[i] + s.stages.write[i],
      ],
    ];
    for (const [name, color, a, b] of segs) {
      parts.push(
        `<rect x="${x(a).toFixed(1)}" y="${y}" width="${Math.max(0.5, x(b) - x(a)).toFixed(1)}" height="${rowH - 4}" fill="${color}"><title>${escapeHtml(`frame ${s.index[i]} ${name}: ${(b - a).toFixed(2)} ms`)}</title></rect>`,
      );
    }
  });
  const base = 6 + rows.length * rowH;
  parts.push(
    `<text x="${left}" y="${base + 14}">${(t0 / 1000).toFixed(3)} s</text><text x="${left + plotW}" y="${base + 14}" text-anchor="end">${(t1 / 1000).toFixed(3)} s (${(t1 - t0).toFixed(0)} ms shown)</text>`,
  );
  parts.push(
    ...legend(left, base + 24, [
      ['read+preprocess', STAGE_COLOR.read],
      ['inference', STAGE_COLOR.inference],
      ['postprocess+write', STAGE_COLOR.write],
    ]),
  );
  return svg(`Pipelined loop timeline, ${rows.length} frames: ${s.label}`, width, base + 48, parts);
}
