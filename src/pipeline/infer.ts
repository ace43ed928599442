/**
 * The `infer` job: resolve the model, open a backend session, run the frame loop, build the run JSON.
 * Process concerns (signals, exit codes, printing) stay in src/cli.
 */
import { existsSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { classifySource, type SourceArg, sourceStem } from '../video/sources.ts';
import { COCO80_TO_COCO91 } from '../accuracy/coco.ts';
import { addLine, emptySeries, summarizeSeries } from '../platform/tegrastats.ts';
import { startTegrastats } from '../platform/tegrastats-runner.ts';
import { cocoResultsJson } from '../accuracy/detections-file.ts';
import { createOnnxSession, type OnnxExecutionProvider } from '../backends/onnx.ts';
import { type EngineSidecar, readEngineSidecar } from '../backends/engine-sidecar.ts';
import { BACKENDS, type BackendName, type DetectorSession, modelOnGpu } from '../backends/types.ts';
import { ensureExported, readModelInfo } from '../model/export-file.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { baseEnv, type EnvInfo } from '../platform/env.ts';
import { JetprofError } from '../util/errors.ts';
import { writeOutput } from '../output/output.ts';
import { sha256File } from '../util/files.ts';
import { loadOpenCv } from '../video/opencv.ts';
import { timeModelAlone } from './model-alone.ts';
import type { FrameBoxes } from '../detect/types.ts';
import type { LoopOptions } from './loop-io.ts';
import type { RunPlan } from './run-plan.ts';
import { headsRecorder } from './heads-file.ts';
import { runPipelinedLoop } from './pipelined-loop.ts';
import { batchFigures, type LoopResult, runSequentialLoop } from './sequential-loop.ts';
import { buildRunResult, defaultLabel, type ProfilerName, type RunFacts, type RunResult } from './run-result.ts';

/**
 * The job's settings: which model, backend and session, and the loop's settings (LoopOptions, declared there once).
 * The command line is mapped to these in one place (cli/infer-prepare.ts jobSettings).
 */
export interface InferOptions extends Omit<
  LoopOptions,
  'modelName' | 'keepBoxes' | 'shouldEnd' | 'streamColumn' | 'onFrame' | 'batch' | 'inFlight'
> {
  backend: BackendName;
  /** What kind of run this is (per-stream figures, loop, batch, frames in flight, model-alone runs): decided once. */
  plan: RunPlan;
  /** .onnx (onnx backend); with cfg+weights it is exported and cached beside the weights. */
  model?: string;
  cfg?: string;
  weights?: string;
  labels?: string;
  /** Where the export of --cfg/--weights is cached (default: beside the weights, else $XDG_CACHE_HOME/jetprof). */
  cacheDir?: string;
  /** Unknown cfg keys are errors (--strict). */
  strictCfg?: boolean;
  /** Serialized TensorRT engine (tensorrt backend). The .onnx (or cfg+weights) still supplies the YOLO metadata. */
  engine?: string;
  /** TensorRT plugin libraries (tensorrt_demos' libyolo_layer.so). */
  plugins?: string[];
  /** The run JSON: a path, `-` for stdout, undefined for none. */
  json?: string;
  /** --heads F: the raw head outputs of the first frames (heads-file.ts), for jetprof selftest. */
  headsFile?: string;
  /** Names this run in reports; default from backend, precision, provider, loop and profiler. */
  label?: string;
  /** The profiler this process runs under (set by `jetprof profile`). */
  profiler?: ProfilerName;
  threads?: number;
  executionProvider: OnnxExecutionProvider;
  /** OpenCV DNN with --ep cuda: DNN_TARGET_CUDA_FP16. */
  fp16?: boolean;
  /** tegrastats beside the run: its path and interval (undefined: none). */
  tegrastats?: { bin: string; intervalMs: number };
  /** category_id as COCO's 1..90 ids instead of the class index (--detections). */
  cocoCategoryIds?: boolean;
  /** End the run normally after this many seconds of frames (for endless sources). */
  durationS?: number;
  /** Things the user should see even with --quiet (ONNX Runtime fallback, random weights, engine version). */
  onWarning: (message: string) => void;
  /** Notes (which model file is used); hidden by --quiet. */
  onInfo?: (message: string) => void;
  onFrame?: LoopOptions['onFrame'];
}

/**
 * `./<video name>-<onnx|tensorrt|opencv>-detected.mp4`, as the lab names them; for a stream or camera its short name
 * (rtsp://host/live -> live-onnx-detected.mp4); for a folder of images a folder `<folder>-<backend>-detected`.
 */
export function defaultOutputPath(video: string, backend: BackendName, arg: SourceArg = classifySource(video)): string {
  const stem = `${sourceStem(video, arg)}-${BACKENDS[backend].outputSuffix}-detected`;
  return resolve(arg.kind === 'images' ? stem : `${stem}.mp4`);
}

export function resolveModelPath(
  o: Pick<InferOptions, 'model' | 'cfg' | 'weights' | 'labels' | 'engine' | 'strictCfg' | 'onWarning' | 'cacheDir'>,
  onInfo: (m: string) => void,
  sidecar?: EngineSidecar,
): string {
  if (o.engine && !existsSync(o.engine)) {
    throw new JetprofError('FILE_NOT_FOUND', `${o.engine}: TensorRT engine not found`, {
      suggestion:
        'build it on this board: jetprof build-engine --onnx weights/yolov4-tiny.onnx --out engines/yolov4-tiny.trt --fp16',
    });
  }
  if (o.model) return o.model;
  const built = o.engine && !o.cfg ? sidecar?.onnx.path : undefined;
  if (built) {
    onInfo(`using ${built}, the ONNX ${o.engine} was built from (${o.engine}.json), for the YOLO metadata`);
    return built;
  }
  if (o.cfg && o.weights) {
    const { path, exported, note } = ensureExported({
      cfgPath: o.cfg,
      weightsPath: o.weights,
      labelsPath: o.labels,
      strict: o.strictCfg,
      onWarning: o.onWarning,
      cacheDir: o.cacheDir,
    });
    if (note) onInfo(note);
    onInfo(exported ? `exported ${o.cfg} + ${o.weights} to ${path}` : `using cached ${path}`);
    return path;
  }
  throw new JetprofError('BAD_OPTION', 'no model given', {
    suggestion: 'pass --model M.onnx, or --cfg C.cfg --weights W.weights (jetprof make-weights makes test weights)',
  });
}

/** The model is given as darknet files only (--cfg and --weights, no --model): OpenCV DNN then reads them itself (its darknet importer). */
function darknetFilesOnly(o: Pick<InferOptions, 'cfg' | 'weights' | 'model'>): boolean {
  return !!(o.cfg && o.weights && !o.model);
}

async function openSession(
  o: InferOptions,
  modelPath: string,
  model: YoloModelInfo,
  sidecar: EngineSidecar | undefined,
): Promise<DetectorSession> {
  if (o.backend === 'onnx') {
    const options = { executionProvider: o.executionProvider, threads: o.threads, onWarning: o.onWarning };
    if (!o.plan.loop.pipelined) return createOnnxSession(modelPath, options);
    const { createOnnxWorkerSession } = await import('../backends/onnx-worker.ts');
    return createOnnxWorkerSession(modelPath, options);
  }
  if (o.backend === 'opencv') {
    const { createOpenCvSession } = await import('../backends/opencv.ts');
    // cfg + weights: OpenCV's own darknet importer (independent of jetprof's exporter); else jetprof's ONNX.
    const darknet = darknetFilesOnly(o) ? { cfg: o.cfg!, weights: o.weights! } : { onnx: modelPath };
    return createOpenCvSession(darknet, {
      executionProvider: o.executionProvider,
      fp16: o.fp16,
      threads: o.threads,
      outputNames: model.heads.map((h) => h.output),
      onWarning: o.onWarning,
    });
  }
  const { createTensorRtSession } = await import('../backends/tensorrt.ts');
  if (!o.engine) {
    throw new JetprofError('BAD_OPTION', 'the tensorrt backend needs --engine E.trt', {
      suggestion: 'build one with `jetprof build-engine --onnx M.onnx --out engines/M.trt` (runs trtexec)',
    });
  }
  return createTensorRtSession(o.engine, model, { plugins: o.plugins, sidecar, onWarning: o.onWarning });
}

/** The ONNX an engine was built from, by its sidecar's record, else the ONNX given for the metadata. */
function engineOnnxSha(sidecar: EngineSidecar | undefined, modelPath: string): string | undefined {
  return sidecar?.onnx.sha256 ?? (modelPath.endsWith('.onnx') ? sha256File(modelPath) : undefined);
}

/**
 * A model or engine with a fixed batch runs only batches of that size: a run that batches another number of frames
 * is refused before it starts, with what builds the right one (padding a shorter batch would time images that are
 * not there).
 */
export function checkBatchFits(
  session: Pick<DetectorSession, 'batchSize' | 'backend'>,
  batch: number,
  o: Pick<InferOptions, 'engine' | 'streams'>,
  modelPath: string,
): void {
  const fixed = session.batchSize;
  if (fixed === 'dynamic' || fixed === batch) return;
  const streams = o.streams.length;
  const setup = `this run batches ${batch} frame${batch === 1 ? '' : 's'} (${streams} stream${streams === 1 ? '' : 's'}${batch === streams ? '' : `, --batch ${batch}`})`;
  if (session.backend === 'tensorrt') {
    throw new JetprofError('BAD_OPTION', `${o.engine}: the engine runs batches of ${fixed}; ${setup}`, {
      suggestion: `build an engine for it: jetprof build-engine --onnx ${modelPath} --batch ${batch} --out ${(o.engine ?? 'E.trt').replace(/(\.[a-z]+)?$/, `-b${batch}$1`)}${batch === 1 ? '' : ', or pass --batch ' + fixed + ' with at least ' + fixed + ' streams'}`,
    });
  }
  throw new JetprofError('BAD_OPTION', `${modelPath}: the model's input has a fixed batch of ${fixed}; ${setup}`, {
    suggestion: 'export it with `jetprof export` (its batch dimension is symbolic), or run with --batch ' + fixed,
  });
}

/** True once `ms` have passed since its first call (the loop's first frame): connecting is not counted. */
export function durationClock(ms: number, now: () => number = Date.now): () => boolean {
  let start: number | undefined;
  return () => {
    start ??= now();
    return now() - start >= ms;
  };
}

/**
 * TensorRT must be usable before anything else about a TensorRT run is checked: on a machine without it, the first
 * attempt says so and what works instead, rather than a missing engine, then a missing trtexec, one at a time.
 */
async function requireTensorRt(): Promise<void> {
  const { loadTrtAbi } = await import('../backends/trt-abi.ts');
  try {
    loadTrtAbi();
  } catch (e) {
    if (!(e instanceof JetprofError) || e.code !== 'TENSORRT_UNAVAILABLE') throw e;
    throw new JetprofError(
      'TENSORRT_UNAVAILABLE',
      `TensorRT cannot run on this machine: ${e.message}. infer-trt runs on a board with JetPack (TensorRT) and jetprof's shim built`,
      {
        suggestion: `${e.suggestion ? `${e.suggestion}; ` : ''}off the board, run the lab's scripts under nvprof on the board and here jetprof report --profile LOG --fps "TensorRT@960x540=INF/E2E"; infer-onnx and infer-opencv run here; jetprof doctor says what this machine runs`,
      },
    );
  }
}

/** The model a run uses: the engine's sidecar (read once), the ONNX or export that supplies the metadata, its facts. */
function resolveModel(o: InferOptions) {
  const info = o.onInfo ?? (() => undefined);
  // OpenCV's darknet importer reads the cfg and weights itself: the export is only where the metadata comes from
  const importer = o.backend === 'opencv' && darknetFilesOnly(o);
  const onInfo = importer
    ? (m: string) =>
        info(
          /^(exported |using cached )/.test(m)
            ? `${m.replace(/^using cached (.*)$/, 'YOLO metadata (anchors, labels) from the cached export $1').replace(/^(exported .*)$/, '$1 for the YOLO metadata (anchors, labels)')}; OpenCV DNN itself reads ${o.cfg} and ${o.weights} (its darknet importer)`
            : m,
        )
    : info;
  // the engine's sidecar, read once: the ONNX it was built from, its precision, the TensorRT that built it
  const sidecar = o.engine ? readEngineSidecar(o.engine) : undefined;
  const modelPath = resolveModelPath(o, onInfo, sidecar);
  const model = readModelInfo(modelPath);
  // an ONNX with a fixed batch is refused before anything loads (an engine's batch is known once it is open)
  if (o.backend === 'onnx' || (o.backend === 'opencv' && !darknetFilesOnly(o)))
    checkBatchFits({ backend: o.backend, batchSize: model.inputBatch ?? 'dynamic' }, o.plan.batch, o, modelPath);
  if (model.source?.generatedWeights) {
    // A note, not a warning: --quiet hides it; the run JSON (generatedWeights) and the video overlay still say so.
    onInfo(
      'WARNING: this model was made from RANDOM weights (jetprof make-weights): its detections are meaningless; the timings are real',
    );
  }
  return { sidecar, modelPath, model };
}

type ResolvedModel = ReturnType<typeof resolveModel>;

/** The backend's session, its load timed inside a `model-load` NVTX range; a batch the session cannot run is refused. */
async function openTimedSession(o: InferOptions, m: ResolvedModel) {
  loadOpenCv(); // fail early, before the model load is timed
  o.nvtx.push('model-load');
  const t0 = process.hrtime.bigint();
  let session: DetectorSession;
  try {
    session = await openSession(o, m.modelPath, m.model, m.sidecar);
  } finally {
    o.nvtx.pop();
  }
  const modelLoadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  try {
    checkBatchFits(session, o.plan.batch, o, m.modelPath);
  } catch (e) {
    await session.dispose();
    throw e;
  }
  return { session, modelLoadMs };
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
    shouldEnd: o.durationS === undefined ? undefined : durationClock(o.durationS * 1000),
    streamColumn: o.plan.multiStream !== undefined,
    ...(heads ? { onHeads: heads.add } : {}),
  };
  return (o.plan.loop.pipelined ? runPipelinedLoop : runSequentialLoop)(session, m.model, loopOptions);
}

