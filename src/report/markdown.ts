/**
 * The renderers of documents of blocks (blocks.ts) to Markdown and to CSV files, and the lab report through them (its
 * page is html.ts). Pure: blocks in, text out.
 */
import type { Block, CsvPart } from './blocks.ts';
import { fpsCsv, stagesCsv } from './csv-parts.ts';
import { reportDocument } from './document.ts';
import type { LabReport } from './report-types.ts';
import { csvTable, markdownTable, mdInline } from './tables.ts';
import { escapeControls } from '../util/text-input.ts';

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
    case 'code':
      return [...fenced(b.lines), ''];
    case 'chart':
    case 'page-note':
      return [];
  }
}

/** A fenced block that no line of `lines` can close: a fence longer than any run of backticks in them. */
function fenced(lines: string[]): string[] {
  const longest = Math.max(2, ...lines.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((run) => run.length))));
  const fence = '`'.repeat(longest + 1);
  return [fence, ...lines.map((l) => escapeControls(l, true)), fence];
}

/**
 * Blocks as Markdown, the one Markdown renderer: the lab report, infer's console summary, capacity's and selftest's
 * answers and SELFTEST.md (the console's text is Markdown a report can paste).
 */
export function markdownOf(blocks: readonly Block[]): string {
  return `${blocks.flatMap(blockMarkdown).join('\n').trimEnd()}\n`;
}

export function reportMarkdown(r: LabReport, title?: string): string {
  return markdownOf(reportDocument(r, title).blocks);
}

/**
 * The CSV files of a document, by name: each table's CSV part (its file and its own columns), the rows of the tables
 * that share a file one after the other. `always`: files written even when no table has rows for them.
 */
export function csvOf(blocks: readonly Block[], always: readonly CsvPart[] = []): Record<string, string> {
  const files = new Map<string, CsvPart>();
  const add = (part: CsvPart) => {
    const file = files.get(part.file);
    if (file) file.rows.push(...part.rows);
    else files.set(part.file, { ...part, rows: [...part.rows] });
  };
  const visit = (b: Block) => {
    if (b.kind === 'group') b.blocks.forEach(visit);
    else if (b.kind === 'table') b.csv?.forEach(add);
  };
  blocks.forEach(visit);
  for (const part of always) if (!files.has(part.file)) add(part);
  return Object.fromEntries([...files.values()].map((f) => [f.file, csvTable(f.headers, f.rows)]));
}

/** The lab report's CSV files: fps.csv and stages.csv always, the others where the report has their tables. */
export function reportCsv(r: LabReport): Record<string, string> {
  return csvOf(reportDocument(r).blocks, [fpsCsv({ fps: [] }), stagesCsv([])]);
}
