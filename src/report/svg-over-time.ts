/** The report's lines over the run, inline SVG: each stage's and each stream's latency, the board's load and power. */
import type { BoardRow, FrameSeries, StreamsSection } from './report-types.ts';
import { escapeHtml, legend, PALETTE, STAGE_COLOR, STREAM_PALETTE, svg } from './svg-charts.ts';
import { STAGES } from '../pipeline/stages.ts';
import { maxOf } from '../util/stats.ts';

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
