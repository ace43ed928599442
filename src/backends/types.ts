/**
 * The one contract every inference backend (ONNX Runtime, TensorRT, OpenCV DNN) implements (after onnxruntime's js/common backend.ts):
 * a session takes the preprocessed NCHW float32 input and returns each YOLO head's raw tensor by name.
 */
export type BackendName = 'onnx' | 'tensorrt' | 'opencv';

/** Everything jetprof says about a backend by name, in one place. */
interface BackendFacts {
  /** In tables and titles: the lab's "Model Type" column. */
  title: string;
  /** In file names and labels as the lab names them: profiling_trt_log.txt, run_trt.json, trt-fp16-gpu-sequential. */
  tag: string;
  /** Its entry script (src/cli/<entry>.ts, a bin of the package). */
  entry: string;
  /** In the default video name: <video>-<outputSuffix>-detected.mp4 (the lab's "-tensorrt-detected"). */
  outputSuffix: string;
  /** What --backend accepts for it. */
  aliases: string[];
}

export const BACKENDS: Record<BackendName, BackendFacts> = {
  onnx: { title: 'ONNX Runtime', tag: 'onnx', entry: 'infer-onnx', outputSuffix: 'onnx', aliases: ['onnx', 'ort'] },
  tensorrt: {
    title: 'TensorRT',
    tag: 'trt',
    entry: 'infer-trt',
    outputSuffix: 'tensorrt',
    aliases: ['trt', 'tensorrt'],
  },
  opencv: {
    title: 'OpenCV DNN',
    tag: 'opencv',
    entry: 'infer-opencv',
    outputSuffix: 'opencv',
    aliases: ['opencv', 'cv'],
  },
};

/**
 * Whether the model runs on a GPU, decided here only: TensorRT always; ONNX Runtime with its CUDA or TensorRT
 * provider; OpenCV DNN with --ep cuda where its build has CUDA (`openCvHasCuda`; a session's own provider already says
 * what it got, so the default is true). The loop choice, the run's device and its label all ask this.
 */
export function modelOnGpu(
  backend: BackendName,
  executionProvider: string,
  openCvHasCuda: () => boolean = () => true,
): boolean {
  if (backend === 'tensorrt') return true;
  if (backend === 'onnx') return executionProvider === 'cuda' || executionProvider === 'tensorrt';
  return executionProvider === 'cuda' && openCvHasCuda();
}

/**
 * The device a run names in its record: `GPU: <the GPU, or the board>` where the model runs on a GPU (modelOnGpu),
 * else `CPU: <the CPU>`. A new run's record and an old run's upgrade both name it so.
 */
export function deviceLabel(
  backend: BackendName,
  executionProvider: string,
  env: { gpu?: string; cpu?: string; jetson?: { model?: string } } | undefined,
): string {
  return modelOnGpu(backend, executionProvider)
    ? `GPU: ${env?.gpu ?? env?.jetson?.model ?? 'NVIDIA GPU'}`
    : `CPU: ${env?.cpu ?? '?'}`;
}

/** The backend a --backend value names, or undefined. */
export function backendByAlias(value: string | undefined): BackendName | undefined {
  return (Object.keys(BACKENDS) as BackendName[]).find(
    (b) => value !== undefined && BACKENDS[b].aliases.includes(value),
  );
}

/** Device-side timings a backend can measure itself (TensorRT with CUDA events). Milliseconds. */
export interface DeviceTimings {
  h2dMs: number;
  gpuComputeMs: number;
  d2hMs: number;
}

export interface InferenceResult {
  outputs: Map<string, Float32Array>;
  device?: DeviceTimings;
}

/** Each head's values for image `k` of a batch of `n` (the outputs hold the images one after the other). */
export function imageOutputs(outputs: Map<string, Float32Array>, k: number, n: number): Map<string, Float32Array> {
  if (n === 1) return outputs;
  const one = new Map<string, Float32Array>();
  for (const [name, data] of outputs) {
    const per = data.length / n;
    one.set(name, data.subarray(k * per, (k + 1) * per));
  }
  return one;
}

/** A model's input: float32 NCHW values, or a frame-input model's uint8 bytes (model/metadata.ts frameInput). */
export type ImageBatch = Float32Array | Uint8Array;

/** A batch of `n` images padded with zero images to `fixed` (a fixed-batch model or engine takes exactly that). */
export function padBatch<T extends ImageBatch>(input: T, n: number, fixed: number): T {
  if (n >= fixed) return input;
  const padded = new (input.constructor as new (length: number) => T)((input.length / n) * fixed);
  padded.set(input);
  return padded;
}

/** The first `n` images of an output computed for a batch padded to `fixed` (the padding's outputs dropped). */
export function unpadBatch(output: Float32Array, n: number, fixed: number): Float32Array {
  return n >= fixed ? output : output.subarray(0, (output.length / fixed) * n);
}

/** The numbers a model runs in; `unknown` where nothing says (an engine without its sidecar). */
export type Precision = 'fp32' | 'fp16' | 'int8' | 'unknown';

export interface DetectorSession {
  readonly backend: BackendName;
  /** What the model runs in, as this session opened it (TensorRT: the engine's sidecar; OpenCV DNN: fp16 on CUDA). */
  readonly precision: Precision;
  /** The runtime's version the run records, by the run JSON's env key: `{ onnxruntime: '1.30.0' }`, `{ tensorrt: '8.2.1' }`. */
  readonly runtime: Readonly<Record<string, string>>;
  /** e.g. 'onnxruntime-node 1.30.0 (cpu)' or 'TensorRT 8.6.1'. */
  readonly description: string;
  /** The execution provider that actually runs the model ('cpu' after an ORT fallback; 'tensorrt' for TensorRT). */
  readonly executionProvider: string;
  readonly inputName: string;
  readonly outputNames: readonly string[];
  /**
   * How many images one run takes: any number ('dynamic': jetprof's exports in ONNX Runtime and OpenCV DNN) or
   * exactly N (a TensorRT engine, an ONNX with a fixed batch): a shorter batch is padded with zeros and the padding's
   * outputs dropped, so the run costs what a full batch costs.
   */
  readonly batchSize: number | 'dynamic';
  /**
   * `input`: N images one after the other, NCHW float32 (N = its length / (3*H*W)), or, for a model that preprocesses
   * in its graph, the frames' uint8 BGR bytes (N = its length / (H*W*3)); `blob`: the float images as an OpenCV Mat
   * (the OpenCV DNN backend takes that). Each output holds the N images' heads, image after image.
   */
  run(input: ImageBatch, blob?: unknown): Promise<InferenceResult>;
  dispose(): Promise<void>;
}
