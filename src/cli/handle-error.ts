/** The one place that turns a failure into stderr text and an exit code. */
import { JetprofError, messageOf } from '../util/errors.ts';

export function handleError(e: unknown, program = 'jetprof'): number {
  if (e instanceof JetprofError) {
    const hint = e.suggestion ? ` (fix: ${e.suggestion})` : '';
    process.stderr.write(`${program}: error: ${e.message}${hint}\n`);
    return e.exitCode;
  }
  if (e instanceof RangeError || e instanceof TypeError) {
    process.stderr.write(`${program}: error: ${e.message}\n`);
    return 2;
  }
  process.stderr.write(`${program}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : messageOf(e)}\n`);
  return 1;
}
