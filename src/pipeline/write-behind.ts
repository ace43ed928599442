/**
 * The sequential loop's writes, one frame behind, so that encoding overlaps the CPU stages but never the model.
 *
 * A frame's tail draws it and leaves it here (`hold`); after the next model run it is handed to the encoder
 * (`handOff`: OpenCV's write converts it and queues it), which encodes it on threads of its own while the loop
 * postprocesses, draws, reads and preprocesses the next frames; before the model's next run the loop waits for the
 * encoder to be done (`settle`). So the inference stage holds the model alone, as when every write waited for its
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
    // each frame leaves the list as it is handed over, so a write that throws (a full disk) leaves drop() only the
    // frames not yet released
    for (let h = this.held.shift(); h; h = this.held.shift()) {
      const t0 = process.hrtime.bigint();
      const r = this.ranges.open(warmRange('write', h.warmup));
      try {
        h.io.sink!.write(h.frame);
      } finally {
        // written: its pixels go back now, not at V8's next collection (see InputBuffers in preprocess.ts)
        h.frame.release();
        this.ranges.close(r);
      }
      const t1 = process.hrtime.bigint();
      this.tally.addWrite(h.row, nsToMs(t1 - t0), t1);
      this.encoding.push(h);
    }
  }

  /** Waits for the encoders of the frames handed off (call before a model run); the wait goes to the last of them. */
  settle(): void {
    if (this.encoding.length === 0) return;
    const last = this.encoding[this.encoding.length - 1];
    const t0 = process.hrtime.bigint();
    const r = this.ranges.open(warmRange('encoder-wait', last.warmup));
    for (const io of new Set(this.encoding.map((e) => e.io))) io.sink!.settle();
    this.ranges.close(r);
    const t1 = process.hrtime.bigint();
    this.tally.addWrite(last.row, nsToMs(t1 - t0), t1);
    this.encoding = [];
  }

  /** The end of the loop (done or stopped): every frame held written and encoded. */
  finish(): void {
    this.handOff();
    this.settle();
  }

  /** After a failure: the frames held are released unwritten. */
  drop(): void {
    for (const h of this.held) h.frame.release();
    this.held = [];
    this.encoding = [];
  }
}
