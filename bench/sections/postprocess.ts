/** bench section 4: see bench/run.ts for what each section measures. */
import { stretchGeometry } from '../../src/detect/geometry.ts';
import { readModelInfo } from '../../src/model/model-info.ts';
import { percentile } from '../../src/util/stats.ts';
import { benchPostprocessor, crowdedHeads, log, onnx, results, row, state, uniformHeads } from '../common.ts';

export function benchPostprocess() {
  state.section = 4;
  log('4. postprocess (decode + top-N + NMS) on busy frames');
  const info = readModelInfo(onnx);
  const g = stretchGeometry(960, 540, info.inputWidth, info.inputHeight);
  const measure = (heads: { head: (typeof info.heads)[number]; data: Float32Array }[], conf = 0.3) => {
    const post = benchPostprocessor(info, g, conf);
    const outputs = new Map(heads.map(({ head, data }) => [head.output, data]));
    let last = post.run(outputs);
    const times: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      last = post.run(outputs);
      times.push(performance.now() - t0);
    }
    const sorted = times.slice(50).sort((a, b) => a - b);
    return {
      candidates: last.candidates,
      kept: last.detections.length,
      msMedian: percentile(sorted, 50),
      msP99: percentile(sorted, 99),
    };
  };
  const crowded = measure(crowdedHeads(info, 60, 7));
  const uniform = measure(uniformHeads(info, 7));
  results.postprocess = { crowded60Objects: crowded, uniformWorstCase: uniform };
  row(
    `postprocess, crowded frame: ${crowded.candidates} candidates -> ${crowded.kept}, p99 (ms)`,
    crowded.msP99.toFixed(3),
    '< 2 ms',
    crowded.msP99 < 2,
  );
  row(
    `postprocess, worst case: ${uniform.candidates} candidates, 80 classes, p99 (ms)`,
    uniform.msP99.toFixed(3),
    '',
    undefined,
  );
}
