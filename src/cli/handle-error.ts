/** The one place that turns a failure into stderr text and an exit code. */
import { JetprofError, messageOf } from '../util/errors.ts';
import { escapeControls } from '../util/text-input.ts';

/** One line, whatever a file name or a log's text holds (a newline or a terminal escape in it is shown escaped). */
export function handleError(e: unknown, program = 'jetprof'): number {
  if (e instanceof JetprofError) {
    const hint = e.suggestion ? ` (fix: ${e.suggestion})` : '';
    process.stderr.write(`${program}: error: ${escapeControls(`${e.message}${hint}`, true)}\n`);
    return e.exitCode;
  }
  if (e instanceof RangeError || e instanceof TypeError) {
    process.stderr.write(`${program}: error: ${escapeControls(e.message, true)}\n`);
    return 2;
  }
  process.stderr.write(`${program}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : messageOf(e)}\n`);
  return 1;
}
