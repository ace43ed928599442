/**
 * The `infer` job: resolve the model, open a backend session, run the frame loop, build the run JSON.
 * Process concerns (signals, exit codes, printing) stay in src/cli.
 */
import { resolve } from 'node:path';
import { classifySource, type SourceArg, sourceStem } from '../video/sources.ts';
import { startTegrastats } from '../platform/tegrastats-runner.ts';
import { type MachineLoad, watchMachineLoad } from '../platform/machine-load.ts';
import { BACKENDS, type BackendName, type DetectorSession } from '../backends/types.ts';
import { type StagedOutput, stageOutput } from '../output/output.ts';
import { timeModelAlone } from './model-alone.ts';
import { openStreams } from './loop-shared.ts';
import { type LoopOptions } from './loop-options.ts';
import { headsRecorder } from './heads-file.ts';
import { runPipelinedLoop } from './pipelined-loop.ts';
import type { LoopResult } from './loop-result.ts';
import { runSequentialLoop } from './sequential-loop.ts';
import { type RunResult } from './run-result.ts';
import type { InferOptions } from './infer-settings.ts';
import { resolveModel, type ResolvedModel } from './model-resolution.ts';
import { openTimedSession, requireTensorRt } from './session-open.ts';
import { requireComplete, requireMeasured, warnAboutStreams } from './run-checks.ts';
import { assembleRun, tegrastatsRecord, writeRunFiles } from './run-record.ts';

/**
 * Where a run draws its boxes unless told: `<dir>/<video name>-<onnx|tensorrt|opencv>-detected.mp4`, as the lab names
 * them; for a stream or camera its short name (rtsp://host/live -> live-onnx-detected.mp4); stream i of several
 * `<name>-<i>-<backend>-detected.mp4`; for a folder of images a folder `<folder>-<backend>-detected`. The one rule for
 * infer, profile and compare; `dir` defaults to the current folder.
 */
export function defaultOutputPath(
  video: string,
  backend: BackendName,
  o: { dir?: string; stream?: number; arg?: SourceArg } = {},
): string {
  const arg = o.arg ?? classifySource(video);
  const stream = o.stream === undefined ? '' : `-${o.stream}`;
  const stem = `${sourceStem(video, arg)}${stream}-${BACKENDS[backend].outputSuffix}-detected`;
  return resolve(o.dir ?? '.', arg.kind === 'images' ? stem : `${stem}.mp4`);
}

/** True once `ms` have passed since its first call (the loop's first frame): connecting is not counted. */
export function durationClock(ms: number, now: () => number = Date.now): () => boolean {
  let start: number | undefined;
  return () => {
    start ??= now();
    return now() - start >= ms;
  };
}

/** The loop: pipelined for one stream when asked (--pipeline), else the sequential loop, for one stream or many. */
function runLoop(
  o: InferOptions,
  session: DetectorSession,
  m: ResolvedModel,
  heads?: ReturnType<typeof headsRecorder>,
): Promise<LoopResult> {
  const loopOptions: LoopOptions = {
    ...o,
    batch: o.plan.batch,
    inFlight: o.plan.inFlight,
    modelName: o.engine ?? m.modelPath,
    keepBoxes: o.streams.some((s) => s.detectionsPath),
    // --duration counts from the first frame the loop asks for (after the source opened), not from connecting
    shouldEnd: o.duration === undefined ? undefined : durationClock(o.duration * 1000),
    streamColumn: o.plan.multiStream !== undefined,
    ...(heads ? { onHeads: heads.add } : {}),
  };
  // the run's sources and outputs, opened once here (a failure closes the ones already open); the loop closes them
  const ios = openStreams(m.model, loopOptions);
  return (o.plan.loop.pipelined ? runPipelinedLoop : runSequentialLoop)(session, m.model, loopOptions, ios);
}

/**
 * The `infer` job, step by step as a frame's data flows: resolve the model, open the session, run the loop, check
 * something was measured, say what the user should know about each stream, assemble the run JSON, write the files.
 */
export async function runInference(o: InferOptions): Promise<RunResult> {
  const startedAt = new Date().toISOString();
  if (o.backend === 'tensorrt') await requireTensorRt();
  const m = resolveModel(o);
  const { session, modelLoadMs } = await openTimedSession(o, m);
  const runner = o.tegrastats ? startTegrastats(o.tegrastats.bin, o.tegrastats.intervalMs) : undefined;
  try {
    const heads = o.heads ? headsRecorder() : undefined;
    const load = watchMachineLoad();
    const loop = await runLoop(o, session, m, heads);
    const machineLoad = load.stop(loop.tally.measuredCpuFromNs);
    // the videos are finished under temporary names: renamed with the run's JSON and detections, or dropped
    const videos = loop.streams.flatMap((s) => (s.output ? [s.output] : []));
    try {
      return await recordRun(o, m, session, loop, heads, runner, { startedAt, modelLoadMs, machineLoad }, videos);
    } catch (e) {
      for (const v of videos) v.abort();
      throw e;
    }
  } finally {
    await runner?.stop();
    await session.dispose();
  }
}

/** What follows the loop: the checks, the model alone, the run JSON, and the run's files written as one set. */
async function recordRun(
  o: InferOptions,
  m: ResolvedModel,
  session: DetectorSession,
  loop: LoopResult,
  heads: ReturnType<typeof headsRecorder> | undefined,
  runner: ReturnType<typeof startTegrastats> | undefined,
  facts: {
    startedAt: string;
    modelLoadMs: number;
    machineLoad: MachineLoad;
  },
  videos: StagedOutput[],
): Promise<RunResult> {
  requireMeasured(o, loop);
  requireComplete(o, loop);
  warnAboutStreams(o, loop);
  const tegrastats = await tegrastatsRecord(o, runner, loop);
  // the model by itself, after the loop and outside its figures; an interrupted run skips it, and so does a run
  // under a profiler, whose call counts must be the loop's own (nvprof's enqueue calls count the frames)
  const modelAlone =
    loop.interrupted || (o.profilerAttached ?? 'none') !== 'none'
      ? undefined
      : await timeModelAlone(session, loop.lastInput, o.plan.modelAloneRuns);
  const result = assembleRun(o, m, session, loop, { ...facts, tegrastats, modelAlone });
  const headsFile = heads && o.heads ? [stageOutput(o.heads, heads.bytes())] : [];
  writeRunFiles(o, result, loop.boxes, [...videos, ...headsFile]);
  return result;
}
