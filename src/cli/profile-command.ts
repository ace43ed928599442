/** `jetprof profile [--tool nvprof|nsys] -- <infer arguments>` */
import { existsSync } from 'node:fs';
import { Command, Option } from '@commander-js/extra-typings';
import { asCommand, type Program } from './options.ts';
import { resolve } from 'node:path';
import { backendByAlias, type BackendName } from '../backends/types.ts';
import { defaultProfiler } from '../profilers/device.ts';
import { queryMetrics, runProfile } from '../profilers/run.ts';
import { criticalPathMarkdown, nvtxStageMarkdown, profiledRunLine } from '../report/profile-summary.ts';
import { jetsonInfo } from '../platform/env.ts';
import { JetprofError } from '../util/errors.ts';
import { EXIT_NO_GPU } from '../profilers/run.ts';
import { type ChildSignals, forwardSignalsToChild } from './child-signals.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';
import { say } from './terminal.ts';

/** Takes `--backend X` / `-b X` / `--backend=X` out of the infer arguments. */
export function splitBackend(args: string[]): { backend: BackendName; rest: string[] } {
  let backend: BackendName = 'onnx';
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    let value: string | undefined;
    if (a === '--backend' || a === '-b') value = args[++i];
    else if (a.startsWith('--backend=')) value = a.slice('--backend='.length);
    else {
      rest.push(a);
      continue;
    }
    const named = backendByAlias(value);
    if (named) backend = named;
    else throw new JetprofError('BAD_OPTION', `--backend must be onnx, trt or opencv, got '${value ?? ''}'`);
  }
  return { backend, rest };
}

function profileDeclaration() {
  return new Command('profile')
    .summary('run infer under nvprof or Nsight Systems, with NVTX ranges for every stage')
    .description(
      "Profiles one backend's entry script (infer-onnx, infer-trt or infer-opencv) and parses what the profiler wrote.\n" +
        '  nvprof (default on JetPack 4.x): nvprof --unified-memory-profiling off --dependency-analysis [--metrics ...] --log-file D/profiling_<onnx|trt>_log.txt node <entry script> ...; prints the top of the critical path.\n' +
        '  nsys (default elsewhere; the only choice on Orin): nsys profile -t cuda,nvtx,osrt -s none --cpuctxsw none -o D/profile_<backend> ..., then nsys stats; prints the NVTX stage table (read, preprocess, inference, postprocess, write).\n' +
        'Both write D/profile_<backend>_<tool>.json (parsed) beside the raw files, and D/run_<backend>_<tool>.json (the infer result); profiles of the two tools never overwrite each other, and a run JSON an earlier run left is never taken for this one.\n' +
        `Exit codes: the run's own (0 done, 2 bad input, 130 interrupted); ${EXIT_NO_GPU} when nvprof found no usable GPU.`,
    )
    .addOption(
      new Option('-t, --tool <tool>', 'profiler (default: nvprof on JetPack 4.x, nsys elsewhere)').choices([
        'nvprof',
        'nsys',
      ]),
    )
    .option(
      '--metrics <a,b,c>',
      'nvprof metrics to collect (see --query-metrics), e.g. achieved_occupancy,sm_efficiency',
    )
    .option('-d, --out-dir <dir>', 'where the logs, reports and JSON go', 'profiles')
    .option('--query-metrics', 'list the metrics nvprof can collect here and exit', false)
    .option(
      '--tries <n>',
      'nsys runs that leave no report are retried (nsys 2022.4 with Node fails now and then)',
      (v) => Number(v),
      3,
    )
    .argument('[infer-args...]', 'arguments for infer, after --')
    .showHelpAfterError(
      "(infer's options go after --, e.g. jetprof profile --tool nsys -- videos/vtest.avi --model weights/yolov4-tiny.onnx)",
    )
    .addHelpText(
      'after',
      helpAfter([
        {
          cmd: 'jetprof profile --tool nvprof -- --backend trt videos/vtest.avi --engine engines/yolov4-tiny.trt --model weights/yolov4-tiny.onnx',
          note: 'the lab: TensorRT under nvprof --dependency-analysis (JetPack 4)',
        },
        {
          cmd: 'jetprof profile --tool nsys --out-dir profiles -- videos/vtest.avi --model weights/yolov4-tiny.onnx --max-frames 100',
        },
      ]),
    );
}

