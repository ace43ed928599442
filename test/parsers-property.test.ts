/** Property tests: the parsers never throw, whatever they are fed, and generated tables round-trip exactly. */
import test from 'ava';
import fc from 'fast-check';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNsysStats } from '../src/parsers/nsys.ts';
import { parseNvprof } from '../src/parsers/nvprof.ts';
import { ROOT, SHARED_FIXTURES } from './helpers/fixtures.ts';

function realLogs(): string[] {
  const dirs = [
    join(ROOT, 'test/fixtures/profiles'),
    join(ROOT, 'test/fixtures/profiles/public'),
    join(SHARED_FIXTURES, 'profiler-logs/nvprof'),
    join(SHARED_FIXTURES, 'profiler-logs/nsys'),
  ];
  return dirs.filter(existsSync).flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith('.txt'))
      .map((f) => readFileSync(join(d, f), 'utf8')),
  );
}
const logs = realLogs();
const parsers = [parseNvprof, parseNsysStats];

test('random bytes never make a parser throw', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 4000 }), (bytes) => {
      const text = Buffer.from(bytes).toString('utf8');
      for (const parse of parsers) parse(text);
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('random truncations and line shuffles of real logs never throw, and a truncation keeps complete rows', (t) => {
  t.true(logs.length >= 3);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: logs.length - 1 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.integer(),
      (i, frac, seed) => {
        const text = logs[i];
        const cut = text.slice(0, Math.floor(text.length * frac));
        const lines = text.split('\n');
        let s = seed >>> 0;
        for (let k = lines.length - 1; k > 0; k--) {
          s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
          const j = s % (k + 1);
          [lines[k], lines[j]] = [lines[j], lines[k]];
        }
        for (const parse of parsers) {
          parse(cut);
          parse(lines.join('\n'));
        }
        // rows found in a prefix are rows of the whole log
        const whole = parseNvprof(text).value.processes.flatMap((p) => p.summary.map((r) => JSON.stringify(r)));
        const part = parseNvprof(cut.slice(0, cut.lastIndexOf('\n') + 1)).value.processes.flatMap((p) =>
          p.summary.map((r) => JSON.stringify(r)),
        );
        return part.every((r) => whole.includes(r));
      },
    ),
    { numRuns: 200 },
  );
  t.pass();
});

const units = [
  ['ns', 1],
  ['us', 1e3],
  ['ms', 1e6],
  ['s', 1e9],
] as const;

test('generated nvprof summary and dependency tables round-trip to the exact nanoseconds', (t) => {
  const time = fc
    .tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 999999 }), fc.integer({ min: 0, max: 3 }))
    .map(([w, f, u]) => {
      const [unit, scale] = units[u];
      const digits = unit === 'ns' ? 0 : Math.round(Math.log10(scale)); // nvprof never prints below 1 ns
      const frac = String(f).padStart(6, '0').slice(0, digits);
      return {
        text: `${w}${frac ? `.${frac}` : ''}${unit}`,
        ns: w * scale + (frac ? Number(frac) * (scale / 10 ** frac.length) : 0),
      };
    });
  const name = fc.stringMatching(/^[A-Za-z_][\w<>:, *()[\]=-]{0,60}[\w>)\]]$/);
  const row = fc.record({
    pct: fc.integer({ min: 0, max: 10000 }),
    total: time,
    calls: fc.integer({ min: 1, max: 1e6 }),
    avg: time,
    min: time,
    max: time,
    name,
  });
  fc.assert(
    fc.property(
      fc.array(row, { minLength: 1, maxLength: 20 }),
      fc.array(fc.record({ pct: fc.integer({ min: 0, max: 10000 }), cp: time, wait: time, name }), {
        minLength: 1,
        maxLength: 10,
      }),
      (rows, deps) => {
        const pct = (p: number) => `${(p / 100).toFixed(2)}%`;
        const text = [
          '==42== NVPROF is profiling process 42, command: ./app',
          '==42== Profiling result:',
          '            Type  Time(%)      Time     Calls       Avg       Min       Max  Name',
          ...rows.map(
            (r, i) =>
              `${i === 0 ? ' GPU activities:' : '                '}  ${pct(r.pct)}  ${r.total.text}  ${r.calls}  ${r.avg.text}  ${r.min.text}  ${r.max.text}  ${r.name}`,
          ),
          '',
          '==42== Dependency Analysis:',
          'Critical path(%)  Critical path  Waiting time  Name',
          ...deps.map((d) => `  ${pct(d.pct)}  ${d.cp.text}  ${d.wait.text}  ${d.name}`),
          '', // a log ends with a newline (one that does not may have been cut)
        ].join('\n');
        const r = parseNvprof(text);
        const p = r.value.processes[0];
        return (
          r.diagnostics.length === 0 &&
          p.summary.length === rows.length &&
          p.summary.every(
            (s, i) =>
              s.totalNs === rows[i].total.ns &&
              s.avgNs === rows[i].avg.ns &&
              s.minNs === rows[i].min.ns &&
              s.maxNs === rows[i].max.ns &&
              s.calls === rows[i].calls &&
              s.name === rows[i].name &&
              s.timePct === rows[i].pct / 100,
          ) &&
          p.dependency.every(
            (d, i) => d.criticalPathNs === deps[i].cp.ns && d.waitingNs === deps[i].wait.ns && d.name === deps[i].name,
          )
        );
      },
    ),
    { numRuns: 200 },
  );
  t.pass();
});

test('files of random bytes behind a random BOM, and real logs re-encoded and cut anywhere, give a result or one JetprofError line, never another exception', async (t) => {
  const { writeFileSync } = await import('node:fs');
  const { parseProfileFile } = await import('../src/parsers/parse-file.ts');
  const { JetprofError } = await import('../src/util/errors.ts');
  const { scratchDir } = await import('./helpers/fixtures.ts');
  const boms = [[], [0xef, 0xbb, 0xbf], [0xff, 0xfe], [0xfe, 0xff]];
  const file = join(scratchDir(), 'fuzz.txt');
  let results = 0;
  let errors = 0;
  const attempt = async (bytes: Uint8Array, kind?: 'nvprof' | 'nsys') => {
    writeFileSync(file, bytes);
    try {
      await parseProfileFile(file, kind);
      results++;
    } catch (e) {
      if (!(e instanceof JetprofError) || e.message.includes('\n')) throw e;
      errors++;
    }
  };
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...boms),
      fc.uint8Array({ maxLength: 3000 }),
      fc.constantFrom(undefined, 'nvprof' as const, 'nsys' as const),
      async (bom, body, kind) => {
        await attempt(Uint8Array.from([...bom, ...body]), kind);
      },
    ),
    { numRuns: 150 },
  );
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: logs.length - 1 }),
      fc.constantFrom('utf8', 'utf16le'),
      fc.double({ min: 0, max: 1, noNaN: true }),
      async (i, enc, cut) => {
        const bytes = Buffer.from(logs[i], enc as BufferEncoding);
        await attempt(bytes.subarray(0, Math.floor(bytes.length * cut)));
      },
    ),
    { numRuns: 100 },
  );
  t.true(results > 0 && errors > 0, `${results} results, ${errors} one-line errors`);
});
