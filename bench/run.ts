/**
 * `npm run bench`: jetprof against its peers on this machine, written to bench/results.json and printed as a table.
 *
 *   1. inference: onnxruntime-node on jetprof's ONNX vs OpenCV DNN readNetFromDarknet (same cfg + seeded weights,
 *      same thread count): ms per frame, ratio, achieved GFLOP/s against the machine's estimated peak
 *   2. end to end on videos/vtest.avi at 960x540 (as the lab): the default loop (--pipeline auto) against pipelined and
 *      sequential, alternating, on the demo and the dense model; the bare runtime beside the inference stage
 *   3. the Python peer (bench/peer_lab.py on Debian's python3-opencv), end to end, vs jetprof
 *   4. postprocess (decode + NMS) on a busy frame
 *   5. parser throughput on a generated 200 MB nvprof log vs a plain read, and its peak RSS
 *   6. NVTX cost per range; start-up time of `jetprof parse --help`
 *   7. a model that fires everywhere: postprocess on real frames, end to end vs the demo model, the Python peer
 *   8. jetprof parse --trace-rows all --out on a 300 MB trace: peak RSS of the whole command
 *   9. many streams: aggregate FPS of 1, 2, 4 streams at batch 1 and batch N; jetprof capacity on vtest.avi at 10 FPS
 *
 * Options: --frames N (default: the whole video), --threads N (default: the number of cores), --only 1,2,...
 * Timings are wall-clock on a shared machine: run it twice before believing a difference under 10%.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, createWriteStream } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOnnxSession } from '../src/backends/onnx.ts';
import { darknetHeadNames } from '../src/backends/opencv.ts';
import { stretchGeometry } from '../src/detect/geometry.ts';
import { DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_DET, Postprocessor } from '../src/detect/postprocess.ts';
import { convFlops, parseCfg } from '../src/model/cfg.ts';
import { ensureExported, makeWeightsFile, readModelInfo } from '../src/model/export-file.ts';
import { loadNvtx } from '../src/pipeline/nvtx.ts';
import { percentile } from '../src/util/stats.ts';
import { loadOpenCv } from '../src/video/opencv.ts';

/** The postprocess both postprocess sections time: the run defaults (IoU NMS 0.5, multi-label) at `conf`. */
function benchPostprocessor(
  info: ConstructorParameters<typeof Postprocessor>[0],
  g: ConstructorParameters<typeof Postprocessor>[1],
  conf: number,
): Postprocessor {
  return new Postprocessor(info, g, {
    confThreshold: conf,
    nmsThreshold: 0.5,
    nmsKind: 'iou',
    classMode: 'multi',
    maxCandidates: DEFAULT_MAX_CANDIDATES,
    maxDet: DEFAULT_MAX_DET,
  });
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WORK = join(ROOT, 'bench', 'tmp');
mkdirSync(WORK, { recursive: true });
const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const THREADS = Number(opt('--threads') ?? cpus().length);
const FRAMES = opt('--frames') ? Number(opt('--frames')) : undefined;
const ONLY = new Set((opt('--only') ?? '1,2,3,4,5,6,7,8,9').split(',').map(Number));
const VIDEO = join(ROOT, 'videos', 'vtest.avi');
const CFG = join(ROOT, 'weights', 'yolov4-tiny.cfg');
const TSX = `--import=${import.meta.resolve('tsx')}`;

const results: Record<string, unknown> = {
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version },
  date: new Date().toISOString(),
  threads: THREADS,
};
const table: [string, string, string, string, number][] = [];
/** The section being measured: table rows carry it, so `--only` replaces just those rows in results.json. */
let section = 0;
const row = (what: string, value: string, target: string, ok: boolean | undefined) =>
  table.push([what, value, target, ok === undefined ? '' : ok ? 'met' : 'MISSED', section]);
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

/** The median as every jetprof statistic computes it (util/stats: numpy's linear percentile). */
const median = (v: number[]) =>
  percentile(
    [...v].sort((a, b) => a - b),
    50,
  );

// Seeded weights for the real yolov4-tiny cfg (80 classes, 416x416), and jetprof's ONNX of them.
// Exported through infer's own cache (<weights>.onnx), so an export by an older exporter version is redone.
function benchModel(weightsPath: string, objectnessBias?: number): string {
  if (!existsSync(weightsPath)) makeWeightsFile(CFG, 1, weightsPath, objectnessBias);
  return ensureExported({ cfgPath: CFG, weightsPath }).path;
}
const weights = join(WORK, 'yolov4-tiny-seed1.weights');
const onnx = benchModel(weights);

/** Peak single-precision FLOP/s estimated from /proc/cpuinfo: cores x GHz x FLOPs per cycle (AVX-512 64, AVX2+FMA 32, NEON 8). */
function peakGflops(): { gflops: number; how: string } {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const mhz =
    Number(/cpu MHz\s*:\s*([\d.]+)/.exec(info)?.[1] ?? 0) ||
    Number(/BogoMIPS\s*:\s*([\d.]+)/i.exec(info)?.[1] ?? 0) / 2;
  const flags = /flags\s*:(.*)/.exec(info)?.[1] ?? '';
  const perCycle = / avx512f/.test(flags)
    ? 64
    : / fma/.test(flags) && / avx2/.test(flags)
      ? 32
      : / avx/.test(flags)
        ? 16
        : 8;
  const gflops = (cpus().length * mhz * perCycle) / 1000;
  return { gflops, how: `${cpus().length} cores x ${(mhz / 1000).toFixed(2)} GHz x ${perCycle} FLOP/cycle` };
}

