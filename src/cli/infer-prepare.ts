/**
 * What an infer run needs before its first frame, decided once: contradictory options refused (infer-refusals.ts),
 * the streams with their output names (each source classified once), the files claimed, NVTX and tegrastats, the run
 * plan; and infer's options mapped to the job's settings in one place.
 */
import { postprocessOf } from '../detect/postprocess.ts';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { classifySource } from '../video/sources.ts';
import { loadNvtx, disabledNvtx } from '../pipeline/nvtx.ts';
import { openCvHasCuda } from '../backends/opencv.ts';
import { loadOpenCv } from '../video/opencv.ts';
import { findTegrastats } from '../platform/tegrastats-runner.ts';
import { repeatPath } from '../pipeline/runset.ts';
import { JetprofError } from '../util/errors.ts';
import { defaultOutputPath } from '../pipeline/infer.ts';
import type { InferOptions } from '../pipeline/infer-settings.ts';
import { planRun, type RunPlan } from '../pipeline/run-plan.ts';
import type { StreamSpec } from '../pipeline/loop-options.ts';
import { labelsFileOf } from '../model/export-file.ts';
import { claimOutputs } from '../output/output.ts';
import { requireWritableDir } from '../util/files.ts';

import type { InferCliOptions } from './infer-options.ts';
import { refuseBadOptions, refuseBadStreamOptions } from './infer-refusals.ts';

/** What one run of the job needs besides infer's options and its files: the loop chosen, and the console. */
export interface RunContext {
  plan: RunPlan;
  nvtx: InferOptions['nvtx'];
  tegrastatsBin?: string;
  shouldStop: () => boolean;
  onWarning: InferOptions['onWarning'];
  onInfo: NonNullable<InferOptions['onInfo']>;
  onFrame: NonNullable<InferOptions['onFrame']>;
}

/**
 * The settings the job takes as infer declares them: one vocabulary, the job's name for a setting is the option's
 * (pipeline/infer-settings.ts), so these pass through as they are, and the compiler refuses a name one side lacks.
 */
const AS_DECLARED = [
  'backend',
  'model',
  'cfg',
  'weights',
  'labels',
  'cacheDir',
  'strict',
  'engine',
  'plugin',
  'batchTimeout',
  'draw',
  'videoIo',
  'heads',
  'label',
  'profilerAttached',
  'fp16',
  'cocoCategoryIds',
  'frameSize',
  'maxFrames',
  'duration',
  'warmup',
  'threads',
  'ep',
] as const satisfies readonly (keyof InferCliOptions & keyof InferOptions)[];

/**
 * The job's settings for one run and the files it writes: infer's options as declared, and what the command
 * composes from them (the streams and their files, pacing, the plan, the postprocess, tegrastats, the callbacks).
 */
