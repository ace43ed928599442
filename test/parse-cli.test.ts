import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli, scratchDir } from './helpers/fixtures.ts';
import { cliCommand } from '../src/util/process.ts';

const LOG = join(ROOT, 'test/fixtures/profiles/nvprof-two-processes.txt');
const NSYS = join(ROOT, 'test/fixtures/profiles/nsys-2022-column.txt');

/** Runs `jetprof ...` with OpenCV and ONNX Runtime made impossible to load. */
function jetprofWithoutNative(args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['--require', join(ROOT, 'test/helpers/forbid-native.cjs'), ...cliCommand('jetprof').slice(1), ...args],
    { encoding: 'utf8', cwd: scratchDir() },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('jetprof parse detects nvprof, prints jetprof.nvprof/1 JSON, lists what it did not understand, and loads no native module', (t) => {
  const r = jetprofWithoutNative(['parse', LOG]);
  t.is(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout);
  t.is(json.schema, 'jetprof.nvprof/1');
  t.is(json.processes.length, 2);
  t.is(json.processes[1].dependency[1].waitingNs, 2500);
  t.regex(
    r.stderr,
    /nvprof-two-processes\.txt:2: warning: not understood \(application output\?\): application says hello/,
  );
});

test('jetprof parse --format md --section dependency prints a Markdown table (escaping <Other>)', (t) => {
  const r = jetprofWithoutNative(['parse', LOG, '--format', 'md', '--section', 'dependency']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /\| Critical path\(%\) \| Critical path \| Waiting time \| Name \|/);
  t.regex(r.stdout, /\| 60\.00% \| 1\.200000 s \| 0 ns \| \\<Other\\> \|/);
  t.regex(r.stdout, /\| 40\.00% \| 800\.000000 ms \| 2\.500000 us \| cudaStreamSynchronize \|/);
});

test('jetprof parse nsys output to CSV with exact nanoseconds, and --strict', (t) => {
  const r = jetprofWithoutNative(['parse', NSYS, '--format', 'csv', '--section', 'nvtx_sum']);
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout.split('\n')[1], '60,600000000,10,60000000,60000000,59000000,61000000,500000,PushPop,inference');
  t.is(jetprofWithoutNative(['parse', LOG, '--strict', '--out', join(scratchDir(), 'p.json')]).code, 1);
  t.is(JSON.parse(readFileSync(join(scratchDir(), 'p.json'), 'utf8')).schema, 'jetprof.nvprof/1');
});

