/**
 * Log forms users brought that did not parse fully (#16), on public logs written by other people
 * (test/fixtures/profiles/public/README.md cites each), and on the forms for which no public example was found,
 * written in the shape nvprof prints (each test says which).
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNsysStats } from '../src/parsers/nsys.ts';
import { parseNvprof, splitTraceName } from '../src/parsers/nvprof.ts';
import { keptAnyTable, parseProfileFile } from '../src/parsers/parse-file.ts';
import { ROOT } from './helpers/fixtures.ts';

const PUBLIC = join(ROOT, 'test/fixtures/profiles/public');

test('several nvprof runs in one log (a batch script, with its prompt and program output around them): one process per run, no PID-less extra', async (t) => {
  const parsed = await parseProfileFile(join(PUBLIC, 'nvprof-several-runs-sobel-v100.txt'));
  if (parsed.kind !== 'nvprof') return t.fail('detected as nsys');
  const processes = parsed.result.value.processes;
  t.deepEqual(
    processes.map((p) => p.pid),
    [38274, 38335, 38393],
  );
  t.deepEqual(
    processes.map((p) => p.command),
    ['./sobel_gpu -N 32 -B 1', './sobel_gpu -N 32 -B 4', './sobel_gpu -N 32 -B 16'],
  );
  t.deepEqual(
    processes.map((p) => p.metrics.map((m) => [m.device, m.kernel, m.metric, m.avg])),
    [
      [
        [
          'Tesla V100-SXM2-16GB (0)',
          'sobel_kernel_gpu(float*, float*, int, int, int, float*, float*)',
          'sm_efficiency',
          '1.25%',
        ],
      ],
      [
        [
          'Tesla V100-SXM2-16GB (0)',
          'sobel_kernel_gpu(float*, float*, int, int, int, float*, float*)',
          'sm_efficiency',
          '5.00%',
        ],
      ],
      [
        [
          'Tesla V100-SXM2-16GB (0)',
          'sobel_kernel_gpu(float*, float*, int, int, int, float*, float*)',
          'sm_efficiency',
          '19.99%',
        ],
      ],
    ],
  );
  // the prompt, the nvprof command lines and the program's output are reported, not lost and not a process
  const notUnderstood = parsed.result.diagnostics.filter((d) => d.code === 'UNRECOGNIZED_LINE').map((d) => d.line);
  t.deepEqual(notUnderstood, [1, 2, 3, 5, 6, 14, 15, 17, 18, 26, 27, 29, 30]);
});

test('--print-api-trace: a kernel launch row gives the API name, the kernel and the correlation id; a name wrapped onto the next line is joined', async (t) => {
  const parsed = await parseProfileFile(join(PUBLIC, 'nvprof-api-trace-vector-add.txt'));
  if (parsed.kind !== 'nvprof') return t.fail('detected as nsys');
  const [p] = parsed.result.value.processes;
  t.is(p.pid, 84665);
  const rows = p.apiTrace!;
  t.is(rows.length, 23);
  t.deepEqual(rows[0], { startNs: 17_181_000, durationNs: 6_740, name: 'cuDeviceGetPCIBusId' });
  t.deepEqual(rows[13], { startNs: 66_721_000, durationNs: 219_400_000, name: 'cudaMalloc' });
  t.deepEqual(rows[18], {
    startNs: 286_210_000,
    durationNs: 40_939,
    name: 'cudaLaunchKernel',
    kernel: 'vector_add(float*, float*, float*, int)',
    correlationId: 112,
  });
  t.deepEqual(rows[22], { startNs: 286_510_000, durationNs: 165_130, name: 'cudaFree' });
  const codes = parsed.result.diagnostics.map((d) => `${d.line} ${d.code}`);
  t.deepEqual(
    codes,
    ['16 UNRECOGNIZED_LINE', '17 UNRECOGNIZED_LINE', '25 JOINED_LINE'],
    'the author\'s "." elisions are reported; the wrapped name is joined, and said so',
  );
});

test('--metrics over many Thrust kernels (real log, GTX 1070): every metric row, under its exact kernel name of up to 1,177 characters', async (t) => {
  const file = join(PUBLIC, 'nvprof-metrics-thrust-gtx1070.txt');
  const parsed = await parseProfileFile(file);
  if (parsed.kind !== 'nvprof') return t.fail('detected as nsys');
  const [p, ...others] = parsed.result.value.processes;
  t.is(others.length, 0);
  t.is(p.pid, 3791);
  t.is(p.command, './ns_thrust_p_f.o -x 128 -y 128 -z 1000 -np 100');
  t.deepEqual(parsed.result.diagnostics, []);
  // the reference, read line by line: each metric row belongs to the `Kernel:` line above it
  const lines = readFileSync(file, 'utf8').split('\n');
  const expectedKernels: string[] = [];
  let kernel = '';
  for (const line of lines) {
    if (line.startsWith('    Kernel: ')) kernel = line.slice('    Kernel: '.length);
    else if (/^\s+\d+\s+dram_/.test(line)) expectedKernels.push(kernel);
  }
  t.is(expectedKernels.length, 30);
  t.deepEqual(
    p.metrics.map((m) => m.kernel),
    expectedKernels,
  );
  t.is(new Set(expectedKernels).size, 15);
  t.is(Math.max(...expectedKernels.map((k) => k.length)), 1177);
  t.deepEqual(
    p.metrics.map((m) => m.invocations),
    [
      1998, 1998, 1998, 1998, 1998, 1998, 999, 999, 999, 999, 999, 999, 3, 3, 999, 999, 999, 999, 1, 1, 999, 999, 999,
      999, 999, 999, 999, 999, 6, 6,
    ],
  );
  t.deepEqual(
    { ...p.metrics[0], kernel: undefined },
    {
      device: 'GeForce GTX 1070 (0)',
      kernel: undefined,
      invocations: 1998,
      metric: 'dram_read_throughput',
      description: 'Device Memory Read Throughput',
      min: '0.00000B/s',
      max: '4.7831GB/s',
      avg: '588.42MB/s',
    },
  );
  t.deepEqual(
    { ...p.metrics[29], kernel: undefined },
    {
      device: 'GeForce GTX 1070 (0)',
      kernel: undefined,
      invocations: 6,
      metric: 'dram_write_throughput',
      description: 'Device Memory Write Throughput',
      min: '0.00000B/s',
      max: '0.00000B/s',
      avg: '0.00000B/s',
    },
  );
});

test('splitTraceName: API launch rows split; GPU rows keep their exact name and gain the correlation id; names without one unchanged', (t) => {
  t.deepEqual(splitTraceName('cudaLaunchKernel (void matrixMulCUDA<int=32>(float*, float*, float*, int, int) [116])'), {
    name: 'cudaLaunchKernel',
    kernel: 'void matrixMulCUDA<int=32>(float*, float*, float*, int, int)',
    correlationId: 116,
  });
  t.deepEqual(splitTraceName('cudaLaunch (k(int) [7])'), { name: 'cudaLaunch', kernel: 'k(int)', correlationId: 7 });
  t.deepEqual(splitTraceName('void matrixMulCUDA<int=32>(float*, float*, float*, int, int) [94]'), {
    name: 'void matrixMulCUDA<int=32>(float*, float*, float*, int, int) [94]',
    correlationId: 94,
  });
  t.deepEqual(splitTraceName('[CUDA memcpy HtoD]'), { name: '[CUDA memcpy HtoD]' });
  t.deepEqual(splitTraceName('cudaMalloc'), { name: 'cudaMalloc' });
});

test('the oldest nsys --stats=true form (`CUDA API Statistics (nanoseconds)` after `Generating ...`) parses to the same reports as the new one', async (t) => {
  const parsed = await parseProfileFile(join(PUBLIC, 'nsys-stats-2021-nanoseconds-csc.txt'));
  if (parsed.kind !== 'nsys') return t.fail('not detected as nsys');
  const { reports, tables } = parsed.result.value;
  t.deepEqual(
    tables.map((x) => [x.report, x.title, x.rows.length]),
    [
      ['cuda_api_sum', 'CUDA API Statistics', 2],
      ['cuda_gpu_kern_sum', 'CUDA Kernel Statistics', 1],
      ['cuda_gpu_mem_time_sum', 'CUDA Memory Operation Statistics', 2],
      ['cuda_gpu_mem_size_sum', 'CUDA Memory Operation Statistics (KiB)', 2],
      ['osrt_sum', 'Operating System Runtime API Statistics', 3],
    ],
  );
  t.deepEqual(reports.cuda_api_sum.rows[0], {
    timePct: 85.3,
    totalNs: 323_223_522,
    calls: 4,
    avgNs: 80_805_880.5, // as printed
    minNs: 128_957,
    maxNs: 322_811_927,
    name: 'cudaMalloc',
  });
  t.deepEqual(
    reports.cuda_gpu_kern_sum.rows[0].name,
    'multiply_add_kn(float*, float const*, float const*, float const*, int)',
  );
  t.deepEqual(reports.cuda_gpu_mem_size_sum.rows[1], {
    total: 11718.75,
    count: 3,
    avg: 3906.25,
    min: 3906.25,
    max: 3906.25,
    name: '[CUDA memcpy HtoD]',
  });
  // a row the author shifted by a column still reads by its rule; the `....` elisions are not rows
  t.deepEqual(reports.osrt_sum.rows[2], {
    timePct: 5.5,
    totalNs: 28_249_766,
    calls: 4,
    avgNs: 7_062_441.5,
    minNs: 3_763,
    maxNs: 15_288_473,
    name: 'fread',
  });
  t.deepEqual(
    parsed.result.diagnostics.map((d) => d.line),
    [1, 20, 48],
  );
});

test('the nsys 2019.5 form, with its importer chatter, is recognised from its `Generating` lines (written in that shape; no public copy to cite)', (t) => {
  const log = [
    'Exported successfully to',
    '/build/report1.sqlite',
    '',
    'Generating CUDA API Statistics...',
    'CUDA API Statistics (nanoseconds)',
    '',
    'Time(%)      Total Time       Calls         Average         Minimum         Maximum  Name',
    '-------  --------------  ----------  --------------  --------------  --------------  --------------------',
    '   61.0        50000000          10       5000000.0           40000        30000000  cudaMemcpy',
    '   39.0        32000000           2      16000000.0            5000        31995000  cudaMalloc',
    '',
  ].join('\n');
  const r = parseNsysStats(log);
  t.deepEqual(r.value.reports.cuda_api_sum.rows[1], {
    timePct: 39,
    totalNs: 32_000_000,
    calls: 2,
    avgNs: 16_000_000,
    minNs: 5_000,
    maxNs: 31_995_000,
    name: 'cudaMalloc',
  });
  t.deepEqual(r.diagnostics, []);
});

test('nvprof --csv: the Unified Memory section is a table of its own, sizes with their units and times in ns (written in that shape; no public copy found)', (t) => {
  const log = [
    '==4242== NVPROF is profiling process 4242, command: ./um',
    '==4242== Profiling application: ./um',
    '==4242== Profiling result:',
    '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"',
    ',%,us,,us,us,us,',
    '"GPU activities",100.000000,93.471000,1,93.471000,93.471000,93.471000,"add(int, float*, float*)"',
    '',
    '==4242== Unified Memory profiling result:',
    '"Device","Count","Avg Size","Min Size","Max Size","Total Size","Total Time","Name"',
    ',,KB,KB,MB,MB,ms,',
    '"Tesla K80 (0)",6,1365.333333,896.000000,2.000000,8.000000,1.154720,"Host To Device"',
    '"Tesla K80 (0)",102,120.470588,4.000000,0.996094,12.000000,1.895040,"Device To Host"',
    '"Tesla K80 (0)",12,,,,,2.820396,"Gpu page fault groups"',
  ].join('\n');
  const r = parseNvprof(`${log}\n`);
  const [p] = r.value.processes;
  t.is(p.summary[0].totalNs, 93_471);
  t.deepEqual(p.unifiedMemory?.rows, [
    {
      device: 'Tesla K80 (0)',
      count: 6,
      avgSize: '1365.333333KB',
      minSize: '896.000000KB',
      maxSize: '2.000000MB',
      totalSize: '8.000000MB',
      totalNs: 1_154_720,
      name: 'Host To Device',
    },
    {
      device: 'Tesla K80 (0)',
      count: 102,
      avgSize: '120.470588KB',
      minSize: '4.000000KB',
      maxSize: '0.996094MB',
      totalSize: '12.000000MB',
      totalNs: 1_895_040,
      name: 'Device To Host',
    },
    {
      device: 'Tesla K80 (0)',
      count: 12,
      avgSize: '-',
      minSize: '-',
      maxSize: '-',
      totalSize: '-',
      totalNs: 2_820_396,
      name: 'Gpu page fault groups',
    },
  ]);
  t.deepEqual(r.diagnostics, []);
  // the same section with units in the cells and no units row
  const inline = parseNvprof(
    [
      '==7== Unified Memory profiling result:',
      '"Device","Count","Avg Size","Min Size","Max Size","Total Size","Total Time","Name"',
      '"GeForce GTX 1080 (0)",48,"170.67KB","4.0000KB","0.9961MB","8.000000MB","843.8660us","Host To Device"',
      '',
    ].join('\n'),
  );
  t.deepEqual(inline.value.processes[0].unifiedMemory?.rows[0], {
    device: 'GeForce GTX 1080 (0)',
    count: 48,
    avgSize: '170.67KB',
    minSize: '4.0000KB',
    maxSize: '0.9961MB',
    totalSize: '8.000000MB',
    totalNs: 843_866,
    name: 'Host To Device',
  });
});

test('nvprof --csv metric and event results become metric rows, one per kernel and metric (written in the shape nvprof prints)', (t) => {
  const log = [
    '==30874== Profiling application: ./jacobi',
    '==30874== Profiling result:',
    '==30874== Metric result:',
    '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"',
    '"Tesla K20c (0)","stencil(float*, int, int)",3,"flop_count_sp","Floating Point Operations(Single Precision)",80937000,80937000,80937000',
    '"Tesla K20c (0)","stencil(float*, int, int)",3,"gst_efficiency","Global Memory Store Efficiency",22.791245%,22.791245%,22.791245%',
    '==30874== Event result:',
    '"Device","Kernel","Invocations","Event Name","Min","Max","Avg","Total"',
    '"Tesla K20c (0)","stencil(float*, int, int)",3,"warps_launched",4096,4096,4096,12288',
    '',
  ].join('\n');
  const r = parseNvprof(log);
  t.deepEqual(r.value.processes[0].metrics, [
    {
      device: 'Tesla K20c (0)',
      kernel: 'stencil(float*, int, int)',
      invocations: 3,
      metric: 'flop_count_sp',
      description: 'Floating Point Operations(Single Precision)',
      min: '80937000',
      max: '80937000',
      avg: '80937000',
    },
    {
      device: 'Tesla K20c (0)',
      kernel: 'stencil(float*, int, int)',
      invocations: 3,
      metric: 'gst_efficiency',
      description: 'Global Memory Store Efficiency',
      min: '22.791245%',
      max: '22.791245%',
      avg: '22.791245%',
    },
    {
      device: 'Tesla K20c (0)',
      kernel: 'stencil(float*, int, int)',
      invocations: 3,
      metric: 'warps_launched',
      min: '4096',
      max: '4096',
      avg: '4096',
      total: '12288',
    },
  ]);
  t.deepEqual(r.diagnostics, []);
});

test('a --metrics all log of about 400 KB (40 kernels x 120 metrics, long descriptions, `Low (1)` values) keeps every metric row', (t) => {
  const header =
    'Invocations                               Metric Name                                                    Metric Description         Min         Max         Avg';
  const lines = [
    '==5928== NVPROF is profiling process 5928, command: ./app',
    '==5928== Profiling application: ./app',
    '==5928== Profiling result:',
    '==5928== Metric result:',
    header,
    'Device "NVIDIA GeForce GTX 1070 (0)"',
  ];
  const values = ['12.000000', '100.00%', 'Low (1)', '154.44GB/s', '20480', '0.00000B/s'];
  for (let k = 0; k < 40; k++) {
    lines.push(`    Kernel: void kernel_${k}<float, int=${k}>(float const *, float*, int, int)`);
    for (let m = 0; m < 120; m++) {
      const v = values[(k + m) % values.length];
      const name = `metric_${m}_${'x'.repeat(m % 17)}`;
      const description = `Issue Stall Reasons (Execution Dependency ${m})`;
      // right-aligned under each header label, as nvprof prints them
      const cells = [String(1 + (k % 3)), name, description, v, v, v];
      const ends = [...header.matchAll(/\S+(?: \S+)*/g)].map((x) => x.index! + x[0].length);
      let line = '';
      cells.forEach((c, i) => (line += c.padStart(ends[i] - line.length)));
      lines.push(line);
    }
  }
  const text = `${lines.join('\n')}\n`;
  t.true(text.length > 400_000, `${text.length} bytes`);
  const r = parseNvprof(text);
  const metrics = r.value.processes[0].metrics;
  t.is(metrics.length, 40 * 120);
  t.deepEqual(metrics[4799], {
    device: 'NVIDIA GeForce GTX 1070 (0)',
    kernel: 'void kernel_39<float, int=39>(float const *, float*, int, int)',
    invocations: 1,
    metric: `metric_119_${'x'.repeat(119 % 17)}`,
    description: 'Issue Stall Reasons (Execution Dependency 119)',
    min: values[(39 + 119) % 6],
    max: values[(39 + 119) % 6],
    avg: values[(39 + 119) % 6],
  });
  t.deepEqual(r.diagnostics, []);
});

