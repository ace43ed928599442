/**
 * `jetprof compare`: the whole lab in one command. Runs every available backend on the same video (TensorRT is
 * skipped, with the reason, where it cannot run), under a profiler when asked, then writes the report.
 * Each backend runs in its own process (its entry script), exactly as a user or a profiler would run it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { defaultOutputPath } from '../pipeline/infer.ts';
import { requireWritableDir } from '../util/files.ts';
import { BACKENDS, type BackendName } from '../backends/types.ts';
import { chooseLoop } from '../pipeline/loop-choice.ts';
import { type InferArgFacts, inferArgv, onnxOfInferArgs } from '../pipeline/infer-args.ts';
import { nvprofGpuProblem } from '../profilers/device.ts';
import { entryCommand } from '../profilers/profile-run.ts';
import { EXIT_NO_GPU, runProfile } from '../profilers/run.ts';
import { type ProfilerTool, requireProfiler } from '../profilers/tools.ts';
import { JetprofError, messageOf } from '../util/errors.ts';
import { relayedProgressEnv, runCommand } from '../util/process.ts';
import { classifySource } from '../video/sources.ts';
import { writeReport } from '../report/write-report.ts';

interface CompareOptions {
  video: string;
  outDir: string;
  profile?: ProfilerTool;
  /** Arguments for infer shared by every backend (--model/--cfg/--weights, --frame-size, --max-frames, ...). */
  inferArgs: string[];
  /** What infer's parser read of them (the CLI's). */
  infer: InferArgFacts;
  engine?: string;
  plugins: string[];
  top: number;
  /** Runs of each backend (--repeat). */
  repeat: number;
  /** Labels are `<label>-onnx` and `<label>-trt` (default: infer's own, from the setup). */
  label?: string;
  /** Which backends to run, in order (default: onnx, tensorrt, opencv); the first is the agreement reference. */
  backends?: BackendName[];
  /** COCO ground truth: the report adds mAP per backend. */
  gt?: string;
  onStep: (line: string) => void;
  /** Polled between backends: true (Ctrl-C, SIGTERM) runs no further backend. */
  shouldStop?: () => boolean;
  /** The infer process now running (its pid; under a profiler, the process a signal is for), and the function that says it ended: compare forwards signals to it. */
  onChild?: (pid: number, target?: () => number) => () => void;
}

interface CompareResult {
  ran: BackendName[];
  skipped: { backend: BackendName; reason: string; commands: string[] }[];
  failed: { backend: BackendName; exitCode: number; lastLine?: string }[];
  report: string;
  html: string;
}

/**
 * Why TensorRT cannot run here and the commands that would fix it, one command each, for the model the user passed,
 * or undefined when it can run.
 */
async function tensorRtUnavailable(
  engine?: string,
  video = 'VIDEO',
  inferArgs: string[] = [],
  infer: Pick<InferArgFacts, 'model' | 'weights'> = {},
): Promise<{ reason: string; commands: string[] } | undefined> {
  const target = engine ?? 'engines/yolov4-tiny.trt';
  const rerun = `jetprof compare ${video} --engine ${target} -- ${inferArgs.join(' ') || '<the same infer arguments>'}`;
  const build = `jetprof build-engine --onnx ${onnxOfInferArgs(infer)} --out ${target} --fp16`;
  if (!engine)
    return {
      reason: 'no --engine given (TensorRT engines are built on the board that runs them)',
      commands: [build, rerun],
    };
  if (!existsSync(engine)) return { reason: `${engine} not found`, commands: [build, rerun] };
  try {
    const { loadTrtAbi } = await import('../backends/trt-abi.ts');
    loadTrtAbi();
    return undefined;
  } catch (e) {
    return { reason: messageOf(e), commands: ['npm run build:trt', rerun] };
  }
}

/**
 * One backend's infer process (under the profiler when asked), its progress passed on: its exit code, the last line
 * it printed (the reason a failed one gives), and the profile it wrote.
 */
