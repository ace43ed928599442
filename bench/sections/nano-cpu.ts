/** bench section nanocpu (15): see bench/run.ts for what each section measures. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportModelFile } from '../../src/model/export-file.ts';
import { BOARDS, boardEngine } from '../../test/helpers/board.ts';
import {
  CFG,
  FRAMES,
  log,
  median,
  onnx,
  opt,
  results,
  ROOT,
  row,
  state,
  TSX,
  VIDEO,
  weights,
  WORK,
} from '../common.ts';
import { standInLibrary } from './boards.ts';

/**
 * How much slower a Jetson Nano's Cortex-A57 (1.43 GHz) runs one thread than this machine's core: an assumption,
 * about a fifth from public single-core benchmark comparisons (issue #57). `--board-factor F` replaces it, e.g. with
 * the ratio of this section's single-thread probe timed on a Nano to the one timed here (the section prints both:
 * the stand-in engine and the probe run on a board's CPU as they do here).
 */
const FACTOR = Number(opt('--board-factor') ?? 5);

/** The main thread's budget a frame on a Nano: the FP16 engine's time (what the pipelined loop must keep within). */
const NANO = BOARDS['nano-fp16'];

/** The other engine figures the basic cases run at (#57: the targets hold at the lab's figure and a Xavier NX's too). */
const OTHER_BOARDS = ['nano-lab', 'xavier-nx'] as const;
type OtherBoard = (typeof OTHER_BOARDS)[number];
const BOARD_NAMES: Record<OtherBoard, string> = {
  'nano-lab': "the lab's Nano (10.45 FPS)",
  'xavier-nx': 'Xavier NX (57 FPS)',
};

/** cgroup v1's cpu controller, where this machine has one this process may write (root, not a read-only mount). */
const CPU_CGROUP = '/sys/fs/cgroup/cpu';

/**
 * A cgroup whose tasks get 1/FACTOR of a core, in short periods (2 ms of every 10 at the factor 5) so a frame's work is
 * spread as on a slower core rather than run at full speed and then stopped; undefined where there is none to make.
 */
function slowCoreCgroup(): string | undefined {
  const dir = join(CPU_CGROUP, `jetprof-bench-${process.pid}`);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, 'cpu.cfs_period_us'), '10000');
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round(10_000 / FACTOR)));
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * infer-trt with these arguments; with `slowCore`, its main thread alone (the loop's thread: a process's first task id
 * is its pid) moves into that cgroup once the warm-up frames are done, so the threads it started by then (the
 * decoder's, the encoder's, the engine's worker) keep their speed, as a board's other cores would.
 */
function runInfer(args: string[], env: NodeJS.ProcessEnv, warmup: number, slowCore?: string): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [TSX, join(ROOT, 'src/cli/infer-trt.ts'), ...args], {
      env: { ...env, JETPROF_PROGRESS: 'lines' },
    });
    let stderr = '';
    let moved = false;
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const done = [...stderr.matchAll(/^progress: (?:\[[#.]*\] )?frame (\d+)/gm)].pop();
      if (slowCore && !moved && done && Number(done[1]) > warmup) {
        moved = true;
        try {
          writeFileSync(join(slowCore, 'tasks'), String(child.pid));
        } catch (e) {
          child.kill();
          reject(e);
        }
      }
      if (stderr.length > 1 << 20) stderr = stderr.slice(-4096);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolveRun(stderr) : reject(new Error(`infer-trt failed: ${stderr}`))));
  });
}

/**
 * 15. The Nano's CPU keeps up: the board stand-in at the Nano FP16 figure (39.2 ms a frame, the CPU free meanwhile),
 * pipelined, the lab's 960x540 H.264 frames (vtest.avi at that size), writing H.264; a model that finds nothing and one
 * whose every cell fires for every class (202,800 candidates, one frame-wide box a class kept: 80 drawn), each with preprocessing on the CPU and in the graph (export
 * --frame-input). Per case, medians of alternating rounds: e2e / inference, the main thread's CPU time a frame
 * (where jetprof's per-pixel and per-box work runs), the process's CPU a frame without the software encoder (NVENC
 * encodes on a board), and the main thread projected onto a Nano (x FACTOR) against the engine's 39.2 ms. The four
 * basic cases run again at the lab's Nano figure (95.7 ms) and a Xavier NX's (17.5 ms).
 */
