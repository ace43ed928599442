/**
 * Logs as they arrive in practice: no newline after the last line, a log concatenated with itself, a number nsys could
 * not have printed, and fuzzed nsys output; the parsers keep what is whole, say what is not, and never make up a value.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshDir, ROOT, runCli } from './helpers/fixtures.ts';

const SYNTHETIC_NVPROF = readFileSync(join(ROOT, 'test/fixtures/profiles/nvprof-synthetic-trt-lab.txt'), 'utf8');

const NSYS_2022 = readFileSync(join(ROOT, 'test/fixtures/profiles/nsys-2022-column.txt'), 'utf8');

test('no newline after the last line: a whole row is kept (with a note), a line cut in its numbers is a diagnostic', async (t) => {
  const { parseNsysStats } = await import('../src/parsers/nsys.ts');
  const { parseNvprof } = await import('../src/parsers/nvprof.ts');
  const rangesOf = (text: string) => (parseNsysStats(text).value.reports.nvtx_sum?.rows ?? []).map((x) => x.range);
  // the NVTX table's rows up to its last one, with no newline after it
  const nsysText = NSYS_2022.slice(0, NSYS_2022.indexOf('PushPop  postprocess') + 'PushPop  postprocess'.length);
  const whole = rangesOf(`${nsysText}\n`);
  t.true(whole.includes('postprocess'));
  // many saved logs simply end without a newline: the last row is not lost
  t.deepEqual(rangesOf(nsysText), whole, 'the same rows as with the newline');
  t.true(parseNsysStats(nsysText).diagnostics.some((d) => d.code === 'NO_FINAL_NEWLINE'));
  // cut inside the numbers of the last row: not a row, a TRUNCATED_LINE diagnostic
  const lastLine = nsysText.split('\n').pop()!;
  const cut = nsysText.slice(0, nsysText.length - lastLine.length + lastLine.search(/\d/) + 3);
  const r = parseNsysStats(cut);
  t.is(rangesOf(cut).length, whole.length - 1, 'the cut row is not kept');
  t.true(r.diagnostics.some((d) => d.code === 'TRUNCATED_LINE' && /the log ends mid-line/.test(d.message)));
  // the same through a file, and for nvprof: the last row of the dependency table cut in its numbers
  const dir = freshDir('cut');
  const file = join(dir, 'cut.txt');
  const nv = SYNTHETIC_NVPROF.trimEnd();
  const nvLast = nv.split('\n').pop()!;
  const nvCut = nv.slice(0, nv.length - nvLast.length + nvLast.search(/\d/) + 3);
  writeFileSync(file, nvCut);
  const p = await runCli('jetprof', ['parse', file]);
  t.is(p.code, 0, p.stderr);
  const parsed = JSON.parse(p.stdout);
  const lastName = nvLast
    .trim()
    .split(/\s{2,}/)
    .pop()!;
  const names = parsed.processes.flatMap((x: { dependency: { name: string }[]; summary: { name: string }[] }) =>
    [...x.dependency, ...x.summary].map((d) => d.name),
  );
  t.false(names.includes(lastName), 'the cut row is not a row');
  t.regex(p.stderr, /the log ends mid-line/);
  t.is(parseNvprof(nvCut).diagnostics.filter((d) => d.code === 'TRUNCATED_LINE').length, 1);
  // the whole log without its final newline keeps its last row, through the file path (byte scanner) too
  writeFileSync(file, nv);
  const kept = JSON.parse((await runCli('jetprof', ['parse', file])).stdout);
  t.true(
    kept.processes.some((x: { dependency: { name: string }[]; summary: { name: string }[] }) =>
      [...x.dependency, ...x.summary].some((d) => d.name === lastName),
    ),
    `the last row (${lastName}) is kept`,
  );
});

test('a log concatenated with itself: no doubled rows, one diagnostic; --all-runs keeps each copy', async (t) => {
  const { parseNvprof } = await import('../src/parsers/nvprof.ts');
  const once = parseNvprof(SYNTHETIC_NVPROF).value;
  const twice = parseNvprof(SYNTHETIC_NVPROF + SYNTHETIC_NVPROF);
  t.is(twice.value.processes.length, once.processes.length);
  t.deepEqual(
    twice.value.processes.map((p) => p.summary.length),
    once.processes.map((p) => p.summary.length),
    'rows not doubled',
  );
  t.deepEqual(twice.value.processes[0].summary, once.processes[0].summary);
  t.true(
    twice.diagnostics.some(
      (d) =>
        d.code === 'DUPLICATE_RUN' && /the first copy is kept \(jetprof parse --all-runs keeps each\)/.test(d.message),
    ),
  );
  const all = parseNvprof(SYNTHETIC_NVPROF + SYNTHETIC_NVPROF, { allRuns: true }).value;
  t.is(all.processes.length, once.processes.length * 2);
  t.is(all.processes[1].run, 2);
  t.deepEqual(all.processes[1].summary, once.processes[0].summary);
  const { parseNsysStats } = await import('../src/parsers/nsys.ts');
  const ns = parseNsysStats(NSYS_2022 + NSYS_2022);
  t.deepEqual(ns.value.reports.nvtx_sum.rows, parseNsysStats(NSYS_2022).value.reports.nvtx_sum.rows);
  t.true(ns.diagnostics.some((d) => d.code === 'DUPLICATE_RUN'));
});

test('a number nsys could not have printed ("2,3414.") leaves the field empty with a diagnostic, never a string', async (t) => {
  const { parseNsysStats } = await import('../src/parsers/nsys.ts');
  const text = [
    'Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range',
    '41.3,51019894,5,"2,3414.",10168216.0,10151811,10344318,80235.0,PushPop,inference',
    '',
  ].join('\n');
  const r = parseNsysStats(text);
  const row = r.value.reports.nvtx_sum?.rows[0] ?? r.value.tables[0].rows[0];
  t.is(row.avgNs, null);
  t.is(row.medNs, 10168216);
  t.true(r.diagnostics.some((d) => d.code === 'BAD_ROW' && d.message.includes('Avg (ns)=2,3414.')));
});

test('fuzzed nsys output: every *Ns field is a finite number (totals, minimums and maximums integers; averages at the decimal nsys printed) or empty, and reports never print NaN', async (t) => {
  const fc = (await import('fast-check')).default;
  const { parseNsysStats } = await import('../src/parsers/nsys.ts');
  const { buildLabReport } = await import('../src/report/lab-report.ts');
  const { reportMarkdown, reportCsv } = await import('../src/report/markdown.ts');
  const lines = NSYS_2022.split('\n');
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('', ',', '.', 'x', '-', '1e9', ' ', '"', '2,3414.', '∞')), {
        maxLength: 12,
      }),
      (edits) => {
        // (no 'NaN' among the edits: a name may hold any text; a NaN in the output must come from a number)
        const mutated = [...lines];
        for (const [li, ci, s] of edits) {
          const i = li % mutated.length;
          const c = ci % (mutated[i].length + 1);
          mutated[i] = mutated[i].slice(0, c) + s + mutated[i].slice(c + 1);
        }
        const r = parseNsysStats(mutated.join('\n'));
        for (const table of r.value.tables) {
          for (const row of table.rows) {
            for (const [k, v] of Object.entries(row))
              if (k.endsWith('Ns')) {
                if (v === null) continue;
                if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return false;
                if (/^(total|min|max)Ns$/.test(k) && !Number.isSafeInteger(v)) return false;
              }
          }
        }
        const report = buildLabReport([], [{ label: 'fuzz', nsys: r.value }]);
        const text = reportMarkdown(report) + Object.values(reportCsv(report)).join('');
        return !/NaN|undefined/.test(text);
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});
