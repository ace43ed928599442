/**
 * Worker threads jetprof starts (ONNX Runtime's session, the pipelined loop's postprocess): how one is started from
 * source or from the build, and the calls to it, each answered by id.
 */
import { Worker } from 'node:worker_threads';
import { type ErrorCode, JetprofError, messageOf } from './errors.ts';

/**
 * A worker thread running `name` (a module beside `caller`, the caller's import.meta.url): the built .js, or, from
 * source (tsx), a bootstrap that registers tsx in the worker before importing the .ts.
 */
export function startWorker(caller: string, name: string, workerData: unknown): Worker {
  if (!caller.endsWith('.ts')) return new Worker(new URL(`${name}.js`, caller), { workerData });
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const script = new URL(`${name}.ts`, caller).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(script)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** A worker's answer to call `id`; an error carries JetprofError's parts (without an id: the worker could not start). */
export type CallReply<T> =
  | { type: 'result'; id: number; result: T }
  | { type: 'error'; id?: number; message: string; code?: string; suggestion?: string };

/**
 * Calls to a worker thread, each answered by its id in order of the worker's replies; every other message (its
 * readiness, a warning, an error without an id) goes to `onOther`. A worker that fails or ends fails the calls still
 * waiting and every later one, and `onFail` hears it.
 */
export class WorkerCalls<T> {
  private readonly pending = new Map<number, { resolve: (r: T) => void; reject: (e: Error) => void }>();
  private readonly exited: Promise<void>;
  private ended = false;
  private nextId = 0;
  private failure: Error | undefined;

  constructor(
    private readonly worker: Worker,
    onOther: (m: { type: string }) => void,
    private readonly onFail: (e: Error) => void = () => undefined,
  ) {
    this.exited = new Promise((resolve) =>
      worker.once('exit', () => {
        this.ended = true;
        this.fail(new Error('the worker thread has ended'));
        resolve();
      }),
    );
    worker.on('message', (m: CallReply<T> | { type: string }) => {
      const reply = m as CallReply<T>;
      const call = 'id' in reply && reply.id !== undefined ? this.pending.get(reply.id) : undefined;
      if (!call || (reply.type !== 'result' && reply.type !== 'error')) return onOther(m);
      this.pending.delete(reply.id!);
      if (reply.type === 'result') call.resolve(reply.result);
      else call.reject(workerError(reply));
    });
    worker.on('error', (e) => this.fail(e));
  }

  /** `request` with a new id; `transfer`: buffers moved to the worker, not copied. */
  call<R extends { type: string }>(request: R, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }

  /**
   * Asks the worker to end on its own with `request` (it answers what it was handed first), terminating it after 5 s:
   * a thread stopped mid-way by terminate(), just before the process exits, leaves Nsight Systems 2022.4's agent
   * hanging.
   */
  async close<R extends { type: string }>(request: R): Promise<void> {
    if (this.ended) return;
    this.worker.postMessage(request);
    const timer = setTimeout(() => void this.worker.terminate(), 5000);
    await this.exited;
    clearTimeout(timer);
  }

  /** Stops the worker at once (it never became ready: nothing of it needs an orderly end). */
  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.onFail(this.failure);
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
  }
}

/** The reply to call `id` (none: the worker could not start) for an error thrown in the worker, its code and fix kept. */
export function errorReply(e: unknown, id?: number): Extract<CallReply<never>, { type: 'error' }> {
  const { code, suggestion } = e as { code?: string; suggestion?: string };
  return { type: 'error', ...(id === undefined ? {} : { id }), message: messageOf(e), code, suggestion };
}

/** A worker's error reply as the error it was. */
export function workerError(m: { message: string; code?: string; suggestion?: string }): JetprofError {
  return new JetprofError((m.code as ErrorCode) ?? 'TOOL_FAILED', m.message, { suggestion: m.suggestion });
}
