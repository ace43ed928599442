/**
 * `jetprof report`: the lab's tables from run JSONs and profiles, a golden Markdown file for a fixed input, the CSV
 * files, the real logs in ../shared, and the HTML page rendered in headless Chromium (Debian's, via playwright-core).
 */
import test from 'ava';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNvprof } from '../src/parsers/nvprof.ts';
import { buildRunResult, type RunResult } from '../src/pipeline/run-result.ts';
import { StageRecorder } from '../src/pipeline/stages.ts';
import { buildLabReport, speedups } from '../src/report/lab-report.ts';
import { reportMarkdown } from '../src/report/markdown.ts';
import { readModelInfo } from '../src/model/export-file.ts';
import { orphanNsysAgents } from '../src/profilers/run.ts';
import { buildCpuEngineLib, makeModel, makeVideo, PERSON_VEHICLE_CFG, ROOT, runCli, scratchDir, SHARED_FIXTURES } from './helpers/fixtures.ts';

/** A run result built by the real code path from fixed per-frame stage times (ms). */
function fixedRun(backend: 'onnx' | 'tensorrt', stages: { read: number; preprocess: number; inference: number; postprocess: number; write: number }, frames: number): RunResult {
  const rec = new StageRecorder();
  for (let i = 0; i < frames; i++) {
    const jitter = (i % 5) * 0.1;
    rec.add({ read: stages.read + jitter, preprocess: stages.preprocess, inference: stages.inference + jitter, postprocess: stages.postprocess, write: stages.write });
    if (backend === 'tensorrt') {
      rec.device.h2dMs.push(1.5);
      rec.device.gpuComputeMs.push(stages.inference - 3);
      rec.device.d2hMs.push(0.5);
    }
  }
  const perFrame = Object.values(stages).reduce((a, b) => a + b, 0) + 0.4;
  return buildRunResult(rec, {
    backend,
    backendDetail: backend === 'onnx' ? 'onnxruntime-node 1.30.0 (cpu)' : 'TensorRT 8.2.1',
    model: { path: backend === 'onnx' ? 'weights/yolov4-tiny.onnx' : 'engines/yolov4-tiny.trt', inputWidth: 416, inputHeight: 416, classes: 80, sha256: '0'.repeat(64) },
    video: { path: 'videos/vtest.avi', width: 768, height: 576, fps: 10, frameCount: 795 },
    frameSize: [960, 540],
    letterbox: false,
    warmupFrames: 5,
    wallMs: perFrame * frames,
    modelLoadMs: 1234,
    firstFrameMs: 300,
    detections: { total: 0, perClass: {} },
    nvtx: true,
    env: { node: 'v20.20.2', cpu: 'ARMv8 Processor rev 1 (v8l) x4', jetson: { model: 'NVIDIA Jetson Nano Developer Kit', l4t: '32.7.4' }, powerMode: 'MAXN', opencv: '4.1.1', ...(backend === 'onnx' ? { onnxruntime: '1.30.0' } : { tensorrt: '8.2.1' }) },
    startedAt: '2026-11-22T00:00:00.000Z',
    interrupted: false,
  });
}

const dir = join(scratchDir(), 'report');
mkdirSync(dir, { recursive: true });
const onnxRun = fixedRun('onnx', { read: 8, preprocess: 6, inference: 900, postprocess: 3, write: 12 }, 20);
const trtRun = fixedRun('tensorrt', { read: 20, preprocess: 30, inference: 95.7, postprocess: 25, write: 30 }, 20);
const onnxJson = join(dir, 'onnx.json');
const trtJson = join(dir, 'trt.json');
writeFileSync(onnxJson, JSON.stringify(onnxRun));
writeFileSync(trtJson, JSON.stringify(trtRun));
const labLog = join(ROOT, 'test/fixtures/profiles/nvprof-synthetic-trt-lab.txt');
const nsysLog = join(ROOT, 'test/fixtures/profiles/nsys-2022-column.txt');
const GOLDEN = join(ROOT, 'test/fixtures/report/golden.md');

test('golden: the report for fixed runs and profiles is exactly test/fixtures/report/golden.md', (t) => {
  const out = join(dir, 'REPORT.md');
  const r = runCli('jetprof', ['report', '--run', onnxJson, '--run', trtJson, '--profile', labLog, '--profile', nsysLog, '--out', out, '--top', '5']);
  t.is(r.code, 0, r.stderr);
  const md = readFileSync(out, 'utf8');
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, md);
  t.is(md, readFileSync(GOLDEN, 'utf8'), 'run with UPDATE_GOLDEN=1 after an intended change, and read the diff');
});