/** A run that measured no frame is an error, whichever way it ended; its output files were left as they were. */
function requireMeasured(o: InferOptions, loop: LoopResult): void {
  const what = o.streams.map((s) => s.source).join(', ');
  if (loop.tally.frames > 0) return;
  if (loop.interrupted)
    throw new JetprofError(
      'INTERRUPTED',
      `${what}: stopped before the first measured frame (${loop.framesRead} read, --warmup ${o.warmupFrames}): nothing was measured, and the previous output files are kept as they were`,
      { exitCode: 130 },
    );
  throw new JetprofError(
    'BAD_VIDEO',
    `${what}: no frame was measured: it gave ${loop.framesRead} frame(s), all within --warmup ${o.warmupFrames}`,
    { suggestion: `use a longer video, or a smaller --warmup (e.g. --warmup ${Math.max(0, loop.framesRead - 1)})` },
  );
}

/**
 * A run that ended normally reports every stream and the model's figures: a stream that yielded no measured frame
 * beside others (an undecodable file), or --interval that ran the model on no measured frame, is an error with the
 * counts, never a row of NaN or of a model that did not run. Its outputs were left as they were.
 */
function requireComplete(o: InferOptions, loop: LoopResult): void {
  if (loop.interrupted) return;
  const empty = loop.streams.filter((s) => s.record.frames === 0);
  if (empty.length > 0) {
    const s = empty[0];
    throw new JetprofError(
      'BAD_VIDEO',
      `${s.record.source}: stream ${s.record.index} gave no measured frame (${s.framesRead} read, --warmup ${o.warmupFrames}) while the other streams ran: undecodable, empty or too short; nothing was written`,
      { suggestion: `check it with \`ffprobe ${s.record.source}\`, or run without it` },
    );
  }
  const inferred = loop.tally.measured.inferred;
  if (o.interval && inferred && !inferred.some((x) => x === 1)) {
    const n = inferred.length;
    throw new JetprofError(
      'BAD_OPTION',
      `--interval ${o.interval}: the model ran on none of the ${n} measured frame(s) (it runs on one frame in every ${o.interval + 1} of a stream, and its ${loop.inferredFrames} run(s) fell within --warmup ${o.warmupFrames}): there is no inference figure; nothing was written`,
      { suggestion: `use a smaller --interval (at most ${Math.max(0, n - 1)} here) or a longer video` },
    );
  }
}

