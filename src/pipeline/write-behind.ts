/**
 * The sequential loop's writes, one frame behind, so that encoding overlaps the CPU stages but never the model.
 *
 * A frame's tail draws it and leaves it here (`hold`); after the next model run it is handed to the encoder
 * (`handOff`: OpenCV's write, on libuv's thread pool, converts it and queues it), which encodes it on threads of its
 * own while the loop postprocesses, draws, reads and preprocesses the next frames; before the model's next run the
 * loop waits for the write and the encoder to be done (`settle`). The write off the main thread: 1.7 ms of a 960x540
 * frame's main-thread time here (docs/MEASUREMENTS.md), five times that on a Nano's core. So the inference stage holds the model alone, as when every write waited for its
 * encoder, and the encoding no longer stops the loop: on 2 cores it runs beside the CPU stages. Both the hand-off and
 * the wait are added to the written frame's write stage (LoopTally.addWrite), so the stages still add up to the wall
 * time. In a profile the hand-off is a `write` range (one a frame) and the wait an `encoder-wait` range (one before
 * each model run that found frames handed off). The pipelined loop does not use this: it writes through OpenCV's
 * async writer.
 */
import type { Mat } from '../video/opencv.ts';
import { type LoopIo, type RangeOps, warmRange } from './loop-shared.ts';
import type { LoopTally, TallyRow } from './loop-tally.ts';
import { nsToMs } from './stages.ts';

interface Held {
  io: LoopIo;
  frame: Mat;
  row: TallyRow;
  /** A warm-up frame: its ranges are `warmup-write` and `warmup-encoder-wait`. */
  warmup: boolean;
}

export class WriteBehind {
  private held: Held[] = [];
  /** Frames handed to their encoders and not yet waited for. */
  private encoding: Held[] = [];
  /** Their writes, under way on libuv's pool: each writer's last, which its next one waits for. */
  private writing = new Map<LoopIo, Promise<void>>();

  constructor(
    private readonly tally: LoopTally,
    private readonly ranges: RangeOps,
  ) {}

  /** A drawn frame to write after the model's next run; its record is `row`. */
  hold(io: LoopIo, frame: Mat, row: TallyRow, warmup: boolean): void {
    this.held.push({ io, frame, row, warmup });
  }

  /** Hands the frames held to their encoders (call after a model run), each timed into its write stage. */
  handOff(): void {
    for (let h = this.held.shift(); h; h = this.held.shift()) {
      const t0 = process.hrtime.bigint();
      const r = this.ranges.open(warmRange('write', h.warmup));
      const { io, frame } = h;
      // RULE (ordering): a writer takes one frame at a time, in order (two of its writes at once on the pool wrote a
      // frame twice); a frame is handed over before its wait when the batch ran no model (--interval) or the loop ends
      const write = (this.writing.get(io) ?? Promise.resolve()).then(() => io.sink!.writeAsync(frame));
      // RULE (native memory): released once its write is done, not before (the pool's thread reads its pixels) and
      // not at V8's next collection (see InputBuffers in preprocess.ts); a write that fails (a full disk) too
      const done = write.finally(() => frame.release());
      done.catch(() => undefined); // a failure is thrown by settle(), not as an unhandled rejection meanwhile
      this.writing.set(io, done);
      this.ranges.close(r);
      const t1 = process.hrtime.bigint();
      this.tally.addWrite(h.row, nsToMs(t1 - t0), t1);
      this.encoding.push(h);
    }
  }

  /**
   * Waits for the writes and the encoders of the frames handed off (call before a model run); the wait goes to the
   * last of them. A write that failed throws here, once every other one has ended.
   */
  async settle(): Promise<void> {
    if (this.encoding.length === 0) return;
    const last = this.encoding[this.encoding.length - 1];
    const t0 = process.hrtime.bigint();
    const r = this.ranges.open(warmRange('encoder-wait', last.warmup));
    const writes = await Promise.allSettled(this.writing.values());
    this.writing.clear();
    const failed = writes.find((w) => w.status === 'rejected');
    if (failed) {
      this.ranges.close(r);
      throw failed.reason;
    }
    for (const io of new Set(this.encoding.map((e) => e.io))) io.sink!.settle();
    this.ranges.close(r);
    const t1 = process.hrtime.bigint();
    this.tally.addWrite(last.row, nsToMs(t1 - t0), t1);
    this.encoding = [];
  }

  /** The end of the loop (done or stopped): every frame held written and encoded. */
  async finish(): Promise<void> {
    this.handOff();
    await this.settle();
  }

  /** After a failure: the frames held are released unwritten; the writes under way release theirs as they end. */
  async drop(): Promise<void> {
    for (const h of this.held) h.frame.release();
    this.held = [];
    await Promise.allSettled(this.writing.values());
    this.writing.clear();
    this.encoding = [];
  }
}
