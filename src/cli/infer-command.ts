/**
 * `infer [--backend onnx|trt|opencv] <video>`: the commander program shared by `infer`, `infer-onnx`, `infer-trt` and
 * `jetprof infer`. Declares options, normalises them, calls the core, prints the summary.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { VIDEO_IO_CHOICES, type VideoIo } from '../video/gstreamer.ts';
import { postprocessOf } from '../detect/postprocess.ts';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { classifySource, isLive, sourceStem } from '../video/sources.ts';
import type { OnnxExecutionProvider } from '../backends/onnx.ts';
import { backendByAlias, BACKENDS, type BackendName } from '../backends/types.ts';
import type { ClassMode } from '../detect/decode.ts';
import type { NmsKind } from '../detect/nms.ts';
import { DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_DET } from '../detect/postprocess.ts';
import { loadNvtx, disabledNvtx } from '../pipeline/nvtx.ts';
import { type PipelineMode } from '../pipeline/loop-choice.ts';
import { openCvHasCuda } from '../backends/opencv.ts';
import { loadOpenCv } from '../video/opencv.ts';
import { findTegrastats } from '../platform/tegrastats-runner.ts';
import { capNotes, formatSummary, isCompleteRun, type ProfilerName, type RunResult } from '../pipeline/run-result.ts';
import { buildRunSet, formatRunSet, repeatPath } from '../pipeline/runset.ts';
import { JetprofError } from '../util/errors.ts';
import { defaultOutputPath, type InferOptions, runInference } from '../pipeline/infer.ts';
import { PLAN_DEFAULTS, planRun, type RunPlan } from '../pipeline/run-plan.ts';
import type { InferArgFacts } from '../pipeline/infer-args.ts';
import type { StreamSpec } from '../pipeline/loop-io.ts';
import { labelsFileOf } from '../model/export-file.ts';
import { claimOutputs, writeOutput } from '../output/output.ts';
import { requireWritableDir } from '../util/files.ts';
import { handleError } from './handle-error.ts';
import { helpAfter, wrapProse } from './help-text.ts';
import { collect, parseFraction, parseIntInRange, parseSize, parseSourceFps } from './options.ts';
import { createProgress } from './progress.ts';

interface InferCliOptions {
  backend: BackendName;
  modelAlone: number;
  model?: string;
  cfg?: string;
  weights?: string;
  engine?: string;
  plugin: string[];
  labels?: string;
  cacheDir?: string;
  strict: boolean;
  output?: string;
  write: boolean;
  json?: string;
  heads?: string;
  conf: number;
  nms: number;
  nmsKind: NmsKind;
  classMode: ClassMode;
  maxCandidates: number;
  maxDet: number;
  label?: string;
  repeat: number;
  streams: number;
  outputDir?: string;
  realtime: boolean;
  sourceFps?: number;
  perfInterval?: number;
  draw: boolean;
  videoIo: VideoIo;
  interval: number;
  batch?: number;
  batchTimeout?: number;
  profilerAttached?: ProfilerName;
  fp16: boolean;
  tegrastats: boolean;
  tegrastatsInterval: number;
  detections?: string;
  cocoCategoryIds: boolean;
  letterbox: boolean;
  frameSize?: [number, number];
  maxFrames?: number;
  duration?: number;
  warmup: number;
  threads?: number;
  ep: OnnxExecutionProvider;
  nvtx: boolean;
  quiet: boolean;
  pipeline: PipelineMode;
  inFlight: number;
}

/** Which model and engine, and where the annotated video goes. */
function addModelOptions(cmd: Command): void {
  cmd
    .option('-m, --model <file.onnx>', 'ONNX model exported by `jetprof export` (carries anchors and labels)')
    .option('--cfg <file.cfg>', 'darknet cfg (with --weights: exported once, cached beside the weights)')
    .option('--weights <file.weights>', 'darknet weights')
    .option(
      '--cache-dir <dir>',
      'where the ONNX exported from --cfg/--weights is cached (default: beside the weights as <weights>.onnx; $XDG_CACHE_HOME/jetprof when that folder is read-only)',
    )
    .option(
      '--engine <file.trt>',
      'serialized TensorRT engine (trt backend; its YOLO metadata comes from --model/--cfg or the ONNX named in <engine>.json)',
    )
    .option(
      '--plugin <lib.so>',
      "TensorRT plugin library to load first, e.g. tensorrt_demos' plugins/libyolo_layer.so (repeatable)",
      collect,
      [] as string[],
    )
    .option('--strict', 'a cfg key darknet does not know (a typo such as activaton=) is an error, not a warning', false)
    .option('--labels <file.names>', 'class names, one per line (default: <cfg>.names beside the cfg)')
    .option('-o, --output <file.mp4>', 'annotated video (default ./<video>-<onnx|tensorrt|opencv>-detected.mp4)')
    .option('--no-write', 'do not draw or write a video (measures the pipeline without encoding)');
}