/** What the user should know about each stream, said the same way whichever loop ran: one warning each. */
function warnAboutStreams(o: InferOptions, loop: LoopResult): void {
  const several = loop.streams.length > 1;
  for (const s of loop.streams) {
    const src = s.record.source;
    const who = several ? `stream ${s.record.index} (${src})` : src;
    if (s.video.rotation)
      o.onWarning(
        `${who}: carries rotation metadata (${s.video.rotation}°, a phone video?): its frames were read as stored, not turned (OpenCV 4.6 turns some the wrong way); for upright frames, re-encode with the rotation applied: ffmpeg -i ${src} -c:v libx264 upright.mp4`,
      );
    if (s.video.variableFps !== undefined)
      o.onWarning(
        `${who}: variable frame rate (up to ${s.video.variableFps} FPS, ${+s.video.fps.toFixed(2)} on average): --realtime paces its frames evenly at the average and the video is written at it, so the frames' own times are not kept; for a constant rate: ffmpeg -i ${src} -vf fps=${Math.round(s.video.fps)} -c:v libx264 constant.mp4`,
      );
    const out = s.record.output;
    const [w, h] = s.frameSize;
    if (out?.width && out.height && (out.width !== w || out.height !== h))
      o.onWarning(
        `${out.path}: written at ${out.width}x${out.height}, not the ${w}x${h} of the frames (${out.codec} encodes even sizes only; the run JSON records both); --frame-size ${w - (w % 2)}x${h - (h % 2)} writes the frames as measured`,
      );
    const declared = s.video.frameCount;
    const cut =
      !loop.interrupted &&
      !s.live &&
      s.record.endedEarly === undefined &&
      declared > 0 &&
      s.framesRead < declared &&
      (o.maxFrames === undefined || s.framesRead < o.maxFrames) &&
      o.durationS === undefined;
    if (cut)
      o.onWarning(
        `${who}: the stream ended after ${s.framesRead} of the ${declared} frames its container declares (a cut or damaged file?); the figures cover the ${s.framesRead} decoded`,
      );
    const early = s.record.endedEarly;
    if (early)
      o.onWarning(
        `${who}: ${early.reason} after ${(s.lastEndMs / 1000).toFixed(1)} s and ${early.framesRead} frames${o.durationS !== undefined ? ` (of --duration ${o.durationS} s)` : ''}; the figures cover those frames`,
      );
  }
}

