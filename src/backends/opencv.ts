/**
 * OpenCV DNN backend: jetprof's .onnx through cv.readNetFromONNX (or the darknet cfg + weights through
 * readNetFromDarknet: OpenCV's own darknet importer, independent of jetprof's exporter). The same raw heads come out
 * as from ONNX Runtime (from the darknet importer: the layers feeding its [yolo] region layers), so the same decode
 * and NMS follow. Many Jetson users build OpenCV with CUDA: `--ep cuda` selects
 * DNN_BACKEND_CUDA (FP32, or FP16 with `--fp16`) when this OpenCV has CUDA and cuDNN, else the CPU with a warning.
 * OpenCV must run on the main thread (not in worker threads), and its Net takes the blob Mat, not a Float32Array.
 */
import { cpus } from 'node:os';
import { JetprofError, messageOf } from '../util/errors.ts';
import { loadOpenCv, type Mat } from '../video/opencv.ts';
import type { DetectorSession, InferenceResult } from './types.ts';

interface OpenCvSessionOptions {
  /** 'cpu' (default) or 'cuda' (DNN_BACKEND_CUDA). */
  executionProvider?: string;
  /** With cuda: DNN_TARGET_CUDA_FP16. */
  fp16?: boolean;
  threads?: number;
  /** The heads to return (the YOLO outputs, by name). */
  outputNames: string[];
  onWarning?: (message: string) => void;
}

/** Whether this OpenCV was built with CUDA and cuDNN (what DNN_BACKEND_CUDA needs), from its build information. */
export function openCvHasCuda(buildInformation: string): boolean {
  return /NVIDIA CUDA:\s*YES/.test(buildInformation) && /cuDNN:\s*YES/.test(buildInformation);
}

/**
 * OpenCV's darknet importer names a [yolo] layer at darknet index N `yolo_N` and puts a `permute_N` (NCHW to NHWC)
 * right after the layer that feeds it; that feeding layer's output is the raw head. `heads` are jetprof's head names
 * (`yolo_N`, as the exporter names the ONNX outputs). Pure: the net's layer names in creation order in.
 */
export function darknetHeadNames(
  layerNames: readonly string[],
  heads: readonly string[],
  source = 'the darknet model',
): string[] {
  return heads.map((head) => {
    const n = /^yolo_(\d+)$/.exec(head)?.[1];
    const at = n === undefined ? -1 : layerNames.indexOf(`permute_${n}`);
    if (at < 1) {
      throw new JetprofError(
        'BAD_MODEL',
        `${source}: OpenCV's darknet importer has no input layer for the head ${head} (no permute_${n ?? '?'} among its ${layerNames.length} layers)`,
        {
          suggestion: 'run OpenCV DNN on the exported model instead: --model M.onnx (jetprof export writes it)',
        },
      );
    }
    return layerNames[at - 1];
  });
}

export function createOpenCvSession(
  model: { onnx?: string; cfg?: string; weights?: string },
  o: OpenCvSessionOptions,
): DetectorSession {
  const cv = loadOpenCv();
  // cfg + weights: OpenCV's own darknet importer; else jetprof's ONNX
  const darknet = model.cfg && model.weights ? { cfg: model.cfg, weights: model.weights } : undefined;
  const source = darknet
    ? `${darknet.cfg} + ${darknet.weights} (readNetFromDarknet)`
    : `${model.onnx} (readNetFromONNX)`;
  let net: ReturnType<typeof cv.readNetFromONNX>;
  try {
    net = darknet ? cv.readNetFromDarknet(darknet.cfg, darknet.weights) : cv.readNetFromONNX(model.onnx!);
  } catch (e) {
    throw new JetprofError(
      'BAD_MODEL',
      `${source}: OpenCV DNN cannot load this model (${messageOf(e).split('\n')[0]})`,
      {
        suggestion: "export it again with `jetprof export`, or pass --cfg and --weights for OpenCV's darknet importer",
      },
    );
  }
  let used = 'cpu';
  if (o.executionProvider === 'cuda') {
    if (openCvHasCuda(cv.getBuildInformation())) {
      net.setPreferableBackend(cv.DNN_BACKEND_CUDA);
      net.setPreferableTarget(o.fp16 ? cv.DNN_TARGET_CUDA_FP16 : cv.DNN_TARGET_CUDA);
      used = 'cuda';
    } else {
      o.onWarning?.(
        `OpenCV ${cv.version.major}.${cv.version.minor}.${cv.version.revision} here was built without CUDA and cuDNN (cv.getBuildInformation()); using the CPU. On a Jetson, build OpenCV with -D WITH_CUDA=ON -D WITH_CUDNN=ON -D OPENCV_DNN_CUDA=ON`,
      );
    }
  }
  if (used === 'cpu') {
    net.setPreferableBackend(cv.DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv.DNN_TARGET_CPU);
  }
  cv.setNumThreads(o.threads ?? cpus().length);
  // What to ask the net for: jetprof's heads are the raw conv outputs feeding each [yolo] layer. In OpenCV's darknet
  // importer `yolo_N` is the region layer, whose output is already decoded (boxes and scores): decoding it again gives
  // garbage of the same size. Its input is the layer created just before `permute_N` (conv_{N-1} for a linear head).
  const forwardNames = darknet ? darknetHeadNames(net.getLayerNames(), o.outputNames, source) : o.outputNames;
  const version = `${cv.version.major}.${cv.version.minor}.${cv.version.revision}`;
  return {
    backend: 'opencv',
    description: `OpenCV DNN ${version} (${used}${used === 'cuda' && o.fp16 ? ', fp16' : ''}), ${darknet ? 'darknet importer' : 'ONNX importer'}`,
    executionProvider: used,
    precision: used === 'cuda' && o.fp16 ? 'fp16' : 'fp32',
    runtime: {},
    inputName: 'blob',
    outputNames: o.outputNames,
    // both importers take a blob of several images (blobFromImages): the batch is the blob's first dimension
    batchSize: 'dynamic',
    async run(_input: Float32Array, blob?: unknown): Promise<InferenceResult> {
      if (!blob) throw new Error('the OpenCV DNN backend needs the preprocessed blob Mat');
      net.setInput(blob as Mat);
      const mats = net.forward(forwardNames);
      const outputs = new Map<string, Float32Array>();
      mats.forEach((m: Mat, i: number) => {
        const n = m.sizes.reduce((a: number, b: number) => a * b, 1);
        const flat = m.flattenFloat(1, n);
        const d = flat.getData();
        outputs.set(o.outputNames[i], new Float32Array(d.buffer, d.byteOffset, d.byteLength / 4));
        // copied out: the Mats go back now, not at V8's next collection (as the loops' frames, loop-shared.ts)
        flat.release();
        m.release();
      });
      return { outputs };
    },
    async dispose() {
      // the Net is released with its JS object
    },
  };
}
