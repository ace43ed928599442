/**
 * What every document jetprof writes is made of: headings, paragraphs, lists, tables, charts. The lab report
 * (document.ts), infer's console summary (run-summary.ts), capacity's and selftest's answers are built as blocks;
 * markdown.ts and html.ts draw them, one renderer per format. Types only, and one helper.
 */
import type { BoardRow, FrameSeries, StreamsSection } from './report-types.ts';
import type { Cell } from './tables.ts';

export type Align = 'l' | 'r';

/** One bar of a bar chart: its label and its segments (stacked, or one bar each). */
export interface Bar {
  label: string;
  /** The whole name, shown as the label's tooltip when the label is cut short. */
  fullLabel?: string;
  segments: { name: string; value: number }[];
}

/** A chart, as data: what html.ts draws. */
export type Chart =
  | {
      kind: 'bars';
      title: string;
      bars: Bar[];
      unit: string;
      stacked: boolean;
      limit?: { value: number; label: string };
    }
  | { kind: 'latency-over-time' | 'stage-histograms' | 'pipeline-timeline'; series: FrameSeries }
  | { kind: 'stream-latency'; section: StreamsSection }
  | { kind: 'board-over-time'; board: BoardRow };

/** How a list item reads: a failure (warn), a backend skipped, a speed-up, or a line folded away on the page (quiet). */
type Tone = 'warn' | 'skipped' | 'speedup' | 'quiet';

export interface ListItem {
  text: string;
  tone?: Tone;
  strong?: boolean;
}

/**
 * A table's rows as a CSV file: the file's name and its own columns (machine names, full precision). Tables that
 * share a file add their rows one after the other (markdown.ts csvOf).
 */
export interface CsvPart {
  file: string;
  headers: string[];
  rows: Cell[][];
}

export type Block =
  /** `pageOnly`: a section of pictures only, which Markdown leaves out with its heading. */
  | { kind: 'heading'; level: 1 | 2 | 3; text: string; aside?: string; pageOnly?: boolean }
  /** A table's or a chart's title: bold in Markdown, a heading of `level` (3 or 4) on the page; `detail` after it. */
  | { kind: 'caption'; text: string; level: 3 | 4; detail?: string }
  /** Running text; `lead` in bold first; `small` is set smaller on the page. */
  | { kind: 'paragraph'; text: string; lead?: string; small?: boolean }
  /** The page only: lines set small under a table (the figures again, for a phone where the table scrolls). */
  | { kind: 'page-note'; lines: string[] }
  /** On the page the quiet items fold away under `foldSummary`. */
  | { kind: 'list'; items: ListItem[]; foldSummary?: string }
  /**
   * `key`: the column that opens a row's card on a phone (default: the first text column); a numeric key shows its
   * header beside it ("Stream 2"), so cards of rows that share a name (one file as several streams) tell apart.
   * `csv`: the CSV files its rows go to.
   */
  | { kind: 'table'; headers: string[]; rows: Cell[][]; align: Align[]; key?: number; csv?: CsvPart[] }
  | { kind: 'chart'; chart: Chart }
  /** Blocks that stay together (a profile): a `<section>` on the page, nothing in Markdown. */
  | { kind: 'group'; cls: string; blocks: Block[] }
  | { kind: 'definitions'; items: [string, string][] }
  /** Lines shown as they are (a program's output), in a fence none of them can close. */
  | { kind: 'code'; lines: string[] };

/** Alignments for `n` columns: right, but for `leftCols` (the first, by default). */
export const right = (n: number, leftCols: number[] = [0]): Align[] =>
  Array.from({ length: n }, (_, i) => (leftCols.includes(i) ? 'l' : 'r'));