/** The run's setup: what ran the model, in which precision and loop, under which profiler; its label. */
function runSetup(o: InferOptions, session: DetectorSession, env: EnvInfo): RunFacts['setup'] {
  const precision = session.precision;
  const pipelined = o.plan.loop.pipelined;
  const setupBase = {
    executionProvider: session.executionProvider,
    precision,
    loop: pipelined ? ('pipelined' as const) : ('sequential' as const),
    ...(pipelined ? { inFlight: o.plan.inFlight } : {}),
    profiler: o.profiler ?? 'none',
    ...(o.realtime ? { realtime: o.realtime.fps !== undefined ? { sourceFps: o.realtime.fps } : {} } : {}),
  };
  const batch = o.plan.batch;
  return {
    label: o.label ?? defaultLabel(o.backend, setupBase, { count: o.streams.length, interval: o.interval ?? 0, batch }),
    ...setupBase,
    write: o.streams.some((s) => s.outputPath !== undefined),
    draw: o.draw !== false,
    device: modelOnGpu(o.backend, session.executionProvider)
      ? `GPU: ${env.gpu ?? env.jetson?.model ?? 'NVIDIA GPU'}`
      : `CPU: ${env.cpu}`,
  };
}

/** The machine and library versions the run records. */
function runEnv(o: InferOptions, session: DetectorSession): EnvInfo {
  const cv = loadOpenCv();
  const env: EnvInfo = { ...baseEnv(), opencv: `${cv.version.major}.${cv.version.minor}.${cv.version.revision}` };
  Object.assign(env, session.runtime);
  return env;
}

