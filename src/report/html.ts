/**
 * The lab report as one self-contained HTML page: the report document's blocks (document.ts) drawn with inline CSS
 * and inline SVG charts (svg-charts.ts), no script and no network. Prints on A4. Pure: a LabReport in, a string out.
 */
import type { Block, Chart, ListItem } from './blocks.ts';
import { reportDocument } from './document.ts';
import type { LabReport } from './report-types.ts';
import type { Cell } from './tables.ts';
import { escapeControls } from '../util/text-input.ts';
import { barChart } from './bar-chart.ts';
import { escapeHtml, pipelineTimeline, stageHistograms } from './svg-charts.ts';
import { boardOverTime, latencyOverTime, streamLatencyOverTime } from './svg-over-time.ts';

/**
 * A table that reads on any screen: each cell carries its column's header (`data-label`), which a phone shows beside
 * the value when the rows stack into cards; the row's name (its first text column, or the block's `key` column, shown
 * with its header when it is a number: "Stream 2") opens its card. On a wide screen it is an ordinary table, scrolling
 * inside its own box if it must.
 */
function table(headers: string[], rows: Cell[][], numeric: boolean[] = [], keyColumn?: number): string {
  const key = keyColumn ?? numeric.findIndex((n) => !n);
  const cls = (i: number) =>
    [numeric[i] ? 'n' : '', i === key ? 'key' : '', i === key && numeric[i] ? 'named' : ''].filter(Boolean).join(' ');
  const attr = (i: number) => (cls(i) ? ` class="${cls(i)}"` : '');
  const th = headers.map((h, i) => `<th${attr(i)}>${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => `<td${attr(i)} data-label="${escapeHtml(headers[i] ?? '')}">${escapeHtml(c ?? '')}</td>`).join('')}</tr>`,
    )
    .join('\n');
  // a wide table scrolls inside its own box instead of pushing the page sideways
  return `<div class="scroll"><table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

const CSS = `
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; overflow-wrap: break-word; }
.scroll { max-width: 100%; overflow-x: auto; } figure.scroll { margin: 1rem 0; } code { overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
thead { background: #f3f3f3; } figure { margin: 1rem 0; } figcaption { font-weight: bold; margin-bottom: .3rem; }
.bars { --room: 1; } .bar-item { margin: .35rem 0; } .bar-label { font-size: .85rem; overflow-wrap: anywhere; }
.bar-row { display: flex; align-items: center; gap: .4rem; } .bar-track { position: relative; flex: 1 1 auto; display: flex; min-width: 0; height: 14px; }
.bar { display: inline-block; height: 14px; flex: none; } .bar-value { flex: none; white-space: nowrap; font-size: .85rem; font-variant-numeric: tabular-nums; }
.bar-limit { position: absolute; top: -3px; bottom: -3px; border-left: 2px dashed #a33; } .legend { font-size: .8rem; color: #444; }
.legend-item { display: inline-block; margin-right: 1rem; white-space: nowrap; } .swatch { display: inline-block; width: 10px; height: 10px; margin-right: .3rem; vertical-align: middle; }
.swatch.limit { width: 0; height: 12px; border-left: 2px dashed #a33; }
td.n { white-space: nowrap; } td.key { overflow-wrap: anywhere; } details.quiet { color: #666; font-size: .85rem; margin: .5rem 0; }
.speedup { font-weight: bold; } .warn { color: #a33; } .skipped { color: #666; } dt { font-weight: bold; } dd { margin: 0 0 .4rem 1rem; } .notes li { margin: .2rem 0; } small { color: #666; font-weight: normal; }
@media (min-width: 80rem) { body { max-width: 76rem; } }
@media (max-width: 40rem) {
  .scroll table, .scroll tbody, .scroll tr, .scroll td { display: block; }
  .scroll thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  .scroll tr { display: flex; flex-direction: column; border: 1px solid #ccc; margin: 0 0 .6rem; }
  .scroll td { display: flex; justify-content: space-between; gap: .75rem; border: none; border-top: 1px solid #eee; text-align: right; overflow-wrap: anywhere; }
  .scroll td::before { content: attr(data-label); flex: 0 1 auto; max-width: 60%; text-align: left; color: #555; font-weight: 600; white-space: normal; overflow-wrap: normal; }
  .scroll td.key { order: -1; border-top: none; background: #f3f3f3; font-weight: 600; text-align: left; }
  .scroll td.key::before { content: none; } .scroll td:empty { display: none; }
  .scroll td.key.named { justify-content: flex-start; gap: .3rem; } .scroll td.key.named::before { content: attr(data-label); flex: none; color: inherit; }
}
@media print { body { margin: 0; max-width: none; } section.profile, figure, table { break-inside: avoid; } @page { size: A4; margin: 15mm; } }
`;

/** One block of the report document as HTML. */
function blockHtml(b: Block): string {
  switch (b.kind) {
    case 'heading':
      return `<h${b.level}>${escapeHtml(b.text)}${b.aside ? ` <small>(${escapeHtml(b.aside)})</small>` : ''}</h${b.level}>`;
    case 'caption':
      return `<h${b.level}>${escapeHtml(b.text)}</h${b.level}>${b.detail ? `<p><small>${escapeHtml(b.detail)}</small></p>` : ''}`;
    case 'paragraph': {
      const inner = `${b.lead ? `<b>${escapeHtml(b.lead)}</b>` : ''}${escapeHtml(b.text)}`;
      return `<p>${b.small ? `<small>${inner}</small>` : inner}</p>`;
    }
    case 'page-note':
      return `<p><small>${b.lines.map(escapeHtml).join('<br>')}</small></p>`;
    case 'list': {
      const shown = b.items.filter((x) => x.tone !== 'quiet');
      const folded = b.items.filter((x) => x.tone === 'quiet');
      const li = (x: ListItem) =>
        `<li${x.tone ? ` class="${x.tone}"` : ''}>${x.strong ? `<b>${escapeHtml(x.text)}</b>` : escapeHtml(x.text)}</li>`;
      return [
        shown.length ? `<ul>${shown.map(li).join('')}</ul>` : '',
        // the quiet lines (pairs not compared: a report of many rows has dozens) folded into one paragraph
        folded.length
          ? `<details class="quiet"><summary>${escapeHtml(b.foldSummary ?? `${folded.length} more`)}</summary><p>${folded.map((x) => escapeHtml(x.text)).join('<br>')}</p></details>`
          : '',
      ]
        .filter(Boolean)
        .join('\n');
    }
    case 'table':
      return table(
        b.headers,
        b.rows,
        b.align.map((a) => a === 'r'),
        b.key,
      );
    case 'chart':
      return chartHtml(b.chart);
    case 'group':
      return [`<section class="${b.cls}">`, ...b.blocks.map(blockHtml), '</section>'].join('\n');
    case 'definitions':
      return `<dl>${b.items.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>`;
    case 'code':
      return `<pre>${b.lines.map((l) => escapeHtml(escapeControls(l, true))).join('\n')}</pre>`;
  }
}

function chartHtml(c: Chart): string {
  switch (c.kind) {
    case 'bars':
      return barChart(c.title, c.bars, c.unit, c.stacked, c.limit);
    case 'latency-over-time':
      return latencyOverTime(c.series);
    case 'stream-latency':
      return streamLatencyOverTime(c.section);
    case 'stage-histograms':
      return stageHistograms(c.series);
    case 'pipeline-timeline':
      return pipelineTimeline(c.series);
    case 'board-over-time':
      return boardOverTime(c.board);
  }
}

export function reportHtml(r: LabReport, title?: string): string {
  const doc = reportDocument(r, title);
  const body = doc.blocks.map(blockHtml);
  title = doc.title;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${CSS}</style></head>
<body>
${body.join('\n')}
<footer><small>Written by jetprof. Every figure is defined under Definitions.</small></footer>
</body></html>
`;
}
