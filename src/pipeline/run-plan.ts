/**
 * The run plan: what kind of run this is, decided once where the command is prepared (cli/infer-prepare.ts
 * prepareRun) and trusted by everything below it: whether it reports per-stream figures and why, which loop and why,
 * how many frames go through the model at once, how many are in flight, how many model-alone runs follow the loop.
 * Pure.
 */
import { chooseLoop, type LoopChoice } from './loop-choice.ts';

export interface RunPlan {
  /**
   * Why the run reports per-stream figures, in the console's words ("2 streams", "--interval 2"), or undefined for a
   * plain run of one stream. Such a run records each frame's stream and runs in the sequential loop.
   */
  multiStream?: string;
  /** The loop: pipelined only for a plain run of one stream; `why` for the console (--pipeline auto). */
  loop: LoopChoice;
  /** Frames per run of the model: one from each of up to this many streams (default: every stream, as nvstreammux). */
  batch: number;
  /** The pipelined loop: frames between the start of their read and the end of their write. */
  inFlight: number;
  /** Back-to-back runs of the model on the last input after the loop (0: none). */
  modelAloneRuns: number;
}

/** The defaults the plan fills in, named once (infer's --help shows them). */
export const PLAN_DEFAULTS = { inFlight: 3, modelAloneRuns: 30 } as const;

/**
 * What makes a run a multi-stream one: several streams, or one with a multi-stream setting (--interval, --realtime,
 * --perf-interval).
 */
function multiStreamReason(o: { streams: number; interval: number; realtime: boolean; perf: boolean }) {
  if (o.streams > 1) return `${o.streams} streams`;
  if (o.interval) return `--interval ${o.interval}`;
  if (o.realtime) return '--realtime';
  if (o.perf) return '--perf-interval';
  return undefined;
}

export function planRun(
  o: Omit<Parameters<typeof chooseLoop>[0], 'sequentialOnly'> & {
    streams: number;
    interval: number;
    realtime: boolean;
    perf: boolean;
    batch?: number;
    inFlight?: number;
    modelAloneRuns?: number;
  },
): RunPlan {
  const multiStream = multiStreamReason(o);
  return {
    multiStream,
    loop: chooseLoop({ ...o, sequentialOnly: multiStream }),
    batch: o.batch ?? o.streams,
    inFlight: o.inFlight ?? PLAN_DEFAULTS.inFlight,
    modelAloneRuns: o.modelAloneRuns ?? PLAN_DEFAULTS.modelAloneRuns,
  };
}
