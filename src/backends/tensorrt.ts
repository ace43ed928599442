/**
 * TensorRT backend: a serialized engine run through native/trt_shim.cpp (C ABI in native/jetprof_trt.h, loaded with
 * koffi by trt-abi.ts). Deserializing and inference wait on the GPU, so they go through koffi's async calls and
 * the event loop stays free. Accepts engines whose outputs are jetprof's raw YOLO heads (built from jetprof's
 * ONNX) and tensorrt_demos engines (one `detections` output decoded by its yolo_layer plugin, loaded with --plugin).
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';

import { PLUGIN_DETECTIONS_OUTPUT, type YoloModelInfo } from '../model/metadata.ts';
import { JetprofError } from '../util/errors.ts';
import type { EngineSidecar } from './engine-sidecar.ts';
import {
  cString,
  DTYPE_NAMES,
  ERR_LEN,
  formatTrtVersion,
  loadTrtAbi,
  STATUS,
  type TensorInfo,
  type Timing,
  type TrtAbi,
} from './trt-abi.ts';
import { type DetectorSession, type ImageBatch, type InferenceResult, padBatch, unpadBatch } from './types.ts';

interface TensorRtSessionOptions {
  /** Plugin libraries to dlopen before deserializing (e.g. tensorrt_demos' plugins/libyolo_layer.so). */
  plugins?: string[];
  /** TensorRT messages at this severity or worse are printed (0 internal error .. 4 verbose); default 1. */
  logSeverity?: number;
  /** The engine's sidecar (`<engine>.json`), read once by the caller: the TensorRT version that built it. */
  sidecar?: EngineSidecar;
  onWarning: (message: string) => void;
}

const REBUILD = (engine: string) => `rebuild it on this device: jetprof build-engine --onnx M.onnx --out ${engine}`;

function call(fn: TrtAbi['infer'], args: unknown[]): Promise<number> {
  return new Promise((resolve, reject) =>
    fn.async(...args, (err: unknown, status: number) => (err ? reject(err) : resolve(status))),
  );
}

function shape(t: TensorInfo): string {
  return t.dims.join('x');
}

/**
 * Checks the engine's IO against the model: one [N,3,H,W] float input of the model's size (N images per run, fixed
 * when the engine was built: `build-engine --batch N`); raw heads or detections.
 */
export function checkEngineIo(
  enginePath: string,
  tensors: TensorInfo[],
  model: YoloModelInfo,
): { input: TensorInfo; outputs: TensorInfo[] } {
  const inputs = tensors.filter((t) => t.isInput);
  const outputs = tensors.filter((t) => !t.isInput);
  const name = basename(enginePath);
  if (inputs.length !== 1)
    throw new JetprofError(
      'BAD_ENGINE',
      `${enginePath}: has ${inputs.length} inputs; jetprof runs YOLO engines with one image input`,
    );
  const [input] = inputs;
  // the model's input: float32 Nx3xHxW, or a frame-input model's uint8 NxHxWx3 (its frame size)
  const f = model.frameInput;
  const [n, ...rest] = input.dims;
  const [type, layout, want] = f
    ? ['uint8', 'NxHxWx3', [f.height, f.width, 3]]
    : ['float32', 'Nx3xHxW', [3, model.inputHeight, model.inputWidth]];
  if (input.dims.length !== 4 || !(n >= 1) || DTYPE_NAMES[input.dtype] !== type || rest[f ? 2 : 0] !== 3) {
    throw new JetprofError(
      'BAD_ENGINE',
      `${enginePath}: input ${input.name} is ${DTYPE_NAMES[input.dtype] ?? input.dtype} ${shape(input)}, not ${type} ${layout}`,
      {
        suggestion: `build the engine from the model it runs with (jetprof build-engine --onnx M.onnx [--batch N]), which has a ${type} ${layout} input`,
      },
    );
  }
  if (rest.some((d, i) => d !== want[i])) {
    const size = f ? `takes ${f.width}x${f.height} frames` : `is ${model.inputWidth}x${model.inputHeight}`;
    throw new JetprofError(
      'BAD_ENGINE',
      `${name} expects input ${shape(input)} but the model ${size} (input shape mismatch)`,
      {
        suggestion: 'pass the --model/--cfg the engine was built from, or build the engine again from this model',
      },
    );
  }
  for (const o of outputs) {
    if (DTYPE_NAMES[o.dtype] !== 'float32') {
      throw new JetprofError(
        'BAD_ENGINE',
        `${enginePath}: output ${o.name} is ${DTYPE_NAMES[o.dtype] ?? o.dtype}; jetprof reads float32 outputs`,
        {
          suggestion: 'build with float32 IO (trtexec keeps IO float32 unless --outputIOFormats is given)',
        },
      );
    }
  }
  const names = new Set(outputs.map((o) => o.name));
  const heads = model.heads.every((hd) => names.has(hd.output));
  if (!heads && !names.has(PLUGIN_DETECTIONS_OUTPUT)) {
    throw new JetprofError(
      'BAD_ENGINE',
      `${enginePath}: outputs ${[...names].join(', ')} are neither the model's YOLO heads (${model.heads.map((hd) => hd.output).join(', ')}) nor tensorrt_demos' ${PLUGIN_DETECTIONS_OUTPUT}`,
      {
        suggestion: 'pass the --model/--cfg the engine was built from',
      },
    );
  }
  return { input, outputs };
}