/** Several streams, batches, pacing, and the run JSON. */
function addStreamOptions(cmd: Command): void {
  cmd
    .option(
      '--streams <n>',
      "run each source as n streams (the DeepStream samples' load test), in batches of one frame per stream (--batch); at most 64 streams in all",
      parseIntInRange('--streams', 1, 64),
      1,
    )
    .option(
      '--batch <b>',
      'frames per run of the model: one from each of up to b streams (default: the number of streams; 1: the streams take turns); a TensorRT engine runs the batch it was built for (build-engine --batch)',
      parseIntInRange('--batch', 1, 64),
    )
    .option(
      '--batch-timeout <ms>',
      "live sources and --realtime files: a batch not yet full waits at most this long after its first frame for the other streams' frames, so a slow camera does not hold up the rest (default: one frame time of the fastest source)",
      parseIntInRange('--batch-timeout', 1, 60_000),
    )
    .option(
      '--interval <k>',
      "run the model on every (k+1)-th frame of each stream; between, an IoU tracker carries the boxes (DeepStream's interval); detections carry track_id",
      parseIntInRange('--interval', 0, 100),
      0,
    )
    .addOption(
      new Option(
        '--video-io <how>',
        "how video files are decoded and the annotated video encoded. gstreamer: GStreamer pipelines, on a Jetson through the board's hardware (nvv4l2decoder, nvvidconv ! nvv4l2h264enc), elsewhere software (avdec_h264, x264enc tune=zerolatency threads=1). ffmpeg: OpenCV's FFmpeg reader and writer (libx264 with its look-ahead). auto: the board's decoder for H.264/H.265 files where it exists, else FFmpeg; GStreamer's writer where this OpenCV has it and the frame size is even, else FFmpeg; the run says why not. GStreamer decodes on its own thread, a frame ahead of the loop, so there the read stage holds the hand-over of a decoded frame, not the decoding. The run JSON names the decoder and encoder, and reports keep setups that differ in them apart. In the sequential loop each write waits until the encoder's threads are idle, so the write stage holds the encoding and the inference stage does not; the pipelined loop lets them overlap",
      )
        .choices(VIDEO_IO_CHOICES)
        .default('auto'),
    )
    .option(
      '--no-draw',
      "write the frames without boxes or overlay (DeepStream's 'without OSD'), to see what drawing costs",
    )
    .option(
      '--perf-interval <s>',
      "with several streams: each stream's FPS every s seconds on stderr (over the interval, and since the start), as deepstream-app's **PERF lines",
      parseIntInRange('--perf-interval', 1, 3600),
    )
    .option(
      '--realtime',
      'read files at their own frame rate, as a camera delivers frames: frames that arrive while the pipeline is busy are dropped and counted',
      false,
    )
    .option(
      '--source-fps <fps>',
      "with --realtime: the pace of every source (default: each file's own frame rate), 0.1 to 1000",
      parseSourceFps('--source-fps'),
    )
    .option(
      '--output-dir <dir>',
      "where the default outputs go: <stem>-<backend>-detected.mp4 (or an image folder's <folder>-<backend>-detected/), and with several streams <stem>-<i>-<backend>-detected.mp4 (default: the current folder)",
    )
    .option('--json <file>', 'write the run result (schema jetprof.run/2); - for stdout');
}

