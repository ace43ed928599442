/**
 * How a loop gets its frames: the next frame of each stream in turn, up to the batch size (the pipelined loop: one
 * stream, a frame at a time, decoded on libuv's pool).
 * A file is read at once; with `--realtime` it is paced as a camera delivers it (frame k arrives at start + k / fps,
 * the ones that arrived while the loop was busy are read, dropped and counted); a live source (camera, RTSP) in a
 * batch is read on libuv's pool, so a slow camera does not hold up the others: a batch goes when full, or
 * `--batch-timeout` after its first frame arrived, and a read still under way joins a later batch.
 */
import type { Mat } from '../video/opencv.ts';
import { isLive } from '../video/sources.ts';
import { maxOf } from '../util/stats.ts';
import type { FrameRead, StreamState } from './frame-tail.ts';
import { type LoopIo, readNextFrame } from './loop-shared.ts';
import type { LoopOptions } from './loop-options.ts';
import { rangeName, type RangeOps } from './nvtx.ts';
import { nsToMs } from './stages.ts';

/** A frame read for the batch being formed. */
export interface StreamFrame extends FrameRead {
  /** When its read ended (hrtime ns). */
  t1: bigint;
  /** The model runs on it (else --interval's tracker carries its boxes). */
  inferHere: boolean;
}

interface PendingRead {
  t0: bigint;
  ranges: RangeOps;
  done: boolean;
  got?: { frame: Mat; frameRange: unknown } | null;
  t1?: bigint;
  error?: unknown;
  promise: Promise<void>;
}

/** What take() gives: a frame, the moment the next one arrives, the read under way, or nothing (stream done). */
type Take = StreamFrame | { arrivesAt: bigint } | { reading: Promise<void> } | undefined;

const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, Math.ceil(ms))));
const earlier = (a: bigint | undefined, b: bigint | undefined) =>
  a === undefined || (b !== undefined && b < a) ? b : a;

export class StreamReads {
  readonly state: StreamState[];
  private readonly pending: (PendingRead | undefined)[];
  private readonly live: boolean[];
  private readonly paced: boolean[];
  private readonly intervalNs: bigint[];
  /** When each paced stream's frame 0 arrives after the start: 0, or i/n of a frame time with --stagger. */
  private readonly phaseNs: bigint[];
  private readonly batchTimeoutNs: bigint;
  private readonly start = process.hrtime.bigint();
  private cursor = 0;

  constructor(
    private readonly ios: LoopIo[],
    private readonly o: Pick<LoopOptions, 'realtime' | 'maxFrames' | 'warmup' | 'interval' | 'batchTimeout'>,
    private readonly loop: {
      /** Frames of several streams go through the model together (live sources are then read in the background). */
      batched: boolean;
      /** Files are decoded (and resized to --frame-size) on libuv's pool too (the pipelined loop: its main thread runs
       * other frames meanwhile). */
      readAsync?: boolean;
      /** How the loop's NVTX ranges open and close; the reads open each frame's `frame` and `read` ranges with them. */
      ranges: RangeOps;
      /** Called with a frame's read start: the moment the run's times count from, once. */
      begin: (t: bigint) => void;
    },
  ) {
    this.state = ios.map(() => ({ index: 0, done: false, endOfStream: false, dropped: 0 }));
    this.pending = ios.map(() => undefined);
    this.live = ios.map((io) => loop.batched && isLive(io.source.kind));
    // --realtime paces files and image folders; a live source keeps its own pace
    this.paced = ios.map((io) => !!o.realtime && !isLive(io.source.kind));
    const fps = ios.map((io) => o.realtime?.fps ?? io.source.info.fps);
    this.intervalNs = fps.map((f) => BigInt(Math.round(1e9 / f)));
    this.phaseNs = this.intervalNs.map((t, i) => (o.realtime?.staggered ? (t * BigInt(i)) / BigInt(ios.length) : 0n));
    this.batchTimeoutNs = BigInt(Math.round((o.batchTimeout ?? 1000 / maxOf(fps)) * 1e6));
    if (o.realtime) loop.begin(this.start);
  }

