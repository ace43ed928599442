/**
 * What of nsys's own output reaches the user as it runs. Debian's nsys 2022.4 cannot find its importer: it says so
 * ("Importer error status: ...", "Unable to retrieve the importer version ...") and names the raw `.qdstrm` it
 * generated, before jetprof imports that stream itself and a complete report exists. Those lines are held back; once
 * the import is known, the caller says them with what happened (the report that exists), or, when the import failed,
 * prints them as nsys wrote them. Everything else passes through as it comes. Pure.
 */

/** A line nsys prints when it leaves its stream to be imported. */
const IMPORT_LINE = /^(Importer error status:|Unable to retrieve the importer version|Generating '.*\.qdstrm'$)/;
/** "Generated:" is followed by one indented path per file: held only when that path is a raw stream. */
const GENERATED = /^Generated:\s*$/;
const QDSTRM_PATH = /^\s+\S.*\.qdstrm$/;

export class NsysEcho {
  private partial = '';
  private generated: string | undefined;
  /** The lines held back, as nsys wrote them. */
  readonly held: string[] = [];

  /** The part of `chunk` to show now: complete lines not held (a line cut between chunks waits for its end). */
  feed(chunk: string): string {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop()!;
    return lines.map((l) => this.line(l)).join('');
  }

  /** What is left at the end of the output (a last line without its newline, a "Generated:" with nothing after). */
  flush(): string {
    const rest = this.partial ? this.line(this.partial).replace(/\n$/, '') : '';
    this.partial = '';
    const pending = this.generated !== undefined ? `${this.generated}\n` : '';
    this.generated = undefined;
    return pending + rest;
  }

  /** The nsys message worth quoting beside jetprof's own line: the importer's error status, without its label. */
  reason(): string | undefined {
    const status = this.held.find((l) => l.startsWith('Importer error status:'));
    return status?.replace(/^Importer error status:\s*/, '').replace(/\.$/, '');
  }

  private line(l: string): string {
    const text = l.replace(/\r$/, '');
    if (this.generated !== undefined) {
      const before = this.generated;
      this.generated = undefined;
      if (QDSTRM_PATH.test(text)) {
        this.held.push(before, text);
        return '';
      }
      return `${before}\n${this.line(l)}`;
    }
    if (GENERATED.test(text)) {
      this.generated = text;
      return '';
    }
    if (IMPORT_LINE.test(text)) {
      this.held.push(text);
      return '';
    }
    return `${l}\n`;
  }
}
