/** What the bench sections share: options, paths, the results table, the bench models, and helpers several sections use. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, createWriteStream } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_DET, Postprocessor } from '../src/detect/postprocess.ts';
import { ensureExported, makeWeightsFile } from '../src/model/export-file.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { percentile } from '../src/util/stats.ts';
/** The postprocess both postprocess sections time: the run defaults (IoU NMS 0.5, multi-label) at `conf`. */
export function benchPostprocessor(
  info: ConstructorParameters<typeof Postprocessor>[0],
  g: ConstructorParameters<typeof Postprocessor>[1],
  conf: number,
): Postprocessor {
  return new Postprocessor(info, g, {
    conf: conf,
    nms: 0.5,
    nmsKind: 'iou',
    classMode: 'multi',
    maxCandidates: DEFAULT_MAX_CANDIDATES,
    maxDet: DEFAULT_MAX_DET,
  });
}

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const WORK = join(ROOT, 'bench', 'tmp');
mkdirSync(WORK, { recursive: true });
export const args = process.argv.slice(2);
export const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
export const THREADS = Number(opt('--threads') ?? cpus().length);
export const FRAMES = opt('--frames') ? Number(opt('--frames')) : undefined;
/** Sections to run: numbers, and names for the newer ones (`--only boards`, section 10; `--only writers`, 11; `--only ortpeer`, 12; `--only capacity`, 13; `--only writebehind`, 14; `--only nanocpu`, 15). */
const SECTION_NAMES: Record<string, number> = {
  boards: 10,
  writers: 11,
  ortpeer: 12,
  capacity: 13,
  writebehind: 14,
  nanocpu: 15,
};
export const ONLY = new Set(
  (opt('--only') ?? '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15').split(',').map((x) => SECTION_NAMES[x.trim()] ?? Number(x)),
);
export const VIDEO = join(ROOT, 'videos', 'vtest.avi');
export const CFG = join(ROOT, 'weights', 'yolov4-tiny.cfg');
export const TSX = `--import=${import.meta.resolve('tsx')}`;

export const results: Record<string, unknown> = {
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version },
  date: new Date().toISOString(),
  threads: THREADS,
};
export const table: [string, string, string, string, number][] = [];
/** The section being measured: table rows carry it, so `--only` replaces just those rows in results.json. */
export const state = { section: 0 };
export const row = (what: string, value: string, target: string, ok: boolean | undefined) =>
  table.push([what, value, target, ok === undefined ? '' : ok ? 'met' : 'MISSED', state.section]);
export const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

/** The median as every jetprof statistic computes it (util/stats: numpy's linear percentile). */
export const median = (v: number[]) =>
  percentile(
    [...v].sort((a, b) => a - b),
    50,
  );

// Seeded weights for the real yolov4-tiny cfg (80 classes, 416x416), and jetprof's ONNX of them.
// Exported through infer's own cache (<weights>.onnx), so an export by an older exporter version is redone.
export function benchModel(weightsPath: string, objectnessBias?: number): string {
  if (!existsSync(weightsPath)) makeWeightsFile(CFG, 1, weightsPath, objectnessBias);
  return ensureExported({ cfgPath: CFG, weightsPath }).path;
}
export const weights = join(WORK, 'yolov4-tiny-seed1.weights');
export const onnx = benchModel(weights);

/** Peak single-precision FLOP/s estimated from /proc/cpuinfo: cores x GHz x FLOPs per cycle (AVX-512 64, AVX2+FMA 32, NEON 8). */
export function peakGflops(): { gflops: number; how: string } {
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

export function runInfer(
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

export function bareRuntime(model: string, runs = 100): { meanMs: number; medianMs: number } {
  const r = spawnSync(
    process.execPath,
    [TSX, join(ROOT, 'bench/bare-runtime.ts'), model, String(THREADS), String(runs)],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`bare runtime failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Raw heads for a crowded frame: `objects` people and cars, each seen by the cells around it in both heads. */
export function crowdedHeads(info: ReturnType<typeof readModelInfo>, objects: number, seed0: number) {
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
export function uniformHeads(info: ReturnType<typeof readModelInfo>, seed0: number) {
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

/** A generated nvprof --print-gpu-trace log of at least `target` bytes (kept in bench/tmp between runs). */
export async function traceLog(name: string, target: number): Promise<string> {
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

/** The Python peer (bench/peer_lab.py) on one weights file; undefined when python3-opencv is missing. */
export function runPeer(
  weightsPath: string,
  tag: string,
  conf: number,
  frames?: number,
): Record<string, any> | undefined {
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
 * The capacity search the bench runs (sections 9 and 13): vtest.avi as 10 FPS cameras, p99 within 400 ms, a 240 s
 * budget, the bench model on THREADS threads; `node` and the jetprof script go before it.
 */
export const capacityArgs = (json: string): string[] => [
  'capacity',
  VIDEO,
  '--source-fps',
  '10',
  '--p99-ms',
  '400',
  '--budget',
  '240',
  '--json',
  json,
  '--',
  '--model',
  onnx,
  '--threads',
  String(THREADS),
];
