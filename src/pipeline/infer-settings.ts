/** The infer job's settings, in their own module: the job and its four steps (model, session, checks, record) read them. */
import type { OnnxExecutionProvider } from '../backends/onnx.ts';
import type { BackendName } from '../backends/types.ts';
import type { LoopOptions } from './loop-options.ts';
import type { RunPlan } from './run-plan.ts';
import type { ProfilerName } from './run-result.ts';

/**
 * The job's settings: which model, backend and session, and the loop's settings (LoopOptions, declared there once).
 * A setting that is one of infer's options has the option's name (`warmup`, `ep`, `duration`: commander's attribute
 * names), so the command passes them through as they are (cli/infer-prepare.ts jobSettings) and composes the rest.
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
  strict?: boolean;
  /** Serialized TensorRT engine (tensorrt backend). The .onnx (or cfg+weights) still supplies the YOLO metadata. */
  engine?: string;
  /** TensorRT plugin libraries (tensorrt_demos' libyolo_layer.so). */
  plugin?: string[];
  /** The run JSON: a path, `-` for stdout, undefined for none. */
  json?: string;
  /** --heads F: the raw head outputs of the first frames (heads-file.ts), for jetprof selftest. */
  heads?: string;
  /** Names this run in reports; default from backend, precision, provider, loop and profiler. */
  label?: string;
  /** The profiler this process runs under (set by `jetprof profile`). */
  profilerAttached?: ProfilerName;
  threads?: number;
  ep: OnnxExecutionProvider;
  /** OpenCV DNN with --ep cuda: DNN_TARGET_CUDA_FP16. */
  fp16?: boolean;
  /** tegrastats beside the run: its path and interval (undefined: none). */
  tegrastats?: { bin: string; intervalMs: number };
  /** category_id as COCO's 1..90 ids instead of the class index (--detections). */
  cocoCategoryIds?: boolean;
  /** End the run normally after this many seconds of frames (for endless sources). */
  duration?: number;
  /** Things the user should see even with --quiet (ONNX Runtime fallback, random weights, engine version). */
  onWarning: (message: string) => void;
  /** Notes (which model file is used); hidden by --quiet. */
  onInfo?: (message: string) => void;
  onFrame?: LoopOptions['onFrame'];
}