export function jobSettings(o: InferCliOptions, run: RunContext, files: RunFiles): InferOptions {
  const declared = Object.fromEntries(AS_DECLARED.map((k) => [k, o[k]])) as Pick<
    InferCliOptions,
    (typeof AS_DECLARED)[number]
  >;
  return {
    ...declared,
    streams: files.streams,
    json: files.json,
    ...(o.realtime ? { realtime: { fps: o.sourceFps, ...(o.stagger ? { staggered: true } : {}) } } : {}),
    ...(o.interval > 0 ? { interval: o.interval } : {}),
    plan: run.plan,
    ...(o.perfInterval
      ? {
          perf: {
            everyS: o.perfInterval,
            // on its own line: a progress line being drawn on the terminal is cleared first (it is drawn again)
            onPerf: (line: string) => process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}${line}\n`),
          },
        }
      : {}),
    postprocess: postprocessOf(o),
    tegrastats: run.tegrastatsBin ? { bin: run.tegrastatsBin, intervalMs: o.tegrastatsInterval } : undefined,
    letterbox: o.letterbox ?? false,
    nvtx: run.nvtx,
    shouldStop: run.shouldStop,
    onWarning: run.onWarning,
    onInfo: run.onInfo,
    onFrame: run.onFrame,
  };
}

/** The files one run of the command writes: each stream's video and boxes, and its JSON (`-`: stdout). */
export interface RunFiles {
  streams: StreamSpec[];
  json?: string;
}

/**
 * Every file the command writes, named in one place (pure). One source writes --output (default
 * `<stem>-<backend>-detected.mp4`) and --detections; several write stream i's `<stem>-<i>-<backend>-detected.mp4` into
 * --output-dir and `dets-i.json`; with --repeat N each run k writes `out-k.mp4`, `dets-k.json` and `run-k.json`, and
 * --json names the runset (`-`: the runset goes to stdout, no run's JSON does).
 */
export function runFiles(
  o: Pick<InferCliOptions, 'backend' | 'write' | 'output' | 'outputDir' | 'detections' | 'json' | 'repeat'>,
  sources: Pick<StreamSpec, 'source' | 'arg'>[],
): { runs: RunFiles[]; runset?: string } {
  const several = sources.length > 1;
  const repeated = o.repeat > 1;
  const nth = (path: string | undefined, k: number) => (path && repeated ? repeatPath(path, k) : path);
  const runs = Array.from({ length: o.repeat }, (_, i): RunFiles => {
    const k = i + 1;
    const streams = sources.map(({ source, arg }, s) => ({
      source,
      arg,
      // --output-dir names the folder of the default output for one source too (a video, or an image folder's images)
      outputPath: !o.write
        ? undefined
        : several
          ? defaultOutputPath(source, o.backend, { dir: o.outputDir, stream: s, arg })
          : nth(o.output ?? defaultOutputPath(source, o.backend, { dir: o.outputDir, arg }), k),
      // --detections dets.json: stream i's boxes go to dets-i.json
      detectionsPath: several ? o.detections && repeatPath(o.detections, s) : nth(o.detections, k),
    }));
    return { streams, json: o.json === '-' ? (repeated ? undefined : '-') : nth(o.json, k) };
  });
  return { runs, ...(repeated && o.json !== '-' ? { runset: o.json } : {}) };
}

/** More streams than this in one run is refused (DeepStream's samples go to 30-something on Orin). */
const MAX_STREAMS = 64;

/** The run's sources, each classified once here: `infer A B`, and `--streams N` repeating each source N times. */
function runSources(videos: string[], o: InferCliOptions): Pick<StreamSpec, 'source' | 'arg'>[] {
  const sources = videos.flatMap((v) => Array.from({ length: o.streams }, () => v));
  if (sources.length === 1) return [{ source: sources[0], arg: classifySource(sources[0]) }];
  if (sources.length > MAX_STREAMS) {
    throw new JetprofError(
      'BAD_OPTION',
      `${sources.length} streams (${videos.length} source(s) x --streams ${o.streams}): at most ${MAX_STREAMS}`,
      {
        suggestion: 'fewer sources or a smaller --streams',
      },
    );
  }
  for (const [flag, given] of [
    ['--output', o.output],
    ['--repeat', o.repeat > 1 ? o.repeat : undefined],
  ] as const) {
    if (given !== undefined) {
      throw new JetprofError(
        'BAD_OPTION',
        `${flag} takes one stream; with ${sources.length} streams it is not available yet`,
        {
          suggestion:
            flag === '--output'
              ? 'each stream writes <stem>-<i>-<backend>-detected.mp4 into --output-dir'
              : `run the streams one at a time for ${flag}`,
        },
      );
    }
  }
  const args = new Map(videos.map((v) => [v, classifySource(v)]));
  const folder = videos.find((v) => args.get(v)!.kind === 'images');
  if (folder)
    throw new JetprofError('BAD_OPTION', `${folder}: a folder of images is one stream only`, {
      suggestion: 'run it on its own',
    });
  return sources.map((source) => ({ source, arg: args.get(source)! }));
}

/** No output may be an input of the run, nor another output, and every output's folder must be writable: checked before anything runs. */
function claimRunFiles(o: InferCliOptions, { runs, runset }: ReturnType<typeof runFiles>): void {
  if (o.json && o.json !== '-') requireWritableDir(o.json, '--json');
  if (o.detections) requireWritableDir(o.detections, '--detections');
  const specs = runs[0].streams;
  const [first] = specs;
  if (first.arg.kind === 'images' && first.outputPath && resolve(first.outputPath) === resolve(first.source)) {
    throw new JetprofError('BAD_OUTPUT', `${first.outputPath}: the annotated images would overwrite the input images`, {
      suggestion: 'give --output another folder',
    });
  }
  // the videos' folder: --output-dir with several streams (or when given), --output with one
  const videoOption = specs.length > 1 || o.outputDir ? '--output-dir' : '--output';
  const videos = specs.filter((s) => s.outputPath && s.arg.kind !== 'images').map((s) => s.outputPath!);
  for (const dir of new Set(videos.map((v) => dirname(resolve(v)))))
    requireWritableDir(
      videos.find((v) => dirname(resolve(v)) === dir)!,
      videoOption,
    );
  // with --repeat N, run k writes out-k.mp4, run-k.json, boxes-k.json: each is claimed under its run's name
  const ofRun = (what: string, k: number) => (runs.length > 1 ? `${what} of run ${k + 1}` : what);
  const perStream = (what: string, ofStream: string, path: (s: StreamSpec) => string | undefined) =>
    runs.flatMap((r, k) =>
      r.streams.map((s, i) => [r.streams.length > 1 ? `stream ${i} ${ofStream}` : ofRun(what, k), path(s)]),
    );
  claimOutputs(
    {
      ...Object.fromEntries(
        [...new Set(specs.filter((s) => s.arg.kind === 'file').map((s) => s.source))].map((v, i) => [
          `video ${i + 1}`,
          v,
        ]),
      ),
      // the labels a cfg export reads are an input even when not named (<cfg>.names beside the cfg)
      model: o.model,
      cfg: o.cfg,
      weights: o.weights,
      labels: o.cfg ? labelsFileOf({ cfgPath: o.cfg, labelsPath: o.labels }) : o.labels,
      engine: o.engine,
      ...Object.fromEntries(o.plugin.map((p, i) => [`plugin ${i + 1}`, p])),
    },
    Object.fromEntries([
      ...perStream('output video', 'video', (s) => (s.arg.kind === 'images' ? undefined : s.outputPath)),
      ['runset JSON', runset],
      ...runs.map((r, k) => [ofRun('run JSON', k), r.json === '-' ? undefined : r.json]),
      ['heads file', o.heads],
      ...perStream('detections file', 'detections', (s) => s.detectionsPath),
    ]),
  );
}

/**
 * What a run needs before its first frame, decided once for the command and for runInferArgs: the options checked,
 * the streams (each source classified once), the files claimed, NVTX, tegrastats, and the loop.
 */
export function prepareRun(videos: string[], o: InferCliOptions) {
  refuseBadOptions(o);
  const files = runFiles(o, runSources(videos, o));
  const specs = files.runs[0].streams;
  refuseBadStreamOptions(o, specs);
  claimRunFiles(o, files);
  const nvtx = o.nvtx ? loadNvtx() : disabledNvtx('--no-nvtx');
  const tegrastatsBin = o.tegrastats ? findTegrastats() : undefined;
  const plan = planRun({
    streams: specs.length,
    interval: o.interval,
    realtime: !!o.realtime,
    perf: !!o.perfInterval,
    // --batch: default one frame from every stream per run of the model (nvstreammux's batch-size = sources)
    batch: o.batch,
    inFlight: o.inFlight,
    modelAloneRuns: o.modelAlone,
    mode: o.pipeline,
    backend: o.backend,
    executionProvider: o.ep,
    threads: o.threads,
    cores: availableParallelism(),
    openCvHasCuda: () => openCvHasCuda(loadOpenCv().getBuildInformation()),
  });
  return { files, nvtx, tegrastatsBin, plan };
}
