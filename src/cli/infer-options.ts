/**
 * infer's options, declared once (commander) and parsed once: the entry scripts, `jetprof infer`, runInferArgs, and
 * the commands that pass infer arguments on (compare, capacity, profile, through `inferArgFacts`) all read them here.
 */
import { Command, InvalidArgumentError, Option, type OptionValues } from '@commander-js/extra-typings';
import { VIDEO_IO_CHOICES } from '../video/gstreamer.ts';
import { backendByAlias, BACKENDS, type BackendName } from '../backends/types.ts';
import { DEFAULT_MAX_CANDIDATES, DEFAULT_MAX_DET } from '../detect/postprocess.ts';
import { JetprofError } from '../util/errors.ts';
import { PLAN_DEFAULTS } from '../pipeline/run-plan.ts';
import { INFER_FLAGS as F, type InferArgFacts } from '../pipeline/infer-args.ts';
import { helpAfter } from './help-text.ts';
import { collect, parseFraction, parseIntInRange, parseSize, parseSourceFps } from './options.ts';
import { FRAME_SIZE_MAX, FRAME_SIZE_MIN } from '../video/frame-size.ts';

/** Which model and engine, and where the annotated video goes. */
function addModelOptions<A extends unknown[], O extends OptionValues>(cmd: Command<A, O>) {
  return cmd
    .option(`-m, ${F.model} <file.onnx>`, 'ONNX model exported by `jetprof export` (carries anchors and labels)')
    .option('--cfg <file.cfg>', 'darknet cfg (with --weights: exported once, cached beside the weights)')
    .option('--weights <file.weights>', 'darknet weights')
    .option(
      '--cache-dir <dir>',
      'where the ONNX exported from --cfg/--weights is cached (default: beside the weights as <weights>.onnx; $XDG_CACHE_HOME/jetprof when that folder is read-only)',
    )
    .option(
      `${F.engine} <file.trt>`,
      'serialized TensorRT engine (trt backend; its YOLO metadata comes from --model/--cfg or the ONNX named in <engine>.json)',
    )
    .option(
      `${F.plugin} <lib.so>`,
      "TensorRT plugin library to load first, e.g. tensorrt_demos' plugins/libyolo_layer.so (repeatable)",
      collect,
      [] as string[],
    )
    .option('--strict', 'a cfg key darknet does not know (a typo such as activaton=) is an error, not a warning', false)
    .option('--labels <file.names>', 'class names, one per line (default: <cfg>.names beside the cfg)')
    .option(`-o, ${F.output} <file.mp4>`, 'annotated video (default ./<video>-<onnx|tensorrt|opencv>-detected.mp4)')
    .option(F.write, 'do not draw or write a video (measures the pipeline without encoding)');
}

/** Several streams, batches, pacing, and the run JSON. */
function addStreamOptions<A extends unknown[], O extends OptionValues>(cmd: Command<A, O>) {
  return cmd
    .option(
      `${F.streams} <n>`,
      "run each source as n streams (the DeepStream samples' load test), in batches of one frame per stream (--batch); at most 64 streams in all",
      parseIntInRange(F.streams, 1, 64),
      1,
    )
    .option(
      `${F.batch} <b>`,
      'frames per run of the model: one from each of up to b streams (default: the number of streams; 1: the streams take turns); a TensorRT engine runs the batch it was built for (build-engine --batch)',
      parseIntInRange(F.batch, 1, 64),
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
        `${F.videoIo} <how>`,
        "how video files are decoded and the annotated video encoded. gstreamer: GStreamer pipelines, on a Jetson through the board's hardware (nvv4l2decoder, nvvidconv ! nvv4l2h264enc), elsewhere software (avdec_h264, x264enc tune=zerolatency threads=1). ffmpeg: OpenCV's FFmpeg reader and writer (libx264 with its look-ahead). auto: the board's decoder for H.264/H.265 files where it exists, else FFmpeg; GStreamer's writer where this OpenCV has it and the frame size is even, else FFmpeg; the run says why not. GStreamer decodes on its own thread, a frame ahead of the loop, so there the read stage holds the hand-over of a decoded frame, not the decoding; with --frame-size it resizes there too (nvvidconv on a Jetson, videoscale elsewhere), not on the loop's thread. The run JSON names the decoder and encoder, and reports keep setups that differ in them apart. In the sequential loop each write waits until the encoder's threads are idle, so the write stage holds the encoding and the inference stage does not; the pipelined loop lets them overlap",
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
      F.realtime,
      'read files at their own frame rate, as a camera delivers frames: frames that arrive while the pipeline is busy are dropped and counted',
      false,
    )
    .option(
      F.stagger,
      "with --realtime and several streams of files: stream i's frames arrive i/n of a frame time after stream 0's, as cameras that are not synchronised deliver them (without it every stream's frame arrives at the same instant: one file replayed n times in lock-step, batching's best case)",
      false,
    )
    .option(
      `${F.sourceFps} <fps>`,
      "with --realtime: the pace of every source (default: each file's own frame rate), 0.1 to 1000",
      parseSourceFps(F.sourceFps),
    )
    .option(
      `${F.outputDir} <dir>`,
      "where the default outputs go: <stem>-<backend>-detected.mp4 (or an image folder's <folder>-<backend>-detected/), and with several streams <stem>-<i>-<backend>-detected.mp4 (default: the current folder)",
    )
    .option(`${F.json} <file>`, 'write the run result (schema jetprof.run/2); - for stdout');
}

