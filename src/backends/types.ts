/**
 * The one contract every inference backend (ONNX Runtime, TensorRT, OpenCV DNN) implements (after onnxruntime's js/common backend.ts):
 * a session takes the preprocessed NCHW float32 input and returns each YOLO head's raw tensor by name.
 */
export type BackendName = 'onnx' | 'tensorrt' | 'opencv';

/** Everything jetprof says about a backend by name, in one place. */
export interface BackendFacts {
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

export interface DetectorSession {
  readonly backend: BackendName;
  /** e.g. 'onnxruntime-node 1.30.0 (cpu)' or 'TensorRT 8.6.1'. */
  readonly description: string;
  /** The execution provider that actually runs the model ('cpu' after an ORT fallback; 'tensorrt' for TensorRT). */
  readonly executionProvider: string;
  readonly inputName: string;
  readonly outputNames: readonly string[];
  /** `input`: NCHW float32; `blob`: the same as an OpenCV Mat (the OpenCV DNN backend takes that). */
  run(input: Float32Array, blob?: unknown): Promise<InferenceResult>;
  dispose(): Promise<void>;
}
