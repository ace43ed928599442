/** The report's bars as HTML that reflows at any width (FPS, stacked stages, grouped figures). Pure. */
import type { Bar } from './blocks.ts';
import { escapeHtml, PALETTE } from './svg-charts.ts';
import { maxOf } from '../util/stats.ts';

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