async function runBackend(
  o: CompareOptions,
  backend: BackendName,
  step: string,
  runJson: string,
  loopArgs: string[],
): Promise<{ code: number; lastLine?: string; profile?: string }> {
  let profile: string | undefined;
  const args = [
    o.video,
    ...o.inferArgs,
    ...loopArgs,
    ...inferArgv({
      ...(backend === 'tensorrt' ? { engine: o.engine!, plugin: o.plugins } : {}),
      output: defaultOutputPath(o.video, backend, { dir: o.outDir }),
      json: runJson,
      // every backend keeps its boxes: the report says whether they agree with the reference's
      detections: join(o.outDir, `detections_${BACKENDS[backend].tag}.json`),
      repeat: o.repeat > 1 ? o.repeat : undefined,
      label: o.label ? `${o.label}-${BACKENDS[backend].tag}` : undefined,
      quiet: true,
    }),
  ];
  let code: number;
  let lastLine: string | undefined;
  const keepLast = (text: string) => {
    const lines = text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('progress: '));
    if (lines.length) lastLine = lines[lines.length - 1];
  };
  if (o.profile) {
    o.onStep(`${step}: infer under ${o.profile} ...`);
    try {
      const p = await runProfile({
        tool: o.profile,
        backend,
        inferArgs: args,
        video: o.video,
        json: runJson,
        outputGiven: true,
        videoIo: o.infer.videoIo,
        outDir: o.outDir,
        relayProgress: true,
        onChild: o.onChild,
        shouldStop: o.shouldStop,
        onLog: () => undefined,
      });
      code = p.exitCode;
      if (code === 0) profile = p.files.profile;
      for (const n of p.notes) o.onStep(`    ${n}`);
      if (code !== 0) {
        if (p.files.log && existsSync(p.files.log)) keepLast(readFileSync(p.files.log, 'utf8').slice(-4096));
        if (p.notes.length)
          lastLine = `${lastLine ? `${lastLine} (` : ''}${p.notes[p.notes.length - 1]}${lastLine ? ')' : ''}`;
      }
    } catch (e) {
      code = e instanceof JetprofError ? e.exitCode : 1;
      lastLine = messageOf(e);
    }
  } else {
    o.onStep(`${step}: infer ...`);
    const [cmd, ...pre] = entryCommand(backend);
    let signal: NodeJS.Signals | undefined;
    ({ code, signal } = await runCommand(cmd, [...pre, ...args], {
      onSpawn: o.onChild,
      env: relayedProgressEnv(),
      onOutput: (d, from) => {
        if (from !== 'stderr') return;
        keepLast(d.toString());
        o.onStep(`    ${d.toString().trimEnd()}`);
      },
    }));
    // a crash's last line is the end of a native stack: the signal says more
    if (signal) lastLine = `died of ${signal}`;
  }
  return { code, lastLine, profile };
}

/**
 * The loop every backend runs in, so their figures compare: the sequential loop (the lab's scripts read, infer and
 * write one frame at a time) unless the infer arguments name one (`-- --pipeline on` compares the pipelined loop).
 * Each backend alone (`--pipeline auto`) might have picked the other: a line says so for each such backend.
 */
function compareLoop(
  infer: Pick<InferArgFacts, 'pipeline' | 'threads' | 'ep'>,
  backends: BackendName[],
  cores: number,
): { args: string[]; pipelined: boolean; notes: string[] } {
  const given = infer.pipeline;
  if (given === 'auto')
    return {
      args: [],
      pipelined: false,
      notes: ['every backend chose its own loop (-- --pipeline auto): rows in different loops are not compared'],
    };
  const pipelined = given === 'on';
  const loop = pipelined ? 'pipelined' : 'sequential';
  const why = given
    ? `the loop asked for (--pipeline ${given})`
    : "the lab's loop (its scripts read, infer and write one frame at a time; -- --pipeline on compares the pipelined loop)";
  const notes = backends.flatMap((backend) => {
    const alone = chooseLoop({ mode: 'auto', backend, executionProvider: infer.ep, threads: infer.threads, cores });
    return alone.pipelined === pipelined
      ? []
      : [
          `${BACKENDS[backend].title} alone would run the ${alone.pipelined ? 'pipelined' : 'sequential'} loop (--pipeline auto: ${alone.why}); compare ran every backend in the ${loop} loop, ${why}, so their figures compare`,
        ];
  });
  return { args: given ? [] : inferArgv({ pipeline: 'off' }), pipelined, notes };
}

