/**
 * What the commands print, fitted to where it goes. On a terminal a note on stderr wraps at word boundaries to its
 * width (the terminal would cut it mid-word), continuing two spaces in; to a pipe or a file each note stays one line,
 * whole and greppable. Prose on stdout wraps to the help width; a Markdown table stays a table, written with tight
 * pipes when its lines would not fit the terminal.
 */
import { helpWidth, wrapProse } from './help-text.ts';

/** The terminal's columns when `stream` is one; undefined for a pipe or a file. */
export const columnsOf = (stream: NodeJS.WriteStream): number | undefined =>
  stream.isTTY && stream.columns > 0 ? stream.columns : undefined;

/** A note wrapped for `columns` (one character short of it: a full line makes some terminals skip a row). */
export function wrapNote(text: string, columns: number | undefined): string {
  if (!columns) return text;
  const width = Math.max(20, columns - 1);
  return text
    .split('\n')
    .map((line) => {
      if (line.length <= width) return line;
      const words = line.split(' ');
      const out: string[] = [];
      let cur = '';
      for (const w of words) {
        const next = cur ? `${cur} ${w}` : w;
        if (next.length > width && cur.trim()) {
          out.push(cur);
          cur = `  ${w}`;
        } else cur = next;
      }
      out.push(cur);
      return out.join('\n');
    })
    .join('\n');
}

/** `jetprof <command>: <text>` on stderr, fitted to the terminal when it is one. */
export function say(prefix: string, text: string, stream: NodeJS.WriteStream = process.stderr): void {
  stream.write(`${wrapNote(`${prefix}: ${text}`, columnsOf(stream))}\n`);
}

/** "| a | b |" -> "|a|b|": the same Markdown table, eight characters narrower in four columns. */
const tight = (line: string) => line.replace(/ \| /g, '|').replace(/^\| /, '|').replace(/ \|$/, '|');

/**
 * stdout's summary: prose wrapped to the help width; tables as they are, or with tight pipes when a line of theirs
 * is wider than the terminal (`columns`, undefined for a pipe).
 */
export function fitText(
  text: string,
  columns: number | undefined = columnsOf(process.stdout),
  width = helpWidth(),
): string {
  const lines = text.split('\n');
  const tooWide = columns !== undefined && lines.some((l) => l.startsWith('|') && l.length > columns - 1);
  return lines.map((l) => (l.startsWith('|') ? (tooWide ? tight(l) : l) : wrapProse(l, width))).join('\n');
}