/** profile's options, typed from its declaration. */
type ProfileOptions = ReturnType<ReturnType<typeof profileDeclaration>['opts']>;

export function profileCommand(): Program {
  return asCommand(profileDeclaration().action(profileAction));
}

/** `jetprof profile`: infer's arguments checked, the profiler run with signals forwarded, what it found printed. */
async function profileAction(inferArgs: string[], o: ProfileOptions): Promise<void> {
  let signals: ChildSignals | undefined;
  try {
    if (o.queryMetrics) {
      process.exitCode = queryMetrics();
      return;
    }
    if (!Number.isInteger(o.tries) || o.tries < 1)
      throw new JetprofError('BAD_OPTION', `--tries ${o.tries}: a whole number of nsys runs, at least 1`, {
        suggestion: 'leave it out for 3 tries, or give e.g. --tries 1',
      });
    if (inferArgs.length === 0)
      throw new JetprofError('BAD_OPTION', 'no infer arguments given', {
        suggestion: 'put them after --, e.g. jetprof profile -- videos/vtest.avi --model M.onnx',
      });
    const { backend, rest } = splitBackend(inferArgs);
    // infer's own parser reads its arguments: a bad one is refused here, before a profiler starts
    const { inferArgFacts } = await import('./infer-command.ts');
    const facts = await inferArgFacts(rest, backend);
    const [video] = facts.videos;
    const { engine } = facts;
    // a TensorRT run without its engine fails at once, before a profiler starts
    if (backend === 'tensorrt' && (!engine || !existsSync(engine))) {
      throw new JetprofError(
        'FILE_NOT_FOUND',
        engine
          ? `${engine}: TensorRT engine not found`
          : 'the trt backend needs --engine E.trt among the infer arguments',
        {
          suggestion:
            'build it on this board: jetprof build-engine --onnx weights/yolov4-tiny.onnx --out engines/yolov4-tiny.trt --fp16',
        },
      );
    }
    const tool = o.tool ?? defaultProfiler(jetsonInfo()?.l4t);
    // Ctrl-C / SIGTERM / SIGHUP reach the profiler (a terminal's Ctrl-C reaches it anyway, a timeout's SIGTERM only
    // jetprof): it ends the application, which finalizes its files; then no nsys agent is left spinning
    signals = forwardSignalsToChild((signal) =>
      process.stderr.write(`\njetprof profile: ${signal}: ending the profiled run (it finalizes its files)\n`),
    );
    const result = await runProfile({
      onChild: signals.onChild,
      shouldStop: signals.stopped,
      tool,
      backend,
      inferArgs: rest,
      video,
      json: facts.json,
      videoIo: facts.videoIo,
      outputGiven: facts.outputGiven,
      outDir: resolve(o.outDir),
      metrics: o.metrics?.split(',').filter(Boolean),
      tries: o.tries,
      onLog: (m) => say('jetprof profile', m),
    });
    process.stdout.write(
      tool === 'nsys' && result.nsys
        ? `${nvtxStageMarkdown(result.nsys)}\n`
        : result.nvprof
          ? `${criticalPathMarkdown(result.nvprof)}\n`
          : '',
    );
    if (result.run) process.stdout.write(`\n${profiledRunLine(result.run)}\n`);
    for (const n of result.notes) say('jetprof profile', n);
    process.stderr.write(
      result.files.profile
        ? `jetprof profile: wrote ${result.files.profile}; raw output kept in ${result.files.log}\n`
        : `jetprof profile: nothing replaced in ${resolve(o.outDir)}${result.files.log ? `; this run's output is in ${result.files.log}` : ''}\n`,
    );
    // nvprof without a usable GPU exits with codes of its own (19 when it stops the application): one documented code
    process.exitCode = signals.stopped() ? 130 : result.noGpu ? EXIT_NO_GPU : result.exitCode;
  } catch (e) {
    process.exitCode = handleError(e);
  } finally {
    signals?.dispose();
  }
}
