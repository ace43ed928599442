/**
 * The worker side of postprocess.ts' PostprocessThread: one Postprocessor, the frames' heads in, their boxes out (or
 * the error a frame threw: a NaN model's). Loads neither OpenCV nor ONNX Runtime.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorReply } from '../util/worker.ts';
import { Postprocessor, type PostprocessReply, type PostprocessRequest } from './postprocess.ts';

const port = parentPort!;
const post = new Postprocessor(...(workerData as ConstructorParameters<typeof Postprocessor>));
port.postMessage({ type: 'ready' } satisfies PostprocessReply);
port.on('message', (m: PostprocessRequest & { id: number }) => {
  if (m.type === 'close') return port.close(); // nothing else holds the thread: it ends
  try {
    port.postMessage({ type: 'result', id: m.id, result: post.run(new Map(m.heads)) } satisfies PostprocessReply);
  } catch (e) {
    port.postMessage(errorReply(e, m.id) satisfies PostprocessReply);
  }
});
