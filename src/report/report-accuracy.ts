/**
 * Accuracy beside speed, for the report: each label's boxes against the reference label's (agreement), and mAP per
 * label against COCO ground truth when given. The file edge: reads the detection files the run JSONs name.
 */
import type { RunResult } from '../pipeline/run-result.ts';
import { JetprofError } from '../util/errors.ts';
import { type Agreement, agree } from '../accuracy/agree.ts';
import {
  type DetectionSource,
  keptDetections,
  loadDetections,
  loadGroundTruth,
  measuredFrames,
} from '../accuracy/detections-file.ts';
import { cocoMap, type MapResult } from '../accuracy/map.ts';

interface AgreementRow {
  ref: string;
  other: string;
  agreement?: Agreement;
  /** Why no agreement could be computed (different frames, no detections kept). */
  note?: string;
}

interface MapRow {
  label: string;
  map: MapResult;
}

/** Agreement of every pair of labels that kept boxes (the speed-up rule needs it for every pair it compares). */
interface PairAgreementRow {
  a: string;
  b: string;
  matchedShare?: number;
  /** Boxes on either side in the frames compared. */
  boxes?: number;
  note?: string;
}

export interface ReportAccuracy {
  agreement: AgreementRow[];
  pairs: PairAgreementRow[];
  maps: MapRow[];
}

/** The reference: `ref` when given, else the first ONNX Runtime FP32 run, else the first run. */
function pickReference(runs: RunResult[], ref?: string): RunResult | undefined {
  if (ref) {
    const r = runs.find((x) => x.setup.label === ref);
    if (!r)
      throw new JetprofError('BAD_OPTION', `--ref ${ref}: no run has this label`, {
        suggestion: `use one of: ${[...new Set(runs.map((x) => x.setup.label))].join(', ')}`,
      });
    return r;
  }
  return runs.find((x) => x.backend === 'onnx' && x.setup.precision === 'fp32') ?? runs[0];
}

export function reportAccuracy(
  runFiles: { path: string; run: RunResult }[],
  o: { ref?: string; gt?: string },
): ReportAccuracy {
  const out: ReportAccuracy = { agreement: [], pairs: [], maps: [] };
  // one run per label (the first): repeated runs of one setup find the same boxes
  const byLabel = new Map<string, { path: string; run: RunResult }>();
  for (const f of runFiles) if (!byLabel.has(f.run.setup.label)) byLabel.set(f.run.setup.label, f);
  const withBoxes = [...byLabel.values()].filter((f) => keptDetections(f.run));
  const ref = pickReference(
    withBoxes.map((f) => f.run),
    o.ref,
  );
  // a detections file that is not the one its run wrote (another run wrote over it) is a note on its rows, not a match
  const sources = new Map<(typeof withBoxes)[number], DetectionSource | JetprofError>(
    withBoxes.map((f) => {
      try {
        return [f, loadDetections(f.path, f.run)] as const;
      } catch (e) {
        if (e instanceof JetprofError) return [f, e] as const;
        throw e;
      }
    }),
  );
  const compare = (
    x: { path: string; run: RunResult },
    y: { path: string; run: RunResult },
  ): Omit<AgreementRow, 'ref' | 'other'> => {
    const measured = (r: RunResult) => measuredFrames(r);
    const a = measured(x.run);
    const b = new Set(measured(y.run));
    if (a.length !== b.size || a.some((i) => !b.has(i))) {
      return {
        note: `not the same frames (${a.length} and ${b.size} measured): run both on the same video with the same --max-frames and --warmup`,
      };
    }
    const keep = (d: { warmup?: boolean }) => !d.warmup;
    const xs = sources.get(x)!;
    const ys = sources.get(y)!;
    if (xs instanceof JetprofError || ys instanceof JetprofError)
      return { note: (xs instanceof JetprofError ? xs : (ys as JetprofError)).message };
    return {
      agreement: agree(xs.detections.filter(keep), ys.detections.filter(keep), {
        frames: a,
        names: xs.names,
      }),
    };
  };
  if (ref) {
    const refFile = withBoxes.find((f) => f.run === ref)!;
    withBoxes.forEach((x, i) => {
      for (const y of withBoxes.slice(i + 1)) {
        const [first, second] = y === refFile ? [y, x] : [x, y];
        const r = compare(first, second);
        const label = (f: typeof x) => f.run.setup.label;
        out.pairs.push({
          a: label(first),
          b: label(second),
          ...(r.agreement
            ? { matchedShare: r.agreement.matchedShare, boxes: r.agreement.refBoxes + r.agreement.otherBoxes }
            : { note: r.note }),
        });
        if (first === refFile) out.agreement.push({ ref: label(first), other: label(second), ...r });
      }
    });
  }
  if (o.gt) {
    const gt = loadGroundTruth(o.gt);
    for (const f of withBoxes) {
      const boxes = sources.get(f)!;
      if (boxes instanceof JetprofError) throw boxes;
      out.maps.push({ label: f.run.setup.label, map: cocoMap(gt, boxes.detections) });
    }
  }
  return out;
}
