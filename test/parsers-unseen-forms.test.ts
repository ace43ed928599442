/**
 * The log forms #47 names. nvprof on its own output: nvprof 11.8's import mode printing public profiles
 * (test/fixtures/profiles/nvprof-import/README.md says which command made each file). Every expected value below is
 * read off the raw text by hand, with the line it comes from. nsys with its stderr interleaved
 * (test/fixtures/profiles/nsys-interleaved/README.md), and logs kept in Markdown.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type NvprofProcess, parseNvprof } from '../src/parsers/nvprof.ts';
import { MAX_SYSTEM_ROWS } from '../src/parsers/nvprof-csv.ts';
import { parseProfileFile } from '../src/parsers/parse-file.ts';
import { ROOT } from './helpers/fixtures.ts';

const DIR = join(ROOT, 'test/fixtures/profiles/nvprof-import');

async function only(name: string, kind?: 'nvprof'): Promise<{ p: NvprofProcess; codes: string[] }> {
  const parsed = await parseProfileFile(join(DIR, name), kind);
  if (parsed.kind !== 'nvprof') throw new Error(`${name} detected as nsys`);
  const processes = parsed.result.value.processes;
  if (processes.length !== 1) throw new Error(`${name}: ${processes.length} processes`);
  return { p: processes[0], codes: parsed.result.diagnostics.map((d) => d.code) };
}

const row = (p: NvprofProcess, name: string, type?: string) =>
  p.summary.find((r) => r.name === name && (type === undefined || r.type === type));

test('-u s: every row of the summary is kept, cells in e-notation become exact nanoseconds', async (t) => {
  const { p, codes } = await only('summary-units-s.txt');
  t.deepEqual(codes, []);
  t.is(p.summary.length, 14); // 2 GPU activity rows + 12 API rows
  //  GPU activities:    99.74  4.87e-03         1  4.87e-03  4.87e-03  4.87e-03  squareMatrixGpu(double*, double*)
  t.deepEqual(row(p, 'squareMatrixGpu(double*, double*)'), {
    type: 'GPU activities',
    timePct: 99.74,
    totalNs: 4_870_000,
    calls: 1,
    avgNs: 4_870_000,
    minNs: 4_870_000,
    maxNs: 4_870_000,
    name: 'squareMatrixGpu(double*, double*)',
  });
  //                      0.26  1.25e-05 ... [CUDA memcpy HtoD]
  t.is(row(p, '[CUDA memcpy HtoD]')?.totalNs, 12_500);
  //       API calls:    98.71  0.248209         2  0.124105  8.86e-07  0.248208  cudaEventCreate
  const create = row(p, 'cudaEventCreate', 'API calls');
  t.deepEqual(
    [create?.totalNs, create?.avgNs, create?.minNs, create?.maxNs],
    [248_209_000, 124_105_000, 886, 248_208_000],
  );
});

test('-u ms and -u us: the same rows at the precision each log printed', async (t) => {
  const ms = (await only('summary-units-ms.txt')).p;
  const us = (await only('summary-units-us.txt')).p;
  t.is(ms.summary.length, 14);
  t.is(us.summary.length, 14);
  // -u ms: `98.71  248.2093  2  124.1047  8.86e-04  248.2084  cudaEventCreate`
  const a = row(ms, 'cudaEventCreate');
  t.deepEqual([a?.totalNs, a?.avgNs, a?.minNs, a?.maxNs], [248_209_300, 124_104_700, 886, 248_208_400]);
  // -u us: `98.71  2.48e+05  2  1.24e+05  0.886000  2.48e+05  cudaEventCreate`
  const b = row(us, 'cudaEventCreate');
  t.deepEqual([b?.totalNs, b?.avgNs, b?.minNs, b?.maxNs], [248_000_000, 124_000_000, 886, 248_000_000]);
  // -u us: `0.26  12.51300  1 ... [CUDA memcpy HtoD]`
  t.is(row(us, '[CUDA memcpy HtoD]')?.totalNs, 12_513);
  // the same row names, in the same order, whatever the unit
  t.deepEqual(
    ms.summary.map((r) => [r.type, r.name]),
    us.summary.map((r) => [r.type, r.name]),
  );
});

test('-u ms --dependency-analysis: the critical-path table under its units row', async (t) => {
  const { p } = await only('dependency-units-ms.txt');
  t.is(p.dependency.length, 15);
  //            75.06     248.209318      0.000000  cudaEventCreate
  t.deepEqual(p.dependency[0], {
    criticalPathPct: 75.06,
    criticalPathNs: 248_209_318,
    waitingNs: 0,
    name: 'cudaEventCreate',
  });
  //             0.00  3.0450000e-03      0.000000  cuDeviceGetPCIBusId
  t.is(p.dependency.find((d) => d.name === 'cuDeviceGetPCIBusId')?.criticalPathNs, 3045);
});

test('-u ms --print-gpu-trace: rows under the units row, sizes and throughputs keep their unit', async (t) => {
  const { p } = await only('gpu-trace-units-ms.txt');
  const rows = p.gpuTrace ?? [];
  t.is(rows.length, 2);
  // 0.000000  0.012513  -  -  -  -  -  128.0000    9.755479    Pageable      Device  TITAN X (Pascal  1  7  [CUDA memcpy HtoD]
  t.like(rows[0], {
    startNs: 0,
    durationNs: 12_513,
    size: '128.0000KB',
    throughput: '9.755479GB/s',
    srcMemType: 'Pageable',
    name: '[CUDA memcpy HtoD]',
  });
  // 0.038850  4.868167  (1 1 1)  (128 1 1)  30  0  0 ... squareMatrixGpu(double*, double*) [112]
  t.like(rows[1], {
    startNs: 38_850,
    durationNs: 4_868_167,
    gridSize: '(1 1 1)',
    regs: 30,
    ssmem: '0B',
    correlationId: 112,
  });
});

test('-u us --print-api-trace: starts in e-notation', async (t) => {
  const { p } = await only('api-trace-units-us.txt');
  const rows = p.apiTrace ?? [];
  t.is(rows.length, 112);
  // 6.54e+04  1.834000  cuDeviceGetCount
  t.deepEqual(rows[1], { startNs: 65_400_000, durationNs: 1834, name: 'cuDeviceGetCount' });
});

test('OpenACC (excl): its own activity type, never appended to the API calls', async (t) => {
  const { p, codes } = await only('openacc-excl.txt');
  t.deepEqual(codes, []);
  const count = (type: string) => p.summary.filter((r) => r.type === type).length;
  t.deepEqual([count('GPU activities'), count('API calls'), count('OpenACC (excl)')], [2, 22, 11]);
  //  OpenACC (excl):   82.46%  97.647ms         1  97.647ms  97.647ms  97.647ms  acc_wait@main.cpp:69
  t.like(row(p, 'acc_wait@main.cpp:69'), { type: 'OpenACC (excl)', timePct: 82.46, totalNs: 97_647_000 });
  //                    0.00%       0ns         1       0ns       0ns       0ns  acc_delete@main.cpp:76 (the last row)
  t.like(p.summary[p.summary.length - 1], { type: 'OpenACC (excl)', totalNs: 0, name: 'acc_delete@main.cpp:76' });
  t.false(p.summary.some((r) => r.type === 'API calls' && r.name.startsWith('acc_')));
});

test('OpenACC (incl) under a units row, and the CSV form with and without its process lines', async (t) => {
  const incl = (await only('openacc-incl-units-ms.txt')).p;
  //  OpenACC (incl):    44.23  97.70513         1  97.70513  97.70513  97.70513  acc_compute_construct@main.cpp:69
  t.like(row(incl, 'acc_compute_construct@main.cpp:69'), { type: 'OpenACC (incl)', totalNs: 97_705_130 });
  t.is(incl.summary.filter((r) => r.type === 'OpenACC (incl)').length, 11);

  const csv = (await only('openacc-csv-units-ms.txt')).p;
  // "OpenACC (excl)",82.458135,97.646830,1,97.646830,97.646830,97.646830,"acc_wait@main.cpp:69"
  t.like(row(csv, 'acc_wait@main.cpp:69'), { type: 'OpenACC (excl)', timePct: 82.458135, totalNs: 97_646_830 });
  t.is(csv.summary.length, 35);
  // the same log with its `========` lines cut away, read as nvprof when told so: every row
  const cut = await only('openacc-csv-no-process-line.txt', 'nvprof');
  t.deepEqual(cut.codes, []);
  t.deepEqual(cut.p.summary, csv.summary);
});

test('system profiling: power, clocks, temperature and fan per device, in text and CSV', async (t) => {
  const text = (await only('um-system-two-gpus.txt')).p;
  const csv = (await only('um-system-two-gpus-csv.txt')).p;
  t.is(text.system?.length, 10);
  t.is(csv.system?.length, 10);
  // Device "Tesla P100-SXM2-16GB (1)" /       SM Clock (MHz)         3     1329.33     1228.00     1380.00
  t.deepEqual(
    text.system?.find((r) => r.device === 'Tesla P100-SXM2-16GB (1)' && r.name === 'SM Clock (MHz)'),
    {
      device: 'Tesla P100-SXM2-16GB (1)',
      name: 'SM Clock (MHz)',
      unit: 'MHz',
      count: 3,
      avg: 1329.33,
      min: 1228,
      max: 1380,
    },
  );
  // "Power (mW)","Tesla P100-SXM2-16GB (0)",3,160791.666667,52000.000000,243125.000000
  t.like(
    csv.system?.find((r) => r.device === 'Tesla P100-SXM2-16GB (0)' && r.name === 'Power (mW)'),
    { unit: 'mW', count: 3, avg: 160791.666667, min: 52000, max: 243125 },
  );
  // the two forms name the same quantities of the same devices
  t.deepEqual(
    text.system?.map((r) => [r.device, r.name, r.count]),
    csv.system?.map((r) => [r.device, r.name, r.count]),
  );
});

test('Unified Memory: each device block keeps its rows, the total lines are figures, -u ms times read with their unit', async (t) => {
  const text = (await only('um-system-two-gpus.txt')).p;
  const ms = await only('um-system-two-gpus-units-ms.txt');
  const um = text.unifiedMemory!;
  t.deepEqual(
    um.rows.map((r) => r.device),
    [...Array(5).fill('Tesla P100-SXM2-16GB (0)'), ...Array(2).fill('Tesla P100-SXM2-16GB (1)')],
  );
  t.deepEqual(um.totals, { totalCpuPageFaults: 2 }); // Total CPU Page faults: 2
  //        3  64.000KB  4.0000KB  124.00KB  192.0000KB  6.036000us  Host To Device
  t.like(um.rows[0], { count: 3, avgSize: '64.000KB', totalSize: '192.0000KB', totalNs: 6036, name: 'Host To Device' });
  //        2  4.0000KB  4.0000KB  4.0000KB  8.000000KB           -  Remote mapping from device
  t.like(um.rows[3], { totalNs: null, name: 'Remote mapping from device' });
  // -u ms prints `6.0360e-03ms` and `0.293664ms`, wider than the column: every row the same as in the us log
  t.deepEqual(ms.codes, []);
  t.deepEqual(ms.p.unifiedMemory, um);
  // CSV: `"Tesla P100-SXM2-16GB (0)",,,,,1B,293.664000us,"Gpu page fault groups"`: the empty count is kept as such
  const csv = (await only('um-system-two-gpus-csv.txt')).p.unifiedMemory!;
  t.is(csv.rows.length, 7);
  t.like(csv.rows[2], { count: null, totalSize: '1B', totalNs: 293_664, name: 'Gpu page fault groups' });
  t.deepEqual(csv.totals, { totalCpuPageFaults: 2 });
});

test('Unified Memory total lines nvprof prints (remote mappings, thrashes, throttles) are each a figure', (t) => {
  const log = [
    '==7== NVPROF is profiling process 7, command: ./um',
    '==7== Unified Memory profiling result:',
    'Device "Tesla V100-SXM2-16GB (0)"',
    '   Count  Avg Size  Min Size  Max Size  Total Size  Total Time  Name',
    '       4  4.0000KB  4.0000KB  4.0000KB  16.00000KB  3.104000us  Host To Device',
    'Total CPU Page faults: 154',
    'Total CPU thrashes: 32',
    'Total CPU throttles: 3',
    'Total remote mappings to CPU: 12',
    'Total remote mappings from CPU: 5',
  ].join('\n');
  const r = parseNvprof(log);
  t.deepEqual(r.diagnostics, []);
  t.deepEqual(r.value.processes[0].unifiedMemory?.totals, {
    totalCpuPageFaults: 154,
    totalCpuThrashes: 32,
    totalCpuThrottles: 3,
    totalRemoteMappingsToCpu: 12,
    totalRemoteMappingsFromCpu: 5,
  });
});

test('--print-gpu-trace: a Unified Memory row printed with `-` for Duration is kept without one, its cells not shifted', async (t) => {
  const { p, codes } = await only('um-gpu-trace.txt');
  t.deepEqual(codes, []);
  const rows = p.gpuTrace ?? [];
  t.is(rows.length, 17);
  const faults = rows.filter((r) => r.name === '[Unified Memory CPU page faults]');
  t.is(faults.length, 2);
  // 103.12ms         -  ...  -  -  PC 0x1   0x7f2a1d4c0000  [Unified Memory CPU page faults]
  t.like(faults[0], { startNs: 103_120_000, device: '-', virtualAddress: '0x7f2a1d4c0000' });
  t.false('durationNs' in faults[0]);
  // 103.14ms         -  ...  Tesla P100-SXM2  -  -  4.000000KB   0x7f2a222e0000  [Unified Memory remote map]
  t.like(
    rows.find((r) => r.name === '[Unified Memory remote map]'),
    { device: 'Tesla P100-SXM2', unifiedMemory: '4.000000KB' },
  );
  // the CSV form: `103.124270,,,...,"PC 0x1","0x7f2a1d4c0000","[Unified Memory CPU page faults]",` under `ms,ms,...`
  const csv = (await only('um-gpu-trace-csv-units-ms.txt')).p.gpuTrace ?? [];
  t.is(csv.length, 17);
  const first = csv.find((r) => r.name === '[Unified Memory CPU page faults]');
  t.like(first, { startNs: 103_124_270, virtualAddress: '0x7f2a1d4c0000' });
  t.false('durationNs' in (first ?? {}));
});

test("a log pasted after a compiler's accelerator timing report parses, the report noted once", (t) => {
  // the report PGI's runtime prints at exit with PGI_ACC_TIME=1 (its shape in the PGI OpenACC guide)
  const report = [
    '',
    'Accelerator Kernel Timing data',
    '/home/user/mandelbrot/main.cpp',
    '  main  NVIDIA  devicenum=0',
    '    time(us): 103,891',
    '    69: compute region reached 1 time',
    '        69: kernel launched 1 time',
    '            grid: [65535]  block: [128]',
    '             device time(us): total=97,642 max=97,642 min=97,642 avg=97,642',
    '    76: update directive reached 3 times',
    '        76: data copyout transfers: 3',
    '             device time(us): total=1,519 max=531 min=469 avg=506',
  ].join('\n');
  const log = readFileSync(join(DIR, 'openacc-excl.txt'), 'utf8');
  const alone = parseNvprof(log).value.processes[0].summary;
  const r = parseNvprof(`${report}\n${log}`);
  t.deepEqual(r.value.processes[0].summary, alone);
  t.deepEqual(
    r.diagnostics.map((d) => [d.code, d.line]),
    [['SKIPPED_BLOCK', 2]],
  );
  t.regex(r.diagnostics[0].message, /11 lines/);
});

test('a log kept in Markdown is read from inside its fences (an indented one too), the prose and the shell block skipped, with a note', async (t) => {
  const md = await parseProfileFile(join(ROOT, 'test/fixtures/profiles/markdown/lab-notes.md'));
  if (md.kind !== 'nvprof') return t.fail('detected as nsys');
  const summary = (await only('summary-units-ms.txt')).p.summary;
  const dependency = (await only('dependency-units-ms.txt')).p.dependency;
  t.is(md.result.value.processes.length, 1);
  t.deepEqual(md.result.value.processes[0].summary, summary);
  t.deepEqual(md.result.value.processes[0].dependency, dependency);
  t.deepEqual(
    md.result.diagnostics.map((d) => [d.severity, d.code]),
    [['note', 'READ_FROM_FENCE']],
  );
  t.regex(md.result.diagnostics[0].message, /2 fenced code block/);
});

test("nsys's stderr messages inside its buffered tables: each notice to the report it names, a split row joined, no row lost", async (t) => {
  const dir = join(ROOT, 'test/fixtures/profiles/nsys-interleaved');
  const alone = await parseProfileFile(join(dir, 'stats-stdout.txt'));
  const merged = await parseProfileFile(join(dir, 'stats-stdout-and-stderr.txt'));
  if (alone.kind !== 'nsys' || merged.kind !== 'nsys') return t.fail('detected as nvprof');
  const a = alone.result.value;
  const b = merged.result.value;
  t.deepEqual(
    b.tables.map((x) => [x.report, x.rows.length]),
    [
      ['nvtx_sum', 13],
      ['osrt_sum', 41],
      ['nvtx_pushpop_sum', 13],
    ],
  );
  t.deepEqual(b.tables, a.tables);
  // the CUDA trace notice came before nvtxsum's table, the kernel and memory ones inside osrtsum's `open64` row
  t.deepEqual(b.skipped, {
    cuda_api_sum: 'does not contain CUDA trace data.',
    cuda_gpu_kern_sum: 'does not contain CUDA kernel data.',
    cuda_gpu_mem_time_sum: 'does not contain GPU memory data.',
    cuda_gpu_mem_size_sum: 'does not contain GPU memory data.',
  });
  t.deepEqual(b.skipped, a.skipped);
  t.deepEqual(b.warnings, ["ERROR: Report 'umsum' could not be found."]);
  //       0.0          6490114        555     11693.9      8456.0      2444      319457      19455.4  open64
  t.like(
    b.reports.osrt_sum.rows.find((r) => r.name === 'open64'),
    { timePct: 0, totalNs: 6490114, calls: 555, avgNs: 11693.9, minNs: 2444, maxNs: 319457 },
  );
  t.deepEqual(
    merged.result.diagnostics.map((d) => [d.severity, d.code]),
    [
      ['note', 'JOINED_LINE'],
      ['note', 'JOINED_LINE'],
    ],
  );
});

test('a Markdown note whose fences hold no profiler output (the output pasted after the fence closed, a fence opened at the end and never closed) is read whole, with a note', async (t) => {
  const md = await parseProfileFile(join(ROOT, 'test/fixtures/profiles/markdown/unpaired-fences.md'));
  if (md.kind !== 'nvprof') return t.fail(`detected as ${md.kind}`);
  const [p] = md.result.value.processes;
  t.is(p.pid, 9);
  t.deepEqual(
    p.summary.map((r) => [r.type, r.name, r.totalNs]),
    [
      ['GPU activities', 'conv_kernel(float const *, float*)', 7_000_000],
      ['GPU activities', '[CUDA memcpy HtoD]', 3_000_000],
      ['API calls', 'cudaMalloc', 1_500_000_000],
    ],
  );
  t.is(md.result.diagnostics[0].code, 'READ_WHOLE_NOTE');
  t.regex(md.result.diagnostics[0].message, /fenced code blocks hold no profiler output/);
});

test('a runaway system-profiling table (30,000 rows where a summary has a few dozen): the first MAX_SYSTEM_ROWS are kept and one warning says so, memory stays bounded', (t) => {
  const log = readFileSync(join(ROOT, 'test/fixtures/profiles/nvprof-import/um-system-two-gpus-csv.txt'), 'utf8');
  const head = log.slice(0, log.indexOf('"SM Clock (MHz)","Tesla P100-SXM2-16GB (0)"'));
  const rows = Array.from({ length: 30_000 }, (_, i) => `"SM Clock (MHz)","GPU ${i}",3,1429.3,1328.0,1480.0`);
  const { value, diagnostics } = parseNvprof(`${head}${rows.join('\n')}\n`);
  const system = value.processes[0].system!;
  t.is(system.length, MAX_SYSTEM_ROWS);
  t.is(system[MAX_SYSTEM_ROWS - 1].device, `GPU ${MAX_SYSTEM_ROWS - 1}`, 'the first ones, in order');
  const capped = diagnostics.filter((d) => d.code === 'TRUNCATED');
  t.is(capped.length, 1, 'said once, not once a row');
  t.regex(capped[0].message, /more than 10000 system-profiling rows: the first 10000 are kept/);
});
