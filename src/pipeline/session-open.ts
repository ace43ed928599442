/**
 * Opening the backend's session for a run: TensorRT usable first, the load timed inside a `model-load` NVTX range, a
 * batch the session cannot run refused with what builds one.
 */
import { createOnnxSession } from '../backends/onnx.ts';
import { type EngineSidecar } from '../backends/engine-sidecar.ts';
import { type BackendName, type DetectorSession } from '../backends/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { JetprofError } from '../util/errors.ts';
import { loadOpenCv } from '../video/opencv.ts';
import type { InferOptions } from './infer-settings.ts';
import { checkBatchFits, darknetFilesOnly, type ResolvedModel } from './model-resolution.ts';

type Opener = (
  o: InferOptions,
  modelPath: string,
  model: YoloModelInfo,
  sidecar: EngineSidecar | undefined,
) => Promise<DetectorSession>;

/**
 * How each backend's session is opened, one entry a backend (a new backend that has none does not compile); each
 * session then reports its own precision, runtime and provider (`DetectorSession`).
 */
const OPENERS: Record<BackendName, Opener> = {
  async onnx(o, modelPath) {
    const options = { executionProvider: o.ep, threads: o.threads, onWarning: o.onWarning };
    if (!o.plan.loop.pipelined) return createOnnxSession(modelPath, options);
    const { createOnnxWorkerSession } = await import('../backends/onnx-worker.ts');
    return createOnnxWorkerSession(modelPath, options);
  },
  async opencv(o, modelPath, model) {
    if (model.frameInput)
      throw new JetprofError(
        'BAD_MODEL',
        `${modelPath}: takes the frame's own bytes (export --frame-input), which OpenCV DNN does not run`,
        {
          suggestion: 'give OpenCV DNN the model exported without --frame-input (or its --cfg and --weights)',
        },
      );
    const { createOpenCvSession } = await import('../backends/opencv.ts');
    // cfg + weights: OpenCV's own darknet importer (independent of jetprof's exporter); else jetprof's ONNX.
    const darknet = darknetFilesOnly(o) ? { cfg: o.cfg!, weights: o.weights! } : { onnx: modelPath };
    return createOpenCvSession(darknet, {
      executionProvider: o.ep,
      fp16: o.fp16,
      threads: o.threads,
      outputNames: model.heads.map((h) => h.output),
      onWarning: o.onWarning,
    });
  },
  async tensorrt(o, _modelPath, model, sidecar) {
    const { createTensorRtSession } = await import('../backends/tensorrt.ts');
    if (!o.engine) {
      throw new JetprofError('BAD_OPTION', 'the tensorrt backend needs --engine E.trt', {
        suggestion: 'build one with `jetprof build-engine --onnx M.onnx --out engines/M.trt` (runs trtexec)',
      });
    }
    return createTensorRtSession(o.engine, model, { plugins: o.plugin, sidecar, onWarning: o.onWarning });
  },
};

/**
 * TensorRT must be usable before anything else about a TensorRT run is checked: on a machine without it, the first
 * attempt says so and what works instead, rather than a missing engine, then a missing trtexec, one at a time.
 */
export async function requireTensorRt(): Promise<void> {
  const { loadTrtAbi } = await import('../backends/trt-abi.ts');
  try {
    loadTrtAbi();
  } catch (e) {
    if (!(e instanceof JetprofError) || e.code !== 'TENSORRT_UNAVAILABLE') throw e;
    throw new JetprofError(
      'TENSORRT_UNAVAILABLE',
      `TensorRT cannot run on this machine: ${e.message}. infer-trt runs on a board with JetPack (TensorRT) and jetprof's shim built`,
      {
        suggestion: `${e.suggestion ? `${e.suggestion}; ` : ''}off the board, run the lab's scripts under nvprof on the board and here jetprof report --profile LOG --fps "TensorRT@960x540=INF/E2E"; infer-onnx and infer-opencv run here; jetprof doctor says what this machine runs`,
      },
    );
  }
}

/** The backend's session, its load timed inside a `model-load` NVTX range; a batch the session cannot run is refused. */
export async function openTimedSession(o: InferOptions, m: ResolvedModel) {
  loadOpenCv(); // fail early, before the model load is timed
  o.nvtx.push('model-load');
  const t0 = process.hrtime.bigint();
  let session: DetectorSession;
  try {
    session = await OPENERS[o.backend](o, m.modelPath, m.model, m.sidecar);
  } finally {
    o.nvtx.pop();
  }
  const modelLoadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  try {
    checkBatchFits(session, o.plan.batch, o, m.modelPath);
  } catch (e) {
    await session.dispose();
    throw e;
  }
  return { session, modelLoadMs };
}
