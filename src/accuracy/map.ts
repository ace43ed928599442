/**
 * COCO box mAP as pycocotools' COCOeval computes it (iouType 'bbox'), step for step, so the figures are the ones
 * the COCO leaderboard, Ultralytics and tensorrt_demos' eval_yolo.py print. Pure.
 *
 * - IoU thresholds 0.50:0.05:0.95, 101 recall points 0:0.01:1, maxDets 1/10/100, area ranges all/small/medium/large
 *   (0-1e10, 0-32^2, 32^2-96^2, 96^2-1e10 px^2, by the annotation's `area`, its bbox area when absent).
 * - evaluateImg: per image and category, detections by score (stable) cut to maxDet; each, at each threshold, takes
 *   the unmatched ground truth of highest IoU >= the threshold, non-ignored before ignored (crowd: IoU = intersection
 *   / detection area, and may match again); a match to an ignored box is ignored, as is an unmatched detection
 *   outside the area range.
 * - accumulate: per category, detections of every image by score (stable); precision made monotone from the right,
 *   then read at the recall points (searchsorted 'left'); categories without non-ignored ground truth are skipped.
 * - summarize: the mean over thresholds, recall points and categories of the precisions that exist (> -1).
 * Images are the ground truth's; detections on other images are left out. Categories are the ground truth's.
 */
import { type CocoAnnotation, type CocoDetection, type CocoGroundTruth, cocoIou } from './coco.ts';

/** np.linspace(start, stop, num): i * step + start, the last value exactly `stop` (as pycocotools builds them). */
function linspace(start: number, stop: number, num: number): number[] {
  const step = (stop - start) / (num - 1);
  return Array.from({ length: num }, (_, i) => (i === num - 1 ? stop : i * step + start));
}
const IOU_THRESHOLDS = linspace(0.5, 0.95, 10);
const REC_THRESHOLDS = linspace(0, 1, 101);
const MAX_DETS = [1, 10, 100];
const AREA_RANGES: Record<'all' | 'small' | 'medium' | 'large', [number, number]> = {
  all: [0, 1e10],
  small: [0, 32 ** 2],
  medium: [32 ** 2, 96 ** 2],
  large: [96 ** 2, 1e10],
};
type AreaName = keyof typeof AREA_RANGES;
const EPS = 2.220446049250313e-16; // np.spacing(1)

export interface MapResult {
  /** AP@[.50:.95], all areas, maxDets 100 (-1 where nothing could be evaluated, as pycocotools prints). */
  ap: number;
  ap50: number;
  ap75: number;
  apSmall: number;
  apMedium: number;
  apLarge: number;
  /** AR@[.50:.95] for maxDets 1, 10, 100 (all areas). */
  ar1: number;
  ar10: number;
  ar100: number;
  perClass: { categoryId: number; name: string; ap: number; ap50: number }[];
  images: number;
  detections: number;
  annotations: number;
}

interface EvalImg {
  dtScores: number[];
  /** [threshold][detection]: matched (a gt id) or 0 */
  dtMatched: boolean[][];
  dtIgnore: boolean[][];
  gtIgnoreCount: number;
}

function iouMatrix(dts: CocoDetection[], gts: CocoAnnotation[]): number[][] {
  return dts.map((d) => gts.map((g) => cocoIou(d.bbox, g.bbox, !!g.iscrowd)));
}

const areaOf = (g: CocoAnnotation) => g.area ?? g.bbox[2] * g.bbox[3];

/** Stable order of indices by key descending (numpy argsort of -key, kind='mergesort'). */
function stableDesc(keys: number[]): number[] {
  return keys.map((_, i) => i).sort((a, b) => keys[b] - keys[a] || a - b);
}

function evaluateImg(
  gtAll: CocoAnnotation[],
  dtAll: CocoDetection[],
  area: [number, number],
  maxDet: number,
): EvalImg | undefined {
  if (gtAll.length === 0 && dtAll.length === 0) return undefined;
  const gtIgnoreRaw = gtAll.map((g) => (g.iscrowd ? 1 : 0) || (areaOf(g) < area[0] || areaOf(g) > area[1] ? 1 : 0));
  // non-ignored ground truth first (a stable sort on the ignore flag)
  const gtOrder = gtAll.map((_, i) => i).sort((a, b) => gtIgnoreRaw[a] - gtIgnoreRaw[b] || a - b);
  const gt = gtOrder.map((i) => gtAll[i]);
  const gtIg = gtOrder.map((i) => gtIgnoreRaw[i] === 1);
  const dt = stableDesc(dtAll.map((d) => d.score))
    .slice(0, maxDet)
    .map((i) => dtAll[i]);
  const ious = iouMatrix(dt, gt);
  const T = IOU_THRESHOLDS.length;
  const gtm: number[][] = Array.from({ length: T }, () => new Array<number>(gt.length).fill(-1));
  const dtMatched: boolean[][] = Array.from({ length: T }, () => new Array<boolean>(dt.length).fill(false));
  const dtIgnore: boolean[][] = Array.from({ length: T }, () => new Array<boolean>(dt.length).fill(false));
  for (let t = 0; t < T; t++) {
    for (let d = 0; d < dt.length; d++) {
      let iou = Math.min(IOU_THRESHOLDS[t], 1 - 1e-10);
      let m = -1;
      for (let g = 0; g < gt.length; g++) {
        if (gtm[t][g] >= 0 && !gt[g].iscrowd) continue; // already matched, not a crowd
        if (m > -1 && !gtIg[m] && gtIg[g]) break; // a regular match beats any ignored one
        if (ious[d][g] < iou) continue;
        iou = ious[d][g];
        m = g;
      }
      if (m === -1) continue;
      dtIgnore[t][d] = gtIg[m];
      dtMatched[t][d] = true;
      gtm[t][m] = d;
    }
  }
  // unmatched detections outside the area range are ignored
  for (let d = 0; d < dt.length; d++) {
    const a = dt[d].bbox[2] * dt[d].bbox[3];
    const outside = a < area[0] || a > area[1];
    for (let t = 0; t < T; t++) if (!dtMatched[t][d] && outside) dtIgnore[t][d] = true;
  }
  return { dtScores: dt.map((d) => d.score), dtMatched, dtIgnore, gtIgnoreCount: gtIg.filter((x) => !x).length };
}

