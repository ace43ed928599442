/**
 * How a loop's frames are written and recorded: a frame's tail hands its drawn frame here with its row so far, and
 * the row is recorded once, when the frame's write is done, so no row is amended afterwards. Two ways, one a loop:
 *
 * - `WriteNow` (the pipelined loop, and any frame with no output): the frame is written at once through OpenCV's
 *   async writer, so the next frame's inference goes on meanwhile; that is the pipelined loop's point.
 * - `WriteBehind` (the sequential loop): the frame waits here (`put`); after the model's next run it is handed to the
 *   encoder (`handOff`: OpenCV's write converts it and queues it), which encodes it on threads of its own while the
 *   loop postprocesses, draws, reads and preprocesses the next frames; before the model's next run the loop waits for
 *   the encoder to be done (`settle`). So the inference stage holds the model alone and encoding never stops the loop
 *   (on 2 cores it runs beside the CPU stages). The hand-off and the wait are the written frame's write stage, so the
 *   stages still add up to the wall time: its row ends after the next frame's inference began. In a profile the
 *   hand-off is a `write` range (one a frame) and the wait an `encoder-wait` range (one before each model run that
 *   found frames handed off).
 *
 * Rule (native memory): a frame's Mat is released as soon as its write returns, a failed write too; left to V8, the
 * pixels of every frame stay until a collection, and their churn made V8 collect every ~10 frames beside the model
 * (test/writing.test.ts counts the releases).
 */
import type { Mat } from '../video/opencv.ts';
import type { LoopIo } from './loop-shared.ts';
import { type RangeOps, warmRange } from './nvtx.ts';
import type { FrameRow, LoopTally } from './loop-tally.ts';
import { nsToMs } from './stages.ts';

/** A drawn frame on its way out: its stream, its Mat, its row so far (write time 0) and whether it is a warm-up frame. */
export interface FrameOut {
  io: LoopIo;
  frame: Mat;
  row: FrameRow;
  /** Its ranges are `warmup-write` and `warmup-encoder-wait`. */
  warmup: boolean;
  /** Closes its `frame` range: after its write when written now; at once when written behind (outside its range). */
  closeFrame: () => void;
}

/** What a loop's frame tail writes through; `settle` and `handOff` bracket every model run (no-ops for WriteNow). */
export interface FrameWrites {
  /** Writes the frame (now, or after the model's next run) and records its row once the write is done. */
  put(f: FrameOut): Promise<void>;
  /** Rule (ordering): called just before each model run, so the encoder never runs beside the model. */
  settle(): void;
  /** Rule (ordering): called just after each model run, so the encoder works while the CPU stages run. */
  handOff(): void;
  /** The end of the loop (done or stopped): every frame written and recorded. */
  finish(): void;
  /** After a failure: frames not yet written are released unwritten. */
  drop(): void;
}

/** The write stage added to a frame's row: `ms` more of it, ending at `tEnd`. */
function addWrite(row: FrameRow, ms: number, tEnd: bigint): void {
  row.clock.writeMs += ms;
  if (tEnd > row.clock.tEnd) row.clock.tEnd = tEnd;
}

/** Each frame written as its tail reaches it (OpenCV's async writer), then released and recorded. */
export class WriteNow implements FrameWrites {
  constructor(
    private readonly tally: LoopTally,
    private readonly ranges: RangeOps,
  ) {}

  async put(f: FrameOut): Promise<void> {
    const t0 = process.hrtime.bigint();
    const r = this.ranges.open(warmRange('write', f.warmup));
    try {
      if (f.io.sink) await f.io.sink.writeAsync(f.frame);
    } finally {
      f.frame.release();
      this.ranges.close(r);
      f.closeFrame();
    }
    const t1 = process.hrtime.bigint();
    addWrite(f.row, nsToMs(t1 - t0), t1);
    this.tally.record(f.row);
  }

  settle(): void {}
  handOff(): void {}
  finish(): void {}
  drop(): void {}
}

/** Each frame written one model run behind (see the top of this file). */
export class WriteBehind implements FrameWrites {
  private held: FrameOut[] = [];
  /** Frames handed to their encoders and not yet waited for. */
  private encoding: FrameOut[] = [];
  private readonly now: WriteNow;

  constructor(
    private readonly tally: LoopTally,
    private readonly ranges: RangeOps,
  ) {
    this.now = new WriteNow(tally, ranges);
  }

  /** A frame with no output has nothing to wait for: its (empty) write and its record are now. */
  async put(f: FrameOut): Promise<void> {
    if (!f.io.sink) return this.now.put(f);
    f.closeFrame();
    this.held.push(f);
  }

  handOff(): void {
    // each frame leaves the list as it is handed over, so a write that throws (a full disk) leaves drop() only the
    // frames not yet released
    for (let h = this.held.shift(); h; h = this.held.shift()) {
      const t0 = process.hrtime.bigint();
      const r = this.ranges.open(warmRange('write', h.warmup));
      try {
        h.io.sink!.write(h.frame);
      } finally {
        h.frame.release();
        this.ranges.close(r);
      }
      const t1 = process.hrtime.bigint();
      addWrite(h.row, nsToMs(t1 - t0), t1);
      this.encoding.push(h);
    }
  }

  /** Waits for the encoders of the frames handed off; the wait goes to the last of them; then each row is recorded. */
  settle(): void {
    if (this.encoding.length === 0) return;
    const last = this.encoding[this.encoding.length - 1];
    const t0 = process.hrtime.bigint();
    const r = this.ranges.open(warmRange('encoder-wait', last.warmup));
    for (const io of new Set(this.encoding.map((e) => e.io))) io.sink!.settle();
    this.ranges.close(r);
    const t1 = process.hrtime.bigint();
    addWrite(last.row, nsToMs(t1 - t0), t1);
    for (const e of this.encoding) this.tally.record(e.row);
    this.encoding = [];
  }

  finish(): void {
    this.handOff();
    this.settle();
  }

  drop(): void {
    for (const h of this.held) h.frame.release();
    this.held = [];
    this.encoding = [];
  }
}