/** tegrastats' samples on the run's clock and their summary over the measured frames. */
async function tegrastatsRecord(
  o: InferOptions,
  runner: ReturnType<typeof startTegrastats> | undefined,
  loop: LoopResult,
): Promise<RunFacts['tegrastats']> {
  if (!runner || !o.tegrastats) return undefined;
  const lines = await runner.stop();
  const origin = loop.tally.originNs ?? process.hrtime.bigint();
  const series = emptySeries(o.tegrastats.intervalMs);
  for (const l of lines) addLine(series, Number(l.tNs - origin) / 1e6, l.line);
  const pf = loop.tally.measured;
  const summary = summarizeSeries(series, {
    startMs: pf.startMs[0] ?? 0,
    endMs: pf.endMs[pf.endMs.length - 1] ?? 0,
    frames: pf.index.length,
  });
  if (series.diagnostics.length)
    o.onWarning(
      `tegrastats printed ${series.diagnostics.length} line(s) that are not its statistics (kept in the run JSON), e.g. ${series.diagnostics[0].line.slice(0, 80)}`,
    );
  return { command: runner.command, series, summary };
}

/** Every fact of the run JSON, gathered in one place and built once (run-result.ts buildRunResult). */
function assembleRun(
  o: InferOptions,
  m: ResolvedModel,
  session: DetectorSession,
  loop: LoopResult,
  extra: {
    startedAt: string;
    modelLoadMs: number;
    tegrastats: RunFacts['tegrastats'];
    modelAlone: RunFacts['modelAlone'];
  },
): RunResult {
  const env = runEnv(o, session);
  const { tally } = loop;
  const [first] = loop.streams;
  const multi = o.plan.multiStream !== undefined;
  const batches = batchFigures(loop.batches);
  const sourceEnd = first.record.endedEarly;
  return buildRunResult(tally.measured, tally.warmup, {
    backend: o.backend,
    backendDetail: session.description,
    setup: runSetup(o, session, env),
    model: {
      path: o.engine ?? m.modelPath,
      inputWidth: m.model.inputWidth,
      inputHeight: m.model.inputHeight,
      classes: m.model.classes,
      labels: m.model.labels,
      sha256: sha256File(o.engine ?? m.modelPath),
      onnxSha256: o.engine ? engineOnnxSha(m.sidecar, m.modelPath) : sha256File(m.modelPath),
      ...(m.model.source?.generatedWeights ? { generatedWeights: true } : {}),
    },
    video: {
      path: o.streams[0].source,
      width: first.video.width,
      height: first.video.height,
      fps: first.video.fps,
      frameCount: first.video.frameCount,
      ...(first.video.rotation ? { rotation: first.video.rotation } : {}),
      ...(first.video.variableFps !== undefined ? { variableFps: first.video.variableFps } : {}),
      ...(first.video.decoder ? { decoder: first.video.decoder } : {}),
      ...(first.video.decoderNote ? { decoderNote: first.video.decoderNote } : {}),
    },
    // one stream: its output is the run's; several: each stream's is in its record
    output: multi ? undefined : first.record.output,
    frameSize: first.frameSize,
    letterbox: o.letterbox,
    modelLoadMs: extra.modelLoadMs,
    ...(extra.modelAlone ? { modelAlone: extra.modelAlone } : {}),
    firstFrameMs: tally.firstFrameMs,
    postprocess: {
      ...o.postprocess,
      framesCandidatesCapped: tally.framesCandidatesCapped,
      framesDetectionsCapped: tally.framesDetectionsCapped,
      maxCandidatesSeen: tally.maxCandidates,
    },
    detections: { total: tally.total, perClass: tally.perClass },
    nvtx: o.nvtx.enabled,
    env,
    startedAt: extra.startedAt,
    interrupted: loop.interrupted,
    // one stream that ended early says when, at the top: a live source that stopped sending
    ...(o.streams.length === 1 && sourceEnd
      ? {
          endedEarly: {
            afterS: Number((first.lastEndMs / 1000).toFixed(3)),
            framesRead: sourceEnd.framesRead,
            reason: sourceEnd.reason,
          },
        }
      : {}),
    ...(multi
      ? {
          streams: loop.streams.map((s) => s.record),
          batch: o.plan.batch,
          ...(batches ? { batches } : {}),
          interval: o.interval ?? 0,
          inferredFrames: loop.inferredFrames,
        }
      : {}),
    ...(extra.tegrastats ? { tegrastats: extra.tegrastats } : {}),
  });
}

