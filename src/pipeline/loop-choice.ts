/**
 * `--pipeline auto` (the default): which frame loop suits the machine it runs on. Measured on a 2-core x86 VM (README,
 * bench section 1): when the model runs on the CPU, ONNX Runtime (and OpenCV DNN) already use every core, and
 * overlapping read, inference and write only makes the stages take cores from each other (demo model, 960x540:
 * pipelined 35.0 / 33.7 FPS against sequential 44.6 / 36.3). When the model runs on a GPU the CPU is free while it
 * waits, and the overlap hides read, preprocess and write behind inference. Pure.
 */
import type { BackendName } from '../backends/types.ts';

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
      why: `${o.sequentialOnly} runs in the sequential loop only, which takes the streams in turns`,
    };
  if (o.mode !== 'auto') return { pipelined: o.mode === 'on' };
  const onGpu =
    o.backend === 'tensorrt' ||
    (o.backend === 'onnx' && (o.executionProvider === 'cuda' || o.executionProvider === 'tensorrt')) ||
    (o.backend === 'opencv' && o.executionProvider === 'cuda' && !!o.openCvHasCuda?.());
  if (onGpu)
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
    why: `the model runs on the CPU and uses ${o.threads ? `${o.threads} of ` : 'all '}${o.cores} cores, so overlapping stages would only take cores from it (--pipeline on to overlap anyway)`,
  };
}
