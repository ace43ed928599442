/**
 * The pipelined frame loop: read + preprocess, inference, and postprocess + write run as three stages at once, with
 * at most `inFlight` frames between the first and the last (default 3), so memory stays flat however long the
 * video. Frames are written in order. OpenCV's work runs through its async methods (libuv's thread pool) from the
 * main thread where they are stable (decode and encode), inference in ONNX Runtime's worker thread or TensorRT's
 * async calls.
 *
 * Each stage of each frame is timed as in the sequential loop, so the statistics mean the same: inference FPS =
 * frames / time in inference; end-to-end FPS = frames / wall time. Here the stages overlap, so end-to-end FPS can
 * approach inference FPS, which is the point. NVTX uses start/end ranges, which may overlap.
 */
import type { DetectorSession, InferenceResult } from '../backends/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { finishFrame, finishStreams, type FrameRead, type StreamState, type TailContext } from './frame-tail.ts';
import { abortStreams, type LoopIo, noFrameDecoded, planned } from './loop-shared.ts';
import { type LoopOptions } from './loop-options.ts';
import { rangeName, type RangeOps, startEndRanges } from './nvtx.ts';
import type { ModelInput } from './preprocess.ts';
import { ModelStep } from './model-step.ts';
import { LoopTally } from './loop-tally.ts';
import type { LoopResult } from './loop-result.ts';
import { WriteNow } from './frame-writes.ts';
import { StreamReads } from './stream-reads.ts';
import { turnEventLoop } from '../util/process.ts';
import { PostprocessThread } from '../detect/postprocess.ts';

/** A counting semaphore; `open()` lets every waiter through (used when a stage fails). */
class Slots {
  private free: number;
  private waiters: (() => void)[] = [];
  private opened = false;
  constructor(n: number) {
    this.free = n;
  }
  acquire(): Promise<void> {
    if (this.opened || this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((r) => this.waiters.push(r));
  }
  release(): void {
    const w = this.waiters.shift();
    if (w) w();
    else this.free++;
  }
  open(): void {
    this.opened = true;
    for (const w of this.waiters.splice(0)) w();
  }
}

/** An unbounded FIFO whose take() waits; null marks the end. (The slots bound how many items exist.) */
class Channel<T> {
  private items: (T | null)[] = [];
  private takers: ((v: T | null) => void)[] = [];
  put(v: T | null): void {
    const t = this.takers.shift();
    if (t) t(v);
    else this.items.push(v);
  }
  take(): Promise<T | null> {
    if (this.items.length) return Promise.resolve(this.items.shift()!);
    return new Promise((r) => this.takers.push(r));
  }
}

/** A frame in flight: its read (the shape the sequential loop's frames have too), its input, the model's result. */
interface InFlight extends FrameRead {
  input: ModelInput;
  preprocessMs: number;
  tInference?: bigint;
  inferenceMs?: number;
  result?: InferenceResult;
}

/**
 * One stream (the job runs several through the sequential loop), its stages overlapping; its source and output are
 * the one the job opened (`ios`, loop-shared.ts openStreams), which the loop closes.
 */
export async function runPipelinedLoop(
  session: DetectorSession,
  model: YoloModelInfo,
  o: LoopOptions,
  ios: LoopIo[],
): Promise<LoopResult> {
  if (ios.length !== 1) {
    abortStreams(ios);
    throw new RangeError(`the pipelined loop runs one stream, not ${ios.length} (the run plan decides the loop)`);
  }
  const run = new PipelinedRun(session, model, o, ios);
  await run.start();
  await Promise.all([run.readStage(), run.inferStage(), run.writeStage()]);
  return run.finish();
}

/** The three stages of one pipelined run and what they share: the slots, the two channels, the tally, the failure. */
class PipelinedRun {
  private readonly ranges: RangeOps;
  private readonly slots: Slots;
  private readonly step: ModelStep;
  private readonly toInfer = new Channel<InFlight>();
  private readonly toWrite = new Channel<InFlight>();
  private readonly tally: LoopTally;
  private readonly tail: TailContext;
  private readonly postThread: PostprocessThread;
  private readonly reads: StreamReads;
  private readonly totalFrames: number;
  private framesRead = 0;
  private framesWritten = 0;
  private interrupted = false;
  private failure: unknown;

