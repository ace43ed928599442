/**
 * `jetprof report`: the lab's tables from run JSONs and profiles, a golden Markdown file for a fixed input, the CSV
 * files, the real logs in ../shared, and the HTML page rendered in headless Chromium (Debian's, via playwright-core).
 */
import test from 'ava';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNvprof } from '../src/parsers/nvprof.ts';
import {
  buildRunResult,
  defaultLabel,
  type ProfilerName,
  type RunResult,
  stageTotalsOf,
} from '../src/pipeline/run-result.ts';
import { wallShares } from '../src/pipeline/figures.ts';
import { sumOf } from '../src/util/stats.ts';
import { formatSummary } from '../src/report/run-summary.ts';
import { emptyPerFrame, type PerFrame } from '../src/pipeline/stages.ts';
import { sweepDeltas } from '../src/report/report-text.ts';
import type { LabReport } from '../src/report/report-types.ts';
import { buildLabReport } from '../src/report/lab-report.ts';
import { speedups } from '../src/report/comparability.ts';
import { reportCsv, reportMarkdown } from '../src/report/markdown.ts';
import { reportHtml } from '../src/report/html.ts';
import { streamLatencyOverTime } from '../src/report/svg-over-time.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { orphanNsysAgents } from '../src/profilers/nsys-agents.ts';
import {
  buildCpuEngineLib,
  errorLines,
  requires,
  makeModel,
  makeVideo,
  SMALL_LAB_CFG,
  ROOT,
  runCli,
  scratchDir,
  SHARED_FIXTURES,
  startCli,
} from './helpers/fixtures.ts';

type FixedStages = { read: number; preprocess: number; inference: number; postprocess: number; write: number };

/**
 * Per-frame records of a sequential run from fixed stage times (ms), with 0.4 ms of loop overhead per frame; in
 * 'pipelined' mode frame i+1's read starts while frame i is in inference (stages overlap).
 */
function fixedPerFrame(
  backend: 'onnx' | 'tensorrt',
  stages: FixedStages,
  frames: number,
  loop: 'sequential' | 'pipelined' = 'sequential',
): PerFrame {
  const p = emptyPerFrame();
  let t = 10;
  for (let i = 0; i < frames; i++) {
    const jitter = (i % 5) * 0.1;
    const st = { ...stages, read: stages.read + jitter, inference: stages.inference + jitter };
    const start = t;
    const inferenceStart = start + st.read + st.preprocess;
    const postStart = inferenceStart + st.inference;
    const end = postStart + st.postprocess + st.write;
    p.index.push(i + 5);
    p.startMs.push(start);
    p.readMs.push(st.read);
    p.preprocessMs.push(st.preprocess);
    p.inferenceMs.push(st.inference);
    p.postprocessMs.push(st.postprocess);
    p.writeMs.push(st.write);
    p.detections.push(i % 3);
    p.inferenceStartMs.push(inferenceStart);
    p.postprocessStartMs.push(postStart);
    p.endMs.push(end);
    p.drawMs.push(stages.postprocess / 2);
    p.candidates.push(10 + i);
    if (backend === 'tensorrt') {
      (p.h2dMs ??= []).push(1.5);
      (p.gpuComputeMs ??= []).push(stages.inference - 3);
      (p.d2hMs ??= []).push(0.5);
    }
    t =
      loop === 'sequential'
        ? end + 0.4
        : start + Math.max(st.read + st.preprocess, st.inference, st.postprocess + st.write) + 0.4;
  }
  return p;
}

