/**
 * The `infer` job: resolve the model, open a backend session, run the frame loop, build the run JSON.
 * Process concerns (signals, exit codes, printing) stay in src/cli.
 */
import { existsSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { classifySource, sourceStem } from '../video/sources.ts';
import { COCO80_TO_COCO91 } from '../accuracy/coco.ts';
import { addLine, emptySeries, summarizeSeries } from '../platform/tegrastats.ts';
import { startTegrastats } from '../platform/tegrastats-runner.ts';
import { cocoResultsJson } from '../accuracy/detections-file.ts';
import { createOnnxSession, type OnnxExecutionProvider, onnxRuntimeVersion } from '../backends/onnx.ts';
import { type EngineSidecar, readEngineSidecar } from '../backends/engine-sidecar.ts';
import { BACKENDS, type BackendName, type DetectorSession } from '../backends/types.ts';
import type { PostprocessOptions } from '../detect/postprocess.ts';
import { ensureExported, readModelInfo } from '../model/export-file.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { baseEnv } from '../platform/env.ts';
import { JetprofError } from '../util/errors.ts';
import { writeOutput } from '../output/output.ts';
import { sha256File } from '../util/files.ts';
import { loadOpenCv } from '../video/opencv.ts';
import { runFrameLoop } from './frame-loop.ts';
import type { FrameLoopOptions } from './loop-io.ts';
import { runPipelinedLoop } from './pipelined-loop.ts';
import { batchFigures, runMultiStreamLoop, type StreamSpec } from './multi-stream-loop.ts';
import type { Nvtx } from './nvtx.ts';
import { buildRunResult, defaultLabel, type Precision, type ProfilerName, type RunResult } from './run-result.ts';

export interface InferOptions {
  backend: BackendName;
  video: string;
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
  /** Output video; null means --no-write; undefined means the default name. */
  output?: string | null;
  json?: string;
  postprocess: PostprocessOptions;
  letterbox: boolean;
  /** Names this run in reports; default from backend, precision, provider, loop and profiler. */
  label?: string;
  /** The profiler this process runs under (set by `jetprof profile`). */
  profiler?: ProfilerName;
  frameSize?: [number, number];
  maxFrames?: number;
  warmupFrames: number;
  threads?: number;
  executionProvider: OnnxExecutionProvider;
  /** OpenCV DNN with --ep cuda: DNN_TARGET_CUDA_FP16. */
  fp16?: boolean;
  /** tegrastats beside the run: its path and interval (undefined: none). */
  tegrastats?: { bin: string; intervalMs: number };
  /** Write every box here (COCO results), warm-up frames marked. */
  detections?: string;
  /** category_id as COCO's 1..90 ids instead of the class index. */
  cocoCategoryIds?: boolean;
  /** true: the pipelined loop (stages overlap, ORT in a worker thread); false: the sequential loop. */
  pipeline: boolean;
  /** Frames in flight in the pipelined loop (default 3). */
  inFlight?: number;
  /** Several streams in one run (sources, each possibly repeated by --streams), each with its output video. */
  streams?: StreamSpec[];
  /** --realtime: sources read at their frame rate (or `fps`, --source-fps), dropping what arrives while busy. */
  realtime?: { fps?: number };
  /** --perf-interval: each stream's FPS every `everyS` seconds (several streams). */
  perf?: { everyS: number; onPerf: (line: string) => void };
  /** --no-draw: frames written without boxes. */
  draw?: boolean;
  /** --interval K: the model runs on every (K+1)-th frame; an IoU tracker carries the boxes between. */
  interval?: number;
  /** --batch B: one frame from each of up to B streams through the model in one run (default 1). */
  batch?: number;
  /** --batch-timeout MS: with --realtime, how long a batch not yet full waits for frames to arrive. */
  batchTimeoutMs?: number;
  /** End the run normally after this many seconds of frames (for endless sources). */
  durationS?: number;
  nvtx: Nvtx;
  shouldStop: () => boolean;
  /** Things the user should see even with --quiet (ONNX Runtime fallback, random weights, engine version). */
  onWarning: (message: string) => void;
  /** Notes (which model file is used); hidden by --quiet. */
  onInfo?: (message: string) => void;
  onFrame?: FrameLoopOptions['onFrame'];
}

/**
 * `./<video name>-<onnx|tensorrt|opencv>-detected.mp4`, as the lab names them; for a stream or camera its short name
 * (rtsp://host/live -> live-onnx-detected.mp4); for a folder of images a folder `<folder>-<backend>-detected`.
 */
export function defaultOutputPath(video: string, backend: BackendName): string {
  const stem = `${sourceStem(video)}-${BACKENDS[backend].outputSuffix}-detected`;
  return resolve(classifySource(video).kind === 'images' ? stem : `${stem}.mp4`);
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

/** OpenCV DNN reads the cfg and weights itself (its darknet importer) when they are given without --model. */
function darknetImporter(o: Pick<InferOptions, 'cfg' | 'weights' | 'model'>): boolean {
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
    if (!o.pipeline) return createOnnxSession(modelPath, options);
    const { createOnnxWorkerSession } = await import('../backends/onnx-worker.ts');
    return createOnnxWorkerSession(modelPath, options);
  }
  if (o.backend === 'opencv') {
    const { createOpenCvSession } = await import('../backends/opencv.ts');
    // cfg + weights: OpenCV's own darknet importer (independent of jetprof's exporter); else jetprof's ONNX.
    const darknet = darknetImporter(o) ? { cfg: o.cfg!, weights: o.weights! } : { onnx: modelPath };
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
  const streams = o.streams?.length ?? 1;
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

export async function runInference(o: InferOptions): Promise<RunResult> {
  const startedAt = new Date().toISOString();
  // the engine's sidecar, read once: the ONNX it was built from, its precision, the TensorRT that built it
  const sidecar = o.engine ? readEngineSidecar(o.engine) : undefined;
  const modelPath = resolveModelPath(o, o.onInfo ?? (() => undefined), sidecar);
  const model = readModelInfo(modelPath);
  const batch = o.batch ?? 1;
  // an ONNX with a fixed batch is refused before anything loads (an engine's batch is known once it is open)
  if (o.backend === 'onnx' || (o.backend === 'opencv' && !darknetImporter(o)))
    checkBatchFits({ backend: o.backend, batchSize: model.inputBatch ?? 'dynamic' }, batch, o, modelPath);
  if (model.source?.generatedWeights) {
    // A note, not a warning: --quiet hides it; the run JSON (generatedWeights) and the video overlay still say so.
    (o.onInfo ?? (() => undefined))(
      'WARNING: this model was made from RANDOM weights (jetprof make-weights): its detections are meaningless; the timings are real',
    );
  }
  const output = o.output === null ? undefined : (o.output ?? defaultOutputPath(o.video, o.backend));
  loadOpenCv(); // fail early, before the model load is timed
  o.nvtx.push('model-load');
  const t0 = process.hrtime.bigint();
  let session: DetectorSession;
  try {
    session = await openSession(o, modelPath, model, sidecar);
  } finally {
    o.nvtx.pop();
  }
  const modelLoadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  try {
    checkBatchFits(session, batch, o, modelPath);
  } catch (e) {
    await session.dispose();
    throw e;
  }
  const tegrastats = o.tegrastats ? startTegrastats(o.tegrastats.bin, o.tegrastats.intervalMs) : undefined;
  try {
    const loopOptions = {
      inFlight: o.inFlight,
      videoPath: o.video,
      modelName: o.engine ?? modelPath,
      outputPath: output,
      frameSize: o.frameSize,
      letterbox: o.letterbox,
      postprocess: o.postprocess,
      keepBoxes: !!o.detections,
      maxFrames: o.maxFrames,
      warmupFrames: o.warmupFrames,
      nvtx: o.nvtx,
      shouldStop: o.shouldStop,
      // --duration counts from the first frame the loop asks for (after the source opened), not from connecting
      shouldEnd: o.durationS === undefined ? undefined : durationClock(o.durationS * 1000),
      onFrame: o.onFrame,
      draw: o.draw,
    };
    // several streams: one turn-taking loop over all of them; one stream: the loop --pipeline chose
    const multi =
      o.streams && (o.streams.length > 1 || o.realtime || o.perf || o.interval)
        ? await runMultiStreamLoop(session, model, {
            ...loopOptions,
            streams: o.streams,
            realtime: o.realtime,
            perf: o.perf,
            interval: o.interval,
            batch,
            batchTimeoutMs: o.batchTimeoutMs,
          })
        : undefined;
    const loop = multi
      ? {
          tally: multi.tally,
          video: multi.first.video,
          frameSize: multi.first.frameSize,
          output: undefined,
          framesRead: multi.framesRead,
          interrupted: multi.interrupted,
          endOfStream: false,
        }
      : await (o.pipeline ? runPipelinedLoop : runFrameLoop)(session, model, loopOptions);
    if (loop.tally.frames === 0 && loop.interrupted) {
      throw new JetprofError(
        'INTERRUPTED',
        `${o.video}: stopped before the first measured frame (${loop.framesRead} read, --warmup ${o.warmupFrames}): nothing was measured, and the previous output files are kept as they were`,
        {
          exitCode: 130,
        },
      );
    }
    if (loop.tally.frames === 0 && !loop.interrupted) {
      throw new JetprofError(
        'BAD_VIDEO',
        `${o.video}: no frame was measured: it gave ${loop.framesRead} frame(s), all within --warmup ${o.warmupFrames}`,
        {
          suggestion: `use a longer video, or a smaller --warmup (e.g. --warmup ${Math.max(0, loop.framesRead - 1)})`,
        },
      );
    }
    if (loop.video.rotation) {
      o.onWarning(
        `${o.video}: carries rotation metadata (${loop.video.rotation}°, a phone video?): its frames were read as stored, not turned (OpenCV 4.6 turns some the wrong way); for upright frames, re-encode with the rotation applied: ffmpeg -i ${o.video} -c:v libx264 upright.mp4`,
      );
    }
    const out = loop.output;
    if (out?.width && out.height && (out.width !== loop.frameSize[0] || out.height !== loop.frameSize[1])) {
      o.onWarning(
        `${out.path}: written at ${out.width}x${out.height}, not the ${loop.frameSize[0]}x${loop.frameSize[1]} of the frames (${out.codec} encodes even sizes only; the run JSON records both); --frame-size ${loop.frameSize[0] - (loop.frameSize[0] % 2)}x${loop.frameSize[1] - (loop.frameSize[1] % 2)} writes the frames as measured`,
      );
    }
    const declared = loop.video.frameCount;
    if (
      !multi &&
      !loop.interrupted &&
      declared > 0 &&
      loop.framesRead < declared &&
      (o.maxFrames === undefined || loop.framesRead < o.maxFrames)
    ) {
      o.onWarning(
        `${o.video}: the stream ended after ${loop.framesRead} of the ${declared} frames its container declares (a cut or damaged file?); the figures cover the ${loop.framesRead} decoded`,
      );
    }
    // A live source (stream, camera) that stops sending is not a normal end: say when and why, here and in the JSON.
    const live = !['file', 'images'].includes(classifySource(o.video).kind);
    const endedEarly =
      live && loop.endOfStream && !loop.interrupted
        ? {
            afterS: Number(((loop.tally.lastEndMs ?? 0) / 1000).toFixed(3)),
            framesRead: loop.framesRead,
            reason: 'the source stopped sending frames (it closed, or the connection dropped)',
          }
        : undefined;
    if (endedEarly)
      o.onWarning(
        `${o.video}: ${endedEarly.reason} after ${endedEarly.afterS.toFixed(1)} s and ${endedEarly.framesRead} frames${o.durationS !== undefined ? ` (of --duration ${o.durationS} s)` : ''}; the figures cover those frames`,
      );
    const cv = loadOpenCv();
    const env = { ...baseEnv(), opencv: `${cv.version.major}.${cv.version.minor}.${cv.version.revision}` };
    if (o.backend === 'onnx') Object.assign(env, { onnxruntime: onnxRuntimeVersion() });
    else if (o.backend === 'tensorrt')
      Object.assign(env, { tensorrt: session.description.replace(/^TensorRT\s*/, '') });
    const precision: Precision =
      o.backend === 'tensorrt'
        ? sidecar?.precision || 'unknown'
        : o.backend === 'opencv' && o.fp16 && session.executionProvider === 'cuda'
          ? 'fp16'
          : 'fp32';
    const setupBase = {
      executionProvider: session.executionProvider,
      precision,
      // several streams: one sequential loop of batches (multi-stream-loop.ts)
      loop: o.pipeline && !multi ? ('pipelined' as const) : ('sequential' as const),
      ...(o.pipeline && !multi ? { inFlight: o.inFlight ?? 3 } : {}),
      profiler: o.profiler ?? 'none',
    };
    const onCpu = session.executionProvider === 'cpu';
    const { tally } = loop;
    const result = buildRunResult(tally.measured, tally.warmup, {
      backend: o.backend,
      backendDetail: session.description,
      setup: {
        label:
          o.label ??
          defaultLabel(o.backend, setupBase, {
            count: o.streams?.length ?? 1,
            interval: o.interval ?? 0,
            batch,
          }),
        ...setupBase,
        device: onCpu ? `CPU: ${env.cpu}` : `GPU: ${env.gpu ?? env.jetson?.model ?? 'NVIDIA GPU'}`,
      },
      model: {
        path: o.engine ?? modelPath,
        inputWidth: model.inputWidth,
        inputHeight: model.inputHeight,
        classes: model.classes,
        labels: model.labels,
        sha256: sha256File(o.engine ?? modelPath),
        onnxSha256: o.engine ? engineOnnxSha(sidecar, modelPath) : sha256File(modelPath),
        ...(model.source?.generatedWeights ? { generatedWeights: true } : {}),
      },
      video: {
        path: o.video,
        width: loop.video.width,
        height: loop.video.height,
        fps: loop.video.fps,
        frameCount: loop.video.frameCount,
        ...(loop.video.rotation ? { rotation: loop.video.rotation } : {}),
      },
      output: loop.output,
      frameSize: loop.frameSize,
      letterbox: o.letterbox,
      modelLoadMs,
      firstFrameMs: tally.firstFrameMs,
      postprocess: {
        conf: o.postprocess.confThreshold,
        nms: o.postprocess.nmsThreshold,
        nmsKind: o.postprocess.nmsKind,
        classMode: o.postprocess.classMode,
        maxCandidates: o.postprocess.maxCandidates,
        maxDet: o.postprocess.maxDet,
        framesCandidatesCapped: tally.framesCandidatesCapped,
        framesDetectionsCapped: tally.framesDetectionsCapped,
        maxCandidatesSeen: tally.maxCandidates,
      },
      detections: { total: tally.total, perClass: tally.perClass },
      nvtx: o.nvtx.enabled,
      env,
      startedAt,
      interrupted: loop.interrupted,
    });
    if (endedEarly) result.endedEarly = endedEarly;
    if (multi) {
      // the run's top-level figures are over every stream: end-to-end FPS is the aggregate (all frames / wall time)
      result.streams = multi.streams;
      result.aggregateFps = result.endToEndFps;
      result.batch = batch;
      const figures = batchFigures(multi.batches);
      if (figures) result.batches = figures;
      result.interval = o.interval ?? 0;
      result.inferredFrames = multi.inferredFrames;
      for (const s of multi.streams) {
        if (s.endedEarly)
          o.onWarning(
            `stream ${s.index} (${s.source}): ${s.endedEarly.reason}, after ${s.endedEarly.framesRead} frames`,
          );
      }
    }
    if (tegrastats && o.tegrastats) {
      const lines = await tegrastats.stop();
      const origin = tally.originNs ?? process.hrtime.bigint();
      const series = emptySeries(o.tegrastats.intervalMs);
      for (const l of lines) addLine(series, Number(l.tNs - origin) / 1e6, l.line);
      const pf = result.perFrame!;
      const summary = summarizeSeries(series, {
        startMs: pf.startMs[0] ?? 0,
        endMs: pf.endMs[pf.endMs.length - 1] ?? 0,
        frames: result.frames,
      });
      result.tegrastats = { command: tegrastats.command, series, summary };
      if (series.diagnostics.length)
        o.onWarning(
          `tegrastats printed ${series.diagnostics.length} line(s) that are not its statistics (kept in the run JSON), e.g. ${series.diagnostics[0].line.slice(0, 80)}`,
        );
    }
    const categoryIds = o.cocoCategoryIds ? COCO80_TO_COCO91 : undefined;
    const fromJson = (path: string) => relative(o.json ? dirname(resolve(o.json)) : process.cwd(), resolve(path));
    if (multi && o.streams && o.streams.length > 1) {
      // several streams: one COCO results file per stream (each stream counts its own frames)
      for (const [i, spec] of o.streams.entries()) {
        if (!spec.detectionsPath) continue;
        writeOutput(spec.detectionsPath, cocoResultsJson(multi.boxes[i], categoryIds));
        multi.streams[i].detectionsFile = fromJson(spec.detectionsPath);
      }
    } else if (o.detections) {
      writeOutput(o.detections, cocoResultsJson(multi ? multi.boxes[0] : tally.boxes, categoryIds));
      result.detectionsFile = fromJson(o.detections);
    }
    if (o.json) writeOutput(o.json, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    await tegrastats?.stop();
    await session.dispose();
  }
}
