/** nvprof parser against real logs (../shared/fixtures/profiler-logs, expected extracts in EXPECTED.md there). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNvprof, type NvprofProcess } from '../src/parsers/nvprof.ts';
import { requires, SHARED_FIXTURES } from './helpers/fixtures.ts';

const DIR = join(SHARED_FIXTURES, 'profiler-logs/nvprof');
const shared = requires(existsSync(DIR), `${DIR} is not beside this checkout (CI has it)`);

function only(file: string): NvprofProcess {
  const r = parseNvprof(readFileSync(join(DIR, file), 'utf8'));
  if (r.value.processes.length !== 1) throw new Error(`${file}: ${r.value.processes.length} processes`);
  return r.value.processes[0];
}
const gpu = (p: NvprofProcess) => p.summary.filter((r) => r.type === 'GPU activities');
const api = (p: NvprofProcess) => p.summary.filter((r) => r.type === 'API calls');

shared('01 e6692 TensorRT on a Jetson Nano: summary, NVTX per layer, dependency analysis', (t) => {
  const r = parseNvprof(readFileSync(join(DIR, '01-e6692-xs2445-trt-jetson-nvtx-dep.txt'), 'utf8'));
  t.deepEqual(r.diagnostics, []);
  const p = r.value.processes[0];
  t.is(p.pid, 287);
  t.is(p.command, 'python3 trt_inference.py -t ./engines/yolov4-tiny-person-vehicle.trt');
  t.is(gpu(p).length, 17);
  t.is(api(p).length, 54);
  t.deepEqual(gpu(p)[0], {
    type: 'GPU activities',
    timePct: 64.43,
    totalNs: 6354910000,
    calls: 2016,
    avgNs: 3152200,
    minNs: 987460,
    maxNs: 20348000,
    name: 'trt_maxwell_fp16x2_hcudnn_winograd_fp16x2_128x128_ldg1_ldg4_relu_tile148m_nt_v1',
  });
  t.like(gpu(p)[16], {
    timePct: 0,
    totalNs: 44791,
    calls: 8,
    avgNs: 5598,
    minNs: 4427,
    maxNs: 11823,
    name: '[CUDA memset]',
  });
  t.deepEqual(api(p)[0], {
    type: 'API calls',
    timePct: 43.51,
    totalNs: 197397000000,
    calls: 29,
    avgNs: 6806790000,
    minNs: 32136,
    maxNs: 194960000000,
    name: 'cudaMalloc',
  });
  t.like(api(p)[53], { totalNs: 1927, calls: 1, avgNs: 1927, minNs: 1927, maxNs: 1927, name: 'cuCtxGetDevice' });

  t.is(p.nvtx.domains.length, 1);
  const domain = p.nvtx.domains[0];
  t.is(domain.name, 'TensorRT');
  t.is(domain.thread, '<unnamed> (id = 2375917584)');
  t.is(domain.ranges.length, 61);
  t.is(domain.ranges[0].name, '(Unnamed Layer* 76) [PluginV2IOExt]');
  t.is(domain.ranges[60].name, 'Reformatting CopyNode for Input Tensor 0 to 034_upsample');
  t.is(domain.ranges.filter((rg) => rg.rows.length === 3).length, 60);
  const enqueue = domain.ranges.find((rg) => rg.name === 'ExecutionContext::enqueue')!;
  t.is(enqueue.rows.filter((x) => x.type === 'Range').length, 1);
  t.is(enqueue.rows.filter((x) => x.type === 'GPU activities').length, 14);
  t.is(enqueue.rows.filter((x) => x.type === 'API calls').length, 4);
  t.like(enqueue.rows[0], { totalNs: 1363720000, calls: 168, avgNs: 8117400, minNs: 3749600, maxNs: 599680000 });
  t.deepEqual(domain.ranges[0].rows[0], {
    type: 'Range',
    timePct: 100,
    totalNs: 47986000,
    calls: 168,
    avgNs: 285630,
    minNs: 65677,
    maxNs: 33001000,
    name: '(Unnamed Layer* 76) [PluginV2IOExt]',
  });
  t.is(
    domain.ranges[0].rows[1].name,
    'nvinfer1::CalDetection(float const *, float*, int, int, int, int, float const *, int, int, int, float)',
  );

  t.is(p.dependency.length, 72);
  t.deepEqual(p.dependency[0], {
    criticalPathPct: 37.41,
    criticalPathNs: 197397023000,
    waitingNs: 0,
    name: 'cudaMalloc',
  });
  t.deepEqual(p.dependency[1], {
    criticalPathPct: 33.19,
    criticalPathNs: 175129550000,
    waitingNs: 0,
    name: 'cuCtxDetach',
  });
  t.like(p.dependency[2], { criticalPathPct: 14.01, criticalPathNs: 73946650000, name: '<Other>' });
  t.deepEqual(
    p.dependency.filter((d) => d.waitingNs > 0).map((d) => [d.name, d.criticalPathNs, d.waitingNs]),
    [
      ['cudaStreamSynchronize', 48155303, 16082453],
      ['cuStreamSynchronize', 29532, 8653162000],
    ],
  );
  t.deepEqual(p.dependency[71], { criticalPathPct: 0, criticalPathNs: 0, waitingNs: 0, name: '[CUDA memset]' });
  t.true(p.dependency.some((d) => d.name === 'cudaStreamCreateWithFlags_v5000'));
  t.is(p.unifiedMemory, undefined);
});

shared('03 CSV mode: per-column units, quoted names with commas, no trailing newline', (t) => {
  const p = only('03-gpgpu-florian-csv-gpusummary-acet.txt');
  t.is(p.command, '/home/florian.segard-gahery/build_test/stream --mode=gpu samples/ACET.mp4 --output=gg.mp4');
  t.is(gpu(p).length, 13);
  t.is(api(p).length, 0);
  t.deepEqual(gpu(p)[0], {
    type: 'GPU activities',
    timePct: 56.17675,
    totalNs: 1285081000,
    calls: 13672,
    avgNs: 93993,
    minNs: 86845,
    maxNs: 103325,
    name: 'hysteresis_kernel(ImageView<bool>, ImageView<bool>, int, int, bool*)',
  });
  t.like(gpu(p)[12], {
    timePct: 0.004997,
    totalNs: 114000,
    calls: 14,
    avgNs: 8164,
    minNs: 6016,
    maxNs: 10431,
    name: 'MemsetD2D_BL',
  });
});

shared('05 metrics per device and kernel, values with spaces', (t) => {
  const p = only('05-thrust2d-metrics-gtx1070.txt');
  t.is(p.metrics.length, 15);
  t.deepEqual(p.metrics[0], {
    device: 'GeForce GTX 1070 (0)',
    kernel: 'getError(int, int, float*, float*, float*)',
    invocations: 1,
    metric: 'branch_efficiency',
    description: 'Branch Efficiency',
    min: '100.00%',
    max: '100.00%',
    avg: '100.00%',
  });
  t.like(p.metrics[5], {
    kernel: 'void better_reduce_kernel<unsigned int=1024>(float*, float*, unsigned int, unsigned int)',
    invocations: 1000,
  });
  t.like(p.metrics[4], { metric: 'shared_utilization', min: 'Idle (0)', avg: 'Idle (0)' });
  t.like(p.metrics[9], { min: 'Low (1)' });
});

shared('06 old layout (no Type column, separate API calls table) and two warnings', (t) => {
  const p = only('06-thrust2d-oldformat-warnings.txt');
  t.is(p.warnings.length, 2);
  t.regex(p.warnings[0], /^Found 129755 invalid records/);
  t.regex(p.warnings[1], /^This can happen if device ran out of memory/);
  t.is(gpu(p).length, 9);
  t.is(api(p).length, 18);
  const top = gpu(p)[0];
  t.like(top, { timePct: 46, totalNs: 523960000, calls: 55000, avgNs: 9526, minNs: 9280, maxNs: 859100 });
  t.true(top.name.startsWith('void thrust::system::cuda::detail::bulk_::detail::launch_by_value<unsigned int=0, '));
  t.true(top.name.endsWith('>>>>(unsigned long=1)'));
  t.deepEqual(api(p)[0], {
    type: 'API calls',
    timePct: 36.36,
    totalNs: 2096520000,
    calls: 220033,
    avgNs: 9528,
    minNs: 6978,
    maxNs: 15633000,
    name: 'cudaMemcpy',
  });
  t.like(api(p)[17], { totalNs: 619, calls: 3, avgNs: 206, minNs: 103, maxNs: 339, name: 'cuDeviceGet' });
});

shared('07 import mode (======== without a PID)', (t) => {
  const p = only('07-cs533-import-summary-noPID.txt');
  t.is(p.pid, null);
  t.is(gpu(p).length, 3);
  t.is(api(p).length, 18);
  t.deepEqual(gpu(p)[0], {
    type: 'GPU activities',
    timePct: 61.98,
    totalNs: 8025100,
    calls: 60,
    avgNs: 133750,
    minNs: 73312,
    maxNs: 195870,
    name: '[CUDA memcpy HtoD]',
  });
  t.like(api(p)[0], { totalNs: 624300000, calls: 1, name: 'cudaMallocHost' });
  t.like(gpu(p)[2], { timePct: 8.1, calls: 30, name: 'vector_add_kernel(float const *, float const *, float*, int)' });
});

shared('08 --print-gpu-trace: 120 rows, values with spaces, mixed time units', (t) => {
  const p = only('08-cs533-print-gpu-trace.txt');
  const rows = p.gpuTrace!;
  t.is(rows.length, 120);
  t.is(rows.filter((r) => String(r.name).startsWith('vector_add_kernel')).length, 30);
  t.is(rows.filter((r) => r.name === '[CUDA memcpy HtoD]').length, 60);
  t.deepEqual(rows[0], {
    startNs: 0,
    durationNs: 128830,
    gridSize: '-',
    blockSize: '-',
    regs: '-',
    ssmem: '-',
    dsmem: '-',
    size: '8.0000MB',
    throughput: '60.641GB/s',
    srcMemType: 'Pinned',
    dstMemType: 'Device',
    device: 'Tesla V100-SXM2',
    context: 1,
    stream: 14,
    name: '[CUDA memcpy HtoD]',
  });
  t.like(rows[2], {
    startNs: 271550,
    durationNs: 35996,
    gridSize: '(4097 1 1)',
    blockSize: '(512 1 1)',
    regs: 16,
    ssmem: '0B',
    name: 'vector_add_kernel(float const *, float const *, float*, int) [129]',
    correlationId: 129,
  });
  t.like(rows[119], {
    startNs: 443010000,
    durationNs: 65504,
    size: '4.0000MB',
    srcMemType: 'Device',
    dstMemType: 'Pinned',
    stream: 13,
    name: '[CUDA memcpy DtoH]',
  });
});

shared('11 no kernels, unified memory rows with - placeholders, totals', (t) => {
  const p = only('11-rodinia-bfs-nokernels-um-thrash.txt');
  t.deepEqual(p.notes, ['No kernels were profiled.']);
  t.is(p.summary.length, 0);
  t.regex(p.warnings[0], /^2 records have invalid timestamps/);
  const um = p.unifiedMemory!;
  t.is(um.rows.length, 4);
  t.deepEqual(um.rows[0], {
    device: 'TITAN Xp (0)',
    count: 31,
    avgSize: '28.902KB',
    minSize: '4.0000KB',
    maxSize: '64.000KB',
    totalSize: '896.0000KB',
    totalNs: 118432,
    name: 'Host To Device',
  });
  t.like(um.rows[1], { count: 24, totalNs: 57312, name: 'Device To Host' });
  t.like(um.rows[2], { count: 12, avgSize: '-', totalNs: 942368, name: 'Gpu page fault groups' });
  t.like(um.rows[3], { count: 32, totalSize: '128.0000KB', totalNs: null, name: 'Memory thrashes' });
  t.deepEqual(um.totals, { totalCpuPageFaults: 154, totalCpuThrashes: 32 });
});

shared('13 a warning with an unprefixed continuation line; 0ns minimums', (t) => {
  const p = only('13-kmeans-warning-api-trace-records.txt');
  t.is(p.warnings.length, 1);
  t.is(
    p.warnings[0],
    '200 API trace records have same start and end timestamps. This can happen because of short execution duration of CUDA APIs and low timer resolution on the underlying operating system.',
  );
  t.is(gpu(p).length, 5);
  t.is(api(p).length, 18);
  t.like(gpu(p)[0], {
    timePct: 97.14,
    totalNs: 13677300000,
    calls: 16800,
    avgNs: 814130,
    minNs: 185020,
    maxNs: 2262900,
  });
  t.like(api(p)[0], { totalNs: 16477500000, calls: 33600, name: 'cudaDeviceSynchronize' });
  t.like(
    api(p).find((r) => r.name === 'cudaGetLastError'),
    { minNs: 0 },
  );
  t.like(api(p)[17], { totalNs: 100, name: 'cuDeviceGetUuid' });
});

shared('14 metrics under a TAB-indented kernel line; trailing junk becomes a diagnostic with its line', (t) => {
  const r = parseNvprof(readFileSync(join(DIR, '14-gameoflife-metrics-tabs-trailing-junk.txt'), 'utf8'));
  const p = r.value.processes[0];
  t.is(p.pid, 28587);
  t.is(p.metrics.length, 105);
  t.deepEqual(p.metrics[0], {
    device: 'GeForce GT 650M (0)',
    kernel: 'changeCellState(char*, char*, int, int)',
    invocations: 100,
    metric: 'l1_cache_global_hit_rate',
    description: 'L1 Global Hit Rate',
    min: '0.00%',
    max: '0.00%',
    avg: '0.00%',
  });
  t.true(p.metrics.some((m) => m.description === 'Floating Point Operations(Single Precisi'));
  t.is(r.diagnostics.length, 1);
  t.like(r.diagnostics[0], { code: 'UNRECOGNIZED_LINE', line: 112 });
});