/** A run result built by the real code path (buildRunResult) from fixed per-frame stage times (ms). */
function fixedRun(
  backend: 'onnx' | 'tensorrt',
  stages: FixedStages,
  frames: number,
  o: { loop?: 'sequential' | 'pipelined'; profiler?: ProfilerName; label?: string } = {},
): RunResult {
  const loop = o.loop ?? 'sequential';
  const setupBase = {
    executionProvider: backend === 'onnx' ? 'cpu' : 'tensorrt',
    precision: backend === 'onnx' ? ('fp32' as const) : ('fp16' as const),
    loop,
    ...(loop === 'pipelined' ? { inFlight: 3 } : {}),
    profiler: o.profiler ?? ('none' as const),
  };
  return buildRunResult(fixedPerFrame(backend, stages, frames, loop), emptyPerFrame(), {
    backend,
    backendDetail: backend === 'onnx' ? 'onnxruntime-node 1.30.0 (cpu)' : 'TensorRT 8.2.1',
    setup: {
      label: o.label ?? defaultLabel(backend, setupBase),
      ...setupBase,
      device: backend === 'onnx' ? 'CPU: ARMv8 Processor rev 1 (v8l) x4' : 'GPU: NVIDIA Jetson Nano Developer Kit',
    },
    model: {
      path: backend === 'onnx' ? 'weights/yolov4-tiny.onnx' : 'engines/yolov4-tiny.trt',
      inputWidth: 416,
      inputHeight: 416,
      classes: 80,
      sha256: '0'.repeat(64),
      onnxSha256: '1'.repeat(64),
    },
    video: { path: 'videos/vtest.avi', width: 768, height: 576, fps: 10, frameCount: 795 },
    frameSize: [960, 540],
    letterbox: false,
    modelLoadMs: 1234,
    firstFrameMs: 300,
    postprocess: {
      conf: 0.3,
      nms: 0.5,
      nmsKind: 'iou',
      classMode: 'multi',
      maxCandidates: 30000,
      maxDet: 300,
      framesCandidatesCapped: 0,
      framesDetectionsCapped: 0,
      maxCandidatesSeen: 10 + frames - 1,
    },
    detections: { total: 0, perClass: {} },
    nvtx: true,
    env: {
      node: 'v20.20.2',
      cpu: 'ARMv8 Processor rev 1 (v8l) x4',
      jetson: { model: 'NVIDIA Jetson Nano Developer Kit', l4t: '32.7.4' },
      powerMode: 'MAXN',
      opencv: '4.1.1',
      ...(backend === 'onnx' ? { onnxruntime: '1.30.0' } : { tensorrt: '8.2.1' }),
    },
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

test('golden: the report for fixed runs and profiles is exactly test/fixtures/report/golden.md', async (t) => {
  const out = join(dir, 'REPORT.md');
  const r = await runCli('jetprof', [
    'report',
    '--run',
    onnxJson,
    '--run',
    trtJson,
    '--profile',
    labLog,
    '--profile',
    nsysLog,
    '--out',
    out,
    '--top',
    '5',
  ]);
  t.is(r.code, 0, r.stderr);
  const md = readFileSync(out, 'utf8');
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, md);
  t.is(md, readFileSync(GOLDEN, 'utf8'), 'run with UPDATE_GOLDEN=1 after an intended change, and read the diff');
});

test('two runs share a row only when every setting that changes the figures is equal: a realtime and a free-running run of one label are two rows, and --interval is weighed against the free-running one', (t) => {
  const stages = { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 };
  const free = fixedRun('onnx', stages, 20, { label: 'cams' });
  const realtime = fixedRun('onnx', { ...stages, read: 60 }, 20, { label: 'cams' });
  realtime.setup.realtime = { sourceFps: 10 };
  const interval = fixedRun('onnx', { ...stages, inference: 30 }, 20, { label: 'cams-interval2' });
  interval.interval = 2;
  const r = buildLabReport([free, realtime, interval], []);
  t.deepEqual(
    r.fps.map((x) => [x.label, x.runs]),
    [
      ['cams (free-running)', 1],
      ['cams (realtime at 10 FPS)', 1],
      ['cams-interval2', 1],
    ],
  );
  t.is(r.intervalTrades.length, 1, 'the interval row has one base: the run that is the same in everything else');
  t.is(r.intervalTrades[0].endToEndFps[1], free.endToEndFps);
  t.regex(reportMarkdown(r), /\| cams \(realtime at 10 FPS\) \| .* \| realtime at 10 FPS; not writing \|/);
  t.regex(defaultLabel('onnx', { ...realtime.setup, realtime: { sourceFps: 10 } }), /-realtime10fps$/);
});

test('a busy session reads as one note, not a bullet per row; rows that ran in one environment share one Environment table', (t) => {
  const stages = { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 };
  const busy = {
    cores: 2,
    loadAvg: [3.1, 3.4] as [number, number],
    cpuMs: 1,
    otherCores: 1.3,
    peakRssMb: 1,
    wallMs: 1,
  };
  const runs = ['a', 'b', 'c'].map((label) => {
    const r = fixedRun('onnx', stages, 20, { label });
    r.machineLoad = busy;
    return r;
  });
  const rep = buildLabReport(runs, []);
  const notes = rep.runNotes.filter((n) => /busy machine/.test(n));
  t.deepEqual(notes, [
    "measured on a busy machine: a (other processes kept 1.3 cores busy on average), b (other processes kept 1.3 cores busy on average), c (other processes kept 1.3 cores busy on average): their figures are partly the other work's; measure again on a quiet machine before comparing",
  ]);
  const md = reportMarkdown(rep);
  t.is(md.match(/busy machine/g)?.length, 1, 'one busy note in the page');
  // the three rows' environments read the same: one table under the three labels
  t.regex(md, /## Environment\n\n\*\*a, b, c\*\*\n\n\| {2}\| {2}\|/);
  t.is(md.match(/\| Node\.js \|/g)?.length, 1);
  // one row busy: the note names it alone, as before
  const one = buildLabReport([runs[0], fixedRun('onnx', stages, 20, { label: 'quiet' })], []);
  t.deepEqual(
    one.runNotes.filter((n) => /busy/.test(n)),
    [
      "a: measured on a busy machine (other processes kept 1.3 cores busy on average): its figures are partly the other work's; measure again on a quiet machine before comparing",
    ],
  );
});

test('a --realtime run shows its drops: delivered and processed FPS, dropped count and share per stream, a verdict above the table, the wait for frames as headroom only when nothing was dropped; a stream with no latency (null in JSON) does not crash the report', (t) => {
  const stages = { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 };
  const run = fixedRun('onnx', stages, 20, { label: 'cams' });
  run.setup.realtime = { sourceFps: 10 };
  const stream = (index: number, frames: number, dropped: number) => ({
    index,
    source: `cam${index}.mp4`,
    width: 960,
    height: 540,
    frames,
    droppedFrames: dropped,
    endToEndFps: frames > 0 ? 2.34 : 0,
    latencyMs: { p50: frames > 0 ? 400 : NaN, p90: frames > 0 ? 420 : NaN, p99: frames > 0 ? 430 : NaN },
  });
  run.streams = [stream(0, 34, 111), stream(1, 0, 145)];
  run.aggregateFps = 2.34;
  const reloaded = JSON.parse(JSON.stringify(run)) as RunResult; // NaN latency becomes null, as in a run file
  for (const text of [formatSummary(reloaded), reportMarkdown(buildLabReport([reloaded], []))]) {
    t.regex(text, /Did not keep up: 256 of the 290 frames delivered at 10 FPS were dropped \(88%\)/);
    t.regex(text, /\| 0 \| cam0\.mp4 \| 34 \| 9\.98 \| 2\.34 \| 111 \(77%\) \| 400\.0 \/ 420\.0 \/ 430\.0 \|/);
    t.regex(text, /\| 1 \| cam1\.mp4 \| 0 \| - \| 0\.00 \| 145 \(100%\) \| - \/ - \/ - \|/);
    // it dropped 88%: the loop's wait for frames is no headroom
    t.regex(text, /waiting for frames and loop overhead/);
    t.notRegex(text, /headroom/);
    t.notRegex(text, /\| loop overhead \|/);
  }
  t.regex(reportHtml(buildLabReport([reloaded], [])), /<p>Did not keep up: 256 of the 290 frames/);
  // the drops in the headline too: a column of the lab table, the FPS chart's bar label, and streams.csv
  const rep = buildLabReport([reloaded], []);
  t.regex(
    reportMarkdown(rep),
    /\| Model Type \| Model Input Size \| Inference Speed \(FPS\) \| End-to-end speed \(FPS\) \| Dropped \(kept up\?\) \|\n.*\n\| ONNX Runtime \(CPU, FP32\) \| \(960,540,3\) \| [\d.]+ \| [\d.]+ \| 88\.3% \(no\) \|/,
  );
  t.regex(reportHtml(rep), /title="ONNX Runtime \(CPU, FP32\) \(did not keep up: 88\.3% of the frames dropped\)"/);
  t.is(
    reportCsv(rep)['streams.csv'],
    'label,stream,source,frames,dropped,dropped_share,end_to_end_fps,p50_ms,p90_ms,p99_ms\ncams,0,cam0.mp4,34,111,0.7655,2.34,400.000,420.000,430.000\ncams,1,cam1.mp4,0,145,1.0000,0.00,,,\n',
  );
  const kept = JSON.parse(JSON.stringify(run)) as RunResult;
  kept.streams = [stream(0, 34, 0)];
  t.regex(formatSummary(kept), /Kept up: every frame the source delivered at 10 FPS was processed, none dropped/);
  t.regex(reportMarkdown(buildLabReport([kept], [])), /waiting for frames \(headroom\) and loop overhead/);
});

test("the lab's own terms: critical path and waiting time are defined; an NVTX table without Time(%) has no empty column; OS runtime summed over threads says so", (t) => {
  const report = buildLabReport(
    [onnxRun],
    [
      {
        label: 'cpu-only.nsys',
        nsys: {
          schema: 'jetprof.nsys/1',
          reports: {
            osrt_sum: {
              rows: [
                { name: 'pthread_cond_wait', totalNs: 148_000_000_000, numCalls: 9000, timePct: 90 },
                { name: 'poll', totalNs: 2_000_000_000, numCalls: 100, timePct: 10 },
              ],
            },
          },
        } as never,
        run: onnxRun,
      },
    ],
  );
  const md = reportMarkdown(report);
  t.regex(md, /- \*\*critical path\*\*: nvprof --dependency-analysis: the longest chain of work/);
  t.regex(
    md,
    /- \*\*waiting time\*\*: nvprof --dependency-analysis: the time a CPU thread or GPU stream spent blocked/,
  );
  t.regex(
    md,
    /OS runtime times are summed over every thread: pthread_cond_wait 148\.000 s against [\d.]+ s of measured wall time/,
  );
  const lab = readFileSync(GOLDEN, 'utf8');
  t.regex(lab, /\| Total \| Calls \| Range \|\n\| ---: \| ---: \| --- \|\n\| 500\.000 ms \| 200 \| conv2 \+ leaky2 \|/);
});

test('a label from a hand-edited run file holding a CR, a newline, an escape or a formula: one table row in Markdown, text in CSV', (t) => {
  const run = fixedRun('onnx', { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 }, 20, {
    label: '=cmd|x\r| forged | row |\n\x1b[31mred',
  });
  const r = buildLabReport([run], []);
  const md = reportMarkdown(r);
  t.false(/[\r\x1b]/.test(md));
  const row = md.split('\n').find((l) => l.startsWith('| =cmd'));
  t.truthy(row, md);
  t.regex(
    row!,
    /^\| =cmd\\\|x\\r\\\| forged \\\| row \\\|\\n\\x1b\[31mred \| /,
    'one row: every | escaped, CR and newline shown',
  );
  const csv = reportCsv(r)['fps.csv'].split('\n')[1];
  t.true(csv.startsWith(`"'=cmd|x`), csv);
});

test('the label and the comparability rule come from one setup record: runs of one label that differ in any setting are rows of their own, with labels that tell them apart', (t) => {
  const stages = { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 };
  const base = () => fixedRun('onnx', stages, 20, { label: 'x' });
  const variants: [string, (r: RunResult) => void][] = [
    ['realtime at the source rate', (r) => (r.setup.realtime = {})],
    ['realtime at 5 FPS', (r) => (r.setup.realtime = { sourceFps: 5 })],
    ['writing', (r) => (r.setup.write = true)],
    ['writing undrawn', (r) => Object.assign(r.setup, { write: true, draw: false })],
    ['interval', (r) => (r.interval = 2)],
    ['streams', (r) => (r.streams = [r.streams?.[0] ?? ({} as never), {} as never])],
    ['batch', (r) => Object.assign(r, { streams: [{}, {}], batch: 2 })],
    ['loop', (r) => Object.assign(r.setup, { loop: 'pipelined', inFlight: 3 })],
    ['in flight', (r) => Object.assign(r.setup, { loop: 'pipelined', inFlight: 2 })],
    ['profiler', (r) => (r.setup.profiler = 'nsys')],
    ['device', (r) => (r.setup.device = 'CPU: another')],
    ['machine', (r) => (r.env = { ...r.env, cpu: 'another CPU', jetson: undefined })],
    ['model', (r) => (r.model = { ...r.model, onnxSha256: '2'.repeat(64) })],
    ['frame size', (r) => (r.frameSize = [640, 480])],
    ['video', (r) => (r.video = { ...r.video, path: 'videos/other.mp4' })],
    ['precision', (r) => (r.setup.precision = 'fp16')],
  ];
  const runs = [
    base(),
    base(),
    ...variants.map(([, f]) => {
      const r = base();
      f(r);
      return r;
    }),
  ];
  const rows = buildLabReport(runs, []).fps;
  t.is(rows.length, variants.length + 1, 'the two equal runs share a row, every variant is a row of its own');
  t.is(rows[0].runs, 2);
  t.is(new Set(rows.map((x) => x.label)).size, rows.length, 'no label names two setups');
  t.is(new Set(rows.map((x) => x.modelType)).size, rows.length);
});

test('the lab table, the speed-up line and the share of time that is not inference follow from the runs', (t) => {
  const md = reportMarkdown(buildLabReport([onnxRun, trtRun], []));
  t.true(md.includes('| Model Type | Model Input Size | Inference Speed (FPS) | End-to-end speed (FPS) |'));
  t.true(
    md.includes(
      `| TensorRT (FP16) | (960,540,3) | ${trtRun.inferenceFps.toFixed(2)} | ${trtRun.endToEndFps.toFixed(2)} |`,
    ),
  );
  const [s] = speedups(buildLabReport([onnxRun, trtRun], []).fps).speedups;
  t.is(s.faster, 'TensorRT (FP16)');
  t.is(s.inference, trtRun.inferenceFps / onnxRun.inferenceFps);
  t.regex(
    md,
    new RegExp(
      `TensorRT \\(FP16\\) vs ONNX Runtime \\(CPU, FP32\\): ${s.inference.toFixed(1)}x inference, ${s.endToEnd.toFixed(1)}x end to end`,
    ),
  );
  const share = 1 - trtRun.stages.inference.totalMs / trtRun.wallMs;
  t.true(md.includes(`TensorRT (FP16): ${(share * 100).toFixed(1)}% of the wall time is not inference = `));
  t.regex(md, /\| {3}gpu compute \(part of inference\) \| 92\.70 \|/);
  t.regex(
    md,
    /\| L4T \(JetPack\) \| 32\.7\.4 \(JetPack 4\.6\.1\+\) \|/,
    'the one JetPack table (platform/board.ts), as doctor says it',
  );
  t.regex(md, /## Definitions\n\n- \*\*inference FPS\*\*: measured frames \//);
});

/** Percentages printed in a string, e.g. "read 10.0% + ..." -> [10]. */
const percents = (s: string) => [...s.matchAll(/ ([\d.]+)%/g)].map((m) => Number(m[1]));

test('shares add up: sequential breakdowns and stage tables sum to what they claim, as printed', (t) => {
  for (const run of [
    onnxRun,
    trtRun,
    fixedRun('onnx', { read: 3.33, preprocess: 3.33, inference: 3.34, postprocess: 3.3, write: 3.3 }, 7),
  ]) {
    const report = buildLabReport([run], []);
    const md = reportMarkdown(report);
    const sentence = md.split('\n').find((l) => l.includes('of the wall time is not inference = '))!;
    const [total, ...parts] = percents(sentence.replace(/\(sequential loop.*$/, ''));
    t.is(Math.round(parts.reduce((a, b) => a + b, 0) * 10), Math.round(total * 10), sentence);
    t.is(
      Math.round(total * 10),
      Math.round((1 - run.stages.inference.totalMs / run.wallMs) * 1000),
      "the total is the run's own figure",
    );
    const table = md
      .split('## Stages')[1]
      .split('\n')
      .filter((l) => /^\| (read|preprocess|inference|postprocess|write|loop overhead) \|/.test(l));
    t.is(table.length, 6);
    t.is(
      Math.round(table.map((l) => Number(/([\d.]+)% \|$/.exec(l)![1])).reduce((a, b) => a + b, 0) * 10),
      1000,
      'the share column adds up to 100.0%',
    );
    // the sentence and the table print the same numbers for the same stages
    for (const l of table.filter((x) => !x.startsWith('| inference')))
      t.true(sentence.includes(`${l.split(' | ')[0].slice(2)} ${/([\d.]+)% \|$/.exec(l)![1]}%`), l);
  }
});

test('pipelined runs: no share of wall per stage, busy ms against wall ms per frame, a timeline instead of a stacked bar', (t) => {
  const run = fixedRun('onnx', { read: 8, preprocess: 6, inference: 30, postprocess: 3, write: 12 }, 20, {
    loop: 'pipelined',
  });
  const report = buildLabReport([run], []);
  const md = reportMarkdown(report);
  t.regex(
    md,
    /the model was not running [\d.]+% of the wall time\. Stages overlap in the pipelined loop, so no share of wall is given per stage: busy ms per frame read 8\.20, preprocess 6\.00, inference 30\.20, postprocess 3\.00, write 12\.00, against [\d.]+ ms of wall time per frame/,
  );
  const notRunning = Number(/not running ([\d.]+)%/.exec(md)![1]);
  t.is(
    Math.round(notRunning * 10),
    Math.round((1 - run.endToEndFps / run.inferenceFps) * 1000),
    'not inference = 1 - end-to-end / inference FPS',
  );
  t.false(md.split('## Stages')[1].split('## Definitions')[0].includes('share of wall'));
  t.regex(md, /\| wall per frame \| [\d.]+ \|/);
  const html = reportHtml(report);
  t.true(html.includes('Pipelined loop timeline, 10 frames'));
  t.false(html.includes('Mean time per frame by stage'), 'no stacked bar for overlapping stages');
  t.true(html.includes('Latency over time per stage') && html.includes('Latency histogram per stage'));
});

test('what was measured: a run under a profiler is marked and kept out of the speed-ups; rows that differ are flagged', (t) => {
  const profiled = fixedRun('tensorrt', { read: 20, preprocess: 30, inference: 95.7, postprocess: 25, write: 30 }, 20, {
    profiler: 'nsys',
  });
  t.is(profiled.setup.label, 'trt-fp16-gpu-sequential-nsys');
  const report = buildLabReport([onnxRun, profiled], []);
  t.deepEqual(report.speedups, [], 'a profiled row is not compared with an unprofiled one');
  const md = reportMarkdown(report);
  t.regex(
    md,
    /- not compared: ONNX Runtime \(CPU, FP32\) vs TensorRT \(FP16\): different profiler \(no profiler \/ under nsys\)/,
  );
  t.regex(md, /\| trt-fp16-gpu-sequential-nsys \| sequential \| nsys \| tensorrt \| fp16 \|/);
  t.is(
    buildLabReport([{ ...onnxRun, setup: { ...onnxRun.setup, profiler: 'nsys', label: 'a' } }, profiled], []).speedups
      .length,
    1,
    'all profiled: compared with each other',
  );
  const other = fixedRun('onnx', { read: 8, preprocess: 6, inference: 900, postprocess: 3, write: 12 }, 20, {
    loop: 'pipelined',
  });
  const mixed = reportMarkdown(buildLabReport([onnxRun, { ...other, frameSize: [640, 480] }], []));
  t.regex(
    mixed,
    /- not compared: ONNX Runtime \(CPU, FP32\) \[onnx-fp32-cpu-sequential\] vs ONNX Runtime \(CPU, FP32\) \[onnx-fp32-cpu-pipelined3\]: different frame size \(960x540 \/ 640x480\); different loop \(sequential loop \/ pipelined loop, 3 in flight\)/,
  );
  t.notRegex(mixed, /x inference, /, 'no speed-up between them');
  t.regex(
    mixed,
    /\| ONNX Runtime \(CPU, FP32\) \[onnx-fp32-cpu-sequential\] \|/,
    'two rows that would read the same carry their labels',
  );
});

test('several runs of one label: one row with mean ± std and the number of runs; a jetprof.run/1 file still reads', async (t) => {
  const a = fixedRun('onnx', { read: 8, preprocess: 6, inference: 100, postprocess: 3, write: 12 }, 20);
  const b = fixedRun('onnx', { read: 8, preprocess: 6, inference: 110, postprocess: 3, write: 12 }, 20);
  const report = buildLabReport([a, b], []);
  t.is(report.fps.length, 1);
  const row = report.fps[0];
  t.is(row.runs, 2);
  t.is(row.inferenceFps.mean, (a.inferenceFps + b.inferenceFps) / 2);
  const md = reportMarkdown(report);
  t.true(
    md.includes(
      `| ${((a.inferenceFps + b.inferenceFps) / 2).toFixed(2)} ± ${row.inferenceFps.std.toFixed(2)} (2 runs) |`,
    ),
  );
  t.regex(md, /sequential loop \(the shares add up to 100%\), mean of 2 runs/);
  const v1 = join(dir, 'v1.json');
  const {
    schema: _s,
    setup: _setup,
    perFrame: _p,
    warmup: _w,
    postprocess: _pp,
    gpuTimings: _g,
    backendDetail: _b,
    ...old
  } = onnxRun;
  writeFileSync(v1, JSON.stringify({ ...old, schema: 'jetprof.run/1', pipeline: { mode: 'on', inFlight: 3 } }));
  const r = await runCli('jetprof', ['report', '--run', v1]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /\| ONNX Runtime \(CPU, FP32\) \| \(960,540,3\) \|/);
  t.regex(
    r.stdout,
    /\| onnx-fp32-cpu-pipelined3 \| pipelined \(3 in flight\) \|/,
    "the loop comes from /1's pipeline field; no backendDetail is fine",
  );
});

test('profile notes and picks: top critical-path rows, every waiting row, what the kernels say of fusion without layer ranges, setup allocation', (t) => {
  const report = buildLabReport([], [{ label: 'lab', nvprof: parseNvprof(readFileSync(labLog, 'utf8')).value }], 2);
  const [p] = report.profiles;
  t.deepEqual(
    p.criticalPath.map((d) => d.name),
    ['cudaMalloc', '<Other>'],
  );
  t.deepEqual(
    p.waiting.map((d) => [d.name, d.waitingNs]),
    [
      ['cudaStreamSynchronize', 12_500_000_000],
      ['cudaEventSynchronize', 7923],
    ],
  );
  t.true(p.notes.some((n) => n.startsWith('cudaMalloc is 37.41% of the critical path (197.397023 s): start-up')));
  t.true(p.notes.some((n) => n.startsWith('cudaStreamSynchronize waits 12.500000 s in all')));
  // no TensorRT layer ranges in this log: a cuDNN kernel built with an activation does not say a layer was fused
  t.true(
    p.notes.some((n) =>
      n.startsWith(
        'activation kernels: none among the top kernels, and 1 of the top convolution kernels are built with one',
      ),
    ),
  );
  t.false(p.notes.some((n) => /fused in TensorRT/.test(n)));
});

test('CSV files: fps, stages and one file per profile table, with exact nanoseconds', async (t) => {
  const csv = join(dir, 'csv');
  const r = await runCli('jetprof', ['report', '--run', onnxJson, '--run', trtJson, '--profile', labLog, '--csv', csv]);
  t.is(r.code, 0, r.stderr);
  t.true(r.stdout.startsWith('# YOLOv4-Tiny: ONNX Runtime vs TensorRT'));
  t.true(
    readFileSync(join(csv, 'stages.csv'), 'utf8').includes('trt-fp16-gpu-sequential,gpu compute,inference,92.700,'),
  );
  const files = readdirSync(csv).sort();
  t.deepEqual(files, [
    'fps.csv',
    'profile1_nvprof-synthetic-trt-lab_api_calls.csv',
    'profile1_nvprof-synthetic-trt-lab_critical_path.csv',
    'profile1_nvprof-synthetic-trt-lab_kernels.csv',
    'profile1_nvprof-synthetic-trt-lab_nvtx.csv',
    'profile1_nvprof-synthetic-trt-lab_steady_state.csv',
    'stages.csv',
  ]);
  // every file ends its last line; a column only where the profiler printed it (nvprof's NVTX has no Time(%))
  for (const f of files) t.true(readFileSync(join(csv, f), 'utf8').endsWith('\n'), f);
  t.is(
    readFileSync(join(csv, 'profile1_nvprof-synthetic-trt-lab_nvtx.csv'), 'utf8').split('\n')[0],
    'total_ns,calls,name',
  );
  t.regex(
    readFileSync(join(csv, 'profile1_nvprof-synthetic-trt-lab_steady_state.csv'), 'utf8'),
    /^share_of_rest_pct,critical_path_ns,waiting_ns,name\n/,
  );
  t.regex(
    readFileSync(join(csv, 'profile1_nvprof-synthetic-trt-lab_critical_path.csv'), 'utf8'),
    /^37\.41,197397023000,0,cudaMalloc$/m,
  );
  t.is(
    readFileSync(join(csv, 'fps.csv'), 'utf8').split('\n')[0],
    'label,model_type,model_input_size,inference_fps,inference_fps_std,end_to_end_fps,end_to_end_fps_std,runs,frames,not_inference_share,loop,profiler,execution_provider,precision,device,machine',
  );
  // the CSV files are outputs like the others: a run file or the Markdown under one of their names is refused
  const claimed = join(dir, 'csv-claimed');
  mkdirSync(claimed, { recursive: true });
  const runAsCsv = join(claimed, 'fps.csv');
  copyFileSync(onnxJson, runAsCsv);
  const before = readFileSync(runAsCsv);
  const onRun = await runCli('jetprof', ['report', '--run', runAsCsv, '--csv', claimed]);
  t.is(onRun.code, 2, onRun.stderr);
  t.regex(onRun.stderr, /fps\.csv: the CSV file fps\.csv would overwrite the run 1/);
  t.true(readFileSync(runAsCsv).equals(before), 'the run file is untouched');
  const md = join(dir, 'csv-md');
  const onMd = await runCli('jetprof', ['report', '--run', onnxJson, '--out', join(md, 'fps.csv'), '--csv', md]);
  t.is(onMd.code, 2, onMd.stderr);
  t.regex(onMd.stderr, /fps\.csv: the CSV file fps\.csv and the Markdown are the same file/);
  t.false(existsSync(md), 'nothing written');
});

test('bad input - a missing run file, a run file that is not a run, a missing profile: one line, exit 2', async (t) => {
  const missing = await runCli('jetprof', ['report', '--run', join(dir, 'nope.json')]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /nope\.json: run JSON not found/);
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{"schema": "something/1"}');
  const r = await runCli('jetprof', ['report', '--run', bad]);
  t.is(r.code, 2);
  t.regex(r.stderr, /bad\.json: not a jetprof run result \(schema jetprof\.run\/2\)/);
  const newer = join(dir, 'newer.json');
  writeFileSync(newer, JSON.stringify({ ...onnxRun, schema: 'jetprof.run/9' }));
  const rn = await runCli('jetprof', ['report', '--run', newer]);
  t.is(rn.code, 2);
  t.regex(rn.stderr, /newer\.json: schema jetprof\.run\/9 is newer than this jetprof reads/);
  t.is(r.stderr.trim().split('\n').length, 1);
  const noLog = await runCli('jetprof', ['report', '--profile', join(dir, 'no-such-log.txt')]);
  t.is(noLog.code, 2);
  t.is(noLog.stderr.trim().split('\n').length, 1, noLog.stderr);
  t.regex(noLog.stderr, /no-such-log\.txt: profiler log not found/);
});

test("report --profile follows parse's rule: a log of a failed nvprof run (no GPU) is one line naming nvprof's error, exit 2, and no report; nvprof's warnings and lines the parser could not read become the profile's notes", async (t) => {
  const failed = join(ROOT, 'test/fixtures/profiles/nvprof-no-gpu.txt');
  const out = join(dir, 'NOGPU.md');
  const parse = await runCli('jetprof', ['parse', failed]);
  const report = await runCli('jetprof', ['report', '--profile', failed, '--out', out]);
  t.is(parse.code, 2);
  t.is(report.code, 2, report.stderr);
  for (const r of [parse, report])
    t.regex(r.stderr, /nvprof-no-gpu\.txt: no table could be read from this nvprof log \(nvprof said: /);
  t.is(report.stderr.trim().split('\n').length, 1, report.stderr);
  t.false(existsSync(out), 'no report of nothing');
  // a log with tables, a warning of nvprof's and a garbled row inside its summary table
  const lines = readFileSync(labLog, 'utf8').split('\n');
  lines.splice(5, 0, '                    12.5%  garbled row');
  lines.push('==287== Warning: 3 records have invalid timestamps due to insufficient device buffer space.', '');
  const noisy = join(dir, 'noisy_log.txt');
  writeFileSync(noisy, lines.join('\n'));
  const ok = await runCli('jetprof', ['report', '--profile', noisy, '--out', join(dir, 'NOISY.md')]);
  t.is(ok.code, 0, ok.stderr);
  const md = readFileSync(join(dir, 'NOISY.md'), 'utf8');
  t.regex(md, /- nvprof warned: 3 records have invalid timestamps/);
  t.regex(
    md,
    /- 1 line\(s\) of the log were not read as table rows \(first, line 6: .*garbled row\); jetprof parse lists them/,
  );
});

test('report --out and --html into folders that do not exist yet make them, as compare --out-dir does; a folder that cannot be made is one line', async (t) => {
  const out = join(dir, 'new-folder', 'deeper', 'R.md');
  const html = join(dir, 'new-html', 'r.html');
  const r = await runCli('jetprof', ['report', '--run', onnxJson, '--out', out, '--html', html]);
  t.is(r.code, 0, r.stderr);
  t.true(existsSync(out) && existsSync(html));
  const blocked = join(dir, 'a-file');
  writeFileSync(blocked, 'x');
  const bad = await runCli('jetprof', ['report', '--run', onnxJson, '--out', join(blocked, 'R.md')]);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /a-file\/R\.md: /);
  t.is(bad.stderr.trim().split('\n').length, 1, bad.stderr);
});

test('run files are checked against src/schemas: a missing optional field is fine, a missing or mistyped required one is one line naming the field', async (t) => {
  const { tegrastats: _t, detectionsFile: _d, output: _o, gpuTimings: _g, ...withoutOptionals } = onnxRun;
  const ok = join(dir, 'schema-ok.json');
  writeFileSync(ok, JSON.stringify(withoutOptionals));
  t.is((await runCli('jetprof', ['report', '--run', ok])).code, 0);
  const cases: [string, (r: Record<string, any>) => void, RegExp][] = [
    ['no-label', (r) => delete r.setup.label, /not a valid jetprof\.run\/2 file: field setup\.label is missing/],
    ['no-stages', (r) => delete r.stages, /not a valid jetprof\.run\/2 file: field stages is missing/],
    ['frames-text', (r) => (r.frames = '20'), /not a valid jetprof\.run\/2 file: field frames must be integer/],
    [
      'bad-loop',
      (r) => (r.setup.loop = 'async'),
      /not a valid jetprof\.run\/2 file: field setup\.loop must be "sequential" or "pipelined"/,
    ],
    [
      'bad-column',
      (r) => (r.perFrame.inferenceMs = 'fast'),
      /not a valid jetprof\.run\/2 file: field perFrame\.inferenceMs must be array/,
    ],
  ];
  for (const [name, spoil, expected] of cases) {
    const run = structuredClone(onnxRun) as unknown as Record<string, any>;
    spoil(run);
    const file = join(dir, `schema-${name}.json`);
    writeFileSync(file, JSON.stringify(run));
    const r = await runCli('jetprof', ['report', '--run', file]);
    t.is(r.code, 2, name);
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    t.regex(r.stderr, new RegExp(`schema-${name}\\.json: ${expected.source}`), name);
  }
  const set = join(dir, 'schema-set.json');
  writeFileSync(
    set,
    JSON.stringify({ schema: 'jetprof.runset/1', label: 'x', files: ['onnx.json'], runs: 1, inferenceFps: { n: 1 } }),
  );
  const rs = await runCli('jetprof', ['report', '--run', set]);
  t.is(rs.code, 2);
  t.regex(
    rs.stderr,
    /schema-set\.json: not a valid jetprof\.runset\/1 file: field (endToEndFps|inferenceFps\.\w+) is missing/,
  );
});

const realLog = join(SHARED_FIXTURES, 'profiler-logs/nvprof/01-e6692-xs2445-trt-jetson-nvtx-dep.txt');
requires(existsSync(realLog), `${realLog} is not beside this checkout (CI has it)`)(
  'the real TensorRT log from a Jetson Nano: critical path, picked waiting rows, unfused activations from the layer ranges, per-layer NVTX',
  async (t) => {
    const r = await runCli('jetprof', ['report', '--profile', realLog, '--top', '5']);
    t.is(r.code, 0, r.stderr);
    t.regex(r.stdout, /\| 37\.41% \| 197\.397023 s \| 0 ns \| cudaMalloc \|/);
    t.regex(r.stdout, /cudaMalloc is 37\.41% of the critical path/);
    // by hand from the log: each `*_lrelu` layer range (not its copy) and the kernel it launched
    const log = readFileSync(realLog, 'utf8');
    const own = [
      ...log.matchAll(
        /Range "(\d+_convolutional_lrelu)"\n.*\n.*\n GPU activities: +100\.00% +([\d.]+)ms +(\d+) .* (\S+)\n/g,
      ),
    ];
    t.is(own.length, 19);
    t.true(own.every((m) => m[4] === 'generatedNativePointwise' && m[3] === '168'));
    const ms = own.reduce((a, m) => a + Number(m[2]), 0); // 964.966 (the summary row: 964.97ms, 9.78%)
    t.is(ms.toFixed(3), '964.966');
    // the GPU's total: the summary's GPU activities rows, up to its API calls
    const unit: Record<string, number> = { s: 1000, ms: 1, us: 1e-3, ns: 1e-6 };
    const gpuRows = log.slice(log.indexOf(' GPU activities:'), log.indexOf('      API calls:')).split('\n');
    const gpuMs = gpuRows.reduce((a, l) => {
      const m = /%\s+([\d.]+)(s|ms|us|ns)\s/.exec(l);
      return m ? a + Number(m[1]) * unit[m[2]] : a;
    }, 0);
    t.regex(
      r.stdout,
      new RegExp(
        `activations not fused: leaky ReLU runs as 19 layers with kernels of their own \\(generatedNativePointwise\\): 3,192 calls, 964\\.966 ms, ${(ms / 168).toFixed(1)} ms a frame, ${((ms / gpuMs) * 100).toFixed(1)}% of the GPU time`,
      ),
    );
    t.notRegex(r.stdout, /fused in TensorRT/, 'no claim of fusion against the layer ranges');
    // the per-layer GPU table as CSV too: 036_convolutional's 1.23369 s over 168 frames
    const csv = join(dir, 'real-csv');
    const html = join(dir, 'real.html');
    t.is((await runCli('jetprof', ['report', '--profile', realLog, '--csv', csv, '--html', html])).code, 0);
    t.regex(
      readFileSync(join(csv, 'profile1_01-e6692-xs2445-trt-jetson-nvtx-dep_layers.csv'), 'utf8'),
      /^gpu_ns,gpu_ns_per_frame,share_of_layers_gpu,host_ns,calls,layer\n1233690000,7343393,0\.1289,11668000,168,036_convolutional\n/,
    );
    // the per-frame figures as CSV: 9.862699491 s of GPU activities over 168 enqueues; HtoD 250.34 ms; the enqueue
    // range 1.36372 s, without its slowest call (599.68 ms) over 167; cuStreamSynchronize's average 51.821 ms
    t.deepEqual(
      readFileSync(join(csv, 'profile1_01-e6692-xs2445-trt-jetson-nvtx-dep_per_frame.csv'), 'utf8')
        .split('\n')
        .filter((l) => /^(figure|gpu_activities|gpu_HtoD|tensorrt|host_wait)/.test(l)),
      [
        'figure,total_ns,ns_per_frame,frames_or_calls',
        `gpu_activities,9862699491,${Math.round(9_862_699_491 / 168)},168`,
        `gpu_HtoD,250340000,${Math.round(250_340_000 / 168)},168`,
        `tensorrt_enqueue_host,1363720000,${Math.round(1_363_720_000 / 168)},168`,
        `tensorrt_enqueue_host_without_slowest,764040000,${Math.round((1_363_720_000 - 599_680_000) / 167)},167`,
        'host_wait_cuStreamSynchronize,,51821000,168',
      ],
    );
    // the page's critical-path chart is the steady state's: <Other> leads it, cudaMalloc (start-up) is not a bar
    const page = readFileSync(html, 'utf8');
    const chart = /aria-label="Critical path[^"]*"[\s\S]*?<\/figure>/.exec(page)?.[0] ?? '';
    t.regex(chart, /^aria-label="Critical path, steady state/);
    t.regex(chart, /title="&lt;Other&gt; share of the rest %: 87\.97 %"/);
    t.notRegex(chart, /cudaMalloc|cuCtxDetach/);
    // a kernel named whole, not cut mid-token
    t.regex(r.stdout, /trt_maxwell_fp16x2_hcudnn_winograd_fp16x2_128x128_ldg1_ldg4_relu_tile148m_nt_v1/);
    // the host-time table says it is not the one that names the slowest layer
    t.regex(r.stdout, /NVTX ranges: the host's time inside each range .*which layer is slowest is the GPU table above/);
  },
);

requires(existsSync(realLog), `${realLog} is not beside this checkout (CI has it)`)(
  "the lab's own log, steady state: the critical path without start-up and tear-down, re-normalised, what it gives per frame, and the lab's typed-in figures reconciled with it",
  async (t) => {
    const { parseProfileFile } = await import('../src/parsers/parse-file.ts');
    const { steadyState, reconcile } = await import('../src/report/steady-state.ts');
    const parsed = await parseProfileFile(realLog);
    if (parsed.kind !== 'nvprof') return t.fail('not read as nvprof');
    const s = steadyState(parsed.result.value.processes[0], 5)!;
    // left out, as the dependency table prints them: cudaMalloc 197.397023s, cuCtxDetach 175.129550s,
    // cudaStreamCreateWithFlags_v5000 41.253897s, cudaFree 21.420142s, cudaHostAlloc 735.663478ms, cuCtxCreate_v2
    // 629.810239ms, cudaFreeHost 15.580926ms, cudaStreamCreate 203.753000us, cudaStreamCreateWithPriority_v5050
    // 131.669000us: 436.582002065 s of the table's 527.720693684 s
    t.is(s.removed.length, 9);
    t.is(s.removedNs, 436_582_002_065);
    // left out too, called fewer times than the 168 frames by the summary's counts (the API version suffix dropped):
    // 36 rows, cudaMemGetInfo (18 calls, 5.726921s), cuModuleUnload (19), cuMemFree (2), cudaMemcpyAsync (43), ...:
    // 7.080454113 s (each row by hand from both tables, summed with decimal arithmetic)
    t.is(s.occasional?.length, 36);
    t.deepEqual(s.occasional?.[0], { name: 'cudaMemGetInfo', calls: 18 });
    t.is(s.occasionalNs, 7_080_454_113);
    t.is(s.remainingNs, 527_720_693_684 - 436_582_002_065 - 7_080_454_113);
    // <Other> 73.946650s is the first row left: 73.946650 / 84.058237506 = 87.97%
    t.is(s.rows[0].name, '<Other>');
    t.is(s.rows[0].pct.toFixed(2), '87.97');
    t.is(s.otherNs, 73_946_650_000);
    t.is(s.rows[1].name, 'trt_maxwell_fp16x2_hcudnn_winograd_fp16x2_128x128_ldg1_ldg4_relu_tile148m_nt_v1');
    // per frame: 168 enqueues; the 17 GPU activities rows add up to 9.862699491 s, 58.7 ms a frame;
    // cuStreamSynchronize: 8.70597s over 168 calls, 51.821ms each (the API table's average)
    t.is(s.frames, 168);
    t.is(s.gpuNs, 9_862_699_491);
    t.is((s.gpuPerFrameNs! / 1e6).toFixed(1), '58.7');
    t.like(s.sync, { name: 'cuStreamSynchronize', avgNs: 51_821_000, calls: 168 });
    // per frame by kind: HtoD 250.34ms, DtoD 236.45ms, DtoH 1.9367ms, memset 44.791us, kernels the other
    // 9.373928 s; over 168 frames 55.8, 1.5, 1.4 ms, 11.5 us and 0.3 us. TensorRT's enqueue: 1.36372s / 168 = 8.1 ms
    t.deepEqual(
      s.gpuByKind?.map((k) => [k.kind, Math.round(k.perFrameNs)]),
      [
        ['kernels', Math.round((9_862_699_491 - 250_340_000 - 236_450_000 - 1_936_700 - 44_791) / 168)],
        ['HtoD', Math.round(250_340_000 / 168)],
        ['DtoD', Math.round(236_450_000 / 168)],
        ['DtoH', Math.round(1_936_700 / 168)],
        ['memset', Math.round(44_791 / 168)],
      ],
    );
    t.is(s.enqueuePerFrameNs, 1_363_720_000 / 168);
    // its slowest call is 599.68 ms of start-up: without it (1363.72 - 599.68) / 167 = 4.575 ms a frame
    t.like(s, { enqueueMaxNs: 599_680_000, enqueueMinNs: 3_749_600 });
    // the layers by the GPU time inside their ranges: 036_convolutional's winograd kernel 1.23369s, 7.3434 ms a frame
    t.like(s.layers?.[0], { name: '036_convolutional', gpuNs: 1_233_690_000, hostNs: 11_668_000, calls: 168 });
    t.like(s.layers?.[1], { name: '027_convolutional' });
    // the lab's 10.45 / 4.99 FPS: 95.7 ms inference = 37.0 host work + 58.7 GPU, of which the host waits 51.8 in
    // cuStreamSynchronize (8.70597 s / 168 frames); 200.4 - 95.7 = 104.7 ms outside it; the GPU is busy 58.7 of
    // 1000 / 4.99 = 200.4 ms a frame: 29%, host-bound
    const line = reconcile(s, { modelType: 'TensorRT', inferenceFps: 10.45, endToEndFps: 4.99 })!;
    t.regex(
      line,
      /^per frame, TensorRT: the GPU is busy 58\.7 ms of each 200\.4 ms frame \(29%; 1000 \/ 4\.99 FPS end to end\); the rest is host work: this pipeline is host-bound/,
    );
    t.regex(
      line,
      /Inference 95\.7 ms \(1000 \/ 10\.45 FPS, typed in\) = host work 37\.0 ms .* \+ the GPU's 58\.7 ms \(the log's GPU activities, 9\.863 s, over its 168 ExecutionContext::enqueue ranges\)/,
    );
    t.regex(
      line,
      /of the GPU's 58\.7 ms the host waits 51\.8 ms in cuStreamSynchronize \(168 calls over 168 frames\), and the GPU's other 6\.9 ms run while the host is still launching the frame's work/,
    );
    t.regex(line, /104\.7 ms a frame outside inference \(1000 \/ 4\.99 - 1000 \/ 10\.45/);
    t.regex(line, /typed in from a run without the profiler and the log is another, profiled run/);
    // <Other> against the loop: 168 frames at 4.99 FPS last 33.7 s, less than <Other>'s 73.946650 s
    t.regex(
      line,
      /<Other> \(73\.946650 s\) is longer than the whole frame loop \(168 frames at 4\.99 FPS: 33\.7 s\), so most of it is host work before the first frame or after the last/,
    );
    // and in the report, from the command line, whatever the row is called: the lab's script is trt_inference.py
    for (const name of ['TensorRT', 'TRT']) {
      const r = await runCli('jetprof', [
        'report',
        '--profile',
        realLog,
        '--fps',
        `${name}@960x540=10.45/4.99`,
        '--fps',
        'PyTorch@960x540=1.09/0.92',
      ]);
      t.is(r.code, 0, r.stderr);
      t.regex(r.stdout, /\*\*Steady state: the critical path without the 9 rows of start-up and tear-down/);
      t.regex(r.stdout, /\| 87\.97% \| 73\.946650 s \| 0 ns \| \\<Other\\> \|/);
      t.regex(
        r.stdout,
        /and the 36 rows called fewer times than the 168 frames, so not once a frame \(calls: cudaMemGetInfo 18, /,
      );
      t.regex(
        r.stdout,
        /58\.7 ms a frame \(kernels 55\.8 ms, HtoD 1\.5 ms, DtoD 1\.4 ms, DtoH 11\.5 us, memset 0\.3 us\)/,
      );
      t.regex(
        r.stdout,
        /TensorRT's enqueue holds the host 8\.1 ms a frame on average, 4\.6 ms without its slowest call \(599\.7 ms: start-up work inside one enqueue; the fastest 3\.7 ms\)/,
      );
      t.regex(
        r.stdout,
        /\*\*TensorRT layers by GPU time: .* the ranges hold 9\.569 s of the log's 9\.863 s of GPU activities\*\*/,
      );
      t.regex(r.stdout, /\n\| 1\.234 s \| 7\.343 ms \| 12\.9% \| 11\.668 ms \| 168 \| 036_convolutional \|/);
      t.regex(
        r.stdout,
        new RegExp(
          `- per frame, ${name}: the GPU is busy .*\\. Inference 95\\.7 ms = host work 37\\.0 ms`.replace(
            ' = ',
            ' \\(1000 / 10\\.45 FPS, typed in\\) = ',
          ),
        ),
      );
      t.regex(r.stdout, new RegExp(`This log is held against the typed-in row ${name}: its name says TensorRT`));
    }
    // copies over every GPU row of the log (DtoH 1.9367ms is below the listed top): 250.34 + 236.45 + 1.9367 ms + 44.791us
    // = 488.771491 ms of 9.862699491 s = 5.0%; the steady-state sums at the table's precision (microseconds)
    const lab = (await runCli('jetprof', ['report', '--profile', realLog])).stdout.replace(/\s+/g, ' ');
    t.regex(
      lab,
      /memory copies and sets are 5\.0% of the GPU time \(488\.771 ms of 9\.863 s: HtoD 250\.340 ms, DtoD 236\.450 ms, DtoH 1\.937 ms, memset 44\.791 us\)/,
    );
    t.regex(lab, /: 7\.080454 s\), each remaining row's share of the 84\.058238 s left/);
    // rows whose names say nothing: none is picked, and the report says why and how to name one
    const twoRows = ['report', '--profile', realLog, '--fps', 'A@960x540=10.45/4.99', '--fps', 'B@960x540=1.09/0.92'];
    const none = await runCli('jetprof', twoRows);
    t.regex(
      none.stdout,
      /This log is not held against a typed-in row: none of the 2 rows' names says TensorRT or TRT \(A, B\): pass --reconcile ROW/,
    );
    t.notRegex(none.stdout, /- per frame, /);
    const named = await runCli('jetprof', [...twoRows, '--reconcile', 'a']);
    t.regex(
      named.stdout,
      /- per frame, A: the GPU is busy .* Inference 95\.7 ms .* This log is held against the typed-in row A: the row --reconcile names\./,
    );
  },
);

const CHROMIUM = '/usr/bin/chromium';
requires(existsSync(CHROMIUM), 'no Chromium: bash scripts/setup.sh --test installs it')(
  'the HTML page renders in headless Chromium: non-empty charts, no console errors (screenshot saved)',
  async (t) => {
    const html = join(dir, 'report.html');
    const pipelinedJson = join(dir, 'pipelined.json');
    writeFileSync(
      pipelinedJson,
      JSON.stringify(
        fixedRun('onnx', { read: 8, preprocess: 6, inference: 30, postprocess: 3, write: 12 }, 40, {
          loop: 'pipelined',
        }),
      ),
    );
    // four cameras from one file, with latencies long enough to fill a phone's card
    const camsJson = join(dir, 'cams.json');
    const cams = fixedRun('onnx', { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 }, 20, {
      label: 'cams',
    });
    cams.setup.realtime = { sourceFps: 10 };
    cams.streams = [0, 1, 2, 3].map((index) => ({
      index,
      source: 'videos/vtest.avi',
      width: 960,
      height: 540,
      frames: 30,
      droppedFrames: 64,
      endToEndFps: 3.01,
      latencyMs: { p50: 1232.1, p90: 1850.3, p99: 1926.4 },
    }));
    cams.aggregateFps = 12.04;
    writeFileSync(camsJson, JSON.stringify(cams));
    const r = await runCli('jetprof', [
      'report',
      '--run',
      onnxJson,
      '--run',
      trtJson,
      '--run',
      pipelinedJson,
      '--run',
      camsJson,
      '--profile',
      labLog,
      '--html',
      html,
      '--out',
      join(dir, 'R2.md'),
    ]);
    t.is(r.code, 0, r.stderr);
    const page = readFileSync(html, 'utf8');
    t.false(/<script|https?:\/\/(?!www\.w3\.org)/.test(page), 'self-contained: no script, no network');
    const { chromium } = await import('playwright-core');
    // playwright-core starts Chromium with a new empty profile of its own; the flags keep it off the (closed) network.
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const p = await browser.newPage();
      const errors: string[] = [];
      p.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      p.on('pageerror', (e) => errors.push(e.message));
      await p.goto(`file://${html}`);
      // bar charts are HTML (figure.chart.bars: they reflow on a phone); line charts and histograms are SVG
      const charts = await p.$$eval('.chart', (els) =>
        els.map((s) => ({
          label: s.getAttribute('aria-label'),
          bars:
            s.tagName.toLowerCase() === 'svg'
              ? [...s.querySelectorAll('rect')].filter((r) => Number(r.getAttribute('width')) > 0).length
              : [...s.querySelectorAll('.bar')].filter((b) => b.getBoundingClientRect().width > 0).length,
          lines: s.querySelectorAll('polyline').length,
          box: s.getBoundingClientRect().width,
        })),
      );
      t.deepEqual(
        charts.map((c) => c.label),
        [
          'FPS per row (mean; ± std in the table where a label ran several times)',
          'Mean time per frame by stage, sequential loop (stages run one after another, so the bar is the frame)',
          'Pipelined loop timeline, 10 frames: onnx-fp32-cpu-pipelined3',
          'Latency over time per stage (ms): onnx-fp32-cpu-sequential',
          'Latency histogram per stage: onnx-fp32-cpu-sequential',
          'Latency over time per stage (ms): trt-fp16-gpu-sequential',
          'Latency histogram per stage: trt-fp16-gpu-sequential',
          'Latency over time per stage (ms): onnx-fp32-cpu-pipelined3',
          'Latency histogram per stage: onnx-fp32-cpu-pipelined3',
          'Latency over time per stage (ms): cams',
          'Latency histogram per stage: cams',
          'Waiting time (s): nvprof-synthetic-trt-lab.txt',
          'Critical path, steady state (share of what start-up and tear-down leave): nvprof-synthetic-trt-lab.txt',
        ],
      );
      for (const c of charts) {
        t.true(c.bars >= 1 || c.lines === 5, `${c.label}: ${c.bars} bars / ${c.lines} lines drawn`);
        t.true(c.box > 100, `${c.label}: laid out ${c.box}px wide`);
      }
      // the FPS chart prints each row's value: the lab's 10.45 FPS is there as text, not only as a bar length
      t.true(
        (await p.$$eval('.bars .bar-value', (els) => els.map((e) => e.textContent ?? ''))).some((v) => / FPS$/.test(v)),
      );
      // labels are never clipped: every text element lies inside its chart
      const clipped = await p.$$eval('svg.chart', (svgs) =>
        svgs.flatMap((s) => {
          const box = s.getBoundingClientRect();
          return [...s.querySelectorAll('text')]
            .filter((el) => {
              const b = el.getBoundingClientRect();
              return b.left < box.left - 0.5 || b.right > box.right + 0.5;
            })
            .map((el) => `${s.getAttribute('aria-label')}: ${el.textContent}`);
        }),
      );
      t.deepEqual(clipped, []);
      const tableText = await p.$eval('table', (el) => el.textContent ?? '');
      t.true(tableText.includes('TensorRT'));
      await p.screenshot({ path: join(dir, 'report.png'), fullPage: true });
      t.true(existsSync(join(dir, 'report.png')));
      t.regex(
        page,
        /Waiting time<\/b> \(&gt; 0\): cudaStreamSynchronize 12\.500000 s/,
        'the waiting rows, as in the Markdown',
      );
      // on a phone (390 px) and a desktop (1280 px): nothing sticks out of the page but inside its own scrolling box
      for (const width of [390, 1280]) {
        await p.setViewportSize({ width, height: 900 });
        // a string, not a function: the test's TypeScript transform would add helpers the page does not have
        const out = (await p.evaluate(`(() => {
          const w = ${width};
          return {
            pageWidth: document.documentElement.scrollWidth,
            sticking: [...document.body.querySelectorAll('*')]
              .filter((el) => !el.closest('.scroll') && el.getBoundingClientRect().right > w + 0.5)
              .map((el) => el.tagName.toLowerCase() + (el.getAttribute('aria-label') ? ' ' + el.getAttribute('aria-label') : ''))
              .slice(0, 5),
            chartsLegible: [...document.querySelectorAll('svg.chart')].every((s) => s.getBoundingClientRect().width >= Math.min(500, Number(s.getAttribute('width')) - 1)),
            // every bar chart's value and label on screen, not scrolled, at a readable size
            barTextOff: [...document.querySelectorAll('.bars .bar-value, .bars .bar-label, .bars .legend-item')]
              .filter((el) => el.getBoundingClientRect().right > w + 0.5 || el.getBoundingClientRect().left < 0 || el.closest('.scroll'))
              .map((el) => el.textContent).slice(0, 5),
            smallText: [...document.querySelectorAll('.bars .bar-value, .bars .bar-label')]
              .filter((el) => parseFloat(getComputedStyle(el).fontSize) < 11).length,
            // every table fits its box: nothing to scroll sideways to (a phone stacks the rows into cards)
            tablesScrolling: [...document.querySelectorAll('.scroll')]
              .filter((s) => s.querySelector('table') && s.scrollWidth > s.clientWidth + 1)
              .map((s) => (s.querySelector('th, td')?.textContent ?? '') + ': ' + s.scrollWidth + ' > ' + s.clientWidth),
            // on a phone each row's name opens its card, above its figures
            namesNotFirst: w > 640 ? [] : [...document.querySelectorAll('tbody tr')]
              .filter((tr) => { const k = tr.querySelector('td.key'); return k && k.textContent && [...tr.querySelectorAll('td')].some((td) => td !== k && td.textContent && td.getBoundingClientRect().top < k.getBoundingClientRect().top); })
              .map((tr) => tr.textContent.slice(0, 40)).slice(0, 5),
            // a card's label never runs into its value: the label's longest unbreakable piece fits its box
            labelsIntoValues: w > 640 ? [] : (() => {
              const ctx = document.createElement('canvas').getContext('2d');
              return [...document.querySelectorAll('.scroll td')].filter((td) => {
                const b = getComputedStyle(td, '::before');
                if (b.content === 'none' || !td.dataset.label || !td.textContent) return false;
                ctx.font = b.font;
                const pieces = /nowrap|pre/.test(b.whiteSpace) ? [td.dataset.label] : td.dataset.label.split(/\\s+/);
                return Math.max(...pieces.map((x) => ctx.measureText(x).width)) > parseFloat(b.width) + 0.5;
              }).map((td) => td.dataset.label + ': ' + td.textContent).slice(0, 5);
            })(),
            // cards of one file's streams open with their stream, not four times the same path
            streamCards: w > 640 ? [] : [...document.querySelectorAll('td.key.named')]
              .map((td) => getComputedStyle(td, '::before').content.replace(/"/g, '') + ' ' + td.textContent),
            wrappedNumbers: [...document.querySelectorAll('td.n')]
              .filter((el) => { const r = document.createRange(); r.selectNodeContents(el); return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1; })
              .map((el) => el.textContent).slice(0, 5),
          };
        })()`)) as {
          pageWidth: number;
          sticking: string[];
          chartsLegible: boolean;
          barTextOff: string[];
          smallText: number;
          wrappedNumbers: string[];
          tablesScrolling: string[];
          namesNotFirst: string[];
          labelsIntoValues: string[];
          streamCards: string[];
        };
        t.deepEqual(out.labelsIntoValues, [], `${width}px: no card label runs into its value`);
        if (width === 390) t.deepEqual(out.streamCards, ['Stream 0', 'Stream 1', 'Stream 2', 'Stream 3']);
        t.deepEqual(out.tablesScrolling, [], `${width}px: every table fits without scrolling sideways`);
        t.deepEqual(out.namesNotFirst, [], `${width}px: each row's name first`);
        t.deepEqual(out.barTextOff, [], `${width}px: bar chart values and labels on screen without scrolling`);
        t.is(out.smallText, 0, `${width}px: bar chart text at least 11 px`);
        t.deepEqual(out.wrappedNumbers, [], `${width}px: no number wraps its unit onto a second line`);
        t.true(out.pageWidth <= width, `${width}px: the page is ${out.pageWidth}px wide`);
        t.deepEqual(out.sticking, [], `${width}px: elements past the viewport outside a scrolling box`);
        t.true(
          out.chartsLegible,
          `${width}px: charts scale with the page, never below a legible width (their box scrolls)`,
        );
        const shots = process.env.JETPROF_SCREENSHOT_DIR;
        if (shots) await p.screenshot({ path: join(shots, `report-${width}.png`), fullPage: true });
      }
      t.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
);

test.serial(
  'jetprof compare: both backends (TensorRT through the CPU ABI library) under real nsys, then the report',
  async (t) => {
    const lib = buildCpuEngineLib();
    const model = makeModel('compare', SMALL_LAB_CFG, 3);
    const info = readModelInfo(model.onnxPath);
    const engine = join(dir, 'compare.engine');
    writeFileSync(
      engine,
      [
        'jetprof-cpu-engine 1',
        'tensorrt 8.6.1',
        'input images 0 1 3 128 160',
        ...info.heads.map((h) => `output ${h.output} 0 1 21 ${h.gridH} ${h.gridW} -10 0`),
        '',
      ].join('\n'),
    );
    const video = makeVideo('compare.mp4', 10, 320, 240);
    const out = join(dir, 'compare');
    const r = await runCli(
      'jetprof',
      [
        'compare',
        video,
        '--profile',
        'nsys',
        '--engine',
        engine,
        '--backends',
        'onnx,trt',
        '--out-dir',
        out,
        '--',
        '--model',
        model.onnxPath,
        '--pipeline',
        'on',
        '--warmup',
        '2',
      ],
      {
        env: { JETPROF_TRT_SHIM: lib },
        timeout: 1_500_000,
      },
    );
    t.is(r.code, 0, r.stderr);
    t.regex(r.stderr, /\[1\/3\] ONNX Runtime: infer under nsys/);
    t.regex(r.stderr, /\[2\/3\] TensorRT: done in/);
    t.regex(r.stderr, /\[3\/3\] report: /);
    const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
    t.regex(md, /\| ONNX Runtime \(CPU, FP32\) \| \(320,240,3\) \| [\d.]+ \| [\d.]+ \|/);
    t.regex(md, /\| TensorRT \(precision unknown\) \| \(320,240,3\) \| [\d.]+ \| [\d.]+ \|/);
    t.regex(md, /### onnx-fp32-cpu-pipelined3-nsys \(profile_onnx_nsys\.json\) \(nsys\)/);
    t.regex(md, /### trt-unknown-gpu-pipelined3-nsys \(profile_trt_nsys\.json\) \(nsys\)/);
    t.regex(
      md,
      /\| onnx-fp32-cpu-pipelined3-nsys \| pipelined \(3 in flight\) \| nsys \|/,
      'the row says it was measured under nsys',
    );
    t.regex(
      md,
      /- not compared: ONNX Runtime \(CPU, FP32\) vs TensorRT \(precision unknown\): boxes not checked: neither found a box/,
      'random weights find nothing: no speed-up is claimed',
    );
    // NVTX: warm-up frames have ranges of their own, so every stage's instance count equals the measured frames
    for (const backend of ['onnx', 'trt']) {
      const profile = JSON.parse(readFileSync(join(out, `profile_${backend}_nsys.json`), 'utf8'));
      const counts = Object.fromEntries(
        profile.nsys.reports.nvtx_sum.rows.map((row: { range: string; instances: number }) => [
          row.range.replace(/^:/, ''),
          row.instances,
        ]),
      );
      t.is(profile.run.frames, 8);
      for (const stage of ['frame', 'read', 'preprocess', 'inference', 'postprocess', 'write'])
        t.is(counts[stage], 8, `${backend} ${stage}: 8 instances for 8 measured frames`);
      for (const stage of ['frame', 'read', 'preprocess', 'inference', 'postprocess', 'write'])
        t.is(counts[`warmup-${stage}`], 2, `${backend} warmup-${stage}`);
    }
    t.regex(md, /frame ranges overlap in the pipelined loop/);
    // accuracy beside speed: TensorRT's boxes (through the CPU ABI library) against ONNX Runtime's
    t.true(existsSync(join(out, 'detections_onnx.json')) && existsSync(join(out, 'detections_trt.json')));
    t.regex(md, /\*\*Accuracy\*\* \(Do they find the same boxes\? Each row against ONNX Runtime \(CPU, FP32\)/);
    t.regex(md, /\| ONNX Runtime \(CPU, FP32\) \| reference \|/);
    t.regex(md, /\| TensorRT \(precision unknown\) \| no boxes in either \|/, 'random weights: no box on either side');
    t.true(existsSync(join(out, 'report.html')));
    t.true(existsSync(join(out, 'csv', 'fps.csv')));
    t.deepEqual(orphanNsysAgents(), [], 'no nsys agent left running after its nsys ended');
  },
);

test('compare: --profile nvprof without a usable GPU is one line before any backend runs (exit 3); a backend that fails is a row of a report that is written, and compare exits 1', async (t) => {
  const video = makeVideo('compare-fail.mp4', 3, 160, 120);
  const out = join(dir, 'compare-nvprof');
  const r = await runCli('jetprof', [
    'compare',
    video,
    '--profile',
    'nvprof',
    '--out-dir',
    out,
    '--',
    '--model',
    'm.onnx',
  ]);
  t.is(r.code, 3, r.stderr);
  t.regex(
    r.stderr,
    /^jetprof: error: compare --profile nvprof: no NVIDIA GPU or driver here .* \(fix: run it on the Jetson \(JetPack 4\), or use --profile nsys/m,
  );
  t.notRegex(r.stderr, /\[1\/\d\]/, 'no backend ran');
  t.false(existsSync(out), 'nothing written');
  const failed = join(dir, 'compare-failed');
  const f = await runCli('jetprof', [
    'compare',
    video,
    '--backends',
    'onnx',
    '--out-dir',
    failed,
    '--',
    '--model',
    join(dir, 'missing.onnx'),
  ]);
  t.is(f.code, 1, f.stderr);
  const md = readFileSync(join(failed, 'REPORT.md'), 'utf8');
  t.regex(md, /\| ONNX Runtime \| {2}\| failed \(exit 2\) \| failed \|/);
  t.regex(md, /ONNX Runtime failed: exit code 2; its last line: infer: error: .*missing\.onnx: ONNX model not found/);
});

test('jetprof compare without an engine, --repeat 2: TensorRT skipped with the reason, ONNX Runtime as mean ± std of 2 runs', async (t) => {
  const model = makeModel('compare2', SMALL_LAB_CFG, 4, undefined, 0); // fires: boxes to agree on
  const video = makeVideo('compare2.mp4', 4, 160, 120);
  const out = join(dir, 'compare2');
  const r = await runCli('jetprof', [
    'compare',
    video,
    '--out-dir',
    out,
    '--repeat',
    '2',
    '--',
    '--model',
    model.onnxPath,
    '--warmup',
    '1',
  ]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /\[2\/4\] TensorRT: skipped \(no --engine given/);
  t.regex(
    r.stderr,
    /ONNX Runtime: infer \.\.\.\n(.*\n)*?jetprof compare: +progress: .*frame 4\/4 /,
    "infer's progress relayed",
  );
  t.regex(r.stderr, /\[3\/4\] OpenCV DNN: done in/);
  const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
  t.true(md.startsWith('# YOLOv4-Tiny: ONNX Runtime vs OpenCV DNN (TensorRT skipped)\n'), 'the title says what ran');
  t.notRegex(md + r.stderr, /TensorRT alone would run/, 'a skipped backend picks no loop');
  t.regex(
    md,
    /\| OpenCV DNN \(CPU, FP32\) \| 100\.00% \([1-9]\d*\) \| /,
    'the same .onnx through OpenCV DNN finds the same boxes',
  );
  t.regex(
    md,
    /\| ONNX Runtime \(CPU, FP32\) \| \(160,120,3\) \| [\d.]+ ± [\d.]+ \(2 runs\) \| [\d.]+ ± [\d.]+ \(2 runs\) \|/,
  );
  t.true(existsSync(join(out, 'run_onnx-1.json')) && existsSync(join(out, 'run_onnx-2.json')));
  t.regex(md, /\| TensorRT \|  \| skipped \| skipped \|/);
  t.regex(
    md,
    /- TensorRT skipped: no --engine given .*\. To include it: `jetprof build-engine --onnx .*compare2\.onnx --out engines\/yolov4-tiny\.trt --fp16`, then `jetprof compare .* --engine engines\/yolov4-tiny\.trt -- --model .*compare2\.onnx --warmup 1`/,
    "the hint names the user's model, one code span per command",
  );
  t.regex(
    r.stdout,
    /^\| Model Type \| Model Input Size \| Inference Speed \(FPS\) \| End-to-end speed \(FPS\) \|/,
    'compare ends by printing the speed table',
  );
  t.regex(r.stdout, /\nreport: .*REPORT\.md \(HTML: .*report\.html\)\n$/);
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  t.regex(html, /<li class="skipped">TensorRT skipped: no --engine given/);
});

test('report --fps: the lab table from typed-in figures (the off-board route: no run JSON), with the speed-up and the gap', async (t) => {
  const r = await runCli('jetprof', [
    'report',
    '--fps',
    'PyTorch@960x540=1.09/0.92',
    '--fps',
    'TensorRT@960x540=10.45/4.99',
  ]);
  t.is(r.code, 0, r.stderr);
  t.true(r.stdout.includes('| PyTorch | (960,540,3) | 1.09 | 0.92 |\n| TensorRT | (960,540,3) | 10.45 | 4.99 |'));
  t.regex(r.stdout, /- TensorRT vs PyTorch: 9\.6x inference, 5\.4x end to end/);
  t.regex(
    r.stdout,
    /TensorRT \(typed in\): 52\.2% of the wall time is not inference, by 1 - end-to-end FPS \/ inference FPS/,
  );
  t.regex(r.stdout, /\| PyTorch \(typed in\) \| unknown \| unknown \|/, 'typed-in rows say where they come from');
  // typed-in rows alone: only the columns --fps carries, not nine empty ones
  t.regex(
    r.stdout,
    /\| Label \| Loop \| Profiler \| Device \| Frame size \|\n(.*\n)+\| TensorRT \(typed in\) \| unknown \| unknown \| unknown \(typed in\) \| 960x540 \|\n/,
  );
  t.notRegex(r.stdout, /\| {2}\|/, 'no empty cell in any table');
  const bad = await runCli('jetprof', ['report', '--fps', 'TensorRT=abc']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--fps takes NAME\[@WxH\]\[@DEVICE\]=INFERENCE\/END_TO_END/);
  // end to end includes the inference: a row faster end to end than in inference has its figures swapped
  const swapped = await runCli('jetprof', ['report', '--fps', 'TensorRT@960x540=4.99/10.45']);
  t.is(swapped.code, 2);
  t.regex(
    swapped.stderr,
    /end-to-end 10\.45 is above inference 4\.99, and end to end includes the inference \(swapped\?/,
  );
});

test("rows from more than one device get a Device column: a run measured here beside the lab's typed-in Jetson row does not read as the same machine", async (t) => {
  const x86 = fixedRun('onnx', { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 }, 20);
  x86.env = { ...x86.env, cpu: 'AMD EPYC x2', jetson: undefined };
  const file = join(dir, 'x86.json');
  writeFileSync(file, JSON.stringify(x86));
  const r = await runCli('jetprof', ['report', '--run', file, '--fps', 'TensorRT@960x540@Jetson Nano=10.45/4.99']);
  t.is(r.code, 0, r.stderr);
  t.regex(
    r.stdout,
    /\| Model Type \| Device \| Model Input Size \| Inference Speed \(FPS\) \| End-to-end speed \(FPS\) \|/,
  );
  t.regex(r.stdout, /\| ONNX Runtime \(CPU, FP32\) \| AMD EPYC x2 \| \(960,540,3\) \|/);
  t.regex(r.stdout, /\| TensorRT \| Jetson Nano \| \(960,540,3\) \| 10\.45 \| 4\.99 \|/);
  t.regex(r.stdout, /\| TensorRT \(typed in\) \| unknown \| unknown \| .*\| Jetson Nano \(typed in\) \|/);
  // one machine: the lab's four columns, as the lab prints them
  const one = reportMarkdown(buildLabReport([onnxRun, onnxRun], []));
  t.regex(one, /\| Model Type \| Model Input Size \| Inference Speed/);
  // an accuracy row where neither side found a box says so, not "100.00% (0)"
  const none = {
    matched: 0,
    onlyRef: 0,
    onlyOther: 0,
    matchedShare: 1,
    meanIou: 0,
    meanAbsScoreDiff: 0,
    maxAbsScoreDiff: 0,
  };
  const trtLabel = trtRun.setup.label;
  const acc = buildLabReport([onnxRun, trtRun], [], 10, {
    accuracy: {
      agreement: [{ ref: onnxRun.setup.label, other: trtLabel, agreement: none as never }],
      pairs: [],
      maps: [],
    },
  });
  // and nothing else in the row pretends to be measured: no IoU, no counts, no score differences
  t.regex(reportMarkdown(acc), /\| TensorRT \(FP16\) \| no boxes in either \| {2}\| {2}\| {2}\|/);
  t.notRegex(reportMarkdown(acc), /100\.00% \(0\)/);
});

test('speed-ups only between comparable rows: typed-in rows with each other, never with measured ones; each pair not compared says why', async (t) => {
  const r = await runCli('jetprof', [
    'report',
    '--run',
    onnxJson,
    '--fps',
    'TensorRT@960x540=10.45/4.99',
    '--fps',
    'PyTorch@960x540=1.09/0.92',
  ]);
  t.is(r.code, 0, r.stderr);
  t.regex(
    r.stdout,
    /- TensorRT vs PyTorch: 9\.6x inference, 5\.4x end to end/,
    "the lab's own typed-in speed-up is still shown",
  );
  t.regex(
    r.stdout,
    /- not compared: ONNX Runtime \(CPU, FP32\) vs TensorRT: TensorRT was typed in \(device and loop unknown\), ONNX Runtime \(CPU, FP32\) was measured by jetprof/,
  );
  t.regex(r.stdout, /- not compared: ONNX Runtime \(CPU, FP32\) vs PyTorch: PyTorch was typed in/);
  t.notRegex(r.stdout, /ONNX Runtime \(CPU, FP32\) vs TensorRT: [\d.]+x/);
  // typed-in rows in "What each row measured" beside a measured one: origin, unknown device, the rest "not given"
  t.regex(
    r.stdout,
    /\| TensorRT \(typed in\) \| unknown \| unknown \| not given \| not given \| unknown \(typed in\) \| not given \| not given \| 960x540 \| not given \| not given \| not given \|/,
  );
  const csv = join(dir, 'csv-typed');
  t.is(
    (await runCli('jetprof', ['report', '--run', onnxJson, '--fps', 'TensorRT@960x540=10.45/4.99', '--csv', csv])).code,
    0,
  );
  const rows = readFileSync(join(csv, 'fps.csv'), 'utf8').trim().split('\n');
  t.regex(rows[1], /^onnx-fp32-cpu-sequential,.*,[\d.]+,,[\d.]+,,1,20,/, 'one run: std empty (unknown), not 0.00');
  t.regex(rows[2], /^TensorRT,TensorRT,"?\(960,540,3\)"?,10\.45,,4\.99,,1,,/, 'typed in: no spread, no frame count');
});

test('speed-ups need the same machine and boxes that agree; otherwise one line with the reason', (t) => {
  const a = { ...onnxRun, env: { ...onnxRun.env, host: 'nano-1' } };
  const b = { ...trtRun, env: { ...trtRun.env, host: 'x86-ci' } };
  const across = buildLabReport([a, b], []);
  t.deepEqual(across.speedups, []);
  t.regex(
    reportMarkdown(across),
    /- not compared: ONNX Runtime \(CPU, FP32\) vs TensorRT \(FP16\): different machine \(host nano-1 \/ host x86-ci\)/,
  );
  const withBoxes = [
    { ...onnxRun, detectionsFile: 'o.json' },
    { ...trtRun, detectionsFile: 't.json' },
  ];
  const labels = withBoxes.map((x) => x.setup.label);
  const report = (matchedShare: number | undefined, boxes = 100) =>
    buildLabReport(withBoxes, [], 10, {
      accuracy: {
        agreement: [],
        maps: [],
        pairs: [
          {
            a: labels[0],
            b: labels[1],
            ...(matchedShare === undefined ? { note: 'not the same frames' } : { matchedShare, boxes }),
          },
        ],
      },
    });
  t.is(report(0.995).speedups.length, 1, 'boxes agree: compared');
  const disagree = report(0.43);
  t.deepEqual(disagree.speedups, []);
  t.regex(
    reportMarkdown(disagree),
    /- not compared: ONNX Runtime \(CPU, FP32\) vs TensorRT \(FP16\): boxes disagree, 43% matched \(at least 99% needed\)/,
  );
  t.regex(
    reportMarkdown(report(1, 0)),
    /boxes not checked: neither found a box/,
    'two empty detection files prove nothing',
  );
  t.regex(reportMarkdown(report(undefined)), /boxes not checked \(not the same frames\)/);
  t.is(
    buildLabReport(withBoxes, [], 10, {
      minMatch: 0.4,
      accuracy: { agreement: [], maps: [], pairs: [{ a: labels[0], b: labels[1], matchedShare: 0.43, boxes: 9 }] },
    }).speedups.length,
    1,
    '--min-match lowers the bar',
  );
});

test('a run file given twice counts once (with a warning); an interrupted run is kept out of the mean and said so', async (t) => {
  const twice = await runCli('jetprof', ['report', '--run', onnxJson, '--run', onnxJson]);
  t.is(twice.code, 0, twice.stderr);
  t.regex(twice.stderr, /warning: .*onnx\.json was given twice: it counts as one run/);
  t.regex(
    twice.stdout,
    /\| ONNX Runtime \(CPU, FP32\) \| \(960,540,3\) \| [\d.]+ \| [\d.]+ \|/,
    'one run: no "± 0.00 (2 runs)"',
  );
  t.notRegex(twice.stdout, /± 0\.00/);
  const a = fixedRun('onnx', { read: 8, preprocess: 6, inference: 100, postprocess: 3, write: 12 }, 20);
  const b = fixedRun('onnx', { read: 8, preprocess: 6, inference: 110, postprocess: 3, write: 12 }, 20);
  const cut = {
    ...fixedRun('onnx', { read: 8, preprocess: 6, inference: 400, postprocess: 3, write: 12 }, 4),
    interrupted: true,
  };
  const report = buildLabReport([a, cut, b], []);
  t.is(report.fps[0].runs, 2);
  t.is(
    report.fps[0].inferenceFps.mean,
    (a.inferenceFps + b.inferenceFps) / 2,
    'the interrupted run is not in the mean',
  );
  t.regex(
    reportMarkdown(report),
    /- left out: a run of onnx-fp32-cpu-sequential started .* was interrupted after 4 measured frame\(s\)/,
  );
});

test('a backend that failed is a row with its exit code and last line, and the title does not pretend it was never asked for', (t) => {
  const report = buildLabReport([onnxRun], [], 10, {
    failed: [{ modelType: 'OpenCV DNN', exitCode: 133, lastLine: 'FATAL ERROR: v8::ToLocalChecked Empty MaybeLocal' }],
  });
  const md = reportMarkdown(report);
  t.true(md.startsWith('# YOLOv4-Tiny: ONNX Runtime (OpenCV DNN failed)\n'), md.split('\n')[0]);
  t.regex(md, /\| OpenCV DNN \| {2}\| failed \(exit 133\) \| failed \|/);
  t.regex(
    md,
    /- \*\*OpenCV DNN failed: exit code 133; its last line: FATAL ERROR: v8::ToLocalChecked Empty MaybeLocal\*\*/,
  );
  t.regex(reportHtml(report), /OpenCV DNN failed: exit code 133/);
});

test('a 200,000-frame run (70 minutes at 30 FPS, or 4 streams for 18) gives its Markdown and HTML report: no reduction spreads the frames into arguments', (t) => {
  const long = fixedRun('onnx', { read: 8, preprocess: 6, inference: 40, postprocess: 3, write: 12 }, 200_000);
  const report = buildLabReport([long], []);
  const html = reportHtml(report);
  t.true(html.includes('Latency histogram per stage'));
  t.regex(reportMarkdown(report), /\| ONNX Runtime \(CPU, FP32\) \|/);
  // the same frames as 4 streams taking turns: each stream's latency over the run is drawn from all of them
  const four = fixedRun('onnx', { read: 8, preprocess: 6, inference: 40, postprocess: 3, write: 12 }, 200_000);
  four.setup = { ...four.setup, label: 'four-streams' };
  four.perFrame!.stream = four.perFrame!.index.map((_, k) => k % 4);
  four.streams = [0, 1, 2, 3].map((index) => ({
    index,
    source: 'v.mp4',
    width: 960,
    height: 540,
    frames: 50_000,
    droppedFrames: 0,
    endToEndFps: 3.7,
    latencyMs: { p50: 69, p90: 69, p99: 69 },
  }));
  const html4 = reportHtml(buildLabReport([four], []));
  t.regex(html4, /aria-label="Latency per stream over the run \(a frame's read to its boxes, ms\): four-streams"/);
});

/**
 * The text of a Markdown document a CommonMark renderer would read as markup: code spans (a run of n backticks to the
 * next run of exactly n, never one a backslash escapes) taken out, then every `<tag`, `](` and `![` not escaped.
 */
function liveMarkup(md: string): string[] {
  let outside = '';
  for (let i = 0; i < md.length;) {
    if (md[i] === '\\') {
      outside += md.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (md[i] === '`') {
      let j = i;
      while (md[j] === '`') j++;
      const run = md.slice(i, j);
      let k = md.indexOf(run, j);
      while (k >= 0 && (md[k + run.length] === '`' || md[k - 1] === '`')) k = md.indexOf(run, k + 1);
      if (k >= 0) {
        i = k + run.length; // a code span: literal
        continue;
      }
      outside += run;
      i = j;
      continue;
    }
    outside += md[i++];
  }
  return [...outside.matchAll(/(?<!\\)(<[A-Za-z/!][^>\n]*>?|\]\([^)\n]*\)?|!\[)/g)].map((m) => m[0]);
}

test('report: a title, a --fps name and kernel names with backticks, HTML and link syntax put no live markup into REPORT.md (CommonMark pairing)', async (t) => {
  const d = join(dir, 'hostile-md');
  mkdirSync(d, { recursive: true });
  const log = join(d, 'log.txt');
  writeFileSync(
    log,
    [
      '==9== NVPROF is profiling process 9, command: ./app',
      '==9== Profiling result:',
      '            Type  Time(%)      Time     Calls       Avg       Min       Max  Name',
      ' GPU activities:   60.00%  6.0000ms         2  3.0000ms  2.0000ms  4.0000ms  k`<img src=x onerror=alert(1)>',
      '                   40.00%  4.0000ms         1  4.0000ms  4.0000ms  4.0000ms  ![pixel](http://tracker.example/p.png)',
      '      API calls:  100.00%  10.000ms         3  3.3333ms  1.0000ms  5.0000ms  cuda`Sync``<b>',
      '==9== Dependency Analysis:',
      'Critical path(%)  Critical path  Waiting time  Name',
      '          60.00%       6.0000ms           0ns  k`<img src=x onerror=alert(1)>',
      '          40.00%       4.0000ms       3.0000ms  cuda`Sync``<b>',
      '',
    ].join('\n'),
  );
  const out = join(d, 'REPORT.md');
  const r = await runCli('jetprof', [
    'report',
    '--title',
    'lab `3`: x`y<img src=y onerror=alert(2)>',
    '--fps',
    'x`y<script>alert(3)</script>[a](javascript:alert(4))@960x540=10/5',
    '--profile',
    log,
    '--out',
    out,
  ]);
  t.is(r.code, 0, r.stderr);
  const md = readFileSync(out, 'utf8');
  t.deepEqual(liveMarkup(md), [], md);
  // the names are all there, as text
  t.regex(md, /onerror=alert\(1\)/);
  t.regex(md, /alert\(3\)/);
  t.regex(md, /tracker\.example/);
  // our own code spans still are code spans
  t.regex(md, /`3`/);
});

/** Bytes a process has read so far (rchar in /proc), or -1 once it is gone. */
function bytesRead(pid: number): number {
  try {
    return Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? -1);
  } catch {
    return -1;
  }
}

test.serial(
  'report: Ctrl-C during a long report (300 runs of 1000 frames, seconds of work without a pause) exits 130 and replaces no output',
  async (t) => {
    const d = join(dir, 'long-report');
    mkdirSync(join(d, 'runs'), { recursive: true });
    const args: string[] = [];
    let total = 0;
    for (let i = 0; i < 300; i++) {
      const run = fixedRun(
        'onnx',
        { read: 8, preprocess: 6, inference: 90 + (i % 7), postprocess: 3, write: 12 },
        1000,
        {
          label: `run-${i}`,
        },
      );
      run.startedAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      const f = join(d, 'runs', `r${i}.json`);
      const text = JSON.stringify(run);
      total += text.length;
      writeFileSync(f, text);
      args.push('--run', f);
    }
    const md = join(d, 'REPORT.md');
    const html = join(d, 'report.html');
    writeFileSync(md, 'the report of yesterday');
    writeFileSync(html, '<p>yesterday</p>');
    const run = startCli('jetprof', ['report', ...args, '--out', md, '--html', html]);
    // halfway through reading the run files (their bytes are several times what start-up reads): the handlers are set,
    // and from here the report ran to its outputs without a turn of the event loop before this fix
    t.true(total > 20e6, `${total} bytes of run files`);
    while (bytesRead(run.child.pid!) >= 0 && bytesRead(run.child.pid!) < total / 2)
      await new Promise((r) => setTimeout(r, 5));
    run.child.kill('SIGINT');
    const code = await run.exit;
    t.is(code, 130, run.stderr());
    t.is(readFileSync(md, 'utf8'), 'the report of yesterday');
    t.is(readFileSync(html, 'utf8'), '<p>yesterday</p>');
    t.deepEqual(
      readdirSync(d).filter((f) => f.includes('partial') || f.startsWith('.jetprof')),
      [],
    );
  },
);

test('report: every figure a hand-edited run file carries is checked on load: inference below end-to-end, a negative stage, a null FPS, a zero wall time are one line each, exit 2', async (t) => {
  const d = join(dir, 'edited-runs');
  mkdirSync(d, { recursive: true });
  const good = fixedRun('onnx', { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 }, 20);
  const write = (name: string, edit: (r: Record<string, any>) => void) => {
    const r = JSON.parse(JSON.stringify(good));
    edit(r);
    const f = join(d, `${name}.json`);
    writeFileSync(f, JSON.stringify(r));
    return f;
  };
  const ok = await runCli('jetprof', ['report', '--run', write('unedited', () => undefined)]);
  t.is(ok.code, 0, ok.stderr);
  const cases: [string, (r: Record<string, any>) => void, RegExp][] = [
    [
      'swapped',
      (r) => ([r.inferenceFps, r.endToEndFps] = [r.endToEndFps, r.inferenceFps]),
      /end-to-end [\d.]+ FPS above inference [\d.]+ FPS, which a run that infers every frame cannot measure/,
    ],
    ['negative', (r) => (r.stages.write.meanMs = -3), /stages\.write\.meanMs -3: not a figure a run can measure/],
    ['null-fps', (r) => (r.inferenceFps = null), /inferenceFps null: not a figure a run can measure/],
    ['zero-wall', (r) => (r.wallMs = 0), /wallMs 0: not a figure a run can measure/],
  ];
  for (const [name, edit, said] of cases) {
    const r = await runCli('jetprof', ['report', '--run', write(name, edit)]);
    t.is(r.code, 2, `${name}: ${r.stderr}`);
    t.regex(r.stderr, said, name);
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('report: a runset is read as what it is: an entry outside its folder refused without echoing the file, another runset version named, one file listed 20,000 times read once and noted once; a link loop and a non-JSON file said as such', async (t) => {
  const d = join(dir, 'runsets');
  mkdirSync(join(d, 'set'), { recursive: true });
  const run = fixedRun('onnx', { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 }, 20);
  writeFileSync(join(d, 'set', 'r1.json'), JSON.stringify(run));
  const secret = join(d, 'secret.txt');
  writeFileSync(secret, "root:x:0:0:the first bytes of a file that is not the user's\n");
  const spread = { n: 1, mean: 10, std: 0, min: 10, max: 10, ci95: [10, 10] };
  const runset = (name: string, v: { schema: string; files: string[] }) => {
    const f = join(d, 'set', name);
    const whole = { label: 'x', runs: v.files.length, inferenceFps: spread, endToEndFps: spread, stageP50Ms: {} };
    writeFileSync(f, JSON.stringify({ ...whole, ...v }));
    return f;
  };
  const outside = await runCli('jetprof', [
    'report',
    '--run',
    runset('escape.json', { schema: 'jetprof.runset/1', files: ['r1.json', '../secret.txt'] }),
  ]);
  t.is(outside.code, 2, outside.stderr);
  t.regex(outside.stderr, /escape\.json: lists "\.\.\/secret\.txt", outside the runset's folder/);
  t.notRegex(outside.stderr, /root:x/);
  const v2 = await runCli('jetprof', [
    'report',
    '--run',
    runset('v2.json', { schema: 'jetprof.runset/2', files: ['r1.json'] }),
  ]);
  t.is(v2.code, 2, v2.stderr);
  t.regex(v2.stderr, /v2\.json: schema jetprof\.runset\/2 is newer than this jetprof reads/);
  const many = await runCli('jetprof', [
    'report',
    '--run',
    runset('many.json', { schema: 'jetprof.runset/1', files: Array(20_000).fill('r1.json') }),
  ]);
  t.is(many.code, 0, many.stderr);
  t.deepEqual(
    many.stderr.split('\n').filter((l) => /was given/.test(l)),
    [`jetprof report: warning: ${join(d, 'set', 'r1.json')} was given 20000 times: it counts as one run`],
  );
  // a file that is no JSON: said without its content
  const notJson = await runCli('jetprof', ['report', '--run', secret]);
  t.is(notJson.code, 2, notJson.stderr);
  t.regex(notJson.stderr, /secret\.txt: not valid JSON( \(at byte \d+\))?, not a run JSON/);
  t.notRegex(notJson.stderr, /root:x/);
  // a link that loops is not "not found"
  const loop = join(d, 'loop.json');
  symlinkSync(loop, loop);
  const l = await runCli('jetprof', ['report', '--run', loop]);
  t.is(l.code, 2, l.stderr);
  t.regex(l.stderr, /loop\.json: a symbolic link that loops \(ELOOP\), so it cannot be read as a run JSON/);
});

test('an Orin-class model (3 ms a frame) under slower CPU stages: the report names the stage that bounds end-to-end FPS, in both loops; an inference-bound run gets no such line', (t) => {
  const fast = { read: 2, preprocess: 2.5, inference: 3, postprocess: 1, write: 7.1 };
  const seq = buildLabReport([fixedRun('onnx', fast, 20, { label: 'orin-seq' })], []);
  t.regex(
    reportMarkdown(seq),
    /CPU-bound: write 7\.1 ms a frame, more than inference's 3\.\d ms, sets the end-to-end rate\./,
  );
  const pip = buildLabReport([fixedRun('onnx', fast, 20, { label: 'orin-pip', loop: 'pipelined' })], []);
  t.regex(reportMarkdown(pip), /CPU-bound: write 7\.1 ms a frame busy, more than inference's 3\.\d ms/);
  const slow = buildLabReport(
    [fixedRun('onnx', { read: 8, preprocess: 6, inference: 90, postprocess: 3, write: 12 }, 20)],
    [],
  );
  t.notRegex(reportMarkdown(slow), /CPU-bound/);
});

test("the console's 'Not inference' sentence prints the stage table's own rounded shares, which add up to 100.0%", (t) => {
  // shares that, each rounded on its own, add up to 100.1%: the table and the sentence round them together
  const run = fixedRun('onnx', { read: 2, preprocess: 1, inference: 1, postprocess: 1, write: 1 }, 20);
  const own = wallShares(stageTotalsOf(run), run.wallMs).map((x) => Math.round(x.share * 1000));
  t.not(sumOf(own), 1000, `the case rounds apart when rounded share by share: ${own.join(' + ')}`);
  const summary = formatSummary(run);
  const column = new Map(
    [...summary.matchAll(/^\| ([a-z][a-z ]*?) \|(?: [\d.]* \|){6} ([\d.]+)% \|$/gm)].map((m) => [m[1], Number(m[2])]),
  );
  t.is(column.size, 6, summary);
  t.is(Math.round([...column.values()].reduce((a, b) => a + b, 0) * 10), 1000, 'the share column adds up to 100.0%');
  const sentence = /Not inference: ([\d.]+)% of the wall time \(([^)]*)\)/.exec(summary);
  t.truthy(sentence, summary);
  const parts = sentence![2].split(' + ').map((p) => /^(.+) ([\d.]+)%$/.exec(p)!);
  t.deepEqual(
    parts.map((p) => [p[1], Number(p[2])]),
    [...column].filter(([name]) => name !== 'inference'),
    'each part is the table row',
  );
  t.is(Number(sentence![1]), Math.round(1000 - column.get('inference')! * 10) / 10);
});

test('report.html: a stream name from a run file reaches no SVG unescaped, and a perFrame.stream that is not stream numbers is refused on load naming the field', async (t) => {
  const svg = streamLatencyOverTime({
    latency: [{ stream: '<img src=x onerror=alert(1)>' as unknown as number, atS: [0, 1], ms: [1, 2] }],
  } as Parameters<typeof streamLatencyOverTime>[0]);
  t.notRegex(svg, /<img/);
  t.regex(svg, /<title>stream &lt;img src=x onerror=alert\(1\)&gt;<\/title>/);
  const d = join(dir, 'hostile-stream');
  mkdirSync(d, { recursive: true });
  const run = JSON.parse(readFileSync(onnxJson, 'utf8'));
  run.perFrame.stream = run.perFrame.index.map(() => '<img src=x onerror=alert(1)>');
  const file = join(d, 'run.json');
  writeFileSync(file, JSON.stringify(run));
  const r = await runCli('jetprof', ['report', '--run', file, '--html', join(d, 'report.html')]);
  t.is(r.code, 2, r.stderr);
  t.is(errorLines(r.stderr).length, 1, r.stderr);
  t.regex(r.stderr, /run\.json: not a valid jetprof\.run\/2 file: field perFrame\.stream\.0 must be integer/);
  t.false(existsSync(join(d, 'report.html')));
});

test('a sweep row against its first: outside the noise only when both rows have a spread and their 95% intervals part; one run a row says it cannot tell', (t) => {
  const row = (name: string, streams: number, fps: number, spread: [number, number] | undefined) =>
    ({
      modelType: name,
      streamSetup: { streams, batch: streams, interval: 0 },
      sweep: { aggregateFps: fps, minStreamFps: fps / streams, worstP99Ms: 100 * streams },
      endToEndFps: spread
        ? { n: 3, mean: fps, std: 0.1, min: spread[0], max: spread[1], ci95: spread }
        : { n: 1, mean: fps, std: 0, min: fps, max: fps, ci95: [fps, fps] },
    }) as unknown as LabReport['fps'][number];
  const sweep = { setup: 'x', rows: ['one', 'four'] };
  const said = (a: [number, number] | undefined, b: [number, number] | undefined, fps = 11.15) =>
    sweepDeltas({ fps: [row('one', 1, 10.96, a), row('four', 4, fps, b)] } as unknown as LabReport, sweep)[0];
  t.is(
    said(undefined, undefined),
    '4 streams, batch 4 against 1 stream, batch 1: aggregate 11.15 against 10.96 FPS (+1.7%), worst p99 400 against 100 ms; one run a row, so nothing tells it from noise (--repeat 3 gives each row a spread).',
  );
  // the change follows from the figures as printed: 11.1449 prints 11.14, +1.6% of 10.96 (not the +1.7% of its
  // unrounded value); one that prints as the base is +0.0%, never -0.0%
  t.regex(said(undefined, undefined, 11.1449), /aggregate 11\.14 against 10\.96 FPS \(\+1\.6%\)/);
  t.regex(said(undefined, undefined, 10.9551), /aggregate 10\.96 against 10\.96 FPS \(\+0\.0%\)/);
  t.regex(said([10.8, 11.1], [11.0, 11.3]), /; within the noise: the rows' 95% intervals overlap\.$/);
  t.regex(
    said([10.8, 11.0], [13.9, 14.3], 14.1),
    /\(\+28\.6%\).*; outside the noise: the rows' 95% intervals do not overlap\.$/,
  );
});
