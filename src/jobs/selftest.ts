/**
 * `jetprof selftest`: what works on this machine, proven by running it. Each component runs as its own process, as a
 * user would run it, ended when it exceeds its time: every backend present runs the same short clip through `infer`
 * and is held against ONNX Runtime on the CPU (raw head outputs on the same inputs, boxes matched); every video path
 * decodes the clip and encodes it again, and the written file is counted; every profiler profiles a few frames and
 * its output is parsed; on a board, tegrastats and the power mode are sampled. Absent is not a failure.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { requireWritableDir } from '../util/files.ts';
import { fileURLToPath } from 'node:url';
import { exportModelFile, makeWeightsFile } from '../model/export-file.ts';
import { readOnnxSignature } from '../model/onnx-export.ts';
import { StagingFolder } from '../output/output.ts';
import { type BoardFacts, readBoard } from '../platform/board.ts';
import { VERSION } from '../platform/env.ts';
import type { SelftestResult } from './selftest-format.ts';
import { JetprofError } from '../util/errors.ts';
import { findExecutable } from '../util/executables.ts';
import { loadOpenCv, videoBackends } from '../video/opencv.ts';
import { backendRows } from './selftest-backends.ts';
import { boardRows, countFrames, profilerRows, videoRows } from './selftest-parts.ts';
import { Selftest, type SelftestGroup, type SelftestOptions } from './selftest-runner.ts';

export { SELFTEST_GROUPS, type SelftestGroup, type SelftestOptions } from './selftest-runner.ts';
export { headDifference } from './selftest-backends.ts';

/** The clip: the one given, vtest.avi, or a clip made with ffmpeg's test source. */
async function prepareClip(t: Selftest): Promise<{ path: string; made: boolean }> {
  const given = t.o.video ?? (existsSync('videos/vtest.avi') ? 'videos/vtest.avi' : undefined);
  if (given) return { path: resolve(given), made: false };
  const path = join(t.o.outDir, 'clip.mp4');
  const ffmpeg = findExecutable('ffmpeg');
  if (!ffmpeg)
    throw new JetprofError('TOOL_MISSING', 'no clip to test with: no videos/vtest.avi here and no ffmpeg to make one', {
      suggestion: 'pass --video V, or bash scripts/fetch-sample-video.sh',
    });
  // t.o.outDir is this run's own folder (runSelftest), where nothing can have been planted; -n never overwrites
  const r = await t.run(
    [
      ffmpeg,
      '-v',
      'error',
      '-n',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=640x360:rate=25',
      '-frames:v',
      String(t.o.frames + 8),
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      path,
    ],
    t.o.timeoutS,
  );
  if (r.code !== 0)
    throw new JetprofError('TOOL_FAILED', `ffmpeg could not make a clip (${Selftest.failure(r, t.o.timeoutS)})`, {
      suggestion: 'pass --video V',
    });
  return { path, made: true };
}

/** The model: the one given, weights/yolov4-tiny.onnx, or seeded weights that fire on every frame, exported here. */
function prepareModel(t: Selftest): { path: string; made: boolean } {
  const given = t.o.model ?? (existsSync('weights/yolov4-tiny.onnx') ? 'weights/yolov4-tiny.onnx' : undefined);
  if (given) return { path: resolve(given), made: false };
  const cfg = shippedCfg();
  const weights = join(t.o.outDir, 'selftest.weights');
  const path = join(t.o.outDir, 'selftest.onnx');
  makeWeightsFile(cfg, 1, weights, 2);
  exportModelFile({ cfgPath: cfg, weightsPath: weights, outPath: path });
  return { path, made: true };
}

/** The weights/yolov4-tiny.cfg jetprof ships, from src/jobs or from dist/src/jobs. */
function shippedCfg(): string {
  const candidates = ['../../weights/yolov4-tiny.cfg', '../../../weights/yolov4-tiny.cfg'].map((r) =>
    fileURLToPath(new URL(r, import.meta.url)),
  );
  return candidates.find((p) => existsSync(p)) ?? candidates[0];
}

/** The versions a maintainer asks for first, of what is here: jetprof, Node, the libraries, the board's stack, the profilers. */
function versionsHere(b: BoardFacts): Record<string, string> {
  const tool = (cmd: string | undefined, pattern: RegExp) => {
    if (!cmd) return undefined;
    const r = spawnSync(cmd, ['--version'], { encoding: 'utf8', timeout: 20_000 });
    return pattern.exec(`${r.stdout ?? ''}${r.stderr ?? ''}`)?.[1];
  };
  const opencv = loadOpenCv().version;
  const versions: Record<string, string | undefined> = {
    jetprof: VERSION,
    'Node.js': process.version,
    'ONNX Runtime (onnxruntime-node)': (
      createRequire(import.meta.url)('onnxruntime-node/package.json') as { version: string }
    ).version,
    OpenCV: `${opencv.major}.${opencv.minor}.${opencv.revision}`,
    GStreamer: tool(findExecutable('gst-inspect-1.0'), /GStreamer (\d[\d.]*)/),
    TensorRT: b.tensorrt,
    CUDA: b.cuda,
    L4T: b.l4t,
    nsys: tool(b.tools.nsys ?? findExecutable('nsys'), /version (\d[\w.-]*)/),
    nvprof: tool(b.tools.nvprof ?? findExecutable('nvprof'), /Release version ([\d.]+)/),
  };
  return Object.fromEntries(Object.entries(versions).filter((e): e is [string, string] => !!e[1]));
}

