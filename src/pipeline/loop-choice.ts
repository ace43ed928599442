/**
 * `--pipeline auto` (the default): which frame loop suits the machine it runs on. When the model runs on a GPU the CPU
 * is free while it waits, and the overlap hides read, preprocess and write behind inference. When it runs on the CPU,
 * ONNX Runtime (and OpenCV DNN) already use every core and overlapped stages take cores from the model: the pipelined
 * loop then gives more frames a second end to end, but its inference stage is no longer the model's alone (the bench's
 * loops section measures both). The lab's inference FPS is the inference stage, so on the CPU `auto` keeps the
 * sequential loop, whose stages each hold their own work and add up to the wall time; `--pipeline on` trades that for
 * throughput. Pure.
 */
import { type BackendName, modelOnGpu } from '../backends/types.ts';

export type PipelineMode = 'auto' | 'on' | 'off';

export interface LoopChoice {
  pipelined: boolean;
  /** Why, in words for the console (auto only). */
  why?: string;
}

export function chooseLoop(o: {
  mode: PipelineMode;
  backend: BackendName;
  executionProvider: string;
  threads?: number;
  cores: number;
  openCvHasCuda?: () => boolean;
  /** What in this run only the sequential loop does (several streams, --interval, --realtime, --perf-interval). */
  sequentialOnly?: string;
}): LoopChoice {
  if (o.sequentialOnly)
    return {
      pipelined: false,
      why: `${o.sequentialOnly}: the sequential loop, the one that runs several streams and these settings (the pipelined loop overlaps the stages of one stream)`,
    };
  if (o.mode !== 'auto') return { pipelined: o.mode === 'on' };
  if (modelOnGpu(o.backend, o.executionProvider, o.openCvHasCuda ?? (() => false)))
    return {
      pipelined: true,
      why: 'the model runs on the GPU, so reading, preprocessing and writing the next frames overlap with it',
    };
  // On the CPU the runtime takes every core unless told otherwise; with two cores or more to spare, overlap can pay.
  if (o.threads !== undefined && o.cores - o.threads >= 2) {
    return {
      pipelined: true,
      why: `the model uses ${o.threads} of ${o.cores} cores (--threads), leaving ${o.cores - o.threads} for reading and writing`,
    };
  }
  return {
    pipelined: false,
    why: `the model runs on the CPU and uses ${o.threads ? `${o.threads} of ` : 'all '}${o.cores} cores, so stages run one after the other and the inference stage is the model's alone (--pipeline on overlaps them: more frames a second end to end, but each stage then takes cores from the others)`,
  };
}