test('bad call - jetprof parse on a missing file or a file that is no profiler output: one line, exit 2', async (t) => {
  const missing = await runCli('jetprof', ['parse', '/nonexistent/log.txt']);
  t.is(missing.code, 2);
  t.is(missing.stderr.trim().split('\n').length, 1);
  t.regex(missing.stderr, /\/nonexistent\/log\.txt: profiler log not found/);
  const notLog = await runCli('jetprof', ['parse', join(ROOT, 'README.md')]);
  t.is(notLog.code, 2);
  t.regex(notLog.stderr, /README\.md: neither nvprof nor Nsight Systems output/);
  // a report the nsys log does not hold: one line with the ones it has, exit 2 (as nvprof's unknown section is)
  for (const [log, re] of [
    [NSYS, /--section nvtx_summ: \S+nsys-2022-column\.txt has no such nsys report \(fix: use one of: .*nvtx_sum/],
    [LOG, /--section nvtx_summ is not an nvprof section \(fix: use one of: /],
  ] as const) {
    const r = await runCli('jetprof', ['parse', log, '--format', 'md', '--section', 'nvtx_summ']);
    t.is(r.code, 2, r.stderr);
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    t.regex(r.stderr, re);
  }
});

test('jetprof report loads no native module either', (t) => {
  const r = jetprofWithoutNative([
    'report',
    '--profile',
    LOG,
    '--profile',
    NSYS,
    '--html',
    join(scratchDir(), 'no-native.html'),
  ]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /## Profiles/);
  t.regex(r.stdout, /\| 40\.00% \| 800\.000000 ms \| 2\.500000 us \| cudaStreamSynchronize \|/);
});

test('bad call - a bad option value to a jetprof subcommand exits 2 with one line naming the option', async (t) => {
  for (const [args, re] of [
    [['parse', LOG, '--trace-rows', 'abc'], /--trace-rows must be an integer between 0 and \d+, got 'abc'/],
    [['report', '--top', '0'], /--top must be an integer between 1 and 1000, got 0/],
  ] as const) {
    const r = await runCli('jetprof', [...args]);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.is(r.stderr.trim().split('\n').length, 1);
    t.regex(r.stderr, re);
  }
});

test('hostile text in a log is shown, not obeyed: terminal escapes and bare CRs escaped in parse --format md and its warnings, spreadsheet formulas neutralised in CSV', async (t) => {
  const lab = readFileSync(join(ROOT, 'test/fixtures/profiles/nvprof-synthetic-trt-lab.txt'), 'utf8');
  // a kernel renamed to a terminal escape (OSC 52 writes the clipboard), one to a formula, a line nobody understands
  const hostile = lab
    .replace('generatedNativePointwise', '\x1b]52;c;ZXZpbA==\x07evil')
    .replace('[CUDA memcpy DtoH]', '=HYPERLINK("http://x","y")')
    .replace('==287== NVTX result:', 'garbage \x1b[2J line\n==287== NVTX result:');
  const log = join(scratchDir(), 'hostile.log');
  writeFileSync(log, hostile);
  const md = await runCli('jetprof', ['parse', log, '--format', 'md']);
  t.is(md.code, 0, md.stderr);
  t.false(/[\x00-\x08\x0b-\x1f\x7f]/.test(md.stdout), 'no control character reaches the terminal from the table');
  t.regex(md.stdout, /\\x1b\]52;c;ZXZpbA==\\x07evil \|/);
  t.false(/[\x00-\x08\x0b-\x1f\x7f]/.test(md.stderr), 'nor from the warnings');
  t.regex(md.stderr, /garbage \\x1b\[2J line/);
  const csv = await runCli('jetprof', ['parse', log, '--format', 'csv']);
  t.is(csv.code, 0, csv.stderr);
  t.regex(csv.stdout, /,"'=HYPERLINK\(""http:\/\/x"",""y""\)"/, 'a formula becomes text');
  t.regex(csv.stdout, /,-?\d/, 'numbers stay numbers');
  t.false(/,[=+@]/.test(csv.stdout.replace(/"'[^"]*"/g, '')), 'no cell starts a formula');
});

test('jetprof parse: a log half UTF-8 and half Windows-1252 keeps both kinds of names right; a 50 MB kernel name is one cut line, said, never a spliced row', async (t) => {
  const dir = scratchDir();
  const head = [
    '==7== NVPROF is profiling process 7, command: ./app',
    '==7== Profiling result:',
    '            Type  Time(%)      Time     Calls       Avg       Min       Max  Name',
  ].join('\n');
  const row = (name: string, pct: string) =>
    ` GPU activities:   ${pct}%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  ${name}`;
  // one row written on a UTF-8 machine, the next pasted from a Windows console (cp1252: é is 0xE9, … is 0x85)
  const mixed = Buffer.concat([
    Buffer.from(`${head}\n${row('noyau_réduit', '50.00')}\n`, 'utf8'),
    Buffer.from(' GPU activities:   50.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  caf', 'latin1'),
    Buffer.from([0xe9, 0x85, 0x0a]),
  ]);
  const mixedLog = join(dir, 'mixed.txt');
  writeFileSync(mixedLog, mixed);
  const m = await runCli('jetprof', ['parse', mixedLog]);
  t.is(m.code, 0, m.stderr);
  const names = JSON.parse(m.stdout).processes[0].summary.map((r: { name: string }) => r.name);
  t.deepEqual(names, ['noyau_réduit', 'café…']);
  t.regex(
    m.stderr,
    /1 line\(s\) read as Windows-1252 .*the others as UTF-8|1 line\(s\) not valid UTF-8: read as Windows-1252/,
  );
  // a kernel name of 50 MB between two rows: the rows around it are kept, the line is said and never becomes a row
  const huge = join(dir, 'huge-name.txt');
  writeFileSync(
    huge,
    `${head}\n${row('before', '40.00')}\n${row(`k${'x'.repeat(50 * 1024 * 1024)}`, '30.00')}\n${row('after', '30.00')}\n`,
  );
  const h = await runCli('jetprof', ['parse', huge, '--out', join(dir, 'huge.json')]);
  t.is(h.code, 0, h.stderr);
  const summary = JSON.parse(readFileSync(join(dir, 'huge.json'), 'utf8')).processes[0].summary;
  t.deepEqual(
    summary.map((r: { name: string }) => r.name),
    ['before', 'after'],
  );
  t.regex(
    h.stderr,
    /huge-name\.txt:5: warning: a line of more than 1 MiB \(no profiler prints one\): not read as a row; it starts: GPU activities:/,
  );
});

test('parse prints tables on a terminal, as nvprof and nsys stats do, and JSON when piped or given --out', async (t) => {
  const log = join(ROOT, 'test/fixtures/profiles/nvprof-synthetic-trt-lab.txt');
  const cli = `${cliCommand('jetprof')
    .map((a) => `"${a}"`)
    .join(' ')} parse "${log}"`;
  // `script` gives the command a terminal of its own
  const tty = spawnSync('script', ['-qec', cli, '/dev/null'], { encoding: 'utf8', cwd: scratchDir() });
  t.is(tty.status, 0, tty.stderr);
  t.regex(tty.stdout, /^### Summary, process \d+/m);
  t.regex(tty.stdout, /\| Type \| Time\(%\) \| Time \| Calls \| Avg \| Min \| Max \| Name \|/);
  t.notRegex(tty.stdout, /"schema"/);
  t.regex(tty.stdout, /--format json gives everything/);
  const piped = await runCli('jetprof', ['parse', log]);
  t.is(piped.code, 0, piped.stderr);
  t.is(JSON.parse(piped.stdout).schema, 'jetprof.nvprof/1');
  t.is(piped.stderr, '');
});