  get allDone(): boolean {
    return this.state.every((s) => s.done);
  }

  /**
   * The next batch: the next frame of up to `size` streams, in turn from the stream after the last batch's. A batch
   * not full waits for frames still to come (paced files, live reads under way) until --batch-timeout after its first
   * frame arrived; with no frame yet it waits for the first (waking every 100 ms to see `shouldStop`). May be empty.
   */
  async gather(size: number, shouldStop: () => boolean): Promise<StreamFrame[]> {
    const gatherStart = process.hrtime.bigint();
    const members: StreamFrame[] = [];
    const waiting: { i: number; arrivesAt?: bigint; reading?: Promise<void> }[] = [];
    const add = (i: number, t: Take) => {
      if (t && 'frame' in t) members.push(t);
      else if (t) waiting.push({ i, ...t });
    };
    for (let k = 0; k < this.ios.length && members.length < size; k++) {
      const i = (this.cursor + k) % this.ios.length;
      add(i, await this.take(i));
    }
    while (members.length < size && waiting.length > 0 && !shouldStop()) {
      const first = members.reduce<bigint | undefined>((a, m) => earlier(a, m.tCapture ?? m.t1), undefined);
      const deadline = first === undefined ? undefined : first + this.batchTimeoutNs;
      const nextAt = waiting.reduce<bigint | undefined>((a, w) => earlier(a, w.arrivesAt), undefined);
      const reads = waiting.flatMap((w) => (w.reading ? [w.reading] : []));
      const now = process.hrtime.bigint();
      if (deadline !== undefined) {
        const nothingInTime = reads.length === 0 && nextAt !== undefined && nextAt > deadline;
        if (now >= deadline || nothingInTime) break;
      }
      // wake at the next paced arrival, the deadline or a read's end, and at least every 100 ms
      const until = earlier(earlier(now + 100_000_000n, nextAt), deadline)!;
      await Promise.race([...reads, sleepMs(Number(until - now) / 1e6)]);
      const ready = process.hrtime.bigint();
      for (const w of waiting.splice(0)) {
        const arrived = w.reading ? this.pending[w.i]?.done : w.arrivesAt! <= ready;
        if (arrived && members.length < size) add(w.i, await this.take(w.i));
        else waiting.push(w);
      }
    }
    if (members.length > 0) this.cursor = (members[members.length - 1].stream + 1) % this.ios.length;
    // in a batch, a frame's read is the time the batch waited for it after the frame before it arrived
    if (this.loop.batched) {
      let prev = gatherStart;
      for (const m of [...members].sort((a, b) => (a.t1 < b.t1 ? -1 : a.t1 > b.t1 ? 1 : 0))) {
        const from = m.t0 > prev ? m.t0 : prev;
        m.readMs = m.t1 > from ? nsToMs(m.t1 - from) : 0;
        if (m.t1 > prev) prev = m.t1;
      }
    }
    return members;
  }

  /** Reads still under way when the loop ends are waited for (a capture is not released under a read). */
  async settle(): Promise<void> {
    for (const [i, p] of this.pending.entries()) {
      if (!p) continue;
      this.pending[i] = undefined;
      if (!p.done) await Promise.race([p.promise, sleepMs(10_000)]);
      if (p.got) p.ranges.close(p.got.frameRange);
    }
  }

  /**
   * Stream i's ranges for its frame `index`: the loop's, and with several streams a `stream-<i>` range opened with
   * each `frame` range and closed after it (an end-of-stream read gets neither), so a profile shows time per stream
   * while the stage ranges keep their names.
   */
  private rangesFor(i: number, index: number): RangeOps {
    const base = this.loop.ranges;
    if (this.ios.length < 2) return base;
    const frameName = rangeName('frame', index, this.o.warmup);
    return {
      open: (n) =>
        n === frameName
          ? { pair: [base.open(rangeName(`stream-${i}`, index, this.o.warmup)), base.open(n)] }
          : base.open(n),
      close: (h) => {
        if (h && typeof h === 'object' && 'pair' in h) {
          const [stream, frame] = (h as { pair: unknown[] }).pair;
          base.close(frame);
          base.close(stream);
        } else base.close(h);
      },
    };
  }