/** precision[t][r] (or -1) and recall[t] (or -1) of one category, area range and maxDet. */
function accumulate(
  evals: (EvalImg | undefined)[],
  maxDet: number,
): { precision: number[][]; recall: number[] } | undefined {
  const es = evals.filter((e): e is EvalImg => !!e);
  if (es.length === 0) return undefined;
  const scores = es.flatMap((e) => e.dtScores.slice(0, maxDet));
  const order = stableDesc(scores);
  const npig = es.reduce((s, e) => s + e.gtIgnoreCount, 0);
  if (npig === 0) return undefined;
  const T = IOU_THRESHOLDS.length;
  const precision: number[][] = [];
  const recall: number[] = [];
  for (let t = 0; t < T; t++) {
    const matched = es.flatMap((e) => e.dtMatched[t].slice(0, maxDet));
    const ignored = es.flatMap((e) => e.dtIgnore[t].slice(0, maxDet));
    let tp = 0;
    let fp = 0;
    const rc: number[] = [];
    const pr: number[] = [];
    for (const i of order) {
      if (ignored[i]) {
        // neither a true nor a false positive: cumsum keeps its value
      } else if (matched[i]) tp++;
      else fp++;
      rc.push(tp / npig);
      pr.push(tp / (fp + tp + EPS));
    }
    const nd = rc.length;
    recall.push(nd ? rc[nd - 1] : 0);
    for (let i = nd - 1; i > 0; i--) if (pr[i] > pr[i - 1]) pr[i - 1] = pr[i];
    const q: number[] = [];
    for (const r of REC_THRESHOLDS) {
      // searchsorted(rc, r, side='left'): the first index with rc >= r
      let lo = 0;
      let hi = nd;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (rc[mid] < r) lo = mid + 1;
        else hi = mid;
      }
      q.push(lo < nd ? pr[lo] : 0);
    }
    precision.push(q);
  }
  return { precision, recall };
}

const meanOf = (v: number[]) => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : -1);

export function cocoMap(gt: CocoGroundTruth, detections: readonly CocoDetection[]): MapResult {
  const imgIds = [...new Set(gt.images.map((i) => i.id))].sort((a, b) => a - b);
  const catIds = [...new Set(gt.categories.map((c) => c.id))].sort((a, b) => a - b);
  const imgSet = new Set(imgIds);
  const key = (img: number, cat: number) => `${img}:${cat}`;
  const gtBy = new Map<string, CocoAnnotation[]>();
  for (const a of gt.annotations)
    if (imgSet.has(a.image_id))
      gtBy.set(key(a.image_id, a.category_id), [...(gtBy.get(key(a.image_id, a.category_id)) ?? []), a]);
  const dtBy = new Map<string, CocoDetection[]>();
  const dts = detections.filter((d) => imgSet.has(d.image_id));
  for (const d of dts)
    dtBy.set(key(d.image_id, d.category_id), [...(dtBy.get(key(d.image_id, d.category_id)) ?? []), d]);

  // [category][area][maxDet] -> accumulated
  const acc = new Map<string, ReturnType<typeof accumulate>>();
  for (const cat of catIds) {
    for (const areaName of Object.keys(AREA_RANGES) as AreaName[]) {
      const area = AREA_RANGES[areaName];
      const evals = imgIds.map((img) =>
        evaluateImg(gtBy.get(key(img, cat)) ?? [], dtBy.get(key(img, cat)) ?? [], area, MAX_DETS[MAX_DETS.length - 1]),
      );
      for (const maxDet of MAX_DETS) acc.set(`${cat}:${areaName}:${maxDet}`, accumulate(evals, maxDet));
    }
  }
  const ap = (areaName: AreaName, maxDet: number, t?: number, cats = catIds) =>
    meanOf(
      cats.flatMap((cat) => {
        const a = acc.get(`${cat}:${areaName}:${maxDet}`);
        if (!a) return [];
        const rows = t === undefined ? a.precision : [a.precision[t]];
        return rows.flat().filter((v) => v > -1);
      }),
    );
  const ar = (maxDet: number) =>
    meanOf(
      catIds.flatMap((cat) => {
        const a = acc.get(`${cat}:all:${maxDet}`);
        return a ? a.recall.filter((v) => v > -1) : [];
      }),
    );
  const names = new Map(gt.categories.map((c) => [c.id, c.name]));
  return {
    ap: ap('all', 100),
    ap50: ap('all', 100, 0),
    ap75: ap('all', 100, 5),
    apSmall: ap('small', 100),
    apMedium: ap('medium', 100),
    apLarge: ap('large', 100),
    ar1: ar(1),
    ar10: ar(10),
    ar100: ar(100),
    perClass: catIds.map((cat) => ({
      categoryId: cat,
      name: names.get(cat) ?? String(cat),
      ap: ap('all', 100, undefined, [cat]),
      ap50: ap('all', 100, 0, [cat]),
    })),
    images: imgIds.length,
    detections: dts.length,
    annotations: gt.annotations.filter((a) => imgSet.has(a.image_id)).length,
  };
}