/** Decoding and NMS: thresholds, kinds and caps. */
function addPostprocessOptions(cmd: Command): void {
  cmd
    .option('--conf <0..1>', 'keep boxes with objectness x class probability above this', parseFraction('--conf'), 0.3)
    .option('--nms <0..1>', 'NMS overlap threshold', parseFraction('--nms'), 0.5)
    .addOption(
      new Option('--nms-kind <kind>', 'iou: greedy per-class IoU (tensorrt_demos); diou: darknet greedynms')
        .choices(['iou', 'diou'])
        .default('iou'),
    )
    .addOption(
      new Option(
        '--class-mode <mode>',
        "multi: every class with objectness x p > --conf is a candidate (darknet's rule); best: only each box's best class (OpenCV's and Ultralytics' rule)",
      )
        .choices(['multi', 'best'])
        .default('multi'),
    )
    .option(
      '--max-candidates <n>',
      'at most n candidates (the highest scores) enter NMS; binds only when a model fires almost everywhere (e.g. --conf 0.001); the run JSON counts the frames where it bound',
      parseIntInRange('--max-candidates', 1),
      DEFAULT_MAX_CANDIDATES,
    )
    .option(
      '--max-det <n>',
      'at most n boxes kept per frame after NMS, the highest scores (COCO evaluation uses 100)',
      parseIntInRange('--max-det', 1),
      DEFAULT_MAX_DET,
    );
}

/** How the run is repeated, labelled, sized, timed, threaded and looped; profiler and console settings. */
function addRunOptions(cmd: Command): void {
  cmd
    .option(
      '--repeat <n>',
      'run the whole job n times: with --json R.json, runs go to R-1.json ... R-n.json and their spread to R.json (jetprof.runset/1)',
      parseIntInRange('--repeat', 1, 1000),
      1,
    )
    .option(
      '--label <name>',
      'names this run in reports (default: backend-precision-provider-loop, e.g. onnx-fp32-cpu-pipelined3)',
    )
    .addOption(
      new Option('--profiler-attached <tool>', 'set by jetprof profile: the FPS were measured under this profiler')
        .choices(['nsys', 'nvprof'])
        .hideHelp(),
    )
    .addOption(
      new Option(
        '--heads <file>',
        "set by jetprof selftest: the first frames' raw head outputs (pipeline/heads-file.ts)",
      ).hideHelp(),
    )
    .option(
      '--letterbox',
      'keep the aspect ratio and pad; without it frames are stretched to the network size, like darknet and the lab',
    )
    .option(
      '--frame-size <WxH>',
      'resize frames first, e.g. 960x540 as in the lab (default: the video size; 32x32 to 8192x8192)',
      parseSize('--frame-size', 32, 8192),
    )
    .option(
      '--duration <s>',
      'end after s seconds of frames (for a camera or stream, which never end by themselves); the run ends normally, exit 0',
      parseIntInRange('--duration', 1, 10_000_000),
    )
    .option('--max-frames <n>', 'stop after n frames (warm-up included)', parseIntInRange('--max-frames', 1))
    .option('--warmup <n>', 'frames run but excluded from all statistics', parseIntInRange('--warmup', 0), 5)
    .option(
      '--threads <n>',
      'ONNX Runtime intra-op threads (default: one per core)',
      parseIntInRange('--threads', 1, 256),
    )
    .addOption(
      new Option(
        '--ep <provider>',
        'execution provider: ONNX Runtime cpu|cuda|tensorrt, OpenCV DNN cpu|cuda (DNN_BACKEND_CUDA); falls back to cpu with a warning',
      )
        .choices(['cpu', 'cuda', 'tensorrt'])
        .default('cpu'),
    )
    .option('--fp16', 'OpenCV DNN with --ep cuda: DNN_TARGET_CUDA_FP16', false)
    .option(
      '--detections <file.json>',
      'write every box in COCO results format ([{image_id: frame, category_id, bbox: [x, y, w, h], score}], warm-up frames marked) for jetprof agree / map; with several streams, stream i writes <file>-i.json',
    )
    .option(
      '--coco-category-ids',
      "with --detections: category_id as COCO's 1..90 ids (an 80-class COCO model) instead of the class index",
      false,
    )
    .addOption(
      new Option(
        '--pipeline <auto|on|off>',
        "on: read/preprocess, inference and postprocess/write overlap (ORT in a worker thread); off: one frame at a time, every stage in series (the lab's loop); auto: on when the model runs on the GPU, off when it runs on the CPU and takes its cores",
      )
        .choices(['auto', 'on', 'off'])
        .default('auto'),
    )
    .option(
      '--in-flight <n>',
      'frames in flight in the pipelined loop',
      parseIntInRange('--in-flight', 1, 16),
      PLAN_DEFAULTS.inFlight,
    )
    .option(
      '--no-tegrastats',
      'do not record tegrastats beside the run (default: recorded when tegrastats exists, i.e. on a Jetson)',
    )
    .option(
      '--tegrastats-interval <ms>',
      'tegrastats sampling interval',
      parseIntInRange('--tegrastats-interval', 10, 60_000),
      200,
    )
    .option('--no-nvtx', 'do not emit NVTX ranges (they cost nothing without a profiler)')
    .option(
      '--model-alone <n>',
      "after the loop, time the model by itself: n back-to-back runs on its last input (at most about 1 s), reported beside the loop's inference stage as trtexec reports a bare engine; 0 skips it (so does a profiled run: its call counts stay the loop's)",
      parseIntInRange('--model-alone', 0, 1000),
      PLAN_DEFAULTS.modelAloneRuns,
    )
    .option('-q, --quiet', 'no progress line, no summary, no notes (warnings still print)', false);
}

