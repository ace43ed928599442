/**
 * For commands that run infer as child processes (compare, capacity): Ctrl-C, SIGTERM and SIGHUP are forwarded to the
 * child running now (while it is still that process: util/process.ts signalProcess), which finishes its frame and
 * finalizes its files; the command itself then starts no further child (`stopped()`), reports what ran, and exits 130.
 * No child outlives it.
 */
import { type ProcessRef, processRef, signalProcess } from '../util/process.ts';

export interface ChildSignals {
  stopped: () => boolean;
  /**
   * Pass as runCommand's onSpawn: the child to forward to, until it ends. `target`, when given, names the process to
   * signal at the moment a signal comes (a profiler's application rather than the profiler).
   */
  onChild: (pid: number, target?: () => number) => () => void;
  /** Removes the handlers (call when the command ends). */
  dispose: () => void;
}

export function forwardSignalsToChild(onFirst?: (signal: NodeJS.Signals) => void): ChildSignals {
  let stop = false;
  let child: (() => ProcessRef) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stop) onFirst?.(signal);
    stop = true;
    if (child === undefined) return;
    signalProcess(child(), signal);
  };
  const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of SIGNALS) process.on(s, onSignal);
  return {
    stopped: () => stop,
    onChild: (pid, target) => {
      const started = processRef(pid);
      child = target ? () => processRef(target()) : () => started;
      return () => {
        child = undefined;
      };
    },
    dispose: () => {
      for (const s of SIGNALS) process.off(s, onSignal);
    },
  };
}
