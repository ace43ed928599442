/** The parsers on small logs shipped in test/fixtures/profiles, so every format is covered without ../shared. */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNsysStats } from '../src/parsers/nsys.ts';
import { NvprofParser, parseNvprof } from '../src/parsers/nvprof.ts';
import { decimalToNs, parseDurationNs, parseGroupedInteger } from '../src/parsers/units.ts';
import { ROOT } from './helpers/fixtures.ts';

const fixture = (f: string) => readFileSync(join(ROOT, 'test/fixtures/profiles', f), 'utf8');

test('times are exact integer nanoseconds by decimal arithmetic', (t) => {
  t.is(parseDurationNs('197.397023s'), 197397023000);
  t.is(parseDurationNs('7.9230us'), 7923);
  t.is(parseDurationNs('0ns'), 0);
  t.is(parseDurationNs('29.532000us'), 29532);
  t.is(parseDurationNs('6.35491s'), 6354910000);
  // 0.1 + 0.2 style float error cannot happen: 0.3s is 300000000 exactly
  t.is(parseDurationNs('0.3s'), 300000000);
  t.is(decimalToNs('0.103325', 'ms'), 103325);
  t.is(decimalToNs('1.5', 'ns'), 2); // sub-ns rounds half away from zero
  t.is(parseDurationNs('12 ms'), undefined);
  t.is(parseGroupedInteger('44,0087,8248'), 4400878248);
});

test('nvprof: two processes in one log, prefixed dependency header, application output as a diagnostic', (t) => {
  const r = parseNvprof(fixture('nvprof-two-processes.txt'));
  t.deepEqual(
    r.value.processes.map((p) => [p.pid, p.command]),
    [
      [101, 'node infer-onnx.js clip.mp4'],
      [102, 'node infer-trt.js clip.mp4'],
    ],
  );
  const [a, b] = r.value.processes;
  t.is(a.summary.length, 3);
  t.like(a.summary[2], { type: 'API calls', totalNs: 1500000000, name: 'cudaMalloc' });
  t.like(a.summary[1], { type: 'GPU activities', calls: 20, name: '[CUDA memcpy HtoD]' });
  t.deepEqual(b.notes, ['No kernels were profiled.']);
  t.deepEqual(b.dependency, [
    { criticalPathPct: 60, criticalPathNs: 1200000000, waitingNs: 0, name: '<Other>' },
    { criticalPathPct: 40, criticalPathNs: 800000000, waitingNs: 2500, name: 'cudaStreamSynchronize' },
  ]);
  t.deepEqual(
    r.diagnostics.map((d) => [d.code, d.line]),
    [['UNRECOGNIZED_LINE', 2]],
  );
});

test('nvprof CSV: the units row sets each column, for the summary and the dependency table', (t) => {
  const r = parseNvprof(fixture('nvprof-csv-dependency.txt'));
  const p = r.value.processes[0];
  t.deepEqual(p.summary[0], {
    type: 'GPU activities',
    timePct: 100,
    totalNs: 1500000,
    calls: 3,
    avgNs: 500000,
    minNs: 400,
    maxNs: 600000,
    name: 'k(int, float)',
  });
  t.like(p.summary[1], { type: 'API calls', totalNs: 2000000, minNs: 2000000 });
  t.deepEqual(p.dependency[1], {
    criticalPathPct: 0.5,
    criticalPathNs: 6250000,
    waitingNs: 12500,
    name: 'cudaDeviceSynchronize',
  });
  t.deepEqual(r.diagnostics, []);
});

test('nsys 2022.4 column output: old report names canonicalised, SKIPPED kept', (t) => {
  const r = parseNsysStats(fixture('nsys-2022-column.txt'));
  t.deepEqual(r.diagnostics, []);
  t.deepEqual(Object.keys(r.value.reports), ['nvtx_sum']);
  t.deepEqual(
    r.value.reports.nvtx_sum.rows.map((x) => [x.range, x.totalNs, x.instances, x.stddevNs]),
    [
      ['inference', 600000000, 10, 500000],
      ['postprocess', 400000000, 10, 500000],
    ],
  );
  t.is(r.value.skipped.cuda_api_sum, 'does not contain CUDA trace data.');
});

test('a truncated log yields what was complete, and a diagnostic for the cut row', (t) => {
  const text = fixture('nvprof-two-processes.txt');
  const cut = text.slice(0, text.indexOf('cudaMalloc') - 12); // inside the API row
  const r = parseNvprof(cut);
  t.is(r.value.processes[0].summary.length, 2);
  t.is(r.diagnostics.at(-1)?.line, 9);
});

test('nvprof without a GPU (real nvprof 11.8 here): the warning and the fatal error are kept, nothing else invented', (t) => {
  const { value, diagnostics } = parseNvprof(fixture('nvprof-no-gpu.txt'));
  t.is(value.processes.length, 1);
  const p = value.processes[0];
  t.deepEqual(p.warnings, ['CUDA device error, GPU profiling skipped', 'Error: incompatible CUDA driver version.']);
  t.deepEqual(p.summary, []);
  t.deepEqual(p.dependency, []);
  t.deepEqual(diagnostics, []);
});

test('a log of junk keeps the first 1000 diagnostics and counts the rest; long traces keep the first rows and count the rest', (t) => {
  const junk = Array.from({ length: 3000 }, (_, i) => `application line ${i}`).join('\n');
  const { diagnostics } = parseNvprof(`==1== NVPROF is profiling process 1, command: app\n${junk}\n`);
  t.is(diagnostics.length, 1001);
  t.is(diagnostics[1000].message, '2000 more diagnostics not listed (only the first 1000 are kept)');
  t.is(diagnostics[1000].line, 3001);
  const header =
    '   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*      Size  Throughput  SrcMemType  DstMemType           Device   Context    Stream  Name';
  const row = (i: number) =>
    `${`${i}.000us`.padStart(8)}  ${'3.1000us'.padStart(8)}  ${'(4 1 1)'.padStart(19)}  ${'(128 1 1)'.padStart(14)}  ${'32'.padStart(8)}  ${'0B'.padStart(8)}  ${'0B'.padStart(8)}  ${'-'.padStart(8)}  ${'-'.padStart(10)}  ${'-'.padStart(10)}  ${'-'.padStart(10)}  ${'Tegra X1 (0)'.padStart(15)}  ${'1'.padStart(8)}  ${'7'.padStart(8)}  kernel_${i % 3} [${i}]`;
  const log = ['======== Profiling result:', header, ...Array.from({ length: 12 }, (_, i) => row(i))].join('\n');
  const parser = new NvprofParser(5);
  for (const line of log.split('\n')) parser.push(line);
  const { value } = parser.finish();
  const p = value.processes[0];
  t.is(p.gpuTrace?.length, 5);
  t.is(p.traceRowsOmitted, 7);
  t.deepEqual(p.gpuTrace?.[4], {
    startNs: 4000,
    durationNs: 3100,
    gridSize: '(4 1 1)',
    blockSize: '(128 1 1)',
    regs: 32,
    ssmem: '0B',
    dsmem: '0B',
    size: '-',
    throughput: '-',
    srcMemType: '-',
    dstMemType: '-',
    device: 'Tegra X1 (0)',
    context: 1,
    stream: 7,
    name: 'kernel_1 [4]',
    correlationId: 4,
  });
  t.regex(p.warnings[0], /^7 trace rows counted but not kept \(the first 5 are/);
});
