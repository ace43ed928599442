/**
 * What a frame loop returns, whichever ran (sequential or pipelined, one stream or many), and the run JSON's figures of
 * its batches: the one shape infer assembles a run from.
 */
import { percentile, sumOf } from '../util/stats.ts';
import type { FrameBoxes } from '../detect/types.ts';
import type { StreamEnd } from './frame-tail.ts';
import type { LoopTally } from './loop-tally.ts';
import type { ModelInput } from './preprocess.ts';

/** What a frame loop returns, whichever ran: one shape for one stream or many. */
export interface LoopResult {
  tally: LoopTally;
  /** One per stream, in order. */
  streams: StreamEnd[];
  interrupted: boolean;
  /** Frames done over all streams, warm-up included. */
  framesRead: number;
  /** Frames the model ran on (all of them unless --interval). */
  inferredFrames: number;
  /** With keepBoxes: each stream's frames and their boxes, warm-up included (marked), in its own frame indices. */
  boxes: FrameBoxes[][];
  /** One entry per run of the model (warm-up ones marked). */
  batches: BatchRecord[];
  /** The last input the model ran on (the model-alone timing runs it again), and how many images it holds. */
  lastInput?: LastInput;
}

export interface LastInput extends ModelInput {
  images: number;
}

/** One run of the model over a batch of frames. */
export interface BatchRecord {
  /** Frames in the batch (fewer than --batch when streams had ended or not yet delivered). */
  images: number;
  inferenceMs: number;
  /** false when every frame of it was a warm-up frame */
  measured: boolean;
}

/** The run JSON's `batches`: inference per batch and per frame over the measured batches. */
export interface BatchFigures {
  count: number;
  /** Mean frames per batch. */
  meanImages: number;
  /** Inference time of one batch (ms). */
  perBatchMs: { mean: number; p50: number; p99: number };
  /** Inference time over frames inferred (ms): what a frame's inference stage holds. */
  perFrameMs: number;
}

export function batchFigures(batches: readonly BatchRecord[]): BatchFigures | undefined {
  const b = batches.filter((x) => x.measured);
  if (b.length === 0) return undefined;
  const ms = b.map((x) => x.inferenceMs).sort((x, y) => x - y);
  const images = sumOf(b.map((x) => x.images));
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    count: b.length,
    meanImages: round(images / b.length),
    perBatchMs: { mean: round(sumOf(ms) / ms.length), p50: round(percentile(ms, 50)), p99: round(percentile(ms, 99)) },
    perFrameMs: round(sumOf(ms) / images),
  };
}