export async function runCompare(o: CompareOptions): Promise<CompareResult> {
  // a missing video is one line before any backend starts (each would fail on it in turn)
  if (classifySource(o.video).kind === 'file' && !existsSync(o.video)) {
    throw new JetprofError('FILE_NOT_FOUND', `${o.video}: video not found`, {
      suggestion:
        'pass an existing video file (bash scripts/fetch-sample-video.sh puts vtest.avi in videos/), a folder of images or a stream URL',
    });
  }
  // a profiler that is not installed: one line, exit 2, before any backend runs (and before a report is replaced)
  if (o.profile) requireProfiler(o.profile);
  // nvprof on a machine where it can collect nothing: said once, before any backend runs for nothing
  const gpuProblem = o.profile === 'nvprof' ? nvprofGpuProblem() : undefined;
  if (gpuProblem) {
    throw new JetprofError('TOOL_FAILED', `compare --profile nvprof: ${gpuProblem}`, {
      suggestion:
        'run it on the Jetson (JetPack 4), or use --profile nsys, which records the NVTX ranges of the CPU pipeline without a GPU',
      exitCode: EXIT_NO_GPU,
    });
  }
  // its folder writable before any backend runs (its report is written last)
  requireWritableDir(join(o.outDir, 'REPORT.md'), '--out-dir');
  const trtUnavailable = await tensorRtUnavailable(o.engine, o.video, o.inferArgs, o.infer);
  const backends: BackendName[] = o.backends ?? ['onnx', 'tensorrt', 'opencv'];
  const steps = backends.length + 1;
  const result: CompareResult = {
    ran: [],
    skipped: [],
    failed: [],
    report: join(o.outDir, 'REPORT.md'),
    html: join(o.outDir, 'report.html'),
  };
  const runs: string[] = [];
  const profiles: string[] = [];
  // the loop notes speak of the backends that run: a skipped TensorRT would not pick a loop
  const running = backends.filter((b) => !(b === 'tensorrt' && trtUnavailable));
  const loop = compareLoop(o.infer, running, availableParallelism());
  for (const n of loop.notes) o.onStep(`note: ${n}`);
  for (const [i, backend] of backends.entries()) {
    if (o.shouldStop?.()) {
      o.onStep(`[${i + 1}/${steps}] ${BACKENDS[backend].title}: not run (interrupted)`);
      result.skipped.push({ backend, reason: 'not run: compare was interrupted (Ctrl-C or SIGTERM)', commands: [] });
      continue;
    }
    const name = BACKENDS[backend].title;
    const step = `[${i + 1}/${steps}] ${name}`;
    if (backend === 'tensorrt' && trtUnavailable) {
      result.skipped.push({ backend, ...trtUnavailable });
      o.onStep(
        `${step}: skipped (${trtUnavailable.reason}); to include it: ${trtUnavailable.commands.join(', then ')}`,
      );
      continue;
    }
    const runJson = join(o.outDir, `run_${BACKENDS[backend].tag}.json`);
    const t0 = Date.now();
    const { code, lastLine, profile } = await runBackend(o, backend, step, runJson, loop.args);
    if (profile) profiles.push(profile);
    // A run JSON left by an earlier compare in this folder is not this run's: only a file written now counts.
    const wrote = existsSync(runJson) && statSync(runJson).mtimeMs >= t0 - 1000;
    if ((code === 0 || (code === 130 && o.shouldStop?.())) && wrote) {
      runs.push(runJson);
      result.ran.push(backend);
      o.onStep(`${step}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } else {
      result.failed.push({ backend, exitCode: code || 1, ...(lastLine ? { lastLine: lastLine.slice(0, 300) } : {}) });
      o.onStep(
        `${step}: FAILED (exit code ${code || 1}) after ${((Date.now() - t0) / 1000).toFixed(1)} s${lastLine ? `: ${lastLine.slice(0, 200)}` : ''}`,
      );
    }
  }
  if (runs.length === 0 && profiles.length === 0 && result.failed.length === 0) {
    throw new JetprofError(
      'TOOL_FAILED',
      `no backend produced a result for ${o.video}; the reasons are in the lines above`,
      { exitCode: 1 },
    );
  }
  o.onStep(`[${steps}/${steps}] report: ${result.report}, ${result.html}`);
  await writeReport({
    runs,
    profiles: o.profile ? profiles : [],
    out: result.report,
    html: result.html,
    csv: join(o.outDir, 'csv'),
    top: o.top,
    skipped: result.skipped.map((s) => ({
      modelType: BACKENDS[s.backend].title,
      reason: s.reason,
      commands: s.commands,
    })),
    failed: result.failed.map((f) => ({
      modelType: BACKENDS[f.backend].title,
      exitCode: f.exitCode,
      lastLine: f.lastLine,
    })),
    gt: o.gt,
    notes: loop.notes,
  });
  return result;
}