/** infer --help's examples; the backend-specific ones only where that backend can run. */
function inferExamples(name: string, fixedBackend?: BackendName): { cmd: string; note?: string }[] {
  return [
    {
      cmd: `${name} videos/vtest.avi --cfg weights/yolov4-tiny.cfg --weights weights/yolov4-tiny.weights --frame-size 960x540 --json runs/onnx.json`,
    },
    ...(fixedBackend === undefined || fixedBackend === 'tensorrt'
      ? [
          {
            cmd: `${fixedBackend ? name : `${name} --backend trt`} videos/vtest.avi --engine engines/yolov4-tiny.trt --model weights/yolov4-tiny.onnx --json runs/trt.json`,
          },
        ]
      : []),
    ...(fixedBackend === undefined || fixedBackend === 'opencv'
      ? [
          {
            cmd: `${fixedBackend ? name : `${name} --backend opencv`} videos/vtest.avi --model weights/yolov4-tiny.onnx --detections runs/opencv-dets.json --json runs/opencv.json`,
          },
        ]
      : []),
    {
      cmd: `${name} videos/vtest.avi --model weights/yolov4-tiny.onnx --repeat 5 --json runs/onnx.json`,
      note: '5 runs and their spread',
    },
    {
      cmd: `${name} rtsp://192.168.1.20:8554/cam --model weights/yolov4-tiny.onnx --duration 60`,
      note: 'a stream, for a minute',
    },
    {
      cmd: `${name} csi://0 --model weights/yolov4-tiny.onnx --duration 30 -o csi.mp4`,
      note: 'a Jetson CSI camera',
    },
    { cmd: `${name} images/ --model weights/yolov4-tiny.onnx`, note: 'a folder in, annotated images out' },
  ];
}

export function inferCommand(name: string, fixedBackend?: BackendName): Command {
  const cmd = new Command(name)
    .summary(
      fixedBackend
        ? `YOLOv4-Tiny on a video through ${BACKENDS[fixedBackend].title}`
        : 'YOLOv4-Tiny on a video through ONNX Runtime, TensorRT or OpenCV DNN',
    )
    .description(
      [
        'Runs YOLOv4-Tiny on every frame of a video, draws the detections into <video>-<backend>-detected.mp4, and reports two speeds side by side:',
        '  inference FPS  = frames / time spent in the model only',
        '  end-to-end FPS = frames / wall time of read + preprocess + inference + postprocess + write',
        'with per-stage mean/p50/p90/p99. Warm-up frames (--warmup) are left out of both.',
      ].join('\n'),
    )
    .argument(
      '<video...>',
      'a video file (mp4, avi, ...), rtsp://... or http://..., /dev/videoN, csi://N (Jetson CSI camera), gst:PIPELINE, or a folder of images; several sources run as streams through one model, in batches (per-stream figures and videos)',
    );
  if (!fixedBackend) {
    cmd.addOption(
      new Option('-b, --backend <name>', 'onnx (ONNX Runtime), trt (TensorRT engine) or opencv (OpenCV DNN)')
        .default('onnx')
        .argParser((v) => {
          const b = backendByAlias(v);
          if (!b) throw new InvalidArgumentError(`--backend must be onnx, trt or opencv, got '${v}'`);
          return b;
        }),
    );
  }
  addModelOptions(cmd);
  addStreamOptions(cmd);
  addPostprocessOptions(cmd);
  addRunOptions(cmd);
  cmd
    .addHelpText(
      'after',
      helpAfter(inferExamples(name, fixedBackend), [
        'Exit codes: 0 done, 2 bad input (one line says which file and the fix), 130 interrupted (Ctrl-C, SIGTERM or SIGHUP: the video and JSON are still finalized with "interrupted": true; a second signal does not cut that short).',
      ]),
    )
    .action(async (videos: string[], opts: InferCliOptions) => {
      process.exitCode = await inferAction(videos, { ...opts, backend: fixedBackend ?? opts.backend });
    });
  return cmd;
}