/** Decoding and NMS: thresholds, kinds and caps. */
function addPostprocessOptions<A extends unknown[], O extends OptionValues>(cmd: Command<A, O>) {
  return cmd
    .option('--conf <0..1>', 'keep boxes with objectness x class probability above this', parseFraction('--conf'), 0.3)
    .option('--nms <0..1>', 'NMS overlap threshold', parseFraction('--nms'), 0.5)
    .addOption(
      new Option('--nms-kind <kind>', 'iou: greedy per-class IoU (tensorrt_demos); diou: darknet greedynms')
        .choices(['iou', 'diou'] as const)
        .default('iou'),
    )
    .addOption(
      new Option(
        '--class-mode <mode>',
        "multi: every class with objectness x p > --conf is a candidate (darknet's rule); best: only each box's best class (OpenCV's and Ultralytics' rule)",
      )
        .choices(['multi', 'best'] as const)
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
function addRunOptions<A extends unknown[], O extends OptionValues>(cmd: Command<A, O>) {
  return cmd
    .option(
      `${F.repeat} <n>`,
      'run the whole job n times: with --json R.json, runs go to R-1.json ... R-n.json and their spread to R.json (jetprof.runset/1)',
      parseIntInRange(F.repeat, 1, 1000),
      1,
    )
    .option(
      `${F.label} <name>`,
      'names this run in reports (default: backend-precision-provider-loop, e.g. onnx-fp32-cpu-pipelined3)',
    )
    .addOption(
      new Option('--profiler-attached <tool>', 'set by jetprof profile: the FPS were measured under this profiler')
        .choices(['nsys', 'nvprof'] as const)
        .hideHelp(),
    )
    .addOption(
      new Option(
        `${F.heads} <file>`,
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
      parseSize('--frame-size', FRAME_SIZE_MIN, FRAME_SIZE_MAX),
    )
    .option(
      `${F.duration} <s>`,
      'end after s seconds of frames (for a camera or stream, which never end by themselves); the run ends normally, exit 0',
      parseIntInRange(F.duration, 1, 10_000_000),
    )
    .option(
      `${F.maxFrames} <n>`,
      'stop after n frames of each stream (warm-up included)',
      parseIntInRange(F.maxFrames, 1),
    )
    .option(`${F.warmup} <n>`, 'frames run but excluded from all statistics', parseIntInRange(F.warmup, 0), 5)
    .option(
      '--threads <n>',
      'ONNX Runtime intra-op threads (default: one per core)',
      parseIntInRange('--threads', 1, 256),
    )
    .addOption(
      new Option(
        `${F.ep} <provider>`,
        'execution provider: ONNX Runtime cpu|cuda|tensorrt, OpenCV DNN cpu|cuda (DNN_BACKEND_CUDA); falls back to cpu with a warning',
      )
        .choices(['cpu', 'cuda', 'tensorrt'] as const)
        .default('cpu'),
    )
    .option('--fp16', 'OpenCV DNN with --ep cuda: DNN_TARGET_CUDA_FP16', false)
    .option(
      `${F.detections} <file.json>`,
      'write every box in COCO results format ([{image_id: frame, category_id, bbox: [x, y, w, h], score}], warm-up frames marked) for jetprof agree / map; with several streams, stream i writes <file>-i.json',
    )
    .option(
      '--coco-category-ids',
      "with --detections: category_id as COCO's 1..90 ids (an 80-class COCO model) instead of the class index",
      false,
    )
    .addOption(
      new Option(
        `${F.pipeline} <auto|on|off>`,
        "on: read/preprocess, inference and postprocess/write overlap (ORT in a worker thread); off: one frame at a time, every stage in series (the lab's loop); auto: on when the model runs on the GPU, off when it runs on the CPU and takes its cores",
      )
        .choices(['auto', 'on', 'off'] as const)
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
      `${F.modelAlone} <n>`,
      "after the loop, time the model by itself: n back-to-back runs on its last input (at most about 1 s), reported beside the loop's inference stage as trtexec reports a bare engine; 0 skips it (so does a profiled run: its call counts stay the loop's)",
      parseIntInRange(F.modelAlone, 0, 1000),
      PLAN_DEFAULTS.modelAloneRuns,
    )
    .option(`-q, ${F.quiet}`, 'no progress line, no summary, no notes (warnings still print)', false);
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

/**
 * Infer's arguments parsed by infer's own declaration of its options (the one parser: infer, runInferArgs, and the
 * commands that launch infer all use it). A bad argument is the one-line error infer itself would give, before
 * anything starts.
 */
export async function parseInferArgs(
  args: string[],
  fixedBackend?: BackendName,
): Promise<{ videos: string[]; o: InferCliOptions; given: string[] }> {
  const cmd = inferProgram('infer', fixedBackend);
  let parsed: { videos: string[]; o: InferCliOptions } | undefined;
  let said = '';
  cmd.exitOverride().configureOutput({ writeErr: (m) => (said += m), writeOut: () => undefined });
  cmd.action((videos, o) => {
    parsed = { videos, o: withBackend(o, fixedBackend) };
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
  return { videos: parsed!.videos, o: parsed!.o, given };
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
    pipeline: given.includes(F.pipeline) ? o.pipeline : undefined,
    threads: o.threads,
    ep: o.ep,
    batch: o.batch,
    json: o.json,
    videoIo: o.videoIo,
    outputGiven: given.includes(F.output) || !o.write,
    given,
  };
}

/**
 * infer's program: its argument and every option, declared once (the entry scripts, `jetprof infer`, and the parser
 * of infer's arguments the other commands use).
 */
export function inferProgram(name: string, fixedBackend?: BackendName) {
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
  const program = addRunOptions(addPostprocessOptions(addStreamOptions(addModelOptions(cmd))));
  program.addHelpText(
    'after',
    helpAfter(inferExamples(name, fixedBackend), [
      'Exit codes: 0 done, 2 bad input (one line says which file and the fix), 130 interrupted (Ctrl-C, SIGTERM or SIGHUP: the video and JSON are still finalized with "interrupted": true; a second signal does not cut that short).',
    ]),
  );
  return program;
}

/**
 * infer's options as its declaration above gives them: inferred from the commander chain (through
 * @commander-js/extra-typings), so an option is written in one place, with its type, default and parser; and the
 * backend, which `--backend` sets in infer and the entry scripts fix (infer-onnx, infer-trt, infer-opencv).
 */
type DeclaredOptions = ReturnType<ReturnType<typeof inferProgram>['opts']>;
export type InferCliOptions = DeclaredOptions & { backend: BackendName };

/** The options a program parsed, with the backend: an entry script's, else infer's --backend (default onnx). */
export function withBackend(o: DeclaredOptions, fixedBackend?: BackendName): InferCliOptions {
  return { ...o, backend: fixedBackend ?? (o as { backend?: BackendName }).backend! };
}