async function benchInference() {
  section = 1;
  log('1. inference: ONNX Runtime vs OpenCV DNN (darknet)');
  const cv = loadOpenCv();
  const cap = new cv.VideoCapture(VIDEO);
  const frames = Array.from({ length: 10 }, () => cap.read().resize(540, 960));
  cap.release();
  const blobs = frames.map((f) =>
    cv.blobFromImage(f, 1 / 255, new cv.Size(416, 416), new cv.Vec3(0, 0, 0), true, false),
  );
  const inputs = blobs.map((b) => {
    const d = b.flattenFloat(1, 3 * 416 * 416).getData();
    return new Float32Array(d.buffer, d.byteOffset, d.byteLength / 4);
  });
  const runs = 30;
  const ort = await createOnnxSession(onnx, { threads: THREADS });
  for (let i = 0; i < 5; i++) await ort.run(inputs[i % inputs.length]);
  const ortMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await ort.run(inputs[i % inputs.length]);
    ortMs.push(performance.now() - t0);
  }
  await ort.dispose();
  cv.setNumThreads(THREADS);
  const net = cv.readNetFromDarknet(CFG, weights);
  // the raw heads (the layers feeding the [yolo] region layers), as infer --backend opencv asks for them
  const outNames = darknetHeadNames(
    net.getLayerNames(),
    readModelInfo(onnx).heads.map((h) => h.output),
  );
  for (let i = 0; i < 5; i++) {
    net.setInput(blobs[i % blobs.length]);
    net.forward(outNames);
  }
  const cvMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    net.setInput(blobs[i % blobs.length]);
    const t0 = performance.now();
    net.forward(outNames);
    cvMs.push(performance.now() - t0);
  }
  const flops = convFlops(parseCfg(readFileSync(CFG, 'utf8'), CFG));
  const peak = peakGflops();
  const ortMed = median(ortMs);
  const cvMed = median(cvMs);
  const ortGflops = flops / (ortMed / 1000) / 1e9;
  results.inference = {
    runs,
    onnxRuntimeMsMedian: ortMed,
    opencvDnnMsMedian: cvMed,
    ratioOpencvOverOrt: cvMed / ortMed,
    modelGflop: flops / 1e9,
    onnxRuntimeGflops: ortGflops,
    opencvDnnGflops: flops / (cvMed / 1000) / 1e9,
    peakGflopsEstimate: peak.gflops,
    peakHow: peak.how,
  };
  row('inference, ONNX Runtime (ms/frame, median)', ortMed.toFixed(1), '', undefined);
  row('inference, OpenCV DNN darknet (ms/frame, median)', cvMed.toFixed(1), 'ORT faster', ortMed < cvMed);
  row(
    'ONNX Runtime GFLOP/s (of est. peak)',
    `${ortGflops.toFixed(1)} (${((ortGflops / peak.gflops) * 100).toFixed(0)}% of ${peak.gflops.toFixed(0)})`,
    '',
    undefined,
  );
}