/** Prose lines wrapped at word boundaries to the terminal (80 columns, or wider); table rows left whole. */
function fitText(text: string): string {
  return text
    .split('\n')
    .map((l) => (l.startsWith('|') ? l : wrapProse(l)))
    .join('\n');
}

/** Contradictory or impossible options: refused before anything runs, one line each. */
function refuseBadOptions(o: InferCliOptions): void {
  if (o.maxFrames !== undefined && o.maxFrames <= o.warmup) {
    throw new JetprofError(
      'BAD_OPTION',
      `--max-frames ${o.maxFrames} leaves no frame to measure after --warmup ${o.warmup}`,
      {
        suggestion: `pass --max-frames ${o.warmup + 1} or more, or a smaller --warmup`,
      },
    );
  }
  if (o.model && (o.cfg || o.weights)) {
    throw new JetprofError(
      'BAD_OPTION',
      `--model ${o.model} and --cfg/--weights both name a model: which one to run is ambiguous`,
      {
        suggestion:
          "pass --model M.onnx alone, or --cfg C.cfg --weights W.weights alone (OpenCV DNN's darknet importer takes the latter)",
      },
    );
  }
  if (o.model && o.labels) {
    throw new JetprofError(
      'BAD_OPTION',
      `--labels ${o.labels} would be ignored: ${o.model} carries the labels it was exported with`,
      {
        suggestion: `export again with them: jetprof export --cfg C.cfg --weights W.weights --labels ${o.labels} --out ${o.model}`,
      },
    );
  }
  if (o.backend === 'opencv' && o.ep === 'tensorrt') {
    throw new JetprofError(
      'BAD_OPTION',
      '--ep tensorrt is an ONNX Runtime provider; OpenCV DNN takes --ep cpu or cuda',
      { suggestion: 'use --backend trt with an engine for TensorRT' },
    );
  }
}

/** What one run of the job needs besides infer's options: where its JSON goes, the loop chosen, and the console. */
interface RunContext {
  json?: string;
  plan: RunPlan;
  nvtx: InferOptions['nvtx'];
  tegrastatsBin?: string;
  shouldStop: () => boolean;
  onWarning: InferOptions['onWarning'];
  onInfo: NonNullable<InferOptions['onInfo']>;
  onFrame: NonNullable<InferOptions['onFrame']>;
}

/** infer's command-line options mapped to the job's settings, in one place; `k` is the run of --repeat. */
function jobSettings(o: InferCliOptions, k: number, run: RunContext, specs: StreamSpec[]): InferOptions {
  // --repeat (one stream): every run writes its own video and boxes (out-1.mp4 ... out-N.mp4), as its own JSON
  const streams =
    o.repeat > 1
      ? specs.map((s) => ({
          ...s,
          outputPath: s.outputPath && repeatPath(s.outputPath, k),
          detectionsPath: s.detectionsPath && repeatPath(s.detectionsPath, k),
        }))
      : specs;
  return {
    backend: o.backend,
    model: o.model,
    cfg: o.cfg,
    weights: o.weights,
    labels: o.labels,
    cacheDir: o.cacheDir,
    strictCfg: o.strict,
    engine: o.engine,
    plugins: o.plugin,
    streams,
    ...(o.realtime ? { realtime: { fps: o.sourceFps } } : {}),
    ...(o.interval > 0 ? { interval: o.interval } : {}),
    plan: run.plan,
    ...(o.batchTimeout !== undefined ? { batchTimeoutMs: o.batchTimeout } : {}),
    ...(o.perfInterval
      ? { perf: { everyS: o.perfInterval, onPerf: (line: string) => process.stderr.write(`${line}\n`) } }
      : {}),
    draw: o.draw,
    videoIo: o.videoIo,
    json: run.json,
    headsFile: o.heads,
    postprocess: postprocessOf(o),
    label: o.label,
    profiler: o.profilerAttached,
    fp16: o.fp16,
    tegrastats: run.tegrastatsBin ? { bin: run.tegrastatsBin, intervalMs: o.tegrastatsInterval } : undefined,
    cocoCategoryIds: o.cocoCategoryIds,
    letterbox: o.letterbox ?? false,
    frameSize: o.frameSize,
    maxFrames: o.maxFrames,
    durationS: o.duration,
    warmupFrames: o.warmup,
    threads: o.threads,
    executionProvider: o.ep,
    nvtx: run.nvtx,
    shouldStop: run.shouldStop,
    onWarning: run.onWarning,
    onInfo: run.onInfo,
    onFrame: run.onFrame,
  };
}

