/**
 * ONNX Runtime in a worker thread, behind the same DetectorSession interface. onnxruntime-node's run() blocks the
 * thread it is called on (anchors.md §5.2); the pipelined frame loop needs the main thread for OpenCV's async
 * decode and encode, so inference goes here. OpenCV itself must stay on the main thread (it is not loaded here).
 */
import { startWorker, WorkerCalls, workerError } from '../util/worker.ts';
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
  let calls!: WorkerCalls<[string, Float32Array][]>;
  const ready = new Promise<Extract<WorkerReply, { type: 'ready' }>>((resolve, reject) => {
    calls = new WorkerCalls(
      worker,
      (m) => {
        const r = m as WorkerReply;
        if (r.type === 'ready') resolve(r);
        else if (r.type === 'warning') onWarning?.(r.message);
        else if (r.type === 'error') reject(workerError(r)); // the session could not be made
      },
      reject,
    );
  });
  let info: Extract<WorkerReply, { type: 'ready' }>;
  try {
    info = await ready;
  } catch (e) {
    await calls.terminate();
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
    async run(input: ImageBatch): Promise<InferenceResult> {
      return { outputs: new Map(await calls.call({ type: 'run', input } satisfies WorkerRequest)) };
    },
    // the worker releases its session and ends on its own (WorkerCalls.close)
    dispose: () => calls.close({ type: 'dispose' } satisfies WorkerRequest),
  };
}
