/**
 * How `jetprof selftest` runs one component: its own process, ended with everything it started when it takes longer
 * than its time, and the row it leaves. The shared pieces of the selftest modules.
 */
import type { SelftestEntry } from './selftest-format.ts';
import { descendants, processRef, runCommand, shellLine, signalProcess } from '../util/process.ts';
import { inferArgv } from '../pipeline/infer-args.ts';

export interface SelftestOptions {
  outDir: string;
  /** A serialized TensorRT engine for the TensorRT row (else one is built with trtexec where it exists). */
  engine?: string;
  /** The ONNX every backend runs (default: weights/yolov4-tiny.onnx, else seeded weights that fire, made here). */
  model?: string;
  /** The clip (default: videos/vtest.avi, else one made with ffmpeg). */
  video?: string;
  /** Frames each run reads (warm-up included). */
  frames: number;
  /** Seconds a component may take before it is ended (an engine build gets six times as long). */
  timeoutS: number;
  /** Only these groups (default: all). */
  only?: readonly SelftestGroup[];
  onStep: (line: string) => void;
  shouldStop?: () => boolean;
  onChild?: (pid: number) => () => void;
}

const WARMUP = 2;

export const SELFTEST_GROUPS = ['backends', 'video', 'profilers', 'board'] as const;
export type SelftestGroup = (typeof SELFTEST_GROUPS)[number];

interface Ran {
  code: number;
  signal?: NodeJS.Signals;
  timedOut: boolean;
  lastLine?: string;
  /** Its last lines of output (progress lines left out). */
  tail: string[];
  command: string;
  seconds: number;
}

export class Selftest {
  readonly entries: SelftestEntry[] = [];
  readonly t0 = Date.now();
  interrupted = false;
  /** Frames a run must read: --frames, or all the clip holds when it holds fewer (counted once). */
  expectedFrames = 0;

  constructor(readonly o: SelftestOptions) {}

  /** Runs one command, ended (with everything it started) when it takes longer than `timeoutS`. */
  async run(argv: string[], timeoutS: number, env?: NodeJS.ProcessEnv): Promise<Ran> {
    const [cmd, ...args] = argv;
    const t = Date.now();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const r = await runCommand(cmd, args, {
      env: { ...process.env, ...env },
      onSpawn: (pid) => {
        const release = this.o.onChild?.(pid);
        const ref = processRef(pid);
        timer = setTimeout(() => {
          timedOut = true;
          const family = descendants(pid).map(processRef);
          signalProcess(ref, 'SIGTERM');
          setTimeout(() => {
            for (const p of [ref, ...family]) signalProcess(p, 'SIGKILL');
          }, 5000).unref();
        }, timeoutS * 1000);
        return () => {
          clearTimeout(timer);
          release?.();
        };
      },
    });
    const lines = r.output
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('progress: ') && !l.startsWith('['));
    return {
      code: r.code,
      signal: r.signal,
      timedOut,
      lastLine: lines.at(-1),
      tail: lines.slice(-20),
      command: shellLine(argv),
      seconds: (Date.now() - t) / 1000,
    };
  }

  /** A run that did not succeed, in words: ended for taking too long, died of a signal, or its exit code and last line. */
  static failure(r: Ran, timeoutS: number): string {
    if (r.timedOut) return `did not finish within ${timeoutS} s: ended (it and what it started)`;
    if (r.signal) return `died of ${r.signal} (exit ${r.code})`;
    return `exit code ${r.code}${r.lastLine ? `; its last line: ${r.lastLine}` : ''}`;
  }

  /** The row of a command that did not succeed: why, and the command to run by hand. */
  failed(component: string, r: Ran, timeoutS = this.o.timeoutS): SelftestEntry {
    // a run ended by Ctrl-C did not fail: the component was not run to its end
    if (this.o.shouldStop?.()) {
      this.interrupted = true;
      return this.add(
        { component, status: 'absent', detail: 'not run to its end: interrupted', fix: 'run jetprof selftest again' },
        r.seconds,
      );
    }
    return this.add(
      {
        component,
        status: 'fail',
        detail: Selftest.failure(r, timeoutS),
        fix: `run it by hand to see why: ${r.command}`,
        command: r.command,
        log: r.tail,
      },
      r.seconds,
    );
  }

  /** For a run that read fewer frames than the clip gives: why and the fix (a decoder that stops early fails). */
  readShort(read: number): { detail: string; fix: string } | undefined {
    if (read >= this.expectedFrames) return undefined;
    return {
      detail: `read ${read} of the ${this.expectedFrames} frames the clip gives: its decoder stopped early`,
      fix: 'jetprof doctor shows the readers; try another --video-io, or re-encode the clip: ffmpeg -i CLIP -c:v libx264 clip.mp4',
    };
  }

  add(e: Omit<SelftestEntry, 'seconds'>, seconds = 0): SelftestEntry {
    const entry = { ...e, seconds: Math.round(seconds * 10) / 10 };
    this.entries.push(entry);
    this.o.onStep(
      `${e.component}: ${e.status}${e.figure ? ` (${e.figure})` : ''}${e.status !== 'ok' && e.fix ? `; fix: ${e.fix}` : ''}`,
    );
    return entry;
  }

  /** Whether to go on; once stopped, the component is recorded as not run. */
  going(component: string): boolean {
    if (!this.o.shouldStop?.()) return true;
    this.interrupted = true;
    this.add({ component, status: 'absent', detail: 'not run: interrupted', fix: 'run jetprof selftest again' });
    return false;
  }
}

/** infer's arguments every backend and video run shares: the clip, the model, few frames, the sequential loop. */
export function inferArgs(t: Selftest, clip: string, model: string, frames = t.o.frames): string[] {
  return [
    clip,
    ...inferArgv({ model, maxFrames: frames, warmup: WARMUP, pipeline: 'off', modelAlone: 0, quiet: true }),
  ];
}