/**
 * The run's streams, each source classified once here: one source writes --output (default
 * `<stem>-<backend>-detected.mp4`) and --detections; several (`infer A B`, `--streams N`: each source repeated N
 * times) write stream i's `<stem>-<i>-<backend>-detected.mp4` into --output-dir and `dets-i.json`.
 */
function streamSpecs(videos: string[], o: InferCliOptions): StreamSpec[] {
  const sources = videos.flatMap((v) => Array.from({ length: o.streams }, () => v));
  if (sources.length === 1) {
    const arg = classifySource(sources[0]);
    return [
      {
        source: sources[0],
        arg,
        // --output-dir names the folder of the default output for one source too (a video, or an image folder's images)
        outputPath: o.write
          ? (o.output ??
            (o.outputDir
              ? join(resolve(o.outputDir), basename(defaultOutputPath(sources[0], o.backend, arg)))
              : defaultOutputPath(sources[0], o.backend, arg)))
          : undefined,
        detectionsPath: o.detections,
      },
    ];
  }
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
  return sources.map((source, i) => ({
    source,
    arg: args.get(source)!,
    outputPath: o.write
      ? join(
          resolve(o.outputDir ?? '.'),
          `${sourceStem(source, args.get(source))}-${i}-${BACKENDS[o.backend].outputSuffix}-detected.mp4`,
        )
      : undefined,
    // --detections dets.json: stream i's boxes go to dets-i.json
    detectionsPath: o.detections ? repeatPath(o.detections, i) : undefined,
  }));
}

/** More streams than this in one run is refused (DeepStream's samples go to 30-something on Orin). */
const MAX_STREAMS = 64;

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

/** Stream, batch and pacing options that contradict the run's sources: refused before anything runs. */
function refuseBadStreamOptions(o: InferCliOptions, specs: StreamSpec[]): void {
  const streamCount = specs.length;
  if (o.batch !== undefined && o.batch > streamCount) {
    throw new JetprofError(
      'BAD_OPTION',
      `--batch ${o.batch} is more than the ${streamCount} stream${streamCount === 1 ? '' : 's'} of this run: a batch takes one frame from each stream`,
      { suggestion: `pass --batch ${streamCount} or less, or more streams (--streams N)` },
    );
  }
  const liveSource = specs.some((s) => isLive(s.arg.kind));
  if (o.batchTimeout !== undefined && !o.realtime && !liveSource) {
    throw new JetprofError('BAD_OPTION', '--batch-timeout paces batches of live sources and of --realtime files', {
      suggestion: 'add --realtime (files are otherwise read at once, so a batch never waits)',
    });
  }
  if (o.sourceFps !== undefined && !o.realtime) {
    throw new JetprofError('BAD_OPTION', '--source-fps paces the sources of --realtime', {
      suggestion: 'add --realtime',
    });
  }
  // a folder of images has no frame rate of its own: it would be paced at 1 FPS without a word
  const folder = specs.find((s) => s.arg.kind === 'images');
  if (o.realtime && o.sourceFps === undefined && folder) {
    throw new JetprofError('BAD_OPTION', `${folder.source}: a folder of images has no frame rate for --realtime`, {
      suggestion: 'give the rate its camera delivered, e.g. --source-fps 10',
    });
  }
}