  /** Frame `index` of stream i handed out: the stream's counter moves on here, and only here. */
  private frame(
    i: number,
    got: { frame: Mat; frameRange: unknown },
    ranges: RangeOps,
    t0: bigint,
    t1: bigint,
    tCapture?: bigint,
  ): StreamFrame {
    const index = this.state[i].index++;
    const inferHere = !this.o.interval || index % (this.o.interval + 1) === 0;
    const closeFrame = () => ranges.close(got.frameRange);
    return { stream: i, index, frame: got.frame, closeFrame, t0, t1, tCapture, inferHere, readMs: nsToMs(t1 - t0) };
  }

  private startLiveRead(i: number): PendingRead {
    const io = this.ios[i];
    const index = this.state[i].index;
    const ranges = this.rangesFor(i, index);
    const p = { t0: process.hrtime.bigint(), ranges, done: false } as PendingRead;
    p.promise = readNextFrame(io.source, true, 0, index, ranges, io.resize, this.o.warmup).then(
      (got) => void Object.assign(p, { got, t1: process.hrtime.bigint(), done: true }),
      (error: unknown) => void Object.assign(p, { error, done: true }),
    );
    this.pending[i] = p;
    return p;
  }

  private async take(i: number): Promise<Take> {
    const io = this.ios[i];
    const s = this.state[i];
    const { maxFrames, warmup: warmupFrames } = this.o;
    if (s.done) return undefined;
    if (maxFrames !== undefined && s.index >= maxFrames && !this.pending[i]) {
      s.done = true;
      return undefined;
    }
    if (this.live[i]) {
      const p = this.pending[i] ?? this.startLiveRead(i);
      if (!p.done) return { reading: p.promise };
      this.pending[i] = undefined;
      if (p.error) throw p.error;
      if (!p.got) {
        s.done = s.endOfStream = true;
        return undefined;
      }
      this.loop.begin(p.t0);
      // a live frame exists from when its read returned: latency counts from there
      return this.frame(i, p.got, p.ranges, p.t0, p.t1!, p.t1);
    }
    let tCapture: bigint | undefined;
    if (this.paced[i]) {
      // frame k of stream i arrives at zero + k frame times (zero: the start, later by i/n of a frame with --stagger)
      const zero = this.start + this.phaseNs[i];
      const now = process.hrtime.bigint();
      const arrives = zero + BigInt(s.index) * this.intervalNs[i];
      if (now < arrives) return { arrivesAt: arrives };
      // the newest frame that arrived; the ones before it arrived while the loop was busy and are gone, as from a
      // camera: read and counted
      const due = Number((now - zero) / this.intervalNs[i]);
      for (; s.index < due && !s.done; s.index++) {
        if (maxFrames !== undefined && s.index >= maxFrames) break;
        const gone = io.source.read();
        if (!gone) s.done = s.endOfStream = true;
        else {
          gone.release();
          if (s.index >= warmupFrames) s.dropped++;
        }
      }
      if (s.done || (maxFrames !== undefined && s.index >= maxFrames)) {
        s.done = true;
        return undefined;
      }
      tCapture = zero + BigInt(s.index) * this.intervalNs[i];
    }
    const t0 = process.hrtime.bigint();
    this.loop.begin(t0);
    const ranges = this.rangesFor(i, s.index);
    const got = await readNextFrame(
      io.source,
      !!this.loop.readAsync,
      io.source.info.frameCount,
      s.index,
      ranges,
      io.resize,
      warmupFrames,
    );
    if (!got) {
      s.done = s.endOfStream = true;
      return undefined;
    }
    return this.frame(i, got, ranges, t0, process.hrtime.bigint(), tCapture);
  }
}
