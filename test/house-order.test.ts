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
  'jobs',
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

/**
 * Functions and methods in a file with their length in lines, found as text: a declaration line (`function f(`,
 * `async f(...) {`, `private f(...): T {`) and its body up to the matching brace, strings and comments skipped.
 */
function functionLengths(text: string): { name: string; line: number; lines: number }[] {
  const lines = text.split('\n');
  const start =
    /^\s*(?:export\s+)?(?:async\s+)?function\s+(\w+)|^\s*(?:(?:private|public|static|async|get)\s+)*(\w+)\s*\(.*\{\s*$/;
  const out: { name: string; line: number; lines: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = start.exec(lines[i]);
    if (!m || /^\s*(if|for|while|switch|catch|else|return)\b/.test(lines[i])) continue;
    let depth = 0;
    let started = false;
    let j = i;
    for (; j < lines.length; j++) {
      const code = lines[j]
        .replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`/g, '""')
        .replace(/\/\/.*/, '');
      for (const ch of code) {
        if (ch === '{') {
          depth++;
          started = true;
        } else if (ch === '}') depth--;
      }
      if (started && depth <= 0) break;
    }
    out.push({ name: m[1] ?? m[2], line: i + 1, lines: j - i + 1 });
  }
  return out;
}

test('no function in src/ runs over 100 lines (a function a newcomer can read at once)', (t) => {
  const long = tsFiles(join(ROOT, 'src')).flatMap((f) =>
    functionLengths(readFileSync(f, 'utf8'))
      .filter((x) => x.lines > 100)
      .map((x) => `${relative(ROOT, f)}:${x.line} ${x.name} (${x.lines} lines)`),
  );
  t.deepEqual(long, []);
  // the measure finds what it should: a 110-line function is long, a 20-line one is not
  const body = (n: number) => `function f() {\n${'  x();\n'.repeat(n - 2)}}\n`;
  t.is(functionLengths(body(110))[0].lines, 110);
  t.is(functionLengths(body(20))[0].lines, 20);
});

/** Each file's imports of other src/ files (type-only ones too), read from its import lines. */
function importGraph(src: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(src)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) =>
      relative(src, normalize(join(dirname(file), m[1]))),
    );
    graph.set(relative(src, file), targets);
  }
  return graph;
}

/** The circles of a graph, each as its files in a walk order (depth-first; one circle per back edge). */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    path.push(f);
    for (const to of graph.get(f) ?? []) {
      if (state.get(to) === 'open') found.push(path.slice(path.indexOf(to)));
      else if (!state.has(to) && graph.has(to)) visit(to);
    }
    path.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

test('no import circle in src/, type-only imports included (a newcomer reads a module after what it imports)', (t) => {
  t.deepEqual(
    circles(importGraph(join(ROOT, 'src'))).map((c) => c.join(' -> ')),
    [],
  );
  // the search finds what it should: a -> b -> a is a circle, a -> b -> c is not
  const g = (edges: [string, string][]) =>
    new Map(['a', 'b', 'c'].map((f) => [f, edges.filter(([x]) => x === f).map(([, y]) => y)]));
  t.deepEqual(
    circles(
      g([
        ['a', 'b'],
        ['b', 'a'],
      ]),
    ),
    [['a', 'b']],
  );
  t.deepEqual(
    circles(
      g([
        ['a', 'b'],
        ['b', 'c'],
      ]),
    ),
    [],
  );
});

test("one vocabulary for infer's settings: every flag the jobs set (INFER_FLAGS) is infer's declared option of that name, and the jobs write no infer flag by hand", async (t) => {
  const { INFER_FLAGS, inferArgv } = await import('../src/pipeline/infer-args.ts');
  const { inferProgram } = await import('../src/cli/infer-options.ts');
  const declared = new Map(inferProgram('infer').options.map((o) => [o.long, o.attributeName()]));
  for (const [key, flag] of Object.entries(INFER_FLAGS)) t.is(declared.get(flag), key, `${flag} is declared as ${key}`);
  // the builder: a switch, a value, a negated switch, a repeatable option, nothing for what is not set
  t.deepEqual(
    inferArgv({ quiet: true, streams: 4, write: false, plugin: ['a.so', 'b.so'], json: undefined, modelAlone: 0 }),
    ['--plugin', 'a.so', '--plugin', 'b.so', '--streams', '4', '--no-write', '--model-alone', '0', '--quiet'],
  );
  // a job names infer's flags through the builder, not as strings of its own (selftest's own --engine and --model,
  // which it checks before it runs, share infer's names)
  const flags = new Set<string>(Object.values(INFER_FLAGS));
  const own: Record<string, string[]> = { 'jobs/selftest.ts': ['--engine', '--model'] };
  const byHand: string[] = [];
  for (const dir of ['jobs', 'profilers'])
    for (const f of readdirSync(join(ROOT, 'src', dir)).filter((n) => n.endsWith('.ts')))
      for (const m of readFileSync(join(ROOT, 'src', dir, f), 'utf8').matchAll(/'(--[a-z-]+)'/g))
        if (flags.has(m[1]) && !own[`${dir}/${f}`]?.includes(m[1])) byHand.push(`${dir}/${f}: ${m[1]}`);
  t.deepEqual(byHand, []);
});

test("one warm-up rule for the loop's NVTX ranges: only nvtx.ts's warmRange writes a `warmup-` name", async (t) => {
  const { warmRange, rangeName } = await import('../src/pipeline/nvtx.ts');
  t.is(warmRange('write', true), 'warmup-write');
  t.is(rangeName('preprocess', 4, 5), 'warmup-preprocess');
  t.is(rangeName('preprocess', 5, 5), 'preprocess');
  const writers: string[] = [];
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    );
  for (const f of walk(join(ROOT, 'src')))
    readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line) => {
        // code, not comments or types (a type names the warm-up names, it writes none): a quote or backtick right
        // before warmup-
        if (/^\s*(\/\*|\*|\/\/|(export )?type )/.test(line) || !/['`]warmup-/.test(line)) return;
        writers.push(`${relative(ROOT, f)}: ${line.trim()}`);
      });
  t.is(writers.length, 1, writers.join('\n'));
  t.regex(writers[0], /^src\/pipeline\/nvtx\.ts: export const warmRange = /);
});

test("every command's options are typed from its own declaration: commands are declared with @commander-js/extra-typings, and no action's options are typed by hand", (t) => {
  const cli = join(ROOT, 'src/cli');
  const byHand: string[] = [];
  for (const name of readdirSync(cli).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(cli, name), 'utf8');
    if (!/new Command\(/.test(text) || name === 'programs.ts') continue;
    // the program that gathers the commands is commander's own; a command is declared with the typings
    if (/import \{[^}]*\bCommand\b[^}]*\} from 'commander'/.test(text))
      byHand.push(`${name}: Command from 'commander'`);
    // an action's options read with a type written beside it, not the one its declaration gives
    for (const m of text.matchAll(/\.action\(\s*(async\s*)?\(([^)]*)\)/g))
      if (m[2].includes(':')) byHand.push(`${name}: .action((${m[2].trim()}))`);
  }
  t.deepEqual(byHand, []);
});