/** No output may be an input of the run, nor another output, and every output's folder must be writable: checked before anything runs. */
function claimRunFiles(o: InferCliOptions, specs: StreamSpec[]): void {
  const jsonToStdout = o.json === '-';
  if (o.json && !jsonToStdout) requireWritableDir(o.json, '--json');
  if (o.detections) requireWritableDir(o.detections, '--detections');
  // No output may be an input of the run, nor another output: checked before anything runs.
  const [first] = specs;
  if (first.arg.kind === 'images' && first.outputPath && resolve(first.outputPath) === resolve(first.source)) {
    throw new JetprofError('BAD_OUTPUT', `${first.outputPath}: the annotated images would overwrite the input images`, {
      suggestion: 'give --output another folder',
    });
  }
  const several = specs.length > 1;
  // the videos' folder: --output-dir with several streams (or when given), --output with one
  const videoOption = several || o.outputDir ? '--output-dir' : '--output';
  const videos = specs.filter((s) => s.outputPath && s.arg.kind !== 'images').map((s) => s.outputPath!);
  for (const dir of new Set(videos.map((v) => dirname(resolve(v)))))
    requireWritableDir(
      videos.find((v) => dirname(resolve(v)) === dir)!,
      videoOption,
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
    {
      ...(several
        ? Object.fromEntries(specs.filter((s) => s.outputPath).map((s, i) => [`stream ${i} video`, s.outputPath]))
        : { 'output video': first.arg.kind === 'images' ? undefined : first.outputPath }),
      'run JSON': jsonToStdout ? undefined : o.json,
      'heads file': o.heads,
      ...(several
        ? Object.fromEntries(
            specs.filter((s) => s.detectionsPath).map((s, i) => [`stream ${i} detections`, s.detectionsPath]),
          )
        : { 'detections file': first.detectionsPath }),
    },
  );
}

/**
 * What a run needs before its first frame, decided once for the command and for runInferArgs: the options checked,
 * the streams (each source classified once), the files claimed, NVTX, tegrastats, and the loop.
 */
function prepareRun(videos: string[], o: InferCliOptions) {
  refuseBadOptions(o);
  const specs = streamSpecs(videos, o);
  refuseBadStreamOptions(o, specs);
  claimRunFiles(o, specs);
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
  return { specs, nvtx, tegrastatsBin, plan };
}

/**
 * Infer's arguments parsed by infer's own declaration of its options (the one parser: infer, runInferArgs, and the
 * commands that launch infer all use it). A bad argument is the one-line error infer itself would give, before
 * anything starts.
 */
export async function parseInferArgs(
  args: string[],
  fixedBackend?: BackendName,
): Promise<{ videos: string[]; o: InferCliOptions; given: string[] }> {
  const cmd = inferCommand('infer', fixedBackend);
  let parsed: { videos: string[]; o: InferCliOptions } | undefined;
  let said = '';
  cmd.exitOverride().configureOutput({ writeErr: (m) => (said += m), writeOut: () => undefined });
  cmd.action((videos: string[], o: InferCliOptions) => {
    parsed = { videos, o };
  });
  try {
    await cmd.parseAsync(args, { from: 'user' });
  } catch (e) {
    if ((e as { code?: string }).code === 'commander.missingArgument')
      throw new JetprofError('BAD_OPTION', 'no video among the infer arguments', {
        suggestion: 'name the video (or camera, stream, image folder) first: -- videos/vtest.avi --model M.onnx',
      });
    const line =
      said
        .trim()
        .split('\n')[0]
        ?.replace(/^error: /, '') || (e as Error).message;
    throw new JetprofError('BAD_OPTION', `infer arguments: ${line}`, {
      suggestion: 'infer --help lists its options',
    });
  }
  const given = cmd.options
    .filter((opt) => cmd.getOptionValueSource(opt.attributeName()) === 'cli')
    .map((opt) => opt.long ?? opt.short ?? '');
  return { ...parsed!, given };
}

/** The facts compare, capacity and profile need of the infer arguments they pass on (pipeline/infer-args.ts). */
export async function inferArgFacts(args: string[], fixedBackend?: BackendName): Promise<InferArgFacts> {
  const { videos, o, given } = await parseInferArgs(args, fixedBackend);
  return {
    videos,
    model: o.model,
    cfg: o.cfg,
    weights: o.weights,
    labels: o.labels,
    engine: o.engine,
    pipeline: given.includes('--pipeline') ? o.pipeline : undefined,
    threads: o.threads,
    ep: o.ep,
    batch: o.batch,
    json: o.json,
    videoIo: o.videoIo,
    outputGiven: given.includes('--output') || !o.write,
    given,
  };
}

