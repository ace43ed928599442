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
import type { Mat } from '../video/opencv.ts';
import {
  drawFrame,
  finishLoop,
  type FrameLoopOptions,
  type FrameLoopResult,
  noFrameDecoded,
  openLoopIo,
  preprocessFrame,
  rangeName,
  readNextFrame,
  startEndRanges,
} from './loop-io.ts';
import { LoopTally } from './loop-tally.ts';
import { nsToMs } from './stages.ts';

export interface PipelineOptions extends FrameLoopOptions {
  /** Frames between the start of their read and the end of their write; default 3. */
  inFlight?: number;
}

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

interface InFlight {
  index: number;
  frame: Mat;
  input: Float32Array;
  blob: Mat;
  frameRange: unknown;
  tRead0: bigint;
  readMs: number;
  preprocessMs: number;
  tInference?: bigint;
  inferenceMs?: number;
  result?: InferenceResult;
}

export async function runPipelinedLoop(
  session: DetectorSession,
  model: YoloModelInfo,
  o: PipelineOptions,
): Promise<FrameLoopResult> {
  const io = openLoopIo(model, o);
  const { cv, source, resize, g, sink } = io;
  const { nvtx } = o;
  const ranges = startEndRanges(nvtx);
  const slots = new Slots(Math.max(1, o.inFlight ?? 3));
  const toInfer = new Channel<InFlight>();
  const toWrite = new Channel<InFlight>();
  const tally = new LoopTally(o.warmupFrames, model.labels, o.keepBoxes);
  const totalFrames = o.maxFrames
    ? Math.min(o.maxFrames, source.info.frameCount || o.maxFrames)
    : source.info.frameCount;
  let framesRead = 0;
  let framesWritten = 0;
  let interrupted = false;
  let failure: unknown;
  const fail = (e: unknown) => {
    failure ??= e;
    slots.open();
  };

  let endOfStream = false;
  const readStage = async () => {
    try {
      for (let index = 0; failure === undefined; index++) {
        if (o.maxFrames !== undefined && index >= o.maxFrames) break;
        await slots.acquire();
        if (failure !== undefined) break;
        if (o.shouldEnd?.()) break;
        if (o.shouldStop()) {
          interrupted = true;
          break;
        }
        const tRead0 = process.hrtime.bigint();
        tally.begin(tRead0);
        const got = await readNextFrame(
          () => source.readAsync(),
          source.info.frameCount,
          index,
          ranges,
          resize,
          o.warmupFrames,
        );
        if (!got) {
          endOfStream = true;
          break;
        }
        const t1 = process.hrtime.bigint();
        const pre = nvtx.start(rangeName('preprocess', index, o.warmupFrames));
        // Synchronous on purpose: with blobFromImageAsync / resizeAsync in this loop, V8 aborted now and then
        // ("Check failed: marking_done_", @u4/opencv4nodejs 7.1.2 on OpenCV 4.6); readAsync and writeAsync are fine.
        const { input, blob } = preprocessFrame(cv, got.frame, g);
        nvtx.end(pre);
        const t2 = process.hrtime.bigint();
        framesRead++;
        toInfer.put({
          index,
          frame: got.frame,
          input,
          blob,
          frameRange: got.frameRange,
          tRead0,
          readMs: nsToMs(t1 - tRead0),
          preprocessMs: nsToMs(t2 - t1),
        });
      }
    } catch (e) {
      fail(e);
    } finally {
      toInfer.put(null);
    }
  };

  const inferStage = async () => {
    try {
      for (let item = await toInfer.take(); item; item = await toInfer.take()) {
        if (failure !== undefined) continue;
        const r = nvtx.start(rangeName('inference', item.index, o.warmupFrames));
        const t0 = process.hrtime.bigint();
        item.result = await session.run(item.input, item.blob);
        item.tInference = t0;
        item.inferenceMs = nsToMs(process.hrtime.bigint() - t0);
        nvtx.end(r);
        toWrite.put(item);
      }
    } catch (e) {
      fail(e);
    } finally {
      toWrite.put(null);
    }
  };

  const writeStage = async () => {
    try {
      for (let item = await toWrite.take(); item; item = await toWrite.take()) {
        if (failure !== undefined) continue;
        const result = item.result!;
        const name = (n: string) => rangeName(n, item.index, o.warmupFrames);
        const post = nvtx.start(name('postprocess'));
        const t3 = process.hrtime.bigint();
        const frameResult = io.post.run(result.outputs);
        const drawMs = drawFrame(io, item.frame, frameResult.detections, tally, session.backend, model);
        const t4 = process.hrtime.bigint();
        nvtx.end(post);
        const wr = nvtx.start(name('write'));
        if (sink) await sink.writeAsync(item.frame);
        const t5 = process.hrtime.bigint();
        nvtx.end(wr);
        nvtx.end(item.frameRange);
        tally.record(
          {
            index: item.index,
            t0: item.tRead0,
            tInference: item.tInference!,
            tPostprocess: t3,
            tEnd: t5,
            readMs: item.readMs,
            preprocessMs: item.preprocessMs,
            inferenceMs: item.inferenceMs!,
            postprocessMs: nsToMs(t4 - t3),
            drawMs,
            writeMs: nsToMs(t5 - t4),
          },
          result,
          frameResult,
        );
        framesWritten++;
        slots.release();
        o.onFrame?.(tally.progress(framesWritten, totalFrames));
      }
    } catch (e) {
      fail(e);
    }
  };

  await Promise.all([readStage(), inferStage(), writeStage()]);
  if (failure === undefined && framesRead === 0 && !interrupted) failure = noFrameDecoded(o.videoPath);
  if (failure !== undefined) {
    source.close();
    sink?.abort();
    throw failure;
  }
  return { ...(await finishLoop(io, tally, framesWritten, interrupted)), endOfStream };
}
