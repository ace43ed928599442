/**
 * The model's part of a frame's path, one for both loops: the frames of one run of the model (one frame, or one from
 * each stream of a batch) preprocessed into the loop's reused input buffers, then the model run on them, each inside
 * its NVTX range and timed. The loop's writes bracket every run here, and the last input is kept for the model-alone
 * runs, so the rules that order a run stand in one place.
 */
import type { DetectorSession, InferenceResult } from '../backends/types.ts';
import type { Geometry } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import type { Cv, Mat } from '../video/opencv.ts';
import type { FrameWrites } from './frame-writes.ts';
import type { LastInput } from './loop-result.ts';
import type { RangeName, RangeOps } from './nvtx.ts';
import { type CvCalls, cvCalls, InputBuffers, type ModelInput, modelInput } from './preprocess.ts';
import { nsToMs } from './stages.ts';

export class ModelStep {
  /** The last input the model ran on: the model-alone timing runs it again. */
  lastInput: LastInput | undefined;
  private readonly inputs: InputBuffers;
  private readonly calls: CvCalls;

  /**
   * `alive`: how many inputs exist at once (the sequential loop 1; the pipelined loop its frames in flight + 1);
   * `pooled`: preprocessing on libuv's pool (the pipelined loop; the sequential loop waits for it either way).
   */
  constructor(
    private readonly session: DetectorSession,
    private readonly model: YoloModelInfo,
    private readonly ranges: RangeOps,
    private readonly writes: FrameWrites,
    { cv, alive, pooled }: { cv: Cv; alive: number; pooled: boolean },
  ) {
    this.inputs = new InputBuffers(alive);
    this.calls = cvCalls(cv, pooled);
  }

  /** The frames as the model's input (preprocess.ts modelInput), and the time it took (ms). */
  async preprocess(frames: { frame: Mat; g: Geometry }[], name: RangeName): Promise<{ input: ModelInput; ms: number }> {
    const t0 = process.hrtime.bigint();
    const r = this.ranges.open(name);
    const input = await modelInput(this.calls, frames, this.model, this.inputs);
    this.ranges.close(r);
    return { input, ms: nsToMs(process.hrtime.bigint() - t0) };
  }

  /** One run of the model on `input` (its `images` frames): its outputs, when it began and how long it took (ms). */
  async run(
    input: ModelInput,
    images: number,
    name: RangeName,
  ): Promise<{ result: InferenceResult; tInference: bigint; ms: number }> {
    // Rule (ordering): the encoder is done before the model runs, else the inference stage holds encoding too
    // (test/writing.test.ts reads the order from the NVTX ranges)
    this.writes.settle();
    const tInference = process.hrtime.bigint();
    const r = this.ranges.open(name);
    const result = await this.session.run(input.input, input.blob);
    this.ranges.close(r);
    const ms = nsToMs(process.hrtime.bigint() - tInference);
    // Rule (native memory): the blob before is done with (OpenCV DNN ran on it); this one stays for the model-alone
    // runs (test/batch.test.ts counts the Mats a run leaves)
    this.lastInput?.blob?.release();
    this.lastInput = { ...input, images };
    // Rule (ordering): the frames drawn before this run go to their encoders only now, which work while these frames'
    // tails run (test/writing.test.ts)
    this.writes.handOff();
    return { result, tInference, ms };
  }
}