/**
 * One run of infer in this process, from the arguments the command takes (`['clip.mp4', '--model', 'm.onnx', '--json',
 * 'r.json']`): the same checks, settings and files as the command, its RunResult returned instead of printed. One run
 * (--repeat is the command's), no signal handling and no progress line; warnings go to `onWarning`. For Node scripts,
 * and for tests that read only the run.
 */
export async function runInferArgs(
  args: string[],
  onWarning: (message: string) => void = (m) => process.stderr.write(`infer: ${m}\n`),
): Promise<RunResult> {
  const { videos, o } = await parseInferArgs(args);
  const { specs, nvtx, tegrastatsBin, plan } = prepareRun(videos, o);
  const context: RunContext = {
    json: o.json,
    plan,
    nvtx,
    tegrastatsBin,
    shouldStop: () => false,
    onWarning,
    onInfo: () => undefined,
    onFrame: () => undefined,
  };
  return runInference(jobSettings(o, 1, context, specs));
}

async function inferAction(videos: string[], o: InferCliOptions): Promise<number> {
  const program = 'infer';
  const signals = trapStopSignals();
  const stopRequested = () => signals.stopRequested;
  let progress = createProgress(!o.quiet);
  try {
    const { specs, nvtx, tegrastatsBin, plan } = prepareRun(videos, o);
    const { loop } = plan;
    const jsonToStdout = o.json === '-';
    if (tegrastatsBin && !o.quiet)
      process.stderr.write(
        `${program}: recording ${tegrastatsBin} every ${o.tegrastatsInterval} ms beside the run (--no-tegrastats to skip)\n`,
      );
    if (loop.why && !o.quiet)
      process.stderr.write(
        `${program}: ${loop.pipelined ? 'pipelined' : 'sequential'} loop (${o.pipeline === 'auto' ? '--pipeline auto: ' : `--pipeline ${o.pipeline}: `}${loop.why})\n`,
      );
    const runs: RunResult[] = [];
    const files: string[] = [];
    for (let k = 1; k <= o.repeat && !stopRequested(); k++) {
      if (k > 1) progress = createProgress(!o.quiet);
      if (o.repeat > 1 && !o.quiet) process.stderr.write(`${program}: run ${k} of ${o.repeat}\n`);
      // the run JSON: its own file per run of --repeat; stdout (`-`) takes the spread of several runs instead
      const json =
        o.json && (jsonToStdout ? (o.repeat > 1 ? undefined : '-') : o.repeat > 1 ? repeatPath(o.json, k) : o.json);
      const settings = jobSettings(
        o,
        k,
        {
          json,
          plan,
          nvtx,
          tegrastatsBin,
          shouldStop: stopRequested,
          onWarning: (m) => process.stderr.write(`${program}: ${m}\n`),
          onInfo: (m) => {
            if (!o.quiet && k === 1) process.stderr.write(`${program}: ${m}\n`);
          },
          onFrame: (p) => progress.update(p),
        },
        specs,
      );
      const result = await runInference(settings);
      progress.done();
      runs.push(result);
      if (json && !jsonToStdout) files.push(json);
      if (k === 1) for (const n of capNotes(result)) process.stderr.write(`${program}: note: ${n}\n`);
      if (k === 1 && result.video.decoderNote) process.stderr.write(`${program}: note: ${result.video.decoderNote}\n`);
      if (k === 1 && result.output?.encoderNote)
        process.stderr.write(`${program}: note: ${result.output.encoderNote}\n`);
      if (!o.quiet) {
        // the table and the summary are the result: stdout (so `infer ... > out.txt` keeps them), unless the JSON goes there
        (jsonToStdout ? process.stderr : process.stdout).write(`${fitText(formatSummary(result))}\n`);
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
        o.json && !jsonToStdout ? files.map((f) => relative(dirname(resolve(o.json!)), resolve(f))) : undefined,
      );
      if (!o.quiet) (jsonToStdout ? process.stderr : process.stdout).write(`${formatRunSet(set)}\n`);
      if (jsonToStdout) process.stdout.write(`${JSON.stringify(set, null, 2)}\n`);
      else if (o.json) {
        writeOutput(o.json, `${JSON.stringify(set, null, 2)}\n`);
        if (!o.quiet) process.stderr.write(`wrote ${o.json} (the spread of ${set.runs} runs)\n`);
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
