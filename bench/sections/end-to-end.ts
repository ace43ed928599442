/** bench section 2: see bench/run.ts for what each section measures. */
import { join } from 'node:path';
import {
  FRAMES,
  VIDEO,
  WORK,
  bareRuntime,
  benchModel,
  log,
  median,
  onnx,
  results,
  row,
  runInfer,
  state,
} from '../common.ts';

/**
 * The loops side by side, alternating (auto, on, off, then the next round in turn) so that drift of this shared
 * machine hits all three alike: end-to-end FPS medians over ROUNDS runs of each, on the demo and the dense model; and
 * the bare runtime (same session, back-to-back runs) beside the sequential loop's inference stage.
 */
export function benchEndToEnd() {
  state.section = 2;
  const ROUNDS = 3;
  const frames = FRAMES ?? 200;
  log(
    `2. end to end on ${VIDEO} at 960x540, ${frames} frames: --pipeline auto (default) vs on vs off, ${ROUNDS} alternating rounds; bare runtime`,
  );
  const dense = benchModel(join(WORK, 'yolov4-tiny-seed1-dense.weights'), 2);
  const loops: Record<string, unknown> = {};
  let demoPipe: Record<string, any> | undefined;
  for (const [name, model] of [
    ['demo', onnx],
    ['dense', dense],
  ] as const) {
    const fps: Record<'auto' | 'on' | 'off', number[]> = { auto: [], on: [], off: [] };
    // what overlapping costs the inference figure: the inference stage over the model-alone time, per loop
    const alone: Record<'auto' | 'on' | 'off', number[]> = { auto: [], on: [], off: [] };
    const order: ('auto' | 'on' | 'off')[][] = [
      ['auto', 'on', 'off'],
      ['on', 'off', 'auto'],
      ['off', 'auto', 'on'],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of order[round % order.length]) {
        const r = runInfer(mode, { model, tag: name, frames });
        fps[mode].push(r.endToEndFps);
        alone[mode].push(r.stages.inference.meanMs / r.modelAlone.perFrameMs);
        if (name === 'demo' && mode === 'on') demoPipe = r;
      }
    }
    const med = { auto: median(fps.auto), on: median(fps.on), off: median(fps.off) };
    const best = Math.max(med.on, med.off);
    const overAlone = { on: median(alone.on), off: median(alone.off) };
    loops[name] = { endToEndFps: fps, medians: med, autoOverBest: med.auto / best, inferenceOverModelAlone: overAlone };
    row(
      `${name} model: end-to-end FPS median, auto (default) / pipelined / sequential`,
      `${med.auto.toFixed(2)} / ${med.on.toFixed(2)} / ${med.off.toFixed(2)}`,
      '',
      undefined,
    );
    // why auto keeps the sequential loop on the CPU even where the pipelined one is faster end to end: overlapped, the
    // stages take cores from the model, and the inference stage (the lab's inference FPS) is no longer the model's
    row(
      `${name} model: inference stage / model alone, pipelined / sequential`,
      `${overAlone.on.toFixed(2)}x / ${overAlone.off.toFixed(2)}x`,
      '',
      undefined,
    );
    row(
      `${name} model: default loop / the better loop (end to end)`,
      (med.auto / best).toFixed(3),
      '>= 0.97',
      med.auto / best >= 0.97,
    );
  }
  // Bare runtime vs the sequential loop's inference stage, alternating, with and without writing the video.
  const bare: number[] = [];
  const seqNoWrite: number[] = [];
  const seqWrite: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(bareRuntime(onnx).meanMs);
    seqNoWrite.push(runInfer('off', { tag: 'inference-stage', frames, write: false }).stages.inference.meanMs);
    seqWrite.push(runInfer('off', { tag: 'inference-stage', frames }).stages.inference.meanMs);
  }
  const [b, n, w] = [median(bare), median(seqNoWrite), median(seqWrite)];
  loops.bareRuntime = {
    bareMeanMs: bare,
    sequentialNoWriteInferenceMeanMs: seqNoWrite,
    sequentialInferenceMeanMs: seqWrite,
  };
  row('bare runtime: session.run back to back (ms, median of run means)', b.toFixed(2), '', undefined);
  row(
    'sequential loop, --no-write: inference stage / bare runtime',
    `${n.toFixed(2)} / ${b.toFixed(2)} = ${(n / b).toFixed(3)}`,
    '<= 1.10',
    n / b <= 1.1,
  );
  row(
    'sequential loop, writing H.264: inference stage / bare runtime',
    `${w.toFixed(2)} / ${b.toFixed(2)} = ${(w / b).toFixed(3)}`,
    '<= 1.10',
    w / b <= 1.1,
  );
  results.endToEnd = loops;
  return demoPipe;
}
