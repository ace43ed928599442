import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { JetprofError } from './errors.ts';

/**
 * A temporary name beside `path` that keeps its extension (OpenCV picks the container from it):
 * `out/clip-onnx-detected.mp4` -> `out/.clip-onnx-detected.partial-1234.mp4`.
 */
export function partialPath(path: string): string {
  const ext = extname(path);
  return join(dirname(path), `.${basename(path, ext)}.partial-${process.pid}${ext}`);
}

/** Writes through a temporary file and renames, so a reader never sees half a file. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = partialPath(path);
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    removeQuietly(tmp);
    throw new JetprofError('BAD_OUTPUT', `${path}: cannot write (${(e as Error).message})`, {
      suggestion: 'choose a writable output path',
    });
  }
}

export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/** Throws FILE_NOT_FOUND with a suggestion unless `path` is a readable file. */
export function requireFile(path: string, what: string, suggestion: string): void {
  let ok = false;
  try {
    ok = statSync(path).isFile();
    accessSync(path, constants.R_OK);
  } catch {
    ok = false;
  }
  if (!ok) throw new JetprofError('FILE_NOT_FOUND', `${path}: ${what} not found`, { suggestion });
}

/** Throws BAD_OUTPUT unless the directory that will hold `path` exists and is writable. */
export function requireWritableDir(path: string): void {
  const dir = dirname(path);
  try {
    if (!statSync(dir).isDirectory()) throw new Error();
    accessSync(dir, constants.W_OK);
  } catch {
    throw new JetprofError('BAD_OUTPUT', `${path}: the directory ${dir} does not exist or is not writable`, {
      suggestion: 'create it, or pass --output with a writable path',
    });
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
