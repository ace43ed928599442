/**
 * The video encoder's threads, so that a synchronous write can wait until they have done its work.
 *
 * Neither of OpenCV's writers encodes inside `write()`: FFmpeg's libx264 keeps a look-ahead of frames and encodes on
 * frame threads of its own, GStreamer's appsrc hands the frame to its streaming thread. Either way the encoding runs
 * during the next frames' inference, and a stage table would charge it to the model. The threads the writer started
 * are the ones that appeared in this process after it opened (the model's threads exist by then); a write is done when
 * none of them is running or waiting to run (state R in /proc/self/task/TID/stat) for two polls in a row.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { onCpuNs } from '../platform/machine-load.ts';

/** Polls this far apart while the encoder works (a frame takes milliseconds to encode). */
const POLL_MS = 0.1;
/** A write never waits longer than this for the encoder (a thread that never sleeps would stall the loop). */
const WAIT_LIMIT_MS = 2000;

/**
 * Thread names of the GStreamer writer's pipeline (src/video/gstreamer.ts names its appsrc opencvsrc; the muxer is
 * mp4mux, or qtmux after a Jetson's nvv4l2h264enc). NVENC itself encodes off the CPU: on a board the write stage holds
 * what the CPU does for the encoder (the conversion, the copy into its buffers), the encoder's own time overlaps.
 */
const WRITER_THREAD = /^(opencvsrc|mp4mux\d*|qtmux\d*):/;

function tasks(): string[] {
  try {
    return readdirSync('/proc/self/task');
  } catch {
    return [];
  }
}

/**
 * How often the writer's threads are listed again: at each of the first waits (x264 starts its threads at the first
 * frame; GStreamer renames a pooled thread when it streams for the writer), then every RESCAN_WAITS-th. Listing reads
 * every thread's name, and doing it at every write made V8 collect more often, its marking threads beside the next
 * inference (docs/MEASUREMENTS.md, "Small choices and what they measured").
 */
const FIRST_RESCANS = 3;
const RESCAN_WAITS = 25;

/**
 * Threads' names and whether they are running (state R in /proc/self/task/TID/stat), read into one small buffer: a
 * stat file stays open and is read again at each poll. Not readFileSync: a /proc file reports size 0, so Node reads it
 * through a fresh 64 KB buffer each time, external memory that made V8 run a full collection every few frames, its
 * marking threads beside the next inference (docs/MEASUREMENTS.md, "Small choices and what they measured").
 */
class ThreadStates {
  private readonly fds = new Map<string, number>();
  private readonly buf = Buffer.alloc(512);

  running(tid: string): boolean {
    let fd = this.fds.get(tid);
    try {
      if (fd === undefined) this.fds.set(tid, (fd = openSync(`/proc/self/task/${tid}/stat`, 'r')));
      const n = readSync(fd, this.buf, 0, this.buf.length, 0);
      // "pid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ") "
      const close = this.buf.lastIndexOf(') ', n);
      return close >= 0 && this.buf[close + 2] === 0x52; // 'R'
    } catch {
      this.forget(tid); // the thread has ended
      return false;
    }
  }

  /** The thread's name ('' once it has ended). */
  name(tid: string): string {
    let fd: number | undefined;
    try {
      fd = openSync(`/proc/self/task/${tid}/comm`, 'r');
      const n = readSync(fd, this.buf, 0, this.buf.length, 0);
      return this.buf.toString('latin1', 0, n);
    } catch {
      return '';
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Closes every stat file kept open. */
  closeAll(): void {
    for (const tid of [...this.fds.keys()]) this.forget(tid);
  }

  forget(tid: string): void {
    const fd = this.fds.get(tid);
    if (fd === undefined) return;
    this.fds.delete(tid);
    try {
      closeSync(fd);
    } catch {
      /* closed */
    }
  }
}

export class EncoderThreads {
  private readonly before: Set<string>;
  /** Threads started while the writer opened (FFmpeg opens libx264 there, its threads named after ours). */
  private duringOpen = new Set<string>();
  private readonly pause = new Int32Array(new SharedArrayBuffer(4));
  private readonly states = new ThreadStates();
  /** The writer's threads, as last listed (rescan). */
  private encoders: string[] = [];
  /** Writes whose encoder was still running after WAIT_LIMIT_MS. */
  timedOut = 0;
  /** Writes waited for, and those that found the encoder at work (the rest found it done already). */
  waits = 0;
  busyWaits = 0;
  /** False where /proc/self/task cannot be read (not Linux): writes then do not wait. */
  readonly available: boolean;

  /** Call just before the writer opens. */
  constructor() {
    const now = tasks();
    this.available = now.length > 0;
    this.before = new Set(now);
  }

  /** Call just after the writer opened. */
  opened(): void {
    for (const tid of tasks()) if (!this.before.has(tid)) this.duringOpen.add(tid);
  }

  /**
   * The writer's threads: those started while it opened, and the streaming threads of GStreamer's writer pipeline
   * (named `element:pad`: `opencvsrc:src`, whose name the x264 threads it starts inherit, and `mp4muxN:src`), which
   * GStreamer may take from a pool of threads that existed before (a second run in one process). Threads the model's
   * runtime starts later (ONNX Runtime's, which spin for a while after each run) and a `gst:` source's are neither.
   */
  private isEncoder(tid: string): boolean {
    if (this.duringOpen.has(tid)) return true;
    return WRITER_THREAD.test(this.states.name(tid));
  }

  /**
   * Lists the threads and notes which are the writer's, reading every name afresh (a pooled thread may have been
   * renamed for the writer since); the stat files of threads no longer the writer's are closed.
   */
  private rescan(): void {
    const encoders = tasks().filter((tid) => this.isEncoder(tid));
    for (const tid of this.encoders) if (!encoders.includes(tid)) this.states.forget(tid);
    this.encoders = encoders;
  }

  private busy(): boolean {
    for (const tid of this.encoders) if (this.states.running(tid)) return true;
    return false;
  }

  /**
   * The CPU time the writer's threads have used, ms (their schedstat); undefined where /proc cannot tell. Call before
   * the writer is released: its threads end with it. On a board NVENC encodes, so a projection leaves this out.
   */
  cpuMs(): number | undefined {
    if (!this.available) return undefined;
    this.rescan();
    const ns = this.encoders.map((tid) => onCpuNs(`/proc/self/task/${tid}/schedstat`) ?? 0);
    return ns.length ? ns.reduce((a, b) => a + b, 0) / 1e6 : undefined;
  }

  /** Call when the writer is closed: the stat files kept open for its threads are closed. */
  close(): void {
    this.states.closeAll();
    this.encoders = [];
  }

  /** Blocks until the encoder's threads are idle (two polls in a row), at most WAIT_LIMIT_MS. */
  waitIdle(): void {
    if (!this.available) return;
    const start = performance.now();
    this.waits++;
    let sawBusy = false;
    if (this.waits <= FIRST_RESCANS || this.waits % RESCAN_WAITS === 0) this.rescan();
    for (let idle = 0; idle < 2;) {
      const busy = this.busy();
      if (busy && !sawBusy) {
        sawBusy = true;
        this.busyWaits++;
      }
      idle = busy ? 0 : idle + 1;
      if (idle < 2) Atomics.wait(this.pause, 0, 0, POLL_MS);
      if (performance.now() - start > WAIT_LIMIT_MS) {
        this.timedOut++;
        return;
      }
    }
  }
}
