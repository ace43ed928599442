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
  const sys = systemError(e);
  if (sys) {
    process.stderr.write(`${program}: error: ${escapeControls(sys, true)}\n`);
    return 2;
  }
  process.stderr.write(`${program}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : messageOf(e)}\n`);
  return 1;
}

/** What the machine refused, in words, with the fix: by errno code. */
const SYSTEM_ERRORS: Record<string, [string, string]> = {
  ENOENT: ['does not exist (or a folder on its way is missing)', 'create it, or give another path'],
  ENOTDIR: ['a part of the path is a file, not a folder', 'give a folder path'],
  EISDIR: ['is a folder, where a file was expected', 'give a file path'],
  EEXIST: ['already exists as something else', 'give another path'],
  EACCES: ['permission denied', 'give a path you can write, or change its permissions'],
  EPERM: ['operation not permitted', 'give a path you can write'],
  EROFS: ['on a read-only file system', 'give a path on a writable file system (e.g. --out-dir /var/tmp/x)'],
  ENOSPC: ['no space left on the device', 'free space, or point TMPDIR / the output at another disk'],
  EMFILE: ['too many open files for this process (ulimit -n)', 'raise the limit (ulimit -n 4096) or run fewer streams'],
  ENFILE: ['too many open files on this machine', 'close other programs or run fewer streams'],
  ENOMEM: ['not enough memory', 'run fewer streams, a smaller --frame-size, or --no-write'],
};

/**
 * A failure of the machine (a missing TMPDIR, a read-only folder, too many open files) that no code of jetprof's
 * turned into a JetprofError: one line with the path and the fix instead of a stack trace.
 */
function systemError(e: unknown): string | undefined {
  const err = e as NodeJS.ErrnoException | undefined;
  const known = err?.code ? SYSTEM_ERRORS[err.code] : undefined;
  if (!known) return undefined;
  const where = err!.path ?? (err!.syscall ? `(${err!.syscall})` : 'the system');
  return `${where}: ${known[0]} (${err!.code}) (fix: ${known[1]})`;
}