function runInfer(
  pipeline: 'auto' | 'on' | 'off',
  o: { model?: string; conf?: number; tag?: string; frames?: number; write?: boolean } = {},
): Record<string, any> {
  const tag = `${o.tag ?? 'demo'}-${pipeline}${o.conf !== undefined ? `-conf${o.conf}` : ''}${o.write === false ? '-nowrite' : ''}`;
  const json = join(WORK, `run-${tag}.json`);
  const frames = o.frames ?? FRAMES;
  const r = spawnSync(
    process.execPath,
    [
      TSX,
      join(ROOT, 'src/cli/infer.ts'),
      VIDEO,
      '--model',
      o.model ?? onnx,
      '--frame-size',
      '960x540',
      '--pipeline',
      pipeline,
      '--threads',
      String(THREADS),
      '-q',
      ...(o.write === false ? ['--no-write'] : ['-o', join(WORK, `vtest-${tag}.mp4`)]),
      '--json',
      json,
      ...(o.conf !== undefined ? ['--conf', String(o.conf)] : []),
      ...(frames ? ['--max-frames', String(frames)] : []),
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`infer ${tag} failed: ${r.stderr}`);
  return JSON.parse(readFileSync(json, 'utf8'));
}

function bareRuntime(model: string, runs = 100): { meanMs: number; medianMs: number } {
  const r = spawnSync(
    process.execPath,
    [TSX, join(ROOT, 'bench/bare-runtime.ts'), model, String(THREADS), String(runs)],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`bare runtime failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * The loops side by side, alternating (auto, on, off, then the next round in turn) so that drift of this shared
 * machine hits all three alike: end-to-end FPS medians over ROUNDS runs of each, on the demo and the dense model; and
 * the bare runtime (same session, back-to-back runs) beside the sequential loop's inference stage.
 */
function benchEndToEnd() {
  section = 2;
  const ROUNDS = 3;
  const frames = FRAMES ?? 200;
  log(
    `2. end to end on ${VIDEO} at 960x540, ${frames} frames: --pipeline auto (default) vs on vs off, ${ROUNDS} alternating rounds; bare runtime`,
  );
  const dense = benchModel(join(WORK, 'yolov4-tiny-seed1-dense.weights'), 2);
  const loops: Record<string, unknown> = {};
  let demoPipe: Record<string, any> | undefined;
  for (const [name, model] of [
    ['demo', onnx],
    ['dense', dense],
  ] as const) {
    const fps: Record<'auto' | 'on' | 'off', number[]> = { auto: [], on: [], off: [] };
    const order: ('auto' | 'on' | 'off')[][] = [
      ['auto', 'on', 'off'],
      ['on', 'off', 'auto'],
      ['off', 'auto', 'on'],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of order[round % order.length]) {
        const r = runInfer(mode, { model, tag: name, frames });
        fps[mode].push(r.endToEndFps);
        if (name === 'demo' && mode === 'on') demoPipe = r;
      }
    }
    const med = { auto: median(fps.auto), on: median(fps.on), off: median(fps.off) };
    const best = Math.max(med.on, med.off);
    loops[name] = { endToEndFps: fps, medians: med, autoOverBest: med.auto / best };
    row(
      `${name} model: end-to-end FPS median, auto (default) / pipelined / sequential`,
      `${med.auto.toFixed(2)} / ${med.on.toFixed(2)} / ${med.off.toFixed(2)}`,
      '',
      undefined,
    );
    row(
      `${name} model: default loop / the better loop (end to end)`,
      (med.auto / best).toFixed(3),
      '>= 0.97',
      med.auto / best >= 0.97,
    );
  }
  // Bare runtime vs the sequential loop's inference stage, alternating, with and without writing the video.
  const bare: number[] = [];
  const seqNoWrite: number[] = [];
  const seqWrite: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(bareRuntime(onnx).meanMs);
    seqNoWrite.push(runInfer('off', { tag: 'inference-stage', frames, write: false }).stages.inference.meanMs);
    seqWrite.push(runInfer('off', { tag: 'inference-stage', frames }).stages.inference.meanMs);
  }
  const [b, n, w] = [median(bare), median(seqNoWrite), median(seqWrite)];
  loops.bareRuntime = {
    bareMeanMs: bare,
    sequentialNoWriteInferenceMeanMs: seqNoWrite,
    sequentialInferenceMeanMs: seqWrite,
  };
  row('bare runtime: session.run back to back (ms, median of run means)', b.toFixed(2), '', undefined);
  row(
    'sequential loop, --no-write: inference stage / bare runtime',
    `${n.toFixed(2)} / ${b.toFixed(2)} = ${(n / b).toFixed(3)}`,
    '<= 1.10',
    n / b <= 1.1,
  );
  row(
    "sequential loop, writing H.264: inference stage / bare runtime (the encoder's threads run during inference)",
    `${w.toFixed(2)} / ${b.toFixed(2)} = ${(w / b).toFixed(3)}`,
    '<= 1.10',
    w / b <= 1.1,
  );
  results.endToEnd = loops;
  return demoPipe;
}

function benchPython(pipe: Record<string, any> | undefined) {
  section = 3;
  log('3. the Python peer (cv2.dnn darknet, sequential, as the lab)');
  const py = '/usr/bin/python3';
  const check = spawnSync(py, ['-c', 'import cv2'], { encoding: 'utf8' });
  if (check.status !== 0) {
    results.pythonPeer = { skipped: 'python3-opencv is not installed (scripts/setup.sh installs it)' };
    row('Python peer', 'skipped: no python3-opencv', '', undefined);
    return;
  }
  const r = spawnSync(
    py,
    [
      join(ROOT, 'bench/peer_lab.py'),
      CFG,
      weights,
      VIDEO,
      join(WORK, 'vtest-python.mp4'),
      '--frame-size',
      '960x540',
      '--threads',
      String(THREADS),
      ...(FRAMES ? ['--max-frames', String(FRAMES)] : []),
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`peer_lab.py failed: ${r.stderr}`);
  const peer = JSON.parse(r.stdout.trim().split('\n').pop()!);
  const jet = pipe ?? runInfer('on');
  results.pythonPeer = { ...peer, jetprofEndToEndFps: jet.endToEndFps, ratio: jet.endToEndFps / peer.endToEndFps };
  row('Python peer end-to-end FPS', peer.endToEndFps.toFixed(2), '', undefined);
  row(
    'jetprof / Python end-to-end',
    (jet.endToEndFps / peer.endToEndFps).toFixed(2),
    '>= 1.5',
    jet.endToEndFps / peer.endToEndFps >= 1.5,
  );
}

/** Raw heads for a crowded frame: `objects` people and cars, each seen by the cells around it in both heads. */
function crowdedHeads(info: ReturnType<typeof readModelInfo>, objects: number, seed0: number) {
  let seed = seed0;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const logit = (p: number) => Math.log(p / (1 - p));
  const objs = Array.from({ length: objects }, () => ({
    x: 0.05 + 0.9 * rand(),
    y: 0.05 + 0.9 * rand(),
    w: 0.03 + 0.1 * rand(),
    h: 0.08 + 0.2 * rand(),
    cls: rand() < 0.7 ? 0 : 2,
  }));
  return info.heads.map((h) => {
    const per = 5 + info.classes;
    const plane = h.gridW * h.gridH;
    const data = new Float32Array(h.anchors.length * per * plane).fill(-6);
    const r = h.gridW > 20 ? 2 : 1;
    for (const o of objs) {
      const cx = Math.floor(o.x * h.gridW);
      const cy = Math.floor(o.y * h.gridH);
      for (let row = cy - r; row <= cy + r; row++) {
        for (let col = cx - r; col <= cx + r; col++) {
          if (row < 0 || col < 0 || row >= h.gridH || col >= h.gridW) continue;
          const cell = row * h.gridW + col;
          for (let a = 0; a < h.anchors.length; a++) {
            const b = a * per * plane;
            data[b + cell] = logit(Math.min(0.95, Math.max(0.05, o.x * h.gridW - col + (rand() - 0.5) * 0.3)));
            data[b + plane + cell] = logit(Math.min(0.95, Math.max(0.05, o.y * h.gridH - row + (rand() - 0.5) * 0.3)));
            data[b + 2 * plane + cell] = Math.log((o.w * info.inputWidth) / h.anchors[a][0]) + (rand() - 0.5) * 0.3;
            data[b + 3 * plane + cell] = Math.log((o.h * info.inputHeight) / h.anchors[a][1]) + (rand() - 0.5) * 0.3;
            data[b + 4 * plane + cell] = 1 + 2 * rand();
            data[b + (5 + o.cls) * plane + cell] = 2 + rand();
          }
        }
      }
    }
    return { head: h, data };
  });
}

/** Worst case: a third of the cells confident, 5% of the 80 classes each, boxes spread at random. */
function uniformHeads(info: ReturnType<typeof readModelInfo>, seed0: number) {
  let seed = seed0;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return info.heads.map((h) => {
    const per = 5 + info.classes;
    const plane = h.gridW * h.gridH;
    const data = new Float32Array(h.anchors.length * per * plane);
    for (let a = 0; a < h.anchors.length; a++) {
      for (let e = 0; e < per; e++) {
        for (let c = 0; c < plane; c++)
          data[(a * per + e) * plane + c] =
            e === 4 ? (rand() < 0.35 ? 3 : -3) : e >= 5 ? (rand() < 0.05 ? 2 : -4) : rand() - 0.5;
      }
    }
    return { head: h, data };
  });
}

function benchPostprocess() {
  section = 4;
  log('4. postprocess (decode + top-N + NMS) on busy frames');
  const info = readModelInfo(onnx);
  const g = stretchGeometry(960, 540, info.inputWidth, info.inputHeight);
  const measure = (heads: { head: (typeof info.heads)[number]; data: Float32Array }[], conf = 0.3) => {
    const post = benchPostprocessor(info, g, conf);
    const outputs = new Map(heads.map(({ head, data }) => [head.output, data]));
    let last = post.run(outputs);
    const times: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      last = post.run(outputs);
      times.push(performance.now() - t0);
    }
    const sorted = times.slice(50).sort((a, b) => a - b);
    return {
      candidates: last.candidates,
      kept: last.detections.length,
      msMedian: percentile(sorted, 50),
      msP99: percentile(sorted, 99),
    };
  };
  const crowded = measure(crowdedHeads(info, 60, 7));
  const uniform = measure(uniformHeads(info, 7));
  results.postprocess = { crowded60Objects: crowded, uniformWorstCase: uniform };
  row(
    `postprocess, crowded frame: ${crowded.candidates} candidates -> ${crowded.kept}, p99 (ms)`,
    crowded.msP99.toFixed(3),
    '< 2 ms',
    crowded.msP99 < 2,
  );
  row(
    `postprocess, worst case: ${uniform.candidates} candidates, 80 classes, p99 (ms)`,
    uniform.msP99.toFixed(3),
    '',
    undefined,
  );
}

/** A generated nvprof --print-gpu-trace log of at least `target` bytes (kept in bench/tmp between runs). */
async function traceLog(name: string, target: number): Promise<string> {
  const path = join(WORK, name);
  if (!existsSync(path) || statSync(path).size < target) {
    const out = createWriteStream(path);
    const header = [
      '==1234== NVPROF is profiling process 1234, command: python3 trt_yolo.py',
      '==1234== Profiling application: python3 trt_yolo.py',
      '==1234== Profiling result:',
      '   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*      Size  Throughput  SrcMemType  DstMemType           Device   Context    Stream  Name',
    ].join('\n');
    out.write(`${header}\n`);
    let written = header.length;
    let i = 0;
    while (written < target) {
      const lines: string[] = [];
      for (let k = 0; k < 2000; k++, i++) {
        // nvprof right-aligns each value under the end of its header label, times with 5 significant digits
        const cells = [
          `${((i % 8000) * 0.0123).toFixed(3)}ms`,
          `${(3.1 + (i % 97) / 10).toFixed(3)}us`,
          `(${i % 64} 1 1)`,
          '(128 1 1)',
          String(32 + (i % 8)),
          '0B',
          '0B',
          '-',
          '-',
          '-',
          '-',
          'NVIDIA Tegra X1',
          '1',
          String(7 + (i % 3)),
        ];
        const widths = [8, 8, 19, 14, 8, 8, 8, 8, 10, 10, 10, 15, 8, 8];
        lines.push(
          `${cells.map((c, j) => c.padStart(widths[j])).join('  ')}  trt_maxwell_fp16x2_hcudnn_winograd_fp16x2_128x128_relu_tile148m_nt_v1 [${i}]`,
        );
      }
      const chunk = `${lines.join('\n')}\n`;
      written += chunk.length;
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((r) => out.end(() => r()));
  }
  return path;
}

async function benchParser() {
  section = 5;
  log('5. parser on a generated 200 MB nvprof log');
  const path = await traceLog('nvprof-gpu-trace-200mb-v2.txt', 200 * 1024 * 1024);
  const size = statSync(path).size;
  // Plain read and parse alternate, five times each, medians kept: the plain read alone varies 2-4x between runs here,
  // and the ratio of one pair by +-0.1; every pair's figures are kept to show the spread.
  // Both run in a fresh Node process (as `jetprof parse` does), so the two figures are measured the same way.
  const readSeconds: number[] = [];
  const parses: { seconds: number; rows: number; omitted: number; diagnostics: number; maxRssMb: number }[] = [];
  // The parser in a child, so its peak RSS is its own: the built one (as users run it) when dist/ exists.
  const builtParser = join(ROOT, 'dist/src/parsers/parse-file.js');
  const parserModule = existsSync(builtParser) ? builtParser : join(ROOT, 'src/parsers/parse-file.ts');
  for (let k = 0; k < 5; k++) {
    const plain = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
      import { createReadStream } from 'node:fs';
      const t0 = performance.now();
      await new Promise((res, rej) => createReadStream(${JSON.stringify(path)}, { highWaterMark: 1 << 20 }).on('data', () => undefined).on('end', res).on('error', rej));
      console.log((performance.now() - t0) / 1000);
    `,
      ],
      { encoding: 'utf8' },
    );
    if (plain.status !== 0) throw new Error(`plain-read bench failed: ${plain.stderr}`);
    readSeconds.push(Number(plain.stdout.trim()));
    const r = spawnSync(
      process.execPath,
      [
        ...(existsSync(builtParser) ? [] : [TSX]),
        '--input-type=module',
        '-e',
        `
      const { parseProfileFile } = await import(${JSON.stringify(parserModule)});
      const t0 = performance.now();
      const p = await parseProfileFile(${JSON.stringify(path)});
      const s = (performance.now() - t0) / 1000;
      const rows = p.result.value.processes.reduce((n, x) => n + (x.gpuTrace?.length ?? 0), 0);
      const omitted = p.result.value.processes.reduce((n, x) => n + (x.traceRowsOmitted ?? 0), 0);
      console.log(JSON.stringify({ seconds: s, rows, omitted, diagnostics: p.result.diagnostics.length, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
    `,
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    if (r.status !== 0) throw new Error(`parser bench failed: ${r.stderr}`);
    parses.push(JSON.parse(r.stdout.trim().split('\n').pop()!));
  }
  const readS = median(readSeconds);
  const p = {
    ...parses[0],
    seconds: median(parses.map((x) => x.seconds)),
    maxRssMb: Math.max(...parses.map((x) => x.maxRssMb)),
  };
  const mb = size / 1e6;
  results.parser = {
    module: parserModule.replace(`${ROOT}/`, ''),
    sizeMb: mb,
    plainReadMbPerS: mb / readS,
    plainReadMbPerSRuns: readSeconds.map((x) => mb / x),
    parseMbPerS: mb / p.seconds,
    parseMbPerSRuns: parses.map((x) => mb / x.seconds),
    ratio: readS / p.seconds,
    ratioRuns: parses.map((x, k) => readSeconds[k] / x.seconds),
    rowsKept: p.rows,
    rowsCounted: p.rows + p.omitted,
    diagnostics: p.diagnostics,
    peakRssMb: p.maxRssMb,
  };
  row(
    'parser MB/s (plain read MB/s)',
    `${(mb / p.seconds).toFixed(0)} (${(mb / readS).toFixed(0)})`,
    '>= 50% of read',
    readS / p.seconds >= 0.5,
  );
  row(
    'parser peak RSS (MB); trace rows kept / counted',
    `${p.maxRssMb.toFixed(0)}; ${p.rows} / ${p.rows + p.omitted}`,
    '< 150 MB',
    p.maxRssMb < 150,
  );
}

function benchNvtxAndStartup() {
  section = 6;
  log('6. NVTX cost per range; jetprof parse --help start-up');
  const nvtx = loadNvtx();
  const n = 200_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    nvtx.push('bench');
    nvtx.pop();
  }
  const pushPopNs = Number(process.hrtime.bigint() - t0) / n;
  const t1 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) nvtx.end(nvtx.start('bench'));
  const startEndNs = Number(process.hrtime.bigint() - t1) / n;
  const built = join(ROOT, 'dist/src/cli/jetprof.js');
  const cmd = existsSync(built) ? [built] : [TSX, join(ROOT, 'src/cli/jetprof.ts')];
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const s = performance.now();
    execFileSync(process.execPath, [...cmd, 'parse', '--help'], { stdio: 'ignore' });
    times.push(performance.now() - s);
  }
  const startup = median(times);
  results.nvtx = {
    library: nvtx.detail,
    enabled: nvtx.enabled,
    pushPopNsPerRange: pushPopNs,
    startEndNsPerRange: startEndNs,
  };
  results.startup = {
    command: `node ${existsSync(built) ? 'dist/src/cli/jetprof.js' : 'src/cli/jetprof.ts (tsx: run npm run build first)'} parse --help`,
    msMedian: startup,
  };
  row(
    `NVTX push+pop per range (ns)${nvtx.enabled ? '' : ' [library absent: no-op]'}`,
    pushPopNs.toFixed(0),
    '',
    undefined,
  );
  row('jetprof parse --help start-up (ms)', startup.toFixed(0), '< 300 ms', startup < 300);
}