/** The engine deserialized through the shim; each way it can fail is one line naming the engine and the fix. */
async function openEngine(
  abi: ReturnType<typeof loadTrtAbi>,
  enginePath: string,
  runtime: string,
  sidecar: TensorRtSessionOptions['sidecar'],
): Promise<unknown> {
  const err = Buffer.alloc(ERR_LEN);
  const handleOut: unknown[] = [null];
  const status = await call(abi.engineOpen, [enginePath, handleOut, err, ERR_LEN]);
  if (status !== STATUS.OK) {
    const why = cString(err);
    if (status === STATUS.FILE) throw new JetprofError('FILE_NOT_FOUND', `${enginePath}: ${why}`);
    if (status === STATUS.DESERIALIZE && /version/i.test(why)) {
      const built = /got (\d+(?:\.\d+)+)/.exec(why)?.[1] ?? sidecar?.tensorrt;
      throw new JetprofError(
        'BAD_ENGINE',
        `${enginePath}: engine from another TensorRT version (built by ${built ?? 'another version'}, runtime ${runtime})`,
        { suggestion: REBUILD(enginePath) },
      );
    }
    if (status === STATUS.DESERIALIZE) {
      throw new JetprofError(
        'BAD_ENGINE',
        `${enginePath}: not a TensorRT engine this runtime can load (${why.slice(0, 200)})`,
        { suggestion: REBUILD(enginePath) },
      );
    }
    if (status === STATUS.PLUGIN)
      throw new JetprofError('BAD_ENGINE', `${enginePath}: ${why}`, {
        suggestion: 'pass the plugin library with --plugin',
      });
    throw new JetprofError('BAD_ENGINE', `${enginePath}: ${why}`, {
      suggestion: status === STATUS.UNSUPPORTED ? REBUILD(enginePath) : undefined,
    });
  }
  return handleOut[0];
}

/** The plugin libraries asked for (none: TensorRT's own, libnvinfer_plugin), or one line naming the one that fails. */
function loadPlugins(abi: TrtAbi, plugins: string[] | undefined): void {
  const err = Buffer.alloc(ERR_LEN);
  for (const plugin of plugins?.length ? plugins : ['']) {
    if (abi.loadPlugin(plugin, err, ERR_LEN) !== STATUS.OK) {
      throw new JetprofError(
        'BAD_ENGINE',
        `${plugin || 'TensorRT plugins'}: plugin library could not be loaded (${cString(err)})`,
        {
          suggestion: "build tensorrt_demos' plugins (make -C plugins) and pass its libyolo_layer.so with --plugin",
        },
      );
    }
  }
}

/** The engine's tensors, checked against the model's inputs and outputs; the engine is closed when they do not fit. */
function engineTensors(abi: TrtAbi, handle: unknown, enginePath: string, model: YoloModelInfo): TensorInfo[] {
  const err = Buffer.alloc(ERR_LEN);
  const tensors: TensorInfo[] = [];
  try {
    const count = abi.tensorCount(handle) as number;
    for (let i = 0; i < count; i++) {
      const raw: Record<string, unknown> = {};
      if (abi.tensorInfo(handle, i, raw, err, ERR_LEN) !== STATUS.OK)
        throw new JetprofError('BAD_ENGINE', `${enginePath}: ${cString(err)}`);
      tensors.push(abi.readTensorInfo(raw));
    }
    checkEngineIo(enginePath, tensors, model);
  } catch (e) {
    abi.close(handle);
    throw e;
  }
  return tensors;
}

