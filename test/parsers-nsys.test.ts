/** Nsight Systems statistics parser against real outputs (../shared/fixtures/profiler-logs/nsys). */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalReportName, parseNsysStats } from '../src/parsers/nsys.ts';
import { requires, SHARED_FIXTURES } from './helpers/fixtures.ts';

const DIR = join(SHARED_FIXTURES, 'profiler-logs/nsys');
const shared = requires(existsSync(DIR), `${DIR} is not beside this checkout (CI has it)`);
const read = (f: string) => parseNsysStats(readFileSync(join(DIR, f), 'utf8'));

shared('01 old --stats output: bare titles, 3-digit grouping, one OS runtime table per process', (t) => {
  const r = read('01-cs533-old-nsys-osrt-multiproc.txt');
  t.deepEqual(
    r.value.tables.map((x) => [x.report, x.rows.length]),
    [
      ['osrt_sum', 51],
      ['osrt_sum', 53],
      ['osrt_sum', 51],
      ['cuda_api_sum', 7],
      ['cuda_gpu_kern_sum', 1],
      ['cuda_gpu_mem_time_sum', 2],
      ['cuda_gpu_mem_size_sum', 2],
      ['osrt_sum', 53],
    ],
  );
  t.like(r.value.tables[0].rows[0], { timePct: 47.9, totalNs: 5511756619, name: 'epoll_wait' });
  t.like(r.value.tables[1].rows[0], { timePct: 48, totalNs: 5518094991, calls: 1263, name: 'epoll_wait' });
  t.like(r.value.tables[7].rows[0], { timePct: 45, totalNs: 5261075208, calls: 1526 });
  t.deepEqual(r.value.reports.cuda_api_sum.rows[0], {
    timePct: 79.5,
    totalNs: 791065304,
    calls: 1,
    avgNs: 791065304,
    minNs: 791065304,
    maxNs: 791065304,
    name: 'cudaMallocHost',
  });
  t.deepEqual(r.value.reports.cuda_gpu_kern_sum.rows[0], {
    timePct: 100,
    totalNs: 1053475,
    instances: 30,
    avgNs: 35115.8, // as printed (nsys prints one decimal)
    minNs: 17532,
    maxNs: 51771,
    name: 'vector_add_kernel(float const*, float const*, float*, int)',
  });
  t.like(r.value.reports.cuda_gpu_mem_time_sum.rows[0], {
    timePct: 67.1,
    totalNs: 7891763,
    count: 60,
    operation: '[CUDA memcpy HtoD]',
  });
  t.like(r.value.reports.cuda_gpu_mem_size_sum.rows[0], { total: 491520, count: 60, operation: '[CUDA memcpy HtoD]' });
  // the 8 lines of application output before the tables
  t.deepEqual(
    r.diagnostics.map((d) => d.line),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
});

shared('03 nsys stats 2024: Processing blocks, ** titles, SKIPPED reports, … truncation', (t) => {
  const r = read('03-cs336-nsys-stats-processing.txt');
  t.deepEqual(r.diagnostics, []);
  t.deepEqual(
    r.value.tables.map((x) => [x.report, x.rows.length]),
    [
      ['osrt_sum', 54],
      ['cuda_api_sum', 18],
      ['cuda_gpu_kern_sum', 23],
      ['cuda_gpu_mem_time_sum', 1],
      ['cuda_gpu_mem_size_sum', 1],
    ],
  );
  t.is(Object.keys(r.value.skipped).length, 15);
  t.is(r.value.skipped.nvtx_sum, 'does not contain NV Tools Extension (NVTX) data.');
  t.deepEqual(r.value.reports.osrt_sum.rows[0], {
    timePct: 76.2,
    totalNs: 654980528678,
    calls: 64,
    avgNs: 10234070760.6,
    medNs: 12481.5,
    minNs: 1041,
    maxNs: 36451572053,
    stddevNs: 16422014166.4,
    name: 'futex',
  });
  t.like(r.value.reports.cuda_api_sum.rows[0], {
    timePct: 42,
    totalNs: 4537156993,
    calls: 294,
    medNs: 9136973.5,
    minNs: 8037,
    maxNs: 41063211,
    name: 'cudaMemcpyAsync',
  });
  t.like(r.value.reports.cuda_gpu_kern_sum.rows[0], {
    timePct: 88.3,
    totalNs: 2991054425,
    instances: 900,
    name: 'ampere_sgemm_128x64_tn',
  });
  t.like(r.value.reports.cuda_gpu_mem_time_sum.rows[0], {
    timePct: 100,
    totalNs: 4460346194,
    count: 294,
    operation: '[CUDA memcpy Host-to-Device]',
  });
  t.like(r.value.reports.cuda_gpu_mem_size_sum.rows[0], { total: 13627.435, count: 294 });
  const names = r.value.tables.flatMap((x) => x.rows.map((row) => String(row.name ?? row.operation)));
  t.is(names.filter((n) => n.endsWith('…')).length, 20);
  t.is(r.value.tables[0].title, 'OS Runtime Summary');
});

shared('06 old report names, TensorRT NVTX ranges, digits grouped in fours', (t) => {
  const r = read('06-trtyolo-nsys-oldnames-myriad-grouping.txt');
  t.deepEqual(
    r.value.tables.map((x) => [x.report, x.rows.length]),
    [
      ['nvtx_sum', 50],
      ['osrt_sum', 43],
      ['cuda_api_sum', 33],
      ['cuda_gpu_kern_sum', 26],
      ['cuda_gpu_mem_time_sum', 4],
      ['cuda_gpu_mem_size_sum', 4],
    ],
  );
  t.deepEqual(r.value.reports.nvtx_sum.rows[0], {
    timePct: 53.1,
    totalNs: 4400878248,
    instances: 13583,
    avgNs: 323999,
    medNs: 307968,
    minNs: 225201,
    maxNs: 1264365,
    stddevNs: 67135.4,
    style: 'PushPop',
    range: 'TensorRT:ExecutionContext::enqueue',
  });
  t.like(r.value.reports.osrt_sum.rows[0], {
    timePct: 81,
    totalNs: 706732369293,
    calls: 747227,
    avgNs: 945806.8,
    minNs: 999,
    maxNs: 5648563,
    name: 'futex',
  });
  t.like(r.value.reports.cuda_api_sum.rows[0], { totalNs: 3813270112, calls: 12975, name: 'cuStreamSynchronize' });
  t.like(r.value.reports.cuda_gpu_kern_sum.rows[0], {
    timePct: 14.1,
    totalNs: 845211450,
    instances: 38928,
    minNs: 9120,
    name: 'trt_ampere_h1688cudnn_256x64_ldg8_relu_exp_small_nhwc_linkable_tn_v1',
  });
  t.like(r.value.reports.cuda_gpu_mem_time_sum.rows[0], {
    timePct: 95.7,
    totalNs: 2218247417,
    count: 12981,
    operation: '[CUDA memcpy HtoD]',
  });
  t.like(r.value.reports.cuda_gpu_mem_size_sum.rows[0], { total: 26959.009, count: 12981 });
  t.deepEqual(r.value.warnings, [
    'CPU context switch tracing not supported, disabling.',
    'CPU sampling not supported, disabling.',
  ]);
  t.true(
    r.diagnostics.every((d) => d.code === 'UNRECOGNIZED_LINE' && d.line < 30),
    'only the TensorRT log and traceback before the stats',
  );
});

test('old report names are canonicalised to the new ones', (t) => {
  t.is(canonicalReportName('nvtxsum'), 'nvtx_sum');
  t.is(canonicalReportName('gpukernsum'), 'cuda_gpu_kern_sum');
  t.is(canonicalReportName('cuda_api_sum'), 'cuda_api_sum');
});

test('nsys stats CSV output with quoted names', (t) => {
  const text = [
    'Processing [x.sqlite] with [/usr/lib/nsight-systems/reports/nvtxsum.py]... ',
    '',
    'Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range',
    '41.3,51019894,5,10203978.8,10168216.0,10151811,10344318,80235.0,PushPop,inference',
    '10.0,1000,5,200.0,200.0,100,300,10.0,PushPop,"a, b"',
    '',
  ].join('\n');
  const r = parseNsysStats(text);
  t.deepEqual(r.diagnostics, []);
  t.deepEqual(r.value.reports.nvtx_sum.rows[0], {
    timePct: 41.3,
    totalNs: 51019894,
    instances: 5,
    avgNs: 10203978.8,
    medNs: 10168216,
    minNs: 10151811,
    maxNs: 10344318,
    stddevNs: 80235,
    style: 'PushPop',
    range: 'inference',
  });
  t.is(r.value.reports.nvtx_sum.rows[1].range, 'a, b');
});

test('nsys analyze: each SKIPPED notice belongs to the rule whose Processing line it follows, not to the first rule in the file', (t) => {
  const text = readFileSync(new URL('./fixtures/profiles/nsys-analyze-skipped.txt', import.meta.url), 'utf8');
  const r = parseNsysStats(text);
  t.deepEqual(Object.keys(r.value.skipped).sort(), ['cuda_memset_sync', 'gpu_gaps', 'gpu_time_util']);
  t.regex(r.value.skipped.cuda_memset_sync, /Does the application use CUDA memset APIs\?/);
  t.regex(r.value.skipped.gpu_gaps, /does not contain the required CUDA kernel data/);
  // the rules that ran keep their findings, none of them marked skipped
  t.deepEqual(Object.keys(r.value.findings ?? {}).sort(), ['cuda_api_sync', 'cuda_memcpy_async', 'cuda_memcpy_sync']);
});

test('nsys stats with a SKIPPED notice spliced after a whole row of cuda_api_sum, then two whole SKIPPED lines, then the rest of the table: every row kept, the notices recorded', (t) => {
  const header =
    ' Time (%)  Total Time (ns)  Num Calls    Avg (ns)     Med (ns)    Min (ns)   Max (ns)   StdDev (ns)            Name         ';
  const rule =
    ' --------  ---------------  ---------  -----------  -----------  ---------  ---------  -----------  ----------------------';
  const names = ['cudaStreamSynchronize', 'cudaMemcpyAsync', 'cudaLaunchKernel', 'cudaEventCreate', 'cudaFree'];
  const rows = names.map((n, i) => {
    const cells = [
      `${(50 - i * 10).toFixed(1)}`,
      `${(5 - i) * 1_000_000}`,
      `${10 + i}`,
      '100.0',
      '90.0',
      '10',
      '900',
      '5.0',
    ];
    const widths = [9, 17, 11, 13, 13, 11, 11, 13];
    // nsys pads every row to its header's width
    return `${cells.map((c, k) => c.padStart(widths[k])).join('')}  ${n}`.padEnd(header.length);
  });
  const head = [
    'Processing [r.sqlite] with [/opt/nvidia/nsight-systems/2023.2.3/host-linux-x64/reports/cuda_api_sum.py]... ',
    '',
    ' ** CUDA API Summary (cuda_api_sum):',
    '',
    header,
    rule,
  ];
  const clean = [...head, ...rows, ''].join('\n');
  const spliced = [
    ...head,
    rows[0],
    rows[1],
    `${rows[2]}SKIPPED: r.sqlite does not contain CUDA kernel data.`,
    'SKIPPED: r.sqlite does not contain GPU memory data.',
    'SKIPPED: r.sqlite does not contain GPU memory data.',
    rows[3],
    rows[4],
    '',
  ].join('\n');
  const a = parseNsysStats(clean).value.tables[0];
  const b = parseNsysStats(spliced);
  t.is(a.rows.length, 5);
  t.deepEqual(b.value.tables[0].rows, a.rows, 'the same rows, cudaEventCreate and the row after included');
  t.true(Object.keys(b.value.skipped).length >= 1, JSON.stringify(b.value.skipped));
});
