/**
 * TensorRT backend: a serialized engine run through native/trt_shim.cpp (C ABI in native/jetprof_trt.h, loaded with
 * koffi by trt-abi.ts). Deserializing and inference wait on the GPU, so they go through koffi's async calls and
 * the event loop stays free. Accepts engines whose outputs are jetprof's raw YOLO heads (built from jetprof's
 * ONNX) and tensorrt_demos engines (one `detections` output decoded by its yolo_layer plugin, loaded with --plugin).
 */
import { existsSync } from 'node:fs';

import type { YoloModelInfo } from '../model/metadata.ts';
import { JetprofError } from '../util/errors.ts';
import type { EngineSidecar } from './engine-sidecar.ts';
import { checkEngineIo, shape } from './engine-io.ts';
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
