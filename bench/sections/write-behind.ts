/** bench section 14: see bench/run.ts for what each section measures. */
import { join } from 'node:path';
import { FRAMES, benchModel, log, median, results, row, runInfer, runPeer, state, WORK } from '../common.ts';

/**
 * 14. Writing behind the model (#44.9): the sequential loop (the one whose inference stage is the model alone) on a
 * model that puts 300 boxes on every frame, writing its video, against the Python peer with the lab's structure on
 * the same weights and video, alternating over three rounds. Both figures side by side: end-to-end over the peer's
 * (at least 2x) and the inference stage over the model alone in the same run (at most 1.10x: the encoder never
 * runs beside the model).
 */
export function benchWriteBehind() {
  state.section = 14;
  const ROUNDS = 3;
  const frames = FRAMES ?? 200;
  log(
    `14. writing behind the model: sequential loop, dense model, ${frames} frames, vs the Python peer, ${ROUNDS} rounds`,
  );
  const denseWeights = join(WORK, 'yolov4-tiny-seed1-dense.weights');
  const dense = benchModel(denseWeights, 2);
  const rounds: { jetprof: Record<string, any>; peer: Record<string, any> }[] = [];
  for (let k = 0; k < ROUNDS; k++) {
    const run = () => runInfer('off', { model: dense, conf: 0.3, tag: 'dense-behind', frames });
    const peer = () => runPeer(denseWeights, 'dense-behind', 0.3, frames);
    // which goes first alternates
    let jetprof: Record<string, any>;
    let p: Record<string, any> | undefined;
    if (k % 2 === 0) {
      jetprof = run();
      p = peer();
    } else {
      p = peer();
      jetprof = run();
    }
    if (!p) {
      row('writing behind: the Python peer', 'skipped: no python3-opencv', '', undefined);
      return;
    }
    rounds.push({ jetprof, peer: p });
  }
  const ratio = median(rounds.map((r) => r.jetprof.endToEndFps / r.peer.endToEndFps));
  const honest = median(rounds.map((r) => r.jetprof.stages.inference.meanMs / r.jetprof.modelAlone.perFrameMs));
  const fig = {
    frames,
    rounds: ROUNDS,
    jetprofEndToEndFps: rounds.map((r) => r.jetprof.endToEndFps),
    peerEndToEndFps: rounds.map((r) => r.peer.endToEndFps),
    ratioMedian: ratio,
    inferenceOverModelAlone: rounds.map((r) => r.jetprof.stages.inference.meanMs / r.jetprof.modelAlone.perFrameMs),
    inferenceOverModelAloneMedian: honest,
    writeMsMedian: median(rounds.map((r) => r.jetprof.stages.write.meanMs)),
    drawMsMedian: median(rounds.map((r) => r.jetprof.postprocess.draw.meanMs)),
    encoder: rounds[0].jetprof.output?.encoder,
    boxesPerFrame: rounds[0].jetprof.detections.total / (rounds[0].jetprof.frames + rounds[0].jetprof.warmupFrames),
  };
  results.writeBehind = fig;
  const fps = (v: number[]) => median(v).toFixed(2);
  row(
    `dense, sequential, writing (${fig.encoder}): jetprof / Python peer end-to-end FPS, median of ${ROUNDS}`,
    `${fps(fig.jetprofEndToEndFps)} / ${fps(fig.peerEndToEndFps)}; ratio ${ratio.toFixed(2)}`,
    '>= 2.0',
    ratio >= 2,
  );
  row(
    `dense, sequential, writing: inference stage / model alone (write ${fig.writeMsMedian.toFixed(1)}, draw ${fig.drawMsMedian.toFixed(1)} ms a frame)`,
    `${honest.toFixed(2)}x`,
    '<= 1.10x',
    honest <= 1.1,
  );
}
