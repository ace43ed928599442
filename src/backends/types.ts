/**
 * The one contract every inference backend (ONNX Runtime, TensorRT, OpenCV DNN) implements (after onnxruntime's js/common backend.ts):
 * a session takes the preprocessed NCHW float32 input and returns each YOLO head's raw tensor by name.
 */
export type BackendName = 'onnx' | 'tensorrt' | 'opencv';

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