/**
 * --engine, --model and --video, checked before anything runs (one line, exit 2): each must be a regular file (every
 * component reads it again: a FIFO would be drained by the first), outside --out-dir (selftest's own files go there),
 * the model an ONNX model and the video one that gives a frame.
 */
export function checkSelftestInputs(o: Pick<SelftestOptions, 'engine' | 'model' | 'video'>, outDir: string): void {
  for (const [flag, file] of [
    ['--engine', o.engine],
    ['--model', o.model],
    ['--video', o.video],
  ] as const) {
    if (!file) continue;
    if (!existsSync(file))
      throw new JetprofError('FILE_NOT_FOUND', `${file}: not found (${flag})`, {
        suggestion:
          flag === '--engine'
            ? 'build one: jetprof build-engine --onnx M.onnx --out E.trt --fp16'
            : `pass an existing file to ${flag}`,
      });
    if (!statSync(file).isFile())
      throw new JetprofError('BAD_INPUT', `${file}: not a regular file (${flag}); every component reads it again`, {
        suggestion: `copy it into a file and pass that to ${flag}`,
      });
    if (dirname(resolve(file)) === resolve(outDir))
      throw new JetprofError('BAD_INPUT', `${file}: in --out-dir, where selftest writes its own files (${flag})`, {
        suggestion: 'move it out of that folder, or give another --out-dir',
      });
  }
  let inputs = 0;
  try {
    if (o.model) inputs = readOnnxSignature(readFileSync(o.model)).inputs.length;
  } catch {
    /* not protobuf */
  }
  if (o.model && inputs === 0)
    throw new JetprofError('BAD_MODEL', `${o.model}: not an ONNX model (--model)`, {
      suggestion: 'export one: jetprof export --cfg C --weights W --out M.onnx',
    });
  if (o.video && countFrames(o.video, 1) === 0)
    throw new JetprofError('BAD_VIDEO', `${o.video}: no frame could be decoded (--video)`, {
      suggestion: 'check it with ffprobe; re-encode it with ffmpeg -i IN -c:v libx264 OUT.mp4',
    });
}

/**
 * A complete run's folder becomes DIR/run, replacing the previous run's; the result's paths follow it. Until then
 * it is a folder of this run's own, so two runs into one --out-dir never read each other's files.
 */
function commitRun(work: string, outDir: string, r: SelftestResult): SelftestResult {
  const final = join(outDir, 'run');
  const old = `${final}.old-${process.pid}`;
  if (existsSync(final)) renameSync(final, old);
  renameSync(work, final);
  rmSync(old, { recursive: true, force: true });
  return JSON.parse(JSON.stringify(r), (_k, v: unknown) =>
    typeof v === 'string' ? v.split(work).join(final) : v,
  ) as SelftestResult;
}

/** Runs the test; a run that was interrupted leaves nothing (its result says so, for the console). */
export async function runSelftest(options: SelftestOptions): Promise<SelftestResult> {
  requireWritableDir(join(options.outDir, 'selftest.json'), '--out-dir');
  const work = new StagingFolder(options.outDir);
  try {
    const r = await runIn({ ...options, outDir: work.dir });
    return r.interrupted ? r : commitRun(work.dir, options.outDir, r);
  } finally {
    work.drop();
  }
}

async function runIn(o: SelftestOptions): Promise<SelftestResult> {
  const t = new Selftest(o);
  const startedAt = new Date().toISOString();
  const clip = await prepareClip(t);
  t.expectedFrames = countFrames(clip.path, o.frames);
  const model = prepareModel(t);
  const has = videoBackends(loadOpenCv());
  // every backend decodes the clip the same way, so their inputs are the same
  const io = has.ffmpeg ? 'ffmpeg' : 'auto';
  const want = (g: SelftestGroup) => !o.only || o.only.includes(g);
  if (want('backends')) await backendRows(t, clip.path, model.path, io);
  if (want('video')) await videoRows(t, clip.path, model.path);
  if (want('profilers')) await profilerRows(t, clip.path, model.path, io);
  if (want('board')) await boardRows(t);
  if (o.shouldStop?.()) t.interrupted = true;
  const b = readBoard();
  return {
    schema: 'jetprof.selftest/1',
    startedAt,
    machine: {
      board: b.jetsonModel,
      l4t: b.l4t,
      cpu: b.cpu,
      os: b.os?.prettyName,
      node: process.version,
      arch: process.arch,
    },
    versions: versionsHere(b),
    clip: { ...clip, frames: o.frames },
    model,
    entries: t.entries,
    ok: t.entries.every((e) => e.status !== 'fail'),
    ...(t.interrupted ? { interrupted: true } : {}),
    seconds: (Date.now() - t.t0) / 1000,
  };
}
