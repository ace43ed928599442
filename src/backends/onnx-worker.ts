/**
 * ONNX Runtime in a worker thread, behind the same DetectorSession interface. onnxruntime-node's run() blocks the
 * thread it is called on (anchors.md §5.2); the pipelined frame loop needs the main thread for OpenCV's async
 * decode and encode, so inference goes here. OpenCV itself must stay on the main thread (it is not loaded here).
 */
import { type ErrorCode, JetprofError } from '../util/errors.ts';
import { startWorker } from '../util/process.ts';
import { disableOrtTelemetry, type OnnxSessionOptions } from './onnx.ts';
import type { WorkerReply, WorkerRequest } from './onnx-worker-thread.ts';
import type { DetectorSession, ImageBatch, InferenceResult } from './types.ts';

export async function createOnnxWorkerSession(
  modelPath: string,
  options: OnnxSessionOptions = {},
): Promise<DetectorSession> {
  const { onWarning, ...rest } = options;
  disableOrtTelemetry(); // here, in the main thread: the worker's own process.env would not reach the library
  const worker = startWorker(import.meta.url, './onnx-worker-thread', { modelPath, options: rest });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const pending = new Map<number, { resolve: (r: InferenceResult) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let failure: Error | undefined;
  const ready = new Promise<Extract<WorkerReply, { type: 'ready' }>>((resolve, reject) => {
    worker.on('message', (m: WorkerReply) => {
      if (m.type === 'ready') resolve(m);
      else if (m.type === 'warning') onWarning?.(m.message);
      else if (m.type === 'result') {
        pending.get(m.id)?.resolve({ outputs: new Map(m.outputs) });
        pending.delete(m.id);
      } else if (m.type === 'error') {
        const e = new JetprofError((m.code as ErrorCode) ?? 'TOOL_FAILED', m.message, { suggestion: m.suggestion });
        if (m.id === undefined) reject(e);
        else {
          pending.get(m.id)?.reject(e);
          pending.delete(m.id);
        }
      }
    });
    worker.on('error', (e) => {
      failure = e;
      reject(e);
      for (const p of pending.values()) p.reject(e);
      pending.clear();
    });
  });
  let info: Extract<WorkerReply, { type: 'ready' }>;
  try {
    info = await ready;
  } catch (e) {
    await worker.terminate();
    throw e;
  }
  return {
    backend: 'onnx',
    description: `${info.description}, in a worker thread`,
    precision: info.precision,
    runtime: info.runtime,
    executionProvider: info.executionProvider,
    inputName: info.inputName,
    outputNames: info.outputNames,
    batchSize: info.batchSize,
    run(input: ImageBatch): Promise<InferenceResult> {
      if (failure) return Promise.reject(failure);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ type: 'run', id, input } satisfies WorkerRequest);
      });
    },
    async dispose() {
      // graceful: the worker releases its session and ends on its own; terminate() stops the thread mid-way, and a
      // process that exits right after a forced termination leaves Nsight Systems 2022.4's agent hanging
      if (exited) return;
      worker.postMessage({ type: 'dispose' } satisfies WorkerRequest);
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await exit;
      clearTimeout(timer);
    },
  };
}
