/** bench section boards (10): see bench/run.ts for what each section measures. */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOARDS, type BoardName, boardEngine } from '../../test/helpers/board.ts';
import { FRAMES, log, median, onnx, results, ROOT, row, state, TSX, VIDEO, WORK } from '../common.ts';

/** The CPU ABI library the stand-in engines run on (test/native/cpu_engine_abi.c), built once here. */
export function standInLibrary(): string {
  const lib = join(WORK, 'libjetprof_cpu_engine_abi.so');
  const src = join(ROOT, 'test/native/cpu_engine_abi.c');
  execFileSync('gcc', ['-shared', '-fPIC', '-O2', `-I${join(ROOT, 'native')}`, src, '-o', lib, '-ldl']);
  if (!existsSync(lib)) throw new Error(`could not build ${lib}`);
  return lib;
}

/**
 * The pipelined loop's claim, on the board stand-in (TensorRT through jetprof's binding, each run of the engine asleep
 * for the board's inference time, the CPU free meanwhile): three boards' figures, both loops, alternating over three
 * rounds on vtest.avi at 960x540; inference and end-to-end FPS per board and loop (medians), and where the CPU becomes
 * the limit.
 */
export function benchBoards() {
  state.section = 10;
  const ROUNDS = 3;
  const frames = FRAMES ?? 150;
  log(
    `boards. the board stand-in at four boards' TensorRT figures (an Orin-class one among them), sequential vs pipelined, ${frames} frames, ${ROUNDS} alternating rounds`,
  );
  const env = { ...process.env, JETPROF_TRT_SHIM: standInLibrary() };
  type Figures = { inferenceFps: number; endToEndFps: number; cpuMsPerFrame: number; slowestCpuStageMs: number };
  const out: Record<string, Record<string, Figures>> = {};
  for (const name of Object.keys(BOARDS) as BoardName[]) {
    const board = BOARDS[name];
    const engine = boardEngine(join(WORK, `board-${name}.trt`), onnx, { gpuMs: [board.gpuMs, 0] });
    const runs: Record<'off' | 'on', Record<string, any>[]> = { off: [], on: [] };
    for (let k = 0; k < ROUNDS; k++) {
      for (const loop of (k % 2 === 0 ? ['off', 'on'] : ['on', 'off']) as ('off' | 'on')[]) {
        const json = join(WORK, `board-${name}-${loop}.json`);
        const r = spawnSync(
          process.execPath,
          [
            TSX,
            join(ROOT, 'src/cli/infer-trt.ts'),
            VIDEO,
            '--engine',
            engine,
            '--frame-size',
            '960x540',
            '--pipeline',
            loop,
            '--max-frames',
            String(frames),
            '-q',
            '-o',
            join(WORK, `board-${name}-${loop}.mp4`),
            '--json',
            json,
          ],
          { encoding: 'utf8', env },
        );
        if (r.status !== 0) throw new Error(`infer-trt on the ${name} stand-in failed: ${r.stderr}`);
        runs[loop].push(JSON.parse(readFileSync(json, 'utf8')));
      }
    }
    out[name] = {};
    for (const loop of ['off', 'on'] as const) {
      const rs = runs[loop];
      const ms = (r: Record<string, any>, st: string) => r.stages[st].meanMs as number;
      // the pipelined loop's CPU stages run beside the inference: read + preprocess, and postprocess + write
      out[name][loop === 'off' ? 'sequential' : 'pipelined'] = {
        inferenceFps: median(rs.map((r) => r.inferenceFps)),
        endToEndFps: median(rs.map((r) => r.endToEndFps)),
        cpuMsPerFrame: median(
          rs.map((r) => ms(r, 'read') + ms(r, 'preprocess') + ms(r, 'postprocess') + ms(r, 'write')),
        ),
        slowestCpuStageMs: median(
          rs.map((r) => Math.max(ms(r, 'read') + ms(r, 'preprocess'), ms(r, 'postprocess') + ms(r, 'write'))),
        ),
      };
    }
    const seq = out[name].sequential;
    const pipe = out[name].pipelined;
    // sequential: one over the sum of its stages (inference plus the CPU stages, one after the other)
    const sumBound = 1000 / (1000 / seq.inferenceFps + seq.cpuMsPerFrame);
    row(
      `${board.title}: sequential inference / end-to-end FPS`,
      `${seq.inferenceFps.toFixed(2)} / ${seq.endToEndFps.toFixed(2)}`,
      `e2e ~ 1 / sum of stages = ${sumBound.toFixed(2)}`,
      seq.endToEndFps >= 0.9 * sumBound && seq.endToEndFps <= 1.01 * sumBound,
    );
    // pipelined: at least 0.9x the stand-in's inference FPS where the CPU stages fit inside the inference time, else
    // 0.9x what the slowest CPU stage allows
    const fits = pipe.slowestCpuStageMs < 1000 / pipe.inferenceFps;
    const bound = fits ? pipe.inferenceFps : 1000 / pipe.slowestCpuStageMs;
    row(
      `${board.title}: pipelined inference / end-to-end FPS`,
      `${pipe.inferenceFps.toFixed(2)} / ${pipe.endToEndFps.toFixed(2)}`,
      `e2e >= 0.9 x ${bound.toFixed(2)} (${fits ? 'inference FPS' : 'slowest CPU stage'})`,
      pipe.endToEndFps >= 0.9 * bound,
    );
  }
  const names = Object.keys(BOARDS) as BoardName[];
  const limited = names.filter((n) => out[n].pipelined.slowestCpuStageMs > 1000 / out[n].pipelined.inferenceFps);
  const cpuSums = names.map((n) => `${out[n].sequential.cpuMsPerFrame.toFixed(1)} ms`).join(', ');
  const sentence = limited.length
    ? `the slowest CPU stage of the pipelined loop (${limited.map((n) => `${out[n].pipelined.slowestCpuStageMs.toFixed(1)} ms`).join(', ')} at 960x540) takes longer than the GPU on ${limited.map((n) => BOARDS[n].title).join(', ')}: there the CPU is the limit`
    : `on every board the pipelined loop's CPU stages fit inside the GPU time, so it runs near the GPU's pace; the sequential loop adds the four CPU stages (${cpuSums} a frame) to every frame's GPU time, which costs the most where the GPU is fastest`;
  log(sentence);
  results.boards = { frames, rounds: ROUNDS, frameSize: '960x540', boards: out, whereTheCpuLimits: sentence };
}
