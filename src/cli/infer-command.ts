/**
 * `infer [--backend onnx|trt|opencv] <video>`: the command shared by `infer`, `infer-onnx`, `infer-trt`,
 * `infer-opencv` and `jetprof infer`: the run (or --repeat runs) with signals trapped, the summary printed.
 */
import { dirname, relative, resolve } from 'node:path';
import { BACKENDS, type BackendName } from '../backends/types.ts';
import { isCompleteRun, type RunResult } from '../pipeline/run-result.ts';
import { capNotes, realTimeNotes } from '../report/run-lines.ts';
import { formatSummary } from '../report/run-summary.ts';
import { buildRunSet, formatRunSet } from '../pipeline/runset.ts';
import { runInference } from '../pipeline/infer.ts';
import { writeOutput } from '../output/output.ts';
import { handleError } from './handle-error.ts';
import { asCommand, type Program } from './options.ts';
import { columnsOf, fitText, say } from './terminal.ts';
import { createProgress } from './progress.ts';
import { VERSION } from '../platform/env.ts';
import { type InferCliOptions, inferProgram, parseInferArgs, withBackend } from './infer-options.ts';
import { jobSettings, prepareRun, type RunContext } from './infer-prepare.ts';

export { inferArgFacts, parseInferArgs } from './infer-options.ts';

/** infer's program (infer-options.ts) with its action: the job run, or run --repeat times, and its summary. */
export function inferCommand(name: string, fixedBackend?: BackendName): Program {
  const program = inferProgram(name, fixedBackend).action(async (videos, opts) => {
    process.exitCode = await inferAction(videos, withBackend(opts, fixedBackend));
  });
  return asCommand(program);
}

/**
 * An infer entry script's program: `infer`, or `infer-<backend>` fixing the backend whose entry it is (BACKENDS). The
 * entry scripts load this file's modules only, not every command's.
 */
export function inferScript(script: string): Program {
  const fixed = (Object.keys(BACKENDS) as BackendName[]).find((b) => BACKENDS[b].entry === script);
  return inferCommand(script, fixed).version(VERSION);
}

/**
 * Ctrl-C, SIGTERM (timeout, systemd) and SIGHUP (an ssh session dropped) all finish the frame in flight and close the
 * video and JSON. A second signal does not cut that short: exiting while OpenCV's encoder runs on libuv's pool aborts
 * the process (Napi::Error) and loses both files; finalizing takes at most a frame.
 */
function trapStopSignals() {
  const state = { stopRequested: false, release: () => undefined as void };
  let repeated = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (state.stopRequested) {
      if (!repeated)
        process.stderr.write(
          `interrupt: ${signal} again: still finishing the frame in flight (SIGKILL ends it without finalizing)\n`,
        );
      repeated = true;
      return;
    }
    state.stopRequested = true;
    process.stderr.write(`\ninterrupt (${signal}): finishing the current frame, closing the video and JSON\n`);
  };
  const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of SIGNALS) process.on(s, onSignal);
  state.release = () => {
    for (const s of SIGNALS) process.off(s, onSignal);
  };
  return state;
}

/**
 * One run of infer in this process from the command's arguments: the same checks and files, its RunResult returned
 * (no --repeat, signals or progress line; warnings to `onWarning`). For scripts and tests that read only the run.
 */
export async function runInferArgs(
  args: string[],
  onWarning: (message: string) => void = (m) => say('infer', m),
): Promise<RunResult> {
  const { videos, o } = await parseInferArgs(args);
  const { files, nvtx, tegrastatsBin, plan } = prepareRun(videos, o);
  const context: RunContext = {
    plan,
    nvtx,
    tegrastatsBin,
    shouldStop: () => false,
    onWarning,
    onInfo: () => undefined,
    onFrame: () => undefined,
  };
  return runInference(jobSettings(o, context, files.runs[0]));
}

