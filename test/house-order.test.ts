/**
 * The rule docs/ARCHITECTURE.md states ("Which folder may import which"): src/ folders stand in layers, and a file
 * imports only from its own folder or from folders below it. Read from the code's own import lines.
 */
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { ROOT } from './helpers/fixtures.ts';

/** Top to bottom, as docs/ARCHITECTURE.md lists them. */
const LAYERS = [
  'cli',
  'report',
  'profilers',
  'pipeline',
  'accuracy',
  'backends',
  'detect',
  'model',
  'video',
  'platform',
  'parsers',
  'schemas',
  'output',
  'util',
];
/** Imports allowed to run up a layer, each with its reason in docs/ARCHITECTURE.md (none today). */
const ALLOWED_UPHILL: string[] = [];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

test('every import in src/ runs to its own folder or down the layers; every folder has its layer', (t) => {
  const src = join(ROOT, 'src');
  const folders = readdirSync(src, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  t.deepEqual(
    folders.filter((f) => !LAYERS.includes(f)),
    [],
    'a new folder needs its place in the layers (and in docs/ARCHITECTURE.md)',
  );
  const uphill: string[] = [];
  let imports = 0;
  for (const file of tsFiles(src)) {
    const from = relative(src, file).split('/')[0];
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = relative(src, normalize(join(dirname(file), m[1])));
      const to = target.split('/')[0];
      if (target.startsWith('..') || to === from || !target.includes('/')) continue;
      imports++;
      if (LAYERS.indexOf(to) < LAYERS.indexOf(from)) uphill.push(`${relative(ROOT, file)} -> src/${target}`);
    }
  }
  t.true(imports > 100, `imports between folders were read (${imports})`);
  t.deepEqual(
    uphill.filter((u) => !ALLOWED_UPHILL.includes(u)),
    [],
    'imports that run up a layer',
  );
  const doc = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  t.true(doc.includes(LAYERS.map((l) => `\`${l}/\``).join(' > ')), 'docs/ARCHITECTURE.md lists the same layers');
});
