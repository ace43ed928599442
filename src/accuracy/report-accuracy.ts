/**
 * Accuracy beside speed, for the report: each label's boxes against the reference label's (agreement), and mAP per
 * label against COCO ground truth when given. The file edge: reads the detection files the run JSONs name.
 */
import type { RunResult } from '../pipeline/run-result.ts';
import { JetprofError } from '../util/errors.ts';
import { type Agreement, agree } from './agree.ts';
import { loadDetections, loadGroundTruth } from './detections-file.ts';
import { cocoMap, type MapResult } from './map.ts';

export interface AgreementRow {
  ref: string;
  other: string;
  agreement?: Agreement;
  /** Why no agreement could be computed (different frames, no detections kept). */
  note?: string;
}

export interface MapRow {
  label: string;
  map: MapResult;
}

export interface ReportAccuracy {
  agreement: AgreementRow[];
  maps: MapRow[];
}

/** The reference: `ref` when given, else the first ONNX Runtime FP32 run, else the first run. */
export function pickReference(runs: RunResult[], ref?: string): RunResult | undefined {
  if (ref) {
    const r = runs.find((x) => x.setup.label === ref);
    if (!r) throw new JetprofError('BAD_OPTION', `--ref ${ref}: no run has this label`, { suggestion: `use one of: ${[...new Set(runs.map((x) => x.setup.label))].join(', ')}` });
    return r;
  }
  return runs.find((x) => x.backend === 'onnx' && x.setup.precision === 'fp32') ?? runs[0];
}

export function reportAccuracy(runFiles: { path: string; run: RunResult }[], o: { ref?: string; gt?: string }): ReportAccuracy {
  const out: ReportAccuracy = { agreement: [], maps: [] };
  // one run per label (the first): repeated runs of one setup find the same boxes
  const byLabel = new Map<string, { path: string; run: RunResult }>();
  for (const f of runFiles) if (!byLabel.has(f.run.setup.label)) byLabel.set(f.run.setup.label, f);
  const withBoxes = [...byLabel.values()].filter((f) => f.run.detectionsFile);
  const ref = pickReference(withBoxes.map((f) => f.run), o.ref);
  if (ref && withBoxes.length > 1) {
    const refSource = loadDetections(withBoxes.find((f) => f.run === ref)!.path);
    for (const f of withBoxes) {
      if (f.run === ref) continue;
      const other = loadDetections(f.path);
      const measured = (r: RunResult) => r.perFrame?.index ?? [];
      const a = measured(ref);
      const b = new Set(measured(f.run));
      if (a.length !== b.size || a.some((i) => !b.has(i))) {
        out.agreement.push({ ref: ref.setup.label, other: f.run.setup.label, note: `not the same frames (${a.length} and ${b.size} measured): run both on the same video with the same --max-frames and --warmup` });
        continue;
      }
      const keep = (d: { warmup?: boolean }) => !d.warmup;
      out.agreement.push({
        ref: ref.setup.label,
        other: f.run.setup.label,
        agreement: agree(refSource.detections.filter(keep), other.detections.filter(keep), { frames: a, names: refSource.names }),
      });
    }
  }
  if (o.gt) {
    const gt = loadGroundTruth(o.gt);
    for (const f of withBoxes) out.maps.push({ label: f.run.setup.label, map: cocoMap(gt, loadDetections(f.path).detections) });
  }
  return out;
}