export async function benchNanoCpu() {
  state.section = 15;
  const ROUNDS = 3;
  const frames = FRAMES ?? 80;
  const warmup = 5;
  log(`15. the Nano's CPU: stand-in at ${NANO.gpuMs.toFixed(1)} ms, pipelined, 960x540 H.264, ${frames} frames`);
  const video = join(WORK, 'vtest-960x540.mp4');
  if (!existsSync(video)) {
    const scale = ['-vf', 'scale=960:540', '-c:v', 'libx264', '-pix_fmt', 'yuv420p'];
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', VIDEO, ...scale, video]);
  }
  const framed = join(WORK, 'yolov4-tiny-seed1-frame960x540.onnx');
  exportModelFile({ cfgPath: CFG, weightsPath: weights, outPath: framed, frameInput: [960, 540] });
  const env = { ...process.env, JETPROF_TRT_SHIM: standInLibrary() };
  // beside them, where a cgroup can be made: the CPU-preprocessing cases with the main thread on a core 1/FACTOR as fast
  const slowCore = slowCoreCgroup();
  // and vtest.avi itself (768x576) at --frame-size 960x540, resized by OpenCV on libuv's pool (FFmpeg's frames) or by
  // GStreamer's pipeline on its own thread (videoscale here, nvvidconv on a board)
  // and the four basic cases again at the lab's Nano figure (95.7 ms a frame) and a Xavier NX's (17.5 ms)
  type Case = { boxes: string; pre: string; slow: boolean; resize?: 'ffmpeg' | 'gstreamer'; board?: OtherBoard };
  const basic = (board?: OtherBoard) =>
    ['demo', 'dense'].flatMap((boxes) => ['cpu', 'graph'].map((pre) => ({ boxes, pre, slow: false, board })));
  const cases: Case[] = [
    ...basic(),
    ...(slowCore ? ['demo', 'dense'].map((boxes) => ({ boxes, pre: 'cpu', slow: true })) : []),
    ...(['ffmpeg', 'gstreamer'] as const).map((resize) => ({ boxes: 'demo', pre: 'cpu', slow: false, resize })),
    ...OTHER_BOARDS.flatMap(basic),
  ];
  const key = (c: Case) =>
    `${c.board ? `${c.board}-` : ''}${c.boxes}-${c.pre}${c.slow ? '-slowcore' : ''}${c.resize ? `-resize-${c.resize}` : ''}`;
  const runs = new Map<string, Record<string, any>[]>(cases.map((c) => [key(c), []]));
  for (let k = 0; k < ROUNDS; k++) {
    for (const c of k % 2 === 0 ? cases : [...cases].reverse()) {
      const name = `${c.board ?? 'nano'}-${c.boxes}-${c.pre}`;
      // -10 in every head value finds nothing; 5 makes every cell fire for every class
      const engine = boardEngine(join(WORK, `${name}.trt`), c.pre === 'graph' ? framed : onnx, {
        gpuMs: [BOARDS[c.board ?? 'nano-fp16'].gpuMs, 0],
        outputValue: c.boxes === 'dense' ? 5 : -10,
      });
      const json = join(WORK, `nano-${key(c)}.json`);
      const source = c.resize ? [VIDEO, '--frame-size', '960x540', '--video-io', c.resize] : [video];
      const args = [
        ...[...source, '--engine', engine, '--pipeline', 'on'],
        ...['--max-frames', String(frames + warmup), '--warmup', String(warmup), '-q'],
        ...['-o', join(WORK, `nano-${key(c)}.mp4`), '--json', json],
      ];
      await runInfer(args, env, warmup, c.slow ? slowCore : undefined);
      runs.get(key(c))!.push(JSON.parse(readFileSync(json, 'utf8')));
    }
  }
  if (slowCore) rmdirSync(slowCore);
  const out: Record<string, Record<string, number>> = {};
  for (const c of cases) {
    const name = key(c);
    const rs = runs.get(name)!;
    const per = (r: Record<string, any>) => r.frames + r.warmupFrames;
    const f = {
      inferenceFps: median(rs.map((r) => r.inferenceFps)),
      endToEndFps: median(rs.map((r) => r.endToEndFps)),
      mainThreadMs: median(rs.map((r) => r.machineLoad.mainThreadMeasuredCpuMs / r.frames)),
      processMs: median(rs.map((r) => r.machineLoad.cpuMs / per(r))),
      withoutEncoderMs: median(rs.map((r) => (r.machineLoad.cpuMs - (r.output?.encoderCpuMs ?? 0)) / per(r))),
      preprocessMs: median(rs.map((r) => r.stages.preprocess.meanMs)),
      postprocessMs: median(rs.map((r) => r.stages.postprocess.meanMs)),
      boxesPerFrame: median(rs.map((r) => r.detections.total / Math.max(1, r.frames))),
      // the hand-off to the encoder: the write stage (writeAsync, the encoder runs on its own threads)
      writeP50Ms: median(rs.map((r) => r.stages.write.p50Ms)),
      writeP99Ms: median(rs.map((r) => r.stages.write.p99Ms)),
      drawMs: median(rs.map((r) => r.postprocess.draw.meanMs)),
    };
    out[name] = f;
    const { boxes, pre, slow, resize, board } = c;
    const engineMs = BOARDS[board ?? 'nano-fp16'].gpuMs;
    // dense: every head value 5, so every cell of every class fires (202,800 candidates) and NMS keeps one
    // frame-wide box per class
    const resized = resize
      ? `, vtest.avi 768x576 resized to 960x540 ${resize === 'gstreamer' ? "by GStreamer's pipeline (videoscale)" : "by OpenCV on libuv's pool (FFmpeg's frames)"}`
      : '';
    const what = `${board ? BOARD_NAMES[board] : 'Nano FP16'} stand-in, ${boxes === 'dense' ? `every cell firing (${f.boxesPerFrame.toFixed(0)} boxes a frame)` : 'no boxes'}, preprocessing on the ${pre === 'graph' ? 'GPU (in the graph)' : 'CPU'}${slow ? `, the main thread held to 1/${FACTOR} of a core after warm-up (cgroup cpu quota)` : ''}${resized}`;
    const ratio = f.endToEndFps / f.inferenceFps;
    const need = boxes === 'dense' ? 0.9 : 0.95;
    row(
      `${what}: e2e / inference FPS`,
      `${f.endToEndFps.toFixed(2)} / ${f.inferenceFps.toFixed(2)} = ${ratio.toFixed(2)}`,
      `>= ${need}`,
      ratio >= need,
    );
    const budget = boxes === 'dense' ? 6 : 4;
    // the projection is a Nano's (its A57 against this core); a Xavier NX's Carmel cores have no factor stated here
    const nano = board !== 'xavier-nx';
    row(
      `${what}: main thread CPU ms a frame${nano ? ` (x ${FACTOR} on a Nano)` : ''}`,
      `${f.mainThreadMs.toFixed(1)} (${nano ? `${(f.mainThreadMs * FACTOR).toFixed(0)} ` : ''}vs the engine's ${engineMs.toFixed(1)})`,
      `<= ${budget} ms`,
      f.mainThreadMs <= budget,
    );
    row(
      `${what}: process CPU ms a frame, without / with the software encoder`,
      `${f.withoutEncoderMs.toFixed(1)} / ${f.processMs.toFixed(1)}`,
      '',
      undefined,
    );
    // the hand-off and the drawing, once per box count (the Nano FP16 cases with CPU preprocessing)
    if (pre === 'cpu' && !slow && !resize && !board) {
      row(
        `${what}: hand-off to the encoder (write stage) ms, p50 / p99`,
        `${f.writeP50Ms.toFixed(2)} / ${f.writeP99Ms.toFixed(2)}`,
        '< 0.5 ms (p50)',
        f.writeP50Ms < 0.5,
      );
      row(`${what}: drawing ms a frame`, f.drawMs.toFixed(2), '', undefined);
    }
  }
  results.nanoCpu = {
    frames,
    warmup,
    rounds: ROUNDS,
    engineMs: NANO.gpuMs,
    otherEngines: Object.fromEntries(OTHER_BOARDS.map((b) => [b, BOARDS[b].gpuMs])),
    boardFactor: FACTOR,
    boardFactorSource:
      'assumed: a Cortex-A57 at 1.43 GHz does about a fifth of one of these cores (public single-core comparisons); --board-factor replaces it',
    slowCore: slowCore
      ? `the *-slowcore cases: after warm-up the main thread alone in a cgroup v1 cpu group with a quota of ${Math.round(10_000 / FACTOR)} us every 10,000 us (1/${FACTOR} of a core); the other threads at full speed`
      : `not run: no writable cgroup v1 cpu controller at ${CPU_CGROUP}`,
    cases: out,
  };
}