test('a log whose only content is a prompt line and program output keeps no PID-less process', (t) => {
  const r = parseNvprof('$ ./app\nhello\n');
  t.deepEqual(r.value.processes, []);
  t.false(keptAnyTable({ kind: 'nvprof', result: r }));
});

test('a trace-only log concatenated with itself is noticed as a repeated run, like one with a summary', async (t) => {
  const { readFileSync, writeFileSync } = await import('node:fs');
  const { scratchDir } = await import('./helpers/fixtures.ts');
  const once = readFileSync(join(PUBLIC, 'nvprof-api-trace-vector-add.txt'), 'utf8');
  // the excerpt starts at `Profiling application`; a whole log starts with the run header
  const run = `==84665== NVPROF is profiling process 84665, command: ./vector-add\n${once}`;
  const file = join(scratchDir(), 'api-trace-twice.txt');
  writeFileSync(file, run + run);
  const parsed = await parseProfileFile(file);
  if (parsed.kind !== 'nvprof') return t.fail('detected as nsys');
  t.is(parsed.result.value.processes.length, 1);
  t.is(parsed.result.value.processes[0].apiTrace?.length, 23, 'the first copy is kept, not both');
  t.true(parsed.result.diagnostics.some((d) => d.code === 'DUPLICATE_RUN'));
});

test('jetprof parse --format md on a trace-only log shows the trace (there is no summary) and says so', async (t) => {
  const { runCli } = await import('./helpers/fixtures.ts');
  const r = await runCli('jetprof', ['parse', join(PUBLIC, 'nvprof-api-trace-vector-add.txt'), '--format', 'md']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /has no summary table; showing --section api-trace/);
  t.regex(r.stdout, /^### API trace, process 84665/m);
  t.regex(
    r.stdout,
    /\| 286\.210 ms \| 40\.939 us \| cudaLaunchKernel \| vector_add\(float\*, float\*, float\*, int\) \| 112 \|/,
  );
});