async function inferAction(videos: string[], o: InferCliOptions): Promise<number> {
  const program = 'infer';
  const signals = trapStopSignals();
  const stopRequested = () => signals.stopRequested;
  let progress = createProgress(!o.quiet, process.stderr, o.duration);
  try {
    const { files, nvtx, tegrastatsBin, plan } = prepareRun(videos, o);
    const { loop } = plan;
    const jsonToStdout = o.json === '-';
    if (tegrastatsBin && !o.quiet)
      process.stderr.write(
        `${program}: recording ${tegrastatsBin} every ${o.tegrastatsInterval} ms beside the run (--no-tegrastats to skip)\n`,
      );
    // the loop chosen, said once the model and the sources have opened (a bad input is said alone, before it)
    let loopNote =
      loop.why && !o.quiet
        ? `${program}: ${loop.pipelined ? 'pipelined' : 'sequential'} loop (${o.pipeline === 'auto' ? '--pipeline auto: ' : `--pipeline ${o.pipeline}: `}${loop.why})\n`
        : undefined;
    const runs: RunResult[] = [];
    const written: string[] = [];
    for (let k = 1; k <= o.repeat && !stopRequested(); k++) {
      if (k > 1) progress = createProgress(!o.quiet, process.stderr, o.duration);
      if (o.repeat > 1 && !o.quiet) process.stderr.write(`${program}: run ${k} of ${o.repeat}\n`);
      // the run JSON: its own file per run of --repeat; stdout (`-`) takes the spread of several runs instead
      const { json } = files.runs[k - 1];
      const settings = jobSettings(
        o,
        {
          plan,
          nvtx,
          tegrastatsBin,
          shouldStop: stopRequested,
          onWarning: (m) => say(program, m),
          onInfo: (m) => {
            if (!o.quiet && k === 1) say(program, m);
          },
          onFrame: (p) => {
            if (loopNote) process.stderr.write(loopNote);
            loopNote = undefined;
            progress.update(p);
          },
        },
        files.runs[k - 1],
      );
      const result = await runInference(settings);
      progress.done();
      runs.push(result);
      if (json && !jsonToStdout) written.push(json);
      if (k === 1) for (const n of [...capNotes(result), ...realTimeNotes(result)]) say(program, `note: ${n}`);
      if (k === 1 && result.video.decoderNote) say(program, `note: ${result.video.decoderNote}`);
      if (k === 1 && result.output?.encoderNote) say(program, `note: ${result.output.encoderNote}`);
      if (!o.quiet) {
        // the table and the summary are the result: stdout (so `infer ... > out.txt` keeps them), unless the JSON goes there
        (jsonToStdout ? process.stderr : process.stdout).write(
          `${fitText(formatSummary(result), columnsOf(jsonToStdout ? process.stderr : process.stdout))}\n`,
        );
        if (result.output)
          process.stderr.write(
            `wrote ${result.output.path} (${result.output.codec}${result.output.encoder ? `, ${result.output.encoder}` : ''})\n`,
          );
        if (json && !jsonToStdout) process.stderr.write(`wrote ${json}\n`);
        for (const s of settings.streams)
          if (s.detectionsPath) process.stderr.write(`wrote ${s.detectionsPath} (every box, COCO results)\n`);
      }
    }
    const result = runs[runs.length - 1];
    if (o.repeat > 1 && runs.some(isCompleteRun)) {
      const set = buildRunSet(
        runs,
        files.runset ? written.map((f) => relative(dirname(resolve(files.runset!)), resolve(f))) : undefined,
      );
      if (!o.quiet) (jsonToStdout ? process.stderr : process.stdout).write(`${formatRunSet(set)}\n`);
      if (jsonToStdout) process.stdout.write(`${JSON.stringify(set, null, 2)}\n`);
      else if (files.runset) {
        writeOutput(files.runset, `${JSON.stringify(set, null, 2)}\n`);
        if (!o.quiet) process.stderr.write(`wrote ${files.runset} (the spread of ${set.runs} runs)\n`);
      }
    }
    return stopRequested() || result.interrupted ? 130 : 0;
  } catch (e) {
    progress.done();
    return handleError(e, program);
  } finally {
    signals.release();
  }
}
