/**
 * Forms nvprof and nsys write that jetprof refused or garbled (#35), one test each. The nsys expert-system output is
 * real (nsys 2022.4 `nsys analyze` run here on a small SQLite export holding CUDA runtime and memcpy rows:
 * test/fixtures/profiles/nsys-analyze-2022.4*.txt); the nvprof CSV traces and the Windows-1252 log are written in the
 * shape those tools print (no copy under a licence that lets us keep it), each value checked by hand below.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNsysStats } from '../src/parsers/nsys.ts';
import { parseNvprof } from '../src/parsers/nvprof.ts';
import { parseProfileFile } from '../src/parsers/parse-file.ts';
import { nvprofTables, tablesToMarkdown } from '../src/report/profile-tables.ts';
import { detectEncoding } from '../src/util/text-input.ts';
import { ROOT, runCli, scratchDir } from './helpers/fixtures.ts';

const PROFILES = join(ROOT, 'test/fixtures/profiles');
const tmp = scratchDir();

/**
 * A table as nsys prints it: each column as wide as its widest cell, a rule of dashes under the header, two spaces
 * between columns, numbers right-aligned and the last (name) column left-aligned.
 */
function nsysColumns(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    ' ' + cells.map((c, i) => (i === cells.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(headers), ' ' + widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n') + '\n';
}

const GPU_TRACE_CSV = `==30866== NVPROF is profiling process 30866, command: ./vector_add
==30866== Profiling application: ./vector_add
==30866== Profiling result:
"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","SrcMemType","DstMemType","Device","Context","Stream","Name","Correlation_ID"
s,us,,,,,,,,B,B,KB,GB/s,,,,,,,
0.563915,2.432000,,,,,,,,,,4.000000,1.568627,"Pageable","Device","GeForce GTX 1070 (0)","1","7","[CUDA memcpy HtoD]",109
0.564142,3.552000,4,1,1,256,1,1,8,0,1024,,,,,"GeForce GTX 1070 (0)","1","7","vector_add(float*, float*, float*, int) [112]",112
0.564301,1.216000,,,,,,,,,,0.500000,0.392157,"Device","Pageable","GeForce GTX 1070 (0)","1","7","[CUDA memcpy DtoH]",114
`;

test('nvprof --print-gpu-trace --csv: rows to the GPU trace, times in exact ns from each column unit, sizes in bytes, name and correlation id apart', (t) => {
  const r = parseNvprof(GPU_TRACE_CSV);
  t.deepEqual(r.diagnostics, []);
  const [p] = r.value.processes;
  t.is(p.gpuTrace!.length, 3);
  t.deepEqual(p.gpuTrace![0], {
    startNs: 563_915_000, // 0.563915 s
    durationNs: 2_432, // 2.432000 us
    sizeBytes: 4_096, // 4.000000 KB, nvprof's KB being 1024 B
    throughput: '1.568627GB/s',
    srcMemType: 'Pageable',
    dstMemType: 'Device',
    device: 'GeForce GTX 1070 (0)',
    context: 1,
    stream: 7,
    name: '[CUDA memcpy HtoD]',
    correlationId: 109,
  });
  t.like(p.gpuTrace![1], {
    startNs: 564_142_000,
    durationNs: 3_552,
    gridX: 4,
    blockX: 256,
    registersPerThread: 8,
    staticSmemBytes: 0,
    dynamicSmemBytes: 1_024,
    name: 'vector_add(float*, float*, float*, int) [112]', // as printed, like the text form
    correlationId: 112,
  });
  t.is(p.gpuTrace![2].sizeBytes, 512); // 0.5 KB
  t.is(p.apiTrace, undefined);
});

test('nvprof --print-api-trace --csv and the text form: the API name, the kernel it launches and the correlation id are separate fields', (t) => {
  const csv = parseNvprof(`==30866== NVPROF is profiling process 30866, command: ./vadd
==30866== Profiling result:
"Start","Duration","Name","Correlation_ID"
ms,us,,
224.260000,5.406000,"cudaMalloc",101
224.400000,12.345000,"cudaLaunchKernel (vector_add_kernel(float const *, float const *, float*, int) [129])",129
`);
  t.deepEqual(csv.diagnostics, []);
  t.deepEqual(csv.value.processes[0].apiTrace, [
    { startNs: 224_260_000, durationNs: 5_406, name: 'cudaMalloc', correlationId: 101 },
    {
      startNs: 224_400_000,
      durationNs: 12_345,
      name: 'cudaLaunchKernel',
      kernel: 'vector_add_kernel(float const *, float const *, float*, int)',
      correlationId: 129,
    },
  ]);
  // the text form on one line (before: the whole `cudaLaunchKernel (...)` was the name, so no launch was counted)
  const text = parseNvprof(`==4242== NVPROF is profiling process 4242, command: ./vadd
==4242== Profiling result:
   Start  Duration  Name
224.26ms  5.4060us  cudaMalloc
224.40ms  12.345us  cudaLaunchKernel (vector_add_kernel(float const *, float const *, float*, int) [129])
224.50ms  1.2340us  cudaDeviceSynchronize
`);
  const rows = text.value.processes[0].apiTrace!;
  t.is(rows.filter((r) => r.name === 'cudaLaunchKernel').length, 1);
  t.deepEqual(rows[1], {
    startNs: 224_400_000,
    durationNs: 12_345,
    name: 'cudaLaunchKernel',
    kernel: 'vector_add_kernel(float const *, float const *, float*, int)',
    correlationId: 129,
  });
  t.deepEqual(rows[2], { startNs: 224_500_000, durationNs: 1_234, name: 'cudaDeviceSynchronize' });
});

test('nvprof metric trace in CSV: one record per launch with its metrics; <OVERFLOW> is a flag, never a number; units from the units row or the cell', (t) => {
  const r = parseNvprof(`==12010== NVPROF is profiling process 12010, command: ./matmul
==12010== Some kernel(s) will be replayed on device 0 in order to collect all events/metrics.
==12010== Profiling application: ./matmul
==12010== Profiling result:
"Device","Context","Stream","Kernel","Correlation_ID","achieved_occupancy","gld_efficiency","dram_read_throughput","inst_executed","sm_efficiency"
,,,,,,%,GB/s,,
"GeForce GTX 1070 (0)","1","7","matmul(float const *, float const *, float*, int)",117,0.498731,85.500000,12.345600,<OVERFLOW>,97.25%
"GeForce GTX 1070 (0)","1","7","matmul(float const *, float const *, float*, int)",121,0.501102,85.500000,12.290100,1048576,Low (1)
`);
  t.deepEqual(r.diagnostics, []);
  const mt = r.value.processes[0].metricTrace!;
  t.is(mt.length, 2);
  t.deepEqual(mt[0], {
    device: 'GeForce GTX 1070 (0)',
    context: '1',
    stream: '7',
    kernel: 'matmul(float const *, float const *, float*, int)',
    correlationId: 117,
    values: {
      achieved_occupancy: 0.498731,
      gld_efficiency: 85.5,
      dram_read_throughput: 12.3456,
      inst_executed: null,
      sm_efficiency: 97.25,
    },
    units: { gld_efficiency: '%', dram_read_throughput: 'GB/s', sm_efficiency: '%' },
    flags: { inst_executed: '<OVERFLOW>' },
  });
  t.is(mt[1].values.inst_executed, 1_048_576);
  t.deepEqual(mt[1].flags, { sm_efficiency: 'Low (1)' });
  const md = tablesToMarkdown(nvprofTables(r.value, 'metric-trace'));
  t.regex(md, /\| 117 \| 0\.498731 \| 85\.5 \| 12\.3456 \| \\<OVERFLOW\\> \| 97\.25 \|/);
});

test('a log saved as Windows-1252 (nsys on Windows truncates names with …, byte 0x85): names end in …, not U+FFFD, and a note says which encoding was assumed', async (t) => {
  const text = ` ** NVTX Range Summary (nvtx_sum):

${nsysColumns(
  [
    'Time (%)',
    'Total Time (ns)',
    'Instances',
    'Avg (ns)',
    'Med (ns)',
    'Min (ns)',
    'Max (ns)',
    'StdDev (ns)',
    'Style',
    'Range',
  ],
  [
    [
      '61.2',
      '4,400,878',
      '3',
      '1,466,959.3',
      '1,466,960',
      '1,466,950',
      '1,466,968',
      '9.0',
      'PushPop',
      'TensorRT:Reformatting…',
    ],
    [
      '38.8',
      '2,790,001',
      '3',
      '930,000.3',
      '930,000',
      '929,990',
      '930,011',
      '10.5',
      'PushPop',
      'TensorRT:ExecutionCon…',
    ],
  ],
)}`;
  const file = join(tmp, 'nsys-cp1252.txt');
  writeFileSync(file, Buffer.from(text.replace(/…/g, '\u0085'), 'latin1'));
  t.is(detectEncoding(Buffer.from(text.replace(/…/g, '\u0085'), 'latin1')).encoding, 'windows1252');
  const parsed = await parseProfileFile(file);
  if (parsed.kind !== 'nsys') return t.fail('detected as nvprof');
  const rows = parsed.result.value.reports.nvtx_sum.rows;
  t.deepEqual(
    rows.map((r) => r.range),
    ['TensorRT:Reformatting…', 'TensorRT:ExecutionCon…'],
  );
  t.like(rows[0], { avgNs: 1_466_959.3, stddevNs: 9 });
  t.deepEqual(
    parsed.result.diagnostics.map((d) => d.code),
    ['ENCODING_ASSUMED'],
  );
  t.regex(parsed.result.diagnostics[0].message, /Windows-1252/);
  // a UTF-8 log with the same names needs no note
  const utf8 = join(tmp, 'nsys-utf8.txt');
  writeFileSync(utf8, text);
  const plain = await parseProfileFile(utf8);
  t.deepEqual(plain.result.diagnostics, []);
  t.deepEqual(plain.result.value, parsed.result.value);
  // an invalid byte past the 64 KiB head that decides the encoding: that line is read as Windows-1252 too
  const filler = `[1/2] Executing 'nvtx_sum' stats report\n${`WARNING: ${'x'.repeat(100)}\n`.repeat(700)}`;
  const late = join(tmp, 'nsys-late-cp1252.txt');
  writeFileSync(late, Buffer.concat([Buffer.from(filler), Buffer.from(text.replace(/…/g, '\u0085'), 'latin1')]));
  const lateParsed = await parseProfileFile(late);
  if (lateParsed.kind !== 'nsys') return t.fail('detected as nvprof');
  t.deepEqual(
    lateParsed.result.value.reports.nvtx_sum.rows.map((r) => r.range),
    ['TensorRT:Reformatting…', 'TensorRT:ExecutionCon…'],
  );
  t.regex(lateParsed.result.diagnostics[0].message, /2 line\(s\) not valid UTF-8: read as Windows-1252/);
});

test('nsys SKIPPED lines under Windows paths: each skipped report keeps its own name', (t) => {
  const r =
    parseNsysStats(String.raw`Processing [C:\Users\lab user\report1.sqlite] with [C:\Program Files\NVIDIA Corporation\Nsight Systems 2023.4.1\host-windows-x64\reports\nvtx_sum.py]... 
SKIPPED: C:\Users\lab user\report1.sqlite does not contain NV Tools Extension (NVTX) data.

Processing [C:\Users\lab user\report1.sqlite] with [C:\Program Files\NVIDIA Corporation\Nsight Systems 2023.4.1\host-windows-x64\reports\cuda_api_sum.py]... 
SKIPPED: C:\Users\lab user\report1.sqlite does not contain CUDA trace data.

Processing [C:\Users\lab user\report1.sqlite] with [C:\Program Files\NVIDIA Corporation\Nsight Systems 2023.4.1\host-windows-x64\reports\osrt_sum.py]... 

 ** OS Runtime Summary (osrt_sum):

${nsysColumns(
  ['Time (%)', 'Total Time (ns)', 'Num Calls', 'Avg (ns)', 'Med (ns)', 'Min (ns)', 'Max (ns)', 'StdDev (ns)', 'Name'],
  [['100.0', '1,200,001', '3', '400,000.3', '400,000.0', '399,000', '401,001', '1,000.5', 'WaitForSingleObject']],
)}`);
  t.deepEqual(r.value.skipped, {
    nvtx_sum: 'does not contain NV Tools Extension (NVTX) data.',
    cuda_api_sum: 'does not contain CUDA trace data.',
  });
  t.deepEqual(r.value.reports.osrt_sum.rows[0], {
    timePct: 100,
    totalNs: 1_200_001,
    calls: 3,
    avgNs: 400_000.3,
    medNs: 400_000,
    minNs: 399_000,
    maxNs: 401_001,
    stddevNs: 1_000.5,
    name: 'WaitForSingleObject',
  });
  t.deepEqual(r.diagnostics, []);
});

test('program output before the first ==PID== line (a commit hash in >>> <<<, a banner of = signs) is a diagnostic, never a process', (t) => {
  const r = parseNvprof(`>>> 3f2a9c1 <<<
========== yolo demo ==========
Loading engine...
==4243== NVPROF is profiling process 4243, command: ./a
==4243== Profiling application: ./a
==4243== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:  100.00%  1.0000us         1  1.0000us  1.0000us  1.0000us  k(int)
`);
  t.deepEqual(
    r.value.processes.map((p) => p.pid),
    [4243],
  );
  t.deepEqual(
    r.diagnostics.map((d) => [d.line, d.code]),
    [
      [1, 'UNRECOGNIZED_LINE'],
      [2, 'UNRECOGNIZED_LINE'],
      [3, 'UNRECOGNIZED_LINE'],
    ],
  );
  // nvprof -i's own prefix still reads as import mode
  const imported = parseNvprof(`======== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:  100.00%  1.0000us         1  1.0000us  1.0000us  1.0000us  k(int)
`);
  t.deepEqual(
    imported.value.processes.map((p) => [p.pid, p.summary.length]),
    [[null, 1]],
  );
});

test('nsys figures as printed: Avg, Med and StdDev keep their decimal; PID and TID are integers, not grouped text', (t) => {
  const r = parseNsysStats(`[5/8] Executing 'cuda_api_trace' stats report

${nsysColumns(
  ['Start (ns)', 'Duration (ns)', 'Name', 'Result', 'CorrID', 'Pid', 'Tid', 'T-Pri', 'Thread Name'],
  [['308,521,414', '3,597,504', 'cudaMalloc', '0', '1', '2,423,839', '2,423,840', '20', 'python3']],
)}
[6/8] Executing 'osrt_sum' stats report

${nsysColumns(
  ['Time (%)', 'Total Time (ns)', 'Num Calls', 'Avg (ns)', 'Med (ns)', 'Min (ns)', 'Max (ns)', 'StdDev (ns)', 'Name'],
  [['88.1', '10,792,514', '3', '3,597,504.7', '3,597,504.5', '3,597,000', '3,598,010', '505.0', 'ioctl']],
)}`);
  t.deepEqual(r.diagnostics, []);
  t.like(r.value.reports.cuda_api_trace.rows[0], {
    startNs: 308_521_414,
    durationNs: 3_597_504,
    pid: 2_423_839,
    tid: 2_423_840,
  });
  t.deepEqual(r.value.reports.osrt_sum.rows[0], {
    timePct: 88.1,
    totalNs: 10_792_514,
    calls: 3,
    avgNs: 3_597_504.7,
    medNs: 3_597_504.5,
    minNs: 3_597_000,
    maxNs: 3_598_010,
    stddevNs: 505,
    name: 'ioctl',
  });
  // JSON shows the digits of the log
  t.regex(JSON.stringify(r.value.reports.osrt_sum.rows[0]), /"avgNs":3597504\.7,"medNs":3597504\.5/);
});

test('nsys expert system (real nsys analyze 2022.4 output): each rule is a report of its own with its advice; rules that found nothing say so; no line is "not understood"', (t) => {
  const r = parseNsysStats(readFileSync(join(PROFILES, 'nsys-analyze-2022.4.txt'), 'utf8'));
  t.deepEqual(r.diagnostics, []);
  t.deepEqual(Object.keys(r.value.reports), ['cuda-sync-api', 'cuda-async-memcpy']);
  t.deepEqual(
    r.value.reports['cuda-sync-api'].rows.map((x) => [x.durationNs, x.startNs, x.pid, x.tid, x.apiName]),
    [
      [3_597_735, 3_900_009, 2_423_839, 2_423_840, 'cudaDeviceSynchronize'],
      [3_597_658, 2_900_006, 2_423_839, 2_423_840, 'cudaDeviceSynchronize'],
      [3_597_581, 1_900_003, 2_423_839, 2_423_840, 'cudaDeviceSynchronize'],
      [3_597_504, 900_000, 2_423_839, 2_423_840, 'cudaDeviceSynchronize'],
    ],
  );
  t.like(r.value.reports['cuda-async-memcpy'].rows[0], {
    durationNs: 32_468,
    srcKind: 'Pageable',
    dstKind: 'Device',
    apiName: 'cudaMemcpyAsync',
  });
  const f = r.value.findings!;
  t.deepEqual(Object.keys(f), ['cuda-sync-api', 'cuda-async-memcpy', 'cuda-sync-memcpy', 'gpu-starv']);
  t.is(f['cuda-sync-api'].title, 'CUDA Synchronization APIs');
  t.is(
    f['cuda-sync-api'].text,
    [
      'The following are synchronization APIs that block the host until all issued',
      'CUDA calls are complete.',
      '',
      'Suggestions:',
      '   1. Avoid excessive use of synchronization.',
      '   2. Use asynchronous CUDA event calls, such as cudaStreamWaitEvent() and',
      'cudaEventSynchronize(), to prevent host synchronization.',
    ].join('\n'),
  );
  t.is(f['cuda-sync-memcpy'].text, 'There were no problems detected related to synchronous memcpy operations.');
  // the CSV form (nsys analyze --format csv): the table follows the rule's Processing line, a last rule printed nothing
  const csv = parseNsysStats(readFileSync(join(PROFILES, 'nsys-analyze-2022.4-csv.txt'), 'utf8'));
  t.deepEqual(csv.diagnostics, []);
  t.deepEqual(csv.value.reports['cuda-sync-api'].rows, r.value.reports['cuda-sync-api'].rows);
});

test('jetprof parse --format md shows the expert system advice under its tables; a GPU-trace-only CSV log parses (exit 0)', async (t) => {
  const md = await runCli('jetprof', ['parse', join(PROFILES, 'nsys-analyze-2022.4.txt'), '--format', 'md']);
  t.is(md.code, 0, md.stderr);
  t.regex(md.stdout, /## nsys expert system/);
  t.regex(md.stdout, /> Suggestion: If applicable, use PINNED memory instead\./);
  t.regex(md.stdout, /\| 3\.598 ms \| 3\.900 ms \| 2423839 \| 2423840 \| cudaDeviceSynchronize \|/);
  const file = join(tmp, 'gpu-trace.csv');
  writeFileSync(file, GPU_TRACE_CSV);
  const json = await runCli('jetprof', ['parse', file]);
  t.is(json.code, 0, json.stderr);
  t.is(JSON.parse(json.stdout).processes[0].gpuTrace.length, 3);
});