export async function createTensorRtSession(
  enginePath: string,
  model: YoloModelInfo,
  o: TensorRtSessionOptions,
): Promise<DetectorSession> {
  if (!existsSync(enginePath)) {
    throw new JetprofError('FILE_NOT_FOUND', `${enginePath}: engine file not found`, {
      suggestion: 'build one with `jetprof build-engine --onnx M.onnx --out engines/M.trt` (runs trtexec)',
    });
  }
  const abi = loadTrtAbi();
  abi.setLogSeverity(o.logSeverity ?? 1);
  const runtime = formatTrtVersion(abi.runtimeVersion());
  loadPlugins(abi, o.plugins);
  const { sidecar } = o;
  if (sidecar?.tensorrt && sidecar.tensorrt !== runtime) {
    o.onWarning(
      `warning: ${enginePath} was built by TensorRT ${sidecar.tensorrt} but the runtime is TensorRT ${runtime}: ${REBUILD(enginePath)}`,
    );
  }
  const handle = await openEngine(abi, enginePath, runtime, sidecar);
  const tensors = engineTensors(abi, handle, enginePath, model);
  const inputIndex = tensors.findIndex((t) => t.isInput);
  const input = tensors[inputIndex];
  const engineBatch = input.dims[0];
  const outputs = tensors.map((t, index) => ({ ...t, index })).filter((t) => !t.isInput);
  let closed = false;
  let busy: Promise<unknown> = Promise.resolve();
  return {
    backend: 'tensorrt',
    description: `TensorRT ${runtime}`,
    precision: sidecar?.precision || 'unknown',
    runtime: { tensorrt: runtime },
    executionProvider: 'tensorrt',
    inputName: input.name,
    outputNames: outputs.map((t) => t.name),
    // the engine's batch is fixed when it is built: a shorter batch is padded with zero images
    batchSize: engineBatch,
    async run(images: ImageBatch): Promise<InferenceResult> {
      if (closed) throw new Error('TensorRT session used after dispose');
      const n = images.byteLength / (input.bytes / engineBatch);
      if (!Number.isInteger(n) || n < 1 || n > engineBatch) {
        throw new JetprofError(
          'BAD_INPUT',
          `${enginePath}: input ${input.name} takes ${input.bytes} bytes (${shape(input)} ${DTYPE_NAMES[input.dtype]}), got ${images.byteLength}`,
        );
      }
      const data = padBatch(images, n, engineBatch);
      // One engine has one set of buffers: calls are serialised.
      const run = busy.then(async () => {
        const e = Buffer.alloc(ERR_LEN);
        if (abi.setInput(handle, inputIndex, data, input.bytes, e, ERR_LEN) !== STATUS.OK)
          throw new JetprofError('BAD_INPUT', `${enginePath}: ${cString(e)}`);
        const timing: Partial<Timing> = {};
        const s = await call(abi.infer, [handle, timing, e, ERR_LEN]);
        if (s !== STATUS.OK)
          throw new JetprofError('TOOL_FAILED', `${enginePath}: inference failed (${cString(e)})`, { exitCode: 1 });
        const result = new Map<string, Float32Array>();
        for (const t of outputs) {
          const out = new Float32Array(t.bytes / 4);
          if (abi.getOutput(handle, t.index, out, t.bytes, e, ERR_LEN) !== STATUS.OK)
            throw new JetprofError('TOOL_FAILED', `${enginePath}: ${cString(e)}`, { exitCode: 1 });
          result.set(t.name, unpadBatch(out, n, engineBatch));
        }
        return {
          outputs: result,
          device: { h2dMs: timing.h2d_ms ?? 0, gpuComputeMs: timing.compute_ms ?? 0, d2hMs: timing.d2h_ms ?? 0 },
        };
      });
      busy = run.catch(() => undefined);
      return run;
    },
    async dispose(): Promise<void> {
      if (closed) return;
      closed = true;
      await busy;
      abi.close(handle);
    },
  };
}