test('the lab table, the speed-up line and the share of time that is not inference follow from the runs', (t) => {
  const md = reportMarkdown(buildLabReport([onnxRun, trtRun], []));
  t.true(md.includes('| Model Type | Model Input Size | Inference Speed (FPS) | End-to-end speed (FPS) |'));
  t.true(md.includes(`| TensorRT | (960,540,3) | ${trtRun.inferenceFps.toFixed(2)} | ${trtRun.endToEndFps.toFixed(2)} |`));
  const [s] = speedups(buildLabReport([onnxRun, trtRun], []).fps);
  t.is(s.faster, 'TensorRT');
  t.is(s.inference, trtRun.inferenceFps / onnxRun.inferenceFps);
  t.regex(md, new RegExp(`TensorRT vs ONNX Runtime: ${s.inference.toFixed(1)}x inference, ${s.endToEnd.toFixed(1)}x end to end`));
  const share = 1 - trtRun.stages.inference.totalMs / trtRun.wallMs;
  t.true(md.includes(`TensorRT: ${(share * 100).toFixed(1)}% of end-to-end time is not inference`));
  t.regex(md, /\| gpu compute \| 92\.70 \|/);
  t.regex(md, /\| L4T \(JetPack\) \| 32\.7\.4 \(JetPack 4\.6\.x\) \|/);
});

test('profile notes and picks: top critical-path rows, every waiting row, fused conv+activation, setup allocation', (t) => {
  const report = buildLabReport([], [{ label: 'lab', nvprof: parseNvprof(readFileSync(labLog, 'utf8')).value }], 2);
  const [p] = report.profiles;
  t.deepEqual(p.criticalPath.map((d) => d.name), ['cudaMalloc', '<Other>']);
  t.deepEqual(p.waiting.map((d) => [d.name, d.waitingNs]), [['cudaStreamSynchronize', 12_500_000_000], ['cudaEventSynchronize', 7923]]);
  t.true(p.notes.some((n) => n.startsWith('cudaMalloc is 37.41% of the critical path (197.397 s): start-up')));
  t.true(p.notes.some((n) => n.startsWith('cudaStreamSynchronize waits 12.500 s in all')));
  t.true(p.notes.some((n) => n.startsWith('conv and activation fused in TensorRT: 1 of the top convolution kernels')));
});

test('CSV files: fps, stages and one file per profile table, with exact nanoseconds', (t) => {
  const csv = join(dir, 'csv');
  const r = runCli('jetprof', ['report', '--run', onnxJson, '--run', trtJson, '--profile', labLog, '--csv', csv]);
  t.is(r.code, 0, r.stderr);
  t.true(r.stdout.startsWith('# YOLOv4-Tiny: ONNX Runtime vs TensorRT'));
  const files = readdirSync(csv).sort();
  t.deepEqual(files, ['fps.csv', 'profile1_nvprof-synthetic-trt-lab.txt_api_calls.csv', 'profile1_nvprof-synthetic-trt-lab.txt_critical_path.csv', 'profile1_nvprof-synthetic-trt-lab.txt_kernels.csv', 'profile1_nvprof-synthetic-trt-lab.txt_nvtx.csv', 'stages.csv']);
  t.regex(readFileSync(join(csv, 'profile1_nvprof-synthetic-trt-lab.txt_critical_path.csv'), 'utf8'), /^37\.41,197397023000,0,cudaMalloc$/m);
  t.is(readFileSync(join(csv, 'fps.csv'), 'utf8').split('\n')[0], 'model_type,model_input_size,inference_fps,end_to_end_fps,frames,non_inference_share');
});

test('bad input - a missing run file, a run file that is not a run, a missing profile: one line, exit 2', (t) => {
  const missing = runCli('jetprof', ['report', '--run', join(dir, 'nope.json')]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /nope\.json: run JSON not found/);
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{"schema": "something/1"}');
  const r = runCli('jetprof', ['report', '--run', bad]);
  t.is(r.code, 2);
  t.regex(r.stderr, /bad\.json: not a jetprof run result \(schema jetprof\.run\/1\)/);
  t.is(r.stderr.trim().split('\n').length, 1);
  const noLog = runCli('jetprof', ['report', '--profile', join(dir, 'no-such-log.txt')]);
  t.is(noLog.code, 2);
  t.is(noLog.stderr.trim().split('\n').length, 1, noLog.stderr);
  t.regex(noLog.stderr, /no-such-log\.txt: profiler log not found/);
});

const realLog = join(SHARED_FIXTURES, 'profiler-logs/nvprof/01-e6692-xs2445-trt-jetson-nvtx-dep.txt');
(existsSync(realLog) ? test : test.skip)('the real TensorRT log from a Jetson Nano: critical path, picked waiting rows, fused kernels, per-layer NVTX', (t) => {
  const r = runCli('jetprof', ['report', '--profile', realLog, '--top', '5']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /\| 37\.41% \| 197\.397 s \| 0 ns \| cudaMalloc \|/);
  t.regex(r.stdout, /cudaMalloc is 37\.41% of the critical path/);
  t.regex(r.stdout, /conv and activation fused in TensorRT/);
  t.regex(r.stdout, /NVTX ranges \(TensorRT names them by layer\)/);
});

