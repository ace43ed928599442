/**
 * The video encoder's threads, so that a synchronous write can wait until they have done its work.
 *
 * Neither of OpenCV's writers encodes inside `write()`: FFmpeg's libx264 keeps a look-ahead of frames and encodes on
 * frame threads of its own, GStreamer's appsrc hands the frame to its streaming thread. Either way the encoding runs
 * during the next frames' inference, and a stage table would charge it to the model. The threads the writer started
 * are the ones that appeared in this process after it opened (the model's threads exist by then); a write is done when
 * none of them is running or waiting to run (state R in /proc/self/task/TID/stat) for two polls in a row.
 */
import { readdirSync, readFileSync } from 'node:fs';

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

function running(tid: string): boolean {
  try {
    // "pid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ") "
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(') ') + 2] === 'R';
  } catch {
    return false; // the thread has ended
  }
}

export class EncoderThreads {
  private readonly before: Set<string>;
  /** Threads started while the writer opened (FFmpeg opens libx264 there, its threads named after ours). */
  private duringOpen = new Set<string>();
  private readonly pause = new Int32Array(new SharedArrayBuffer(4));
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
    try {
      return WRITER_THREAD.test(readFileSync(`/proc/self/task/${tid}/comm`, 'utf8'));
    } catch {
      return false;
    }
  }

  /** `known`: which threads are the writer's, decided once per wait (a thread keeps its name for milliseconds). */
  private busy(known: Map<string, boolean>): boolean {
    for (const tid of tasks()) {
      let encoder = known.get(tid);
      if (encoder === undefined) known.set(tid, (encoder = this.isEncoder(tid)));
      if (encoder && running(tid)) return true;
    }
    return false;
  }

  /** Blocks until the encoder's threads are idle (two polls in a row), at most WAIT_LIMIT_MS. */
  waitIdle(): void {
    if (!this.available) return;
    const start = performance.now();
    this.waits++;
    let sawBusy = false;
    const known = new Map<string, boolean>();
    for (let idle = 0; idle < 2;) {
      const busy = this.busy(known);
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
