/**
 * The report's charts as inline SVG (no script, no network): FPS and stacked stage bars, latency of each stage and each
 * stream over the run, per-stage histograms, a timeline of the pipelined loop's frames, the board's load and power.
 * Pure: figures in, an <svg> string out. The page around them is html.ts.
 */
import { STAGES } from '../pipeline/stages.ts';
import type { Bar } from './blocks.ts';
import type { BoardRow, FrameSeries, StreamsSection } from './report-types.ts';
import { maxOf, minOf } from '../util/stats.ts';

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];
/** Streams' lines: none of the stages' colours (PALETTE's first five), so a colour means one thing on a page. */
const STREAM_PALETTE = ['#9c755f', '#b07aa1', '#edc948', '#17becf', '#bcbd22', '#7f7f7f', '#8c564b', '#e377c2'];

export function escapeHtml(s: string | number): string {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Horizontal bars, one per item, as HTML that reflows at any width (a phone's 390 px too): the item's label on its
 * own line, then its bar with the value printed beside it; `stacked` puts the segments end to end in one bar,
 * otherwise each segment is its own bar under the label (grouped). Bar lengths are shares of the widest, scaled into
 * the room the value text leaves; `limit` draws a line across every bar at that value (a target, a limit).
 */
export function barChart(
  title: string,
  bars: Bar[],
  unit: string,
  stacked: boolean,
  limit?: { value: number; label: string },
): string {
  const seriesNames = [...new Set(bars.flatMap((b) => b.segments.map((s) => s.name)))];
  const color = (name: string) => PALETTE[seriesNames.indexOf(name) % PALETTE.length];
  const totals = bars.map((b) =>
    stacked ? b.segments.reduce((t, s) => t + s.value, 0) : maxOf(b.segments.map((s) => s.value)),
  );
  const max = Math.max(1e-9, maxOf(totals), limit?.value ?? 0);
  const share = (v: number) => `${((Math.max(0, v) / max) * 100).toFixed(2)}%`;
  const value = (v: number) => `<span class="bar-value">${escapeHtml(`${v.toFixed(2)} ${unit}`)}</span>`;
  const limitLine = limit
    ? `<span class="bar-limit" style="left: calc(${share(limit.value)} * var(--room))" title="${escapeHtml(limit.label)}"></span>`
    : '';
  const row = (inner: string, total: number) =>
    `<div class="bar-row"><span class="bar-track">${inner}${limitLine}</span>${value(total)}</div>`;
  const items = bars.map((b, k) => {
    const label = `<div class="bar-label" title="${escapeHtml(b.fullLabel ?? b.label)}">${escapeHtml(b.label)}</div>`;
    if (stacked) {
      const segs = b.segments
        .map(
          (s) =>
            `<span class="bar" style="width: calc(${share(s.value)} * var(--room)); background: ${color(s.name)}" title="${escapeHtml(`${s.name}: ${s.value.toFixed(2)} ${unit}`)}"></span>`,
        )
        .join('');
      return `<div class="bar-item">${label}${row(segs, totals[k])}</div>`;
    }
    const rows = b.segments
      .map((s) =>
        row(
          `<span class="bar" style="width: calc(${share(s.value)} * var(--room)); background: ${color(s.name)}" title="${escapeHtml(`${b.fullLabel ?? b.label} ${s.name}: ${s.value.toFixed(2)} ${unit}`)}"></span>`,
          s.value,
        ),
      )
      .join('');
    return `<div class="bar-item">${label}${rows}</div>`;
  });
  const legend = [
    ...seriesNames.map(
      (n) =>
        `<span class="legend-item"><span class="swatch" style="background: ${color(n)}"></span>${escapeHtml(n)}</span>`,
    ),
    ...(limit ? [`<span class="legend-item"><span class="swatch limit"></span>${escapeHtml(limit.label)}</span>`] : []),
  ].join('');
  return `<figure class="chart bars" role="img" aria-label="${escapeHtml(title)}"><figcaption>${escapeHtml(title)}</figcaption>${items.join('')}<div class="legend">${legend}</div></figure>`;
}

function svg(title: string, width: number, height: number, parts: string[]): string {
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

const STAGE_COLOR = Object.fromEntries(STAGES.map((s, i) => [s, PALETTE[i]])) as Record<
  (typeof STAGES)[number],
  string
>;

function legend(x: number, y: number, names: [string, string][]): string[] {
  return names.map(
    ([name, color], i) =>
      `<rect x="${x + (i % 5) * 120}" y="${y + Math.floor(i / 5) * 18}" width="12" height="12" fill="${color}"/><text x="${x + (i % 5) * 120 + 16}" y="${y + Math.floor(i / 5) * 18 + 11}">${escapeHtml(name)}</text>`,
  );
}

/** At most `n` points per series: the maximum of each bucket, so spikes (throttling) stay visible. */
function bucketMax(xs: number[], ys: number[], n: number): [number[], number[]] {
  if (ys.length <= n) return [xs, ys];
  const size = ys.length / n;
  const ox: number[] = [];
  const oy: number[] = [];
  for (let b = 0; b < n; b++) {
    const lo = Math.floor(b * size);
    const hi = Math.max(lo + 1, Math.floor((b + 1) * size));
    let best = lo;
    for (let i = lo; i < hi; i++) if (ys[i] > ys[best]) best = i;
    ox.push(xs[best]);
    oy.push(ys[best]);
  }
  return [ox, oy];
}

/** A latency chart's axes: y from 0 ms to `maxY` at the left, x labelled at both ends below. */
function lineAxes(left: number, plotW: number, plotH: number, maxY: number, xFrom: string, xTo: string): string[] {
  return [
    `<line x1="${left}" y1="${10 + plotH}" x2="${left + plotW}" y2="${10 + plotH}" stroke="#888"/>`,
    `<line x1="${left}" y1="10" x2="${left}" y2="${10 + plotH}" stroke="#888"/>`,
    `<text x="${left - 6}" y="16" text-anchor="end">${maxY.toFixed(1)}</text>`,
    `<text x="${left - 6}" y="${10 + plotH}" text-anchor="end">0 ms</text>`,
    `<text x="${left}" y="${plotH + 26}">${xFrom}</text>`,
    `<text x="${left + plotW}" y="${plotH + 26}" text-anchor="end">${xTo}</text>`,
  ];
}

/** Latency of each stage over the run (frame index on x), one line per stage: where throttling shows first. */
export function latencyOverTime(s: FrameSeries): string {
  const left = 56;
  const plotW = 600;
  const plotH = 180;
  const width = left + plotW + 20;
  const height = plotH + 70;
  const all = STAGES.flatMap((st) => s.stages[st]);
  const maxY = Math.max(1e-6, maxOf(all));
  const minX = s.index[0];
  const maxX = Math.max(minX + 1, s.index[s.index.length - 1]);
  const px = (x: number) => left + ((x - minX) / (maxX - minX)) * plotW;
  const py = (y: number) => 10 + plotH - (y / maxY) * plotH;
  const parts = lineAxes(left, plotW, plotH, maxY, `frame ${minX}`, `frame ${maxX}`);
  for (const st of STAGES) {
    const [xs, ys] = bucketMax(s.index, s.stages[st], 600);
    const pts = xs.map((x, i) => `${px(x).toFixed(1)},${py(ys[i]).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline fill="none" stroke="${STAGE_COLOR[st]}" stroke-width="1.2" points="${pts}"><title>${escapeHtml(st)}</title></polyline>`,
    );
  }
  parts.push(
    ...legend(
      left,
      plotH + 38,
      STAGES.map((st) => [st, STAGE_COLOR[st]]),
    ),
  );
  return svg(`Latency over time per stage (ms): ${s.label}`, width, height, parts);
}

/**
 * Each stream's latency (arrival or read to boxes) over the run, one line per stream against the seconds since the
 * first frame arrived: a camera that drifts, or a board that throttles, shows as one line or all lines climbing.
 * Streams have colours of their own, so a stream is never drawn in a stage's colour.
 */
export function streamLatencyOverTime(m: StreamsSection): string {
  const series = m.latency ?? [];
  const left = 56;
  const plotW = 600;
  const plotH = 180;
  const width = left + plotW + 20;
  const rows = Math.ceil(series.length / 5);
  const height = plotH + 52 + rows * 18;
  const maxY = Math.max(1e-6, ...series.map((s) => maxOf(s.ms)));
  const maxX = Math.max(1e-3, ...series.map((s) => s.atS[s.atS.length - 1] ?? 0));
  const px = (x: number) => left + (x / maxX) * plotW;
  const py = (y: number) => 10 + plotH - (y / maxY) * plotH;
  const color = (i: number) => STREAM_PALETTE[i % STREAM_PALETTE.length];
  const parts = lineAxes(left, plotW, plotH, maxY, '0 s', `${maxX.toFixed(1)} s`);
  series.forEach((s, i) => {
    const [xs, ys] = bucketMax(s.atS, s.ms, 600);
    const pts = xs.map((x, k) => `${px(x).toFixed(1)},${py(ys[k]).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline fill="none" stroke="${color(i)}" stroke-width="1.2" points="${pts}"><title>${escapeHtml(`stream ${s.stream}`)}</title></polyline>`,
    );
  });
  parts.push(
    ...legend(
      left,
      plotH + 38,
      series.map((s, i) => [`stream ${s.stream}`, color(i)]),
    ),
  );
  return svg(
    `Latency per stream over the run (a frame's ${m.realtime ? 'arrival' : 'read'} to its boxes, ms): ${m.label}`,
    width,
    height,
    parts,
  );
}

/** GPU load (%) and input power (W) over the run, from tegrastats: where a Jetson throttles, FPS falls with them. */
export function boardOverTime(b: BoardRow): string {
  const s = b.series;
  const left = 56;
  const plotW = 600;
  const plotH = 150;
  const width = left + plotW + 60;
  const t0 = s.tMs[0] ?? 0;
  const t1 = Math.max(t0 + 1, s.tMs[s.tMs.length - 1] ?? 1);
  const px = (t: number) => left + ((t - t0) / (t1 - t0)) * plotW;
  const maxW = Math.max(1, maxOf(s.inputMw.filter((v): v is number => v !== null))) / 1000;
  const line = (values: (number | null)[], scale: (v: number) => number, color: string, name: string) => {
    const pts = s.tMs
      .map((t, i) =>
        values[i] === null ? '' : `${px(t).toFixed(1)},${(10 + plotH - scale(values[i]!) * plotH).toFixed(1)}`,
      )
      .filter(Boolean)
      .join(' ');
    return `<polyline fill="none" stroke="${color}" stroke-width="1.4" points="${pts}"><title>${escapeHtml(name)}</title></polyline>`;
  };
  const parts = [
    `<line x1="${left}" y1="${10 + plotH}" x2="${left + plotW}" y2="${10 + plotH}" stroke="#888"/>`,
    `<text x="${left - 6}" y="16" text-anchor="end">100%</text><text x="${left + plotW + 6}" y="16">${maxW.toFixed(1)} W</text>`,
    `<text x="${left}" y="${plotH + 26}">${(t0 / 1000).toFixed(1)} s</text><text x="${left + plotW}" y="${plotH + 26}" text-anchor="end">${(t1 / 1000).toFixed(1)} s</text>`,
    line(s.gpuLoadPct, (v) => v / 100, PALETTE[2], 'GPU load %'),
    line(s.inputMw, (v) => v / 1000 / maxW, PALETTE[3], 'input power W'),
    ...legend(left, plotH + 38, [
      ['GPU load (left axis)', PALETTE[2]],
      ['input power (right axis)', PALETTE[3]],
    ]),
  ];
  return svg(`GPU load and input power over time: ${b.label}`, width, plotH + 66, parts);
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