const CHROMIUM = '/usr/bin/chromium';
(existsSync(CHROMIUM) ? test : test.skip)('the HTML page renders in headless Chromium: non-empty charts, no console errors (screenshot saved)', async (t) => {
  const html = join(dir, 'report.html');
  const r = runCli('jetprof', ['report', '--run', onnxJson, '--run', trtJson, '--profile', labLog, '--html', html, '--out', join(dir, 'R2.md')]);
  t.is(r.code, 0, r.stderr);
  const page = readFileSync(html, 'utf8');
  t.false(/<script|https?:\/\/(?!www\.w3\.org)/.test(page), 'self-contained: no script, no network');
  const { chromium } = await import('playwright-core');
  // playwright-core starts Chromium with a new empty profile of its own; the flags keep it off the (closed) network.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const p = await browser.newPage();
    const errors: string[] = [];
    p.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(`file://${html}`);
    const charts = await p.$$eval('svg.chart', (svgs) => svgs.map((s) => ({ label: s.getAttribute('aria-label'), bars: [...s.querySelectorAll('rect')].filter((r) => Number(r.getAttribute('width')) > 0).length, box: s.getBoundingClientRect().width })));
    t.deepEqual(charts.map((c) => c.label), ['FPS per backend', 'Mean time per frame by stage', 'Critical path: nvprof-synthetic-trt-lab.txt']);
    for (const c of charts) {
      t.true(c.bars >= 3, `${c.label}: ${c.bars} bars drawn`);
      t.true(c.box > 100, `${c.label}: laid out ${c.box}px wide`);
    }
    const tableText = await p.$eval('table', (el) => el.textContent ?? '');
    t.true(tableText.includes('TensorRT'));
    await p.screenshot({ path: join(dir, 'report.png'), fullPage: true });
    t.true(existsSync(join(dir, 'report.png')));
    t.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test.serial('jetprof compare: both backends (TensorRT through the CPU ABI library) under real nsys, then the report', (t) => {
  const lib = buildCpuEngineLib();
  const model = makeModel('compare', PERSON_VEHICLE_CFG, 3);
  const info = readModelInfo(model.onnxPath);
  const engine = join(dir, 'compare.engine');
  writeFileSync(engine, ['jetprof-cpu-engine 1', 'tensorrt 8.6.1', 'input images 0 1 3 480 640', ...info.heads.map((h) => `output ${h.output} 0 1 21 ${h.gridH} ${h.gridW} -10 0`), ''].join('\n'));
  const video = makeVideo('compare.mp4', 10, 320, 240);
  const out = join(dir, 'compare');
  const r = runCli('jetprof', ['compare', video, '--profile', 'nsys', '--engine', engine, '--out-dir', out, '--', '--model', model.onnxPath, '--warmup', '2'], {
    env: { JETPROF_TRT_SHIM: lib },
    timeout: 600_000,
  });
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /\[1\/3\] ONNX Runtime: infer under nsys/);
  t.regex(r.stderr, /\[2\/3\] TensorRT: done in/);
  t.regex(r.stderr, /\[3\/3\] report: /);
  const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
  t.regex(md, /\| ONNX Runtime \| \(320,240,3\) \| [\d.]+ \| [\d.]+ \|/);
  t.regex(md, /\| TensorRT \| \(320,240,3\) \| [\d.]+ \| [\d.]+ \|/);
  t.regex(md, /### ONNX Runtime \(profile_onnx\.json\) \(nsys\)/);
  t.regex(md, /### TensorRT \(profile_trt\.json\) \(nsys\)/);
  t.regex(md, /\| [\d.]+% \| [\d.]+ (ms|s|us) \| 10 \| inference \|/, 'one NVTX inference range per frame, warm-up included');
  t.true(existsSync(join(out, 'report.html')));
  t.true(existsSync(join(out, 'csv', 'fps.csv')));
  t.deepEqual(orphanNsysAgents(), [], 'no nsys agent left running after its nsys ended');
});

test('jetprof compare without an engine: TensorRT skipped with the reason, the ONNX Runtime run reported', (t) => {
  const model = makeModel('compare2', PERSON_VEHICLE_CFG, 4);
  const video = makeVideo('compare2.mp4', 4, 160, 120);
  const out = join(dir, 'compare2');
  const r = runCli('jetprof', ['compare', video, '--out-dir', out, '--', '--model', model.onnxPath, '--warmup', '1']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /\[2\/3\] TensorRT: skipped \(no --engine given/);
  const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
  t.regex(md, /\| ONNX Runtime \| \(160,120,3\) \|/);
  t.false(md.includes('| TensorRT |'));
});