  constructor(
    session: DetectorSession,
    model: YoloModelInfo,
    private readonly o: LoopOptions,
    private readonly ios: LoopIo[],
  ) {
    this.ranges = startEndRanges(o.nvtx);
    this.slots = new Slots(planned(o.inFlight, 'inFlight'));
    this.tally = new LoopTally(o.warmup, model.labels);
    this.reads = new StreamReads(ios, o, {
      batched: false,
      readAsync: true,
      ranges: this.ranges,
      begin: (t) => this.tally.begin(t),
    });
    // overlap is this loop's point: the encoder may run on while the next frame is inferred
    const writes = new WriteNow(this.tally, this.ranges);
    // every frame in flight has its input, and the last one inferred keeps its own for the model-alone runs
    // preprocessing on libuv's pool: the pixels on another core while this thread runs the other stages
    this.step = new ModelStep(session, model, this.ranges, writes, {
      cv: ios[0].cv,
      alive: o.inFlight + 1,
      pooled: true,
    });
    // decoding and NMS beside this thread, on another core (a Nano's main thread is what limits it)
    this.postThread = new PostprocessThread(ios[0].post);
    this.tail = {
      postprocessThread: this.postThread,
      ios: this.ios,
      tally: this.tally,
      backend: session.backend,
      model,
      warmupFrames: o.warmup,
      ranges: this.ranges,
      boxes: o.keepBoxes ? [[]] : undefined,
      streamColumn: !!o.streamColumn,
      onHeads: o.onHeads,
      writes,
    };
    const { frameCount } = this.ios[0].source.info;
    this.totalFrames = o.maxFrames ? Math.min(o.maxFrames, frameCount || o.maxFrames) : frameCount;
  }

  private fail(e: unknown): void {
    this.failure ??= e;
    this.slots.open();
  }

  /** The postprocess thread running before the first read: its start-up is in no frame's time. */
  async start(): Promise<void> {
    await this.postThread.ready.catch((e: unknown) => this.fail(e));
  }

  /** Read and preprocess, at most `inFlight` frames ahead of the write. */
  async readStage(): Promise<void> {
    const { o } = this;
    const { g } = this.ios[0];
    try {
      while (this.failure === undefined) {
        await this.slots.acquire();
        if (this.failure !== undefined || o.shouldEnd?.()) break;
        if (o.shouldStop()) {
          this.interrupted = true;
          break;
        }
        const [got] = await this.reads.gather(1, o.shouldStop);
        if (!got) break;
        const pre = await this.step.preprocess([{ frame: got.frame, g }], rangeName('preprocess', got.index, o.warmup));
        this.framesRead++;
        this.toInfer.put({ ...got, input: pre.input, preprocessMs: pre.ms });
      }
    } catch (e) {
      this.fail(e);
    } finally {
      this.toInfer.put(null);
    }
  }

  /** The model, one frame at a time, while the next frame is read and the last one written. */
  async inferStage(): Promise<void> {
    const { o } = this;
    try {
      for (let item = await this.toInfer.take(); item; item = await this.toInfer.take()) {
        if (this.failure !== undefined) continue;
        const run = await this.step.run(item.input, 1, rangeName('inference', item.index, o.warmup));
        item.result = run.result;
        item.tInference = run.tInference;
        item.inferenceMs = run.ms;
        this.toWrite.put(item);
      }
    } catch (e) {
      this.fail(e);
    } finally {
      this.toWrite.put(null);
    }
  }

  /** Each frame's tail (frame-tail.ts), in order; its slot is freed for the next read. */
  async writeStage(): Promise<void> {
    try {
      for (let item = await this.toWrite.take(); item; item = await this.toWrite.take()) {
        if (this.failure !== undefined) continue;
        // Rule (ordering): a model's result wakes this stage first; a turn of the event loop lets the inference stage
        // issue the next run before this frame's tail takes the main thread, else the engine waits for every tail
        // (e2e 0.75 of inference with 80 boxes a frame on the Nano stand-in, 0.98 with it; test/writing.test.ts)
        await turnEventLoop();
        await finishFrame(this.tail, {
          ...item,
          tInference: item.tInference!,
          inferenceMs: item.inferenceMs!,
          outputs: item.result!.outputs,
          device: item.result!.device,
        });
        this.framesWritten++;
        this.slots.release();
        this.o.onFrame?.(this.tally.progress(this.framesWritten, this.totalFrames));
      }
    } catch (e) {
      this.fail(e);
    }
  }

  /** After the three stages: a failure drops the output and is thrown; else the stream's end, as every loop ends. */
  async finish(): Promise<LoopResult> {
    const { ios, tally, interrupted } = this;
    await this.postThread.close();
    if (this.failure === undefined && this.framesRead === 0 && !interrupted)
      this.failure = noFrameDecoded(this.o.streams[0].source);
    if (this.failure !== undefined) {
      abortStreams(ios);
      throw this.failure;
    }
    const done = this.framesWritten;
    const state: StreamState[] = [{ ...this.reads.state[0], index: done, done: true }];
    const streams = await finishStreams(ios, tally, state, interrupted);
    const boxes = this.tail.boxes ?? [];
    return {
      tally,
      streams,
      interrupted,
      framesRead: done,
      inferredFrames: done,
      boxes,
      batches: [],
      lastInput: this.step.lastInput,
    };
  }
}