/**
 * The run's files, written by this one writer: each stream's detections (COCO results; their paths recorded relative
 * to the run JSON), then the run JSON itself (a path, or `-` for stdout).
 */
export function writeRunFiles(
  o: Pick<InferOptions, 'json' | 'streams' | 'cocoCategoryIds'>,
  result: RunResult,
  boxes: FrameBoxes[][],
): void {
  const categoryIds = o.cocoCategoryIds ? COCO80_TO_COCO91 : undefined;
  const base = o.json && o.json !== '-' ? dirname(resolve(o.json)) : process.cwd();
  for (const [i, spec] of o.streams.entries()) {
    if (!spec.detectionsPath) continue;
    writeOutput(spec.detectionsPath, cocoResultsJson(boxes[i] ?? [], categoryIds));
    const file = relative(base, resolve(spec.detectionsPath));
    // one stream: the run's file; several: each stream's, in its record
    if (o.streams.length > 1 && result.streams) result.streams[i].detectionsFile = file;
    else result.detectionsFile = file;
  }
  if (o.json === '-') process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if (o.json) writeOutput(o.json, `${JSON.stringify(result, null, 2)}\n`);
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
    const heads = o.headsFile ? headsRecorder() : undefined;
    const loop = await runLoop(o, session, m, heads);
    requireMeasured(o, loop);
    requireComplete(o, loop);
    warnAboutStreams(o, loop);
    const tegrastats = await tegrastatsRecord(o, runner, loop);
    // the model by itself, after the loop and outside its figures; an interrupted run skips it, and so does a run
    // under a profiler, whose call counts must be the loop's own (nvprof's enqueue calls count the frames)
    const modelAlone =
      loop.interrupted || (o.profiler ?? 'none') !== 'none'
        ? undefined
        : await timeModelAlone(session, loop.lastInput, o.plan.modelAloneRuns);
    const result = assembleRun(o, m, session, loop, { startedAt, modelLoadMs, tegrastats, modelAlone });
    writeRunFiles(o, result, loop.boxes);
    if (heads && o.headsFile) writeOutput(o.headsFile, heads.bytes());
    return result;
  } finally {
    await runner?.stop();
    await session.dispose();
  }
}
