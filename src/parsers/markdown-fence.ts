/**
 * Logs kept in Markdown (a lab report, a README, a notes file): the profiler's lines are inside fenced code blocks
 * (```` ``` ```` or `~~~`, CommonMark's rules: up to 3 spaces before the fence, a closing fence of the same character at
 * least as long, the opening fence's indentation taken off each line inside). Everything outside a fence is prose, and
 * so is a fence marked as a shell script (```` ```bash ````: the commands typed, not what they printed).
 * Pure, line by line.
 */

const OPENING = /^( {0,3})(`{3,}|~{3,})(.*)$/;
/** A fence whose info string names a shell language holds commands to type, not a profiler's output. */
const SCRIPT_INFO = /^\s*(bash|sh|shell|zsh|powershell|ps1|bat|cmd)\b/i;

/** Whether a file is Markdown by its name. */
export function isMarkdownPath(path: string): boolean {
  return /\.(md|markdown|mdown|mkd)$/i.test(path);
}

export class FenceReader {
  private open: { char: string; length: number; indent: number; script: boolean } | undefined;
  /** Fenced blocks opened so far. */
  blocks = 0;
  /** Lines read from inside a fence. */
  inside = 0;

  /**
   * The line as the profiler wrote it when it is inside a fence, else '' (prose and the fence lines themselves read as
   * blank lines, so a table never runs from one block into the next and line numbers stay those of the file).
   */
  line(text: string): string {
    const open = this.open;
    if (!open) {
      const m = OPENING.exec(text);
      // a backtick fence's info string holds no backtick (CommonMark): ```` ```x`y ```` is inline code, not a fence
      if (m && !(m[2][0] === '`' && m[3].includes('`'))) {
        const script = SCRIPT_INFO.test(m[3]);
        this.open = { char: m[2][0], length: m[2].length, indent: m[1].length, script };
        if (!script) this.blocks++;
      }
      return '';
    }
    const close = OPENING.exec(text);
    if (close && close[2][0] === open.char && close[2].length >= open.length && close[3].trim() === '') {
      this.open = undefined;
      return '';
    }
    if (open.script) return '';
    this.inside++;
    // the opening fence's indentation, and no more, comes off each line inside
    let cut = 0;
    while (cut < open.indent && text.charCodeAt(cut) === 0x20) cut++;
    return cut ? text.slice(cut) : text;
  }
}

/** A whole text's fenced lines, the rest blank (the head of a Markdown file, for detecting the profiler). */
export function unfence(text: string): string {
  const reader = new FenceReader();
  return text
    .split(/\r?\n|\r/)
    .map((l) => reader.line(l))
    .join('\n');
}
