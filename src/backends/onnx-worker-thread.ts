/**
 * The worker side of onnx-worker.ts: one ONNX Runtime session in a worker thread, so that its run(), which blocks
 * the thread it runs on, leaves the main thread (OpenCV decode, encode, drawing) free. Loads no OpenCV.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { messageOf } from '../util/errors.ts';
import { type CallReply, errorReply } from '../util/worker.ts';
import { createOnnxSession, type OnnxSessionOptions } from './onnx.ts';
import type { DetectorSession, ImageBatch, Precision } from './types.ts';

export type WorkerRequest = { type: 'run'; input: ImageBatch } | { type: 'dispose' };
export type WorkerReply =
  | {
      type: 'ready';
      description: string;
      executionProvider: string;
      precision: Precision;
      runtime: Readonly<Record<string, string>>;
      inputName: string;
      outputNames: string[];
      batchSize: number | 'dynamic';
    }
  | { type: 'warning'; message: string }
  | CallReply<[string, Float32Array][]>
  | { type: 'disposed' };

const port = parentPort!;
const { modelPath, options } = workerData as { modelPath: string; options: Omit<OnnxSessionOptions, 'onWarning'> };

let session: DetectorSession;
try {
  session = await createOnnxSession(modelPath, {
    ...options,
    onWarning: (message) => port.postMessage({ type: 'warning', message } satisfies WorkerReply),
  });
  port.postMessage({
    type: 'ready',
    description: session.description,
    executionProvider: session.executionProvider,
    precision: session.precision,
    runtime: session.runtime,
    inputName: session.inputName,
    outputNames: [...session.outputNames],
    batchSize: session.batchSize,
  } satisfies WorkerReply);
} catch (e) {
  port.postMessage(errorReply(e) satisfies WorkerReply);
  process.exit(0);
}

port.on('message', async (m: WorkerRequest & { id: number }) => {
  if (m.type === 'dispose') {
    await session.dispose();
    port.postMessage({ type: 'disposed' } satisfies WorkerReply);
    port.close();
    return;
  }
  try {
    const r = await session.run(m.input);
    const outputs = [...r.outputs.entries()];
    // Copies, so their buffers can be transferred without touching ORT's own memory.
    const copies = outputs.map(([name, data]) => [name, data.slice()] as [string, Float32Array]);
    port.postMessage(
      { type: 'result', id: m.id, result: copies } satisfies WorkerReply,
      copies.map(([, d]) => d.buffer as ArrayBuffer),
    );
  } catch (e) {
    port.postMessage({ type: 'error', id: m.id, message: messageOf(e) } satisfies WorkerReply);
  }
});
