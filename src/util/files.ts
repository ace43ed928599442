import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { JetprofError } from './errors.ts';

/** Throws FILE_NOT_FOUND with a suggestion unless `path` is a readable file. */
export function requireFile(path: string, what: string, suggestion: string): void {
  let ok = false;
  let kind: string | undefined;
  try {
    const st = statSync(path);
    ok = st.isFile();
    kind = st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a FIFO' : st.isSocket() ? 'a socket' : !ok ? 'a device' : '';
    accessSync(path, constants.R_OK);
  } catch {
    ok = false;
  }
  // there, but not a file jetprof can read from the start again (a FIFO is read once, by whoever opens it first)
  if (!ok && kind)
    throw new JetprofError('BAD_INPUT', `${path}: is ${kind}, not a ${what} file`, {
      suggestion: `give a ${what} file${what === 'video' ? ' (a live source: a stream URL or a camera)' : ''}`,
    });
  if (!ok) throw new JetprofError('FILE_NOT_FOUND', `${path}: ${what} not found`, { suggestion });
}

/**
 * Makes the folder that will hold `path` (with its parents, as `mkdir -p`, as report and compare do) and throws
 * BAD_OUTPUT, naming `option`, when it cannot be made or written.
 */
export function requireWritableDir(path: string, option = '--output'): void {
  const dir = dirname(path);
  const refuse = (why: string) =>
    new JetprofError('BAD_OUTPUT', `${path}: the directory ${dir} ${why}`, {
      suggestion: `pass ${option} with a path in a folder you can write`,
    });
  try {
    makeDirs(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOTDIR' || code === 'EEXIST'
        ? 'a file is in its way'
        : code === 'EROFS'
          ? 'EROFS: a read-only file system'
          : code;
    throw refuse(`cannot be created (${why})`);
  }
  if (!statSync(dir).isDirectory()) throw refuse('is not a folder');
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw refuse((e as NodeJS.ErrnoException).code === 'EROFS' ? 'is on a read-only file system' : 'is not writable');
  }
}

/**
 * `mkdir -p`, with the system's own reason when it fails: Node's recursive mkdir says ENOENT where the folder it
 * would make is on a read-only file system or in one it may not write, so the nearest folder that exists is asked.
 */
export function makeDirs(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    let up = dirname(resolve(dir));
    while (!existsSync(up) && dirname(up) !== up) up = dirname(up);
    accessSync(up, constants.W_OK); // EROFS, EACCES: the real reason
    throw e;
  }
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export function readLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

export function fileExists(path: string): boolean {
  return existsSync(path);
}

/** What a path is, following symlinks: 'file' for a regular file, else its kind in words (never opened). */
export function kindOfEntry(path: string): string {
  try {
    const st = statSync(path);
    if (st.isFile()) return 'file';
    if (st.isDirectory()) return 'a folder';
    if (st.isFIFO()) return 'a FIFO (named pipe)';
    if (st.isSocket()) return 'a socket';
    if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
    return 'not a regular file';
  } catch {
    return 'a broken link or a file that is gone';
  }
}

/** A small text file's contents (a /proc or /sys entry), or '' where it cannot be read. */
export function readTextOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
