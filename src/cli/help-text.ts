/**
 * Help text that fits the terminal: 80 columns, or the terminal's width when it is wider (commander wraps option and
 * description text to the same width; this wraps what commander prints as is, the examples and notes after it).
 * A command line too long for one line continues on the next with a backslash, as a shell reads it.
 */

/** The width help is written for: the terminal's when stdout is one and wider than 80, else 80. */
export function helpWidth(): number {
  const cols = process.stdout.isTTY ? process.stdout.columns : undefined;
  return cols && cols > 80 ? cols : 80;
}

/** Wraps prose at word boundaries; a line's leading spaces are kept, and its continuation lines are indented alike. */
export function wrapProse(text: string, width = helpWidth()): string {
  return text
    .split('\n')
    .map((line) => {
      const indent = /^\s*/.exec(line)![0];
      const words = line.trim().split(/\s+/).filter(Boolean);
      if (words.length === 0) return '';
      const out: string[] = [];
      let cur = indent + words[0];
      for (const w of words.slice(1)) {
        if (cur.length + 1 + w.length > width) {
          out.push(cur);
          cur = `${indent}${w}`;
        } else cur += ` ${w}`;
      }
      out.push(cur);
      return out.join('\n');
    })
    .join('\n');
}

/**
 * A shell command indented by 2, broken at spaces with ` \` so that no line is wider than `width`; an option stays
 * on one line with its value.
 */
function wrapCommand(cmd: string, width = helpWidth(), indent = '  ', continuation = '      '): string {
  const words: string[] = [];
  for (const w of cmd.trim().split(/ +/)) {
    const prev = words[words.length - 1];
    if (prev !== undefined && /^--?[\w-]+$/.test(prev) && !w.startsWith('-')) words[words.length - 1] = `${prev} ${w}`;
    else words.push(w);
  }
  const lines: string[] = [];
  let cur = indent + words[0];
  for (const w of words.slice(1)) {
    if (cur.length + 1 + w.length + 2 > width) {
      lines.push(`${cur} \\`);
      cur = continuation + w;
    } else cur += ` ${w}`;
  }
  lines.push(cur);
  return lines.join('\n');
}

interface Example {
  cmd: string;
  /** What it does, printed above it as a shell comment. */
  note?: string;
}

/** The block commander prints after the options: examples, then notes, each fitted to the width at display time. */
export function helpAfter(examples: Example[], notes: string[] = []): () => string {
  return () => {
    const width = helpWidth();
    const parts = ['', examples.length > 1 ? 'Examples:' : 'Example:'];
    for (const e of examples) {
      // a note wrapped onto several lines keeps `# ` on each, so pasting the example runs only the command
      if (e.note)
        parts.push(
          wrapProse(e.note, width - 4)
            .split('\n')
            .map((l) => `  # ${l.trim()}`)
            .join('\n'),
        );
      parts.push(wrapCommand(e.cmd, width));
    }
    if (notes.length) parts.push('', ...notes.map((n) => wrapProse(n, width)));
    return parts.join('\n');
  };
}