/** The Python peer (bench/peer_lab.py) on one weights file; undefined when python3-opencv is missing. */
function runPeer(weightsPath: string, tag: string, conf: number, frames?: number): Record<string, any> | undefined {
  const py = '/usr/bin/python3';
  if (spawnSync(py, ['-c', 'import cv2'], { encoding: 'utf8' }).status !== 0) return undefined;
  const r = spawnSync(
    py,
    [
      join(ROOT, 'bench/peer_lab.py'),
      CFG,
      weightsPath,
      VIDEO,
      join(WORK, `vtest-python-${tag}.mp4`),
      '--frame-size',
      '960x540',
      '--threads',
      String(THREADS),
      '--conf',
      String(conf),
      ...(frames ? ['--max-frames', String(frames)] : []),
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`peer_lab.py failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/**
 * 7. A model that fires almost everywhere (seeded weights, objectness bias +2: about 195,000 candidates a frame at
 * --conf 0.3, all 202,800 at 0.001): postprocess on real vtest frames, end to end against the demo model in both
 * loops, and the Python peer on the same weights. Frames: --frames, else 200.
 */
async function benchDense() {
  section = 7;
  log('7. dense model: postprocess on real frames, end to end vs the demo model, the Python peer');
  const denseWeights = join(WORK, 'yolov4-tiny-seed1-dense.weights');
  const dense = benchModel(denseWeights, 2);
  const frames = FRAMES ?? 200;

  // Postprocess (decode + top-N + NMS, no drawing) on the dense model's real outputs for 20 vtest frames.
  const cv = loadOpenCv();
  const info = readModelInfo(dense);
  const g = stretchGeometry(960, 540, info.inputWidth, info.inputHeight);
  const ort = await createOnnxSession(dense, { threads: THREADS });
  const cap = new cv.VideoCapture(VIDEO);
  const outputs: Map<string, Float32Array>[] = [];
  for (let i = 0; i < 20; i++) {
    const frame = cap.read().resize(540, 960);
    for (let k = 0; k < 20; k++) cap.read(); // frames across the clip
    const blob = cv.blobFromImage(frame, 1 / 255, new cv.Size(416, 416), new cv.Vec3(0, 0, 0), true, false);
    const d = blob.flattenFloat(1, 3 * 416 * 416).getData();
    outputs.push((await ort.run(new Float32Array(d.buffer, d.byteOffset, d.byteLength / 4))).outputs);
  }
  cap.release();
  await ort.dispose();
  const postprocess: Record<string, unknown> = {};
  for (const conf of [0.3, 0.001]) {
    const post = benchPostprocessor(info, g, conf);
    const times: number[] = [];
    let candidates = 0;
    for (let rep = 0; rep < 12; rep++) {
      for (const o of outputs) {
        const t0 = performance.now();
        const r = post.run(o);
        if (rep >= 2) times.push(performance.now() - t0);
        candidates = Math.max(candidates, r.candidates);
      }
    }
    const sorted = times.sort((a, b) => a - b);
    postprocess[`conf${conf}`] = {
      frames: outputs.length,
      maxCandidates: candidates,
      msP50: percentile(sorted, 50),
      msP99: percentile(sorted, 99),
      msMax: sorted[sorted.length - 1],
    };
    const p99 = percentile(sorted, 99);
    row(
      `dense postprocess --conf ${conf}: up to ${candidates} candidates, p99 (ms)`,
      p99.toFixed(2),
      '< 10 ms',
      p99 < 10,
    );
  }

  // End to end: dense vs demo model, both loops.
  const summary = (r: Record<string, any>) => ({
    frames: r.frames,
    inferenceFps: r.inferenceFps,
    endToEndFps: r.endToEndFps,
    postprocessP99Ms: r.stages.postprocess.p99Ms,
    drawMeanMs: r.postprocess.draw.meanMs,
    maxCandidatesSeen: r.postprocess.maxCandidatesSeen,
    framesCandidatesCapped: r.postprocess.framesCandidatesCapped,
    framesDetectionsCapped: r.postprocess.framesDetectionsCapped,
  });
  const endToEnd: Record<string, unknown> = {};
  for (const pipeline of ['on', 'off'] as const) {
    const loop = pipeline === 'on' ? 'pipelined' : 'sequential';
    const demo = runInfer(pipeline, { frames, conf: 0.3, tag: 'demo' });
    endToEnd[`demo-${loop}`] = summary(demo);
    for (const conf of [0.3, 0.001]) {
      const d = runInfer(pipeline, { model: dense, conf, tag: 'dense', frames });
      endToEnd[`dense-${loop}-conf${conf}`] = summary(d);
      const ratio = d.endToEndFps / demo.endToEndFps;
      row(
        `dense / demo end-to-end FPS, ${loop}, --conf ${conf} (draw ${d.postprocess.draw.meanMs.toFixed(1)} ms/frame)`,
        `${d.endToEndFps.toFixed(2)} / ${demo.endToEndFps.toFixed(2)} = ${ratio.toFixed(2)}`,
        '>= 0.9',
        ratio >= 0.9,
      );
    }
  }
  // The Python peer (cv2.dnn, best class per box, NMSBoxes, drawing every kept box) on the same dense weights.
  const peer = runPeer(denseWeights, 'dense', 0.3, frames);
  const jet = endToEnd['dense-pipelined-conf0.3'] as { endToEndFps: number };
  results.dense = {
    model: 'yolov4-tiny.cfg, seed 1, objectness bias +2',
    frames,
    postprocess,
    endToEnd,
    pythonPeer: peer
      ? { ...peer, jetprofEndToEndFps: jet.endToEndFps, ratio: jet.endToEndFps / peer.endToEndFps }
      : { skipped: 'python3-opencv is not installed' },
  };
  if (peer)
    row(
      'dense: jetprof / Python peer end-to-end FPS (--conf 0.3)',
      `${jet.endToEndFps.toFixed(2)} / ${peer.endToEndFps.toFixed(2)} = ${(jet.endToEndFps / peer.endToEndFps).toFixed(2)}`,
      '>= 1.5',
      jet.endToEndFps / peer.endToEndFps >= 1.5,
    );
}

/**
 * 8. `jetprof parse --trace-rows all --out F.json` on a 300 MB trace: every row kept, streamed out through scratch
 * files; peak RSS of the whole command (whole-process figure, as `/usr/bin/time -v` reports it).
 */
async function benchParseAll() {
  section = 8;
  log('8. jetprof parse --trace-rows all --out on a generated 300 MB nvprof log: peak RSS');
  const path = await traceLog('nvprof-gpu-trace-300mb.txt', 300 * 1024 * 1024);
  const out = join(WORK, 'parse-all.json');
  const cli = existsSync(join(ROOT, 'dist/src/cli/jetprof.js'))
    ? [join(ROOT, 'dist/src/cli/jetprof.js')]
    : [TSX, join(ROOT, 'src/cli/jetprof.ts')];
  const t0 = performance.now();
  const r = spawnSync(
    '/usr/bin/time',
    ['-v', process.execPath, ...cli, 'parse', path, '--trace-rows', 'all', '--out', out],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`parse --trace-rows all failed: ${r.stderr.slice(-2000)}`);
  const rssMb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? NaN) / 1024;
  const outMb = statSync(out).size / 1e6;
  // the output is checked as JSON by a streaming count of its rows (it is too large to parse whole here)
  const rows = Number(execFileSync('grep', ['-c', '"startNs"', out], { encoding: 'utf8' }).trim());
  rmSync(out, { force: true });
  results.parseAll = { logMb: statSync(path).size / 1e6, outMb, rows, seconds, peakRssMb: rssMb };
  row(
    'parse --trace-rows all --out, 300 MB log: peak RSS (MB); rows written; JSON MB',
    `${rssMb.toFixed(0)}; ${rows}; ${outMb.toFixed(0)}`,
    '< 300 MB',
    rssMb < 300,
  );
}

/**
 * 9. Many streams: aggregate FPS of 1, 2 and 4 streams of vtest.avi, streams taking turns (--batch 1) and in batches
 * of all streams (the default), alternating over 3 rounds (medians); inference per frame at batch 1, 2 and 4; and
 * `jetprof capacity` on vtest.avi at 10 FPS with its answer and how long the search took.
 */
function benchStreams() {
  section = 9;
  log('9. streams: aggregate FPS of 1, 2, 4 streams at batch 1 and batch N; jetprof capacity on vtest.avi at 10 FPS');
  const cli = (script: string) =>
    existsSync(join(ROOT, `dist/src/cli/${script}.js`))
      ? [join(ROOT, `dist/src/cli/${script}.js`)]
      : [TSX, join(ROOT, `src/cli/${script}.ts`)];
  const frames = FRAMES ?? 100;
  const setups: { n: number; batch: number }[] = [
    { n: 1, batch: 1 },
    { n: 2, batch: 1 },
    { n: 2, batch: 2 },
    { n: 4, batch: 1 },
    { n: 4, batch: 4 },
  ];
  const fps: Record<string, number[]> = {};
  const perFrame: Record<string, number[]> = {};
  for (let round = 0; round < 3; round++) {
    for (const { n, batch } of setups) {
      const key = `${n}x${batch}`;
      const json = join(WORK, `streams-${key}.json`);
      const r = spawnSync(
        process.execPath,
        [
          ...cli('infer'),
          VIDEO,
          '--model',
          onnx,
          '--frame-size',
          '960x540',
          '--threads',
          String(THREADS),
          '--streams',
          String(n),
          ...(n > 1 ? ['--batch', String(batch)] : []),
          '--max-frames',
          String(Math.ceil(frames / n) + 5),
          '--no-write',
          '-q',
          '--json',
          json,
        ],
        { encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(`streams ${key} failed: ${r.stderr}`);
      const run = JSON.parse(readFileSync(json, 'utf8'));
      (fps[key] ??= []).push(run.aggregateFps ?? run.endToEndFps);
      (perFrame[key] ??= []).push(run.batches?.perFrameMs ?? run.stages.inference.meanMs);
    }
  }
  const m = (k: string) => median(fps[k]);
  const mf = (k: string) => median(perFrame[k]);
  row(
    'aggregate FPS, 1 / 2 / 4 streams taking turns (--batch 1), median of 3',
    `${m('1x1').toFixed(2)} / ${m('2x1').toFixed(2)} / ${m('4x1').toFixed(2)}`,
    '',
    undefined,
  );
  row(
    'aggregate FPS, 2 / 4 streams in batches of 2 / 4 (the default), median of 3',
    `${m('2x2').toFixed(2)} / ${m('4x4').toFixed(2)}`,
    '',
    undefined,
  );
  row(
    'inference ms per frame at batch 1 / 2 / 4 (batch time / frames)',
    `${mf('1x1').toFixed(2)} / ${mf('2x2').toFixed(2)} / ${mf('4x4').toFixed(2)}`,
    '',
    undefined,
  );
  row(
    '4 streams / 1 stream aggregate FPS at batch 1 (bookkeeping of many streams)',
    (m('4x1') / m('1x1')).toFixed(3),
    '>= 0.95',
    m('4x1') / m('1x1') >= 0.95,
  );
  row(
    '4 streams: batch 4 / batch 1 aggregate FPS (what batching buys here)',
    (m('4x4') / m('4x1')).toFixed(3),
    '',
    undefined,
  );
  const capJson = join(WORK, 'capacity.json');
  const t0 = performance.now();
  const c = spawnSync(
    process.execPath,
    [
      ...cli('jetprof'),
      'capacity',
      VIDEO,
      '--source-fps',
      '10',
      '--p99-ms',
      '400',
      '--budget',
      '240',
      '--json',
      capJson,
      '--',
      '--model',
      onnx,
      '--threads',
      String(THREADS),
    ],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  const seconds = (performance.now() - t0) / 1000;
  if (c.status !== 0) throw new Error(`capacity failed: ${c.stderr}`);
  const cap = JSON.parse(readFileSync(capJson, 'utf8'));
  results.streams = {
    aggregateFps: Object.fromEntries(Object.entries(fps).map(([k, v]) => [k, { median: median(v), runs: v }])),
    inferenceMsPerFrame: Object.fromEntries(Object.entries(perFrame).map(([k, v]) => [k, median(v)])),
    capacity: { ...cap, wallSeconds: seconds, answer: c.stdout.trim().split('\n').pop() },
  };
  row(
    'jetprof capacity vtest.avi at 10 FPS, p99 <= 400 ms: streams held; search time (s)',
    `${cap.maxStreams}; ${seconds.toFixed(0)}`,
    '<= 240 s',
    seconds <= 240,
  );
}

let pipe: Record<string, any> | undefined;
if (ONLY.has(1)) await benchInference();
if (ONLY.has(2)) pipe = benchEndToEnd();
if (ONLY.has(3)) benchPython(pipe);
if (ONLY.has(4)) benchPostprocess();
if (ONLY.has(5)) await benchParser();
if (ONLY.has(6)) benchNvtxAndStartup();
if (ONLY.has(7)) await benchDense();
if (ONLY.has(8)) await benchParseAll();
if (ONLY.has(9)) benchStreams();

results.table = table.map(([what, value, target, verdict, sectionNo]) => ({
  section: sectionNo,
  what,
  value,
  target,
  verdict,
}));
const outPath = join(ROOT, 'bench', 'results.json');
// --only: the sections not run keep their last results (and their table rows).
const previous =
  opt('--only') && existsSync(outPath)
    ? (JSON.parse(readFileSync(outPath, 'utf8')) as Record<string, unknown>)
    : undefined;
const merged = previous
  ? {
      ...previous,
      ...results,
      table: [
        ...((previous.table as { section?: number }[]) ?? []).filter(
          (r) => r.section !== undefined && !ONLY.has(r.section),
        ),
        ...(results.table as unknown[]),
      ],
    }
  : results;
writeFileSync(outPath, `${JSON.stringify(merged, null, 2)}\n`);
const w = ([0, 1, 2] as const).map((i) => Math.max(...table.map((r) => r[i].length), 6));
process.stdout.write(`${['measure'.padEnd(w[0]), 'value'.padEnd(w[1]), 'target'.padEnd(w[2]), ''].join(' | ')}\n`);
for (const r of table)
  process.stdout.write(`${r[0].padEnd(w[0])} | ${r[1].padEnd(w[1])} | ${r[2].padEnd(w[2])} | ${r[3]}\n`);
process.stdout.write(`\nwritten to ${outPath}\n`);
process.exit(0);
