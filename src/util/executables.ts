/** Plain PATH look-ups: is a file executable, and where is a program. */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first `name` on PATH that can be run, else the first of `extra` (the usual install places), else undefined. */
export function findExecutable(name: string, extra: string[] = []): string | undefined {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const d of dirs) if (isExecutable(join(d, name))) return join(d, name);
  return extra.find(isExecutable);
}
