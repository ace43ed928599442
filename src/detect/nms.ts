/**
 * Greedy per-class non-maximum suppression over flat candidate arrays.
 * - 'iou': suppress when IoU > threshold (tensorrt_demos' and OpenCV NMSBoxes' rule, no +1-pixel convention).
 * - 'diou': suppress when DIoU = IoU - (d^2/c^2)^0.6 > threshold (darknet's greedynms, box.c box_diou), where d is the
 *   distance between centres and c the diagonal of the smallest box enclosing both.
 *
 * Candidates are visited in score order (ties: lower index first, as OpenCV's stable sort); a box is kept unless a
 * kept box of its class suppresses it. Each kept box is compared only with the boxes of its class whose x-range can
 * overlap it, found by binary search in an x1-sorted index: without overlap IoU is 0 and DIoU <= IoU, so neither
 * exceeds a threshold >= 0, and the result equals the all-pairs loop. A dense frame is then not quadratic in its
 * candidates.
 */
import { Candidates, topByScore } from './candidates.ts';
import type { Detection } from './types.ts';

export type NmsKind = 'iou' | 'diou';

export function iou(a: Detection, b: Detection): number {
  return iouFlat(a.x1, a.y1, a.x2, a.y2, b.x1, b.y1, b.x2, b.y2);
}

export function diou(a: Detection, b: Detection): number {
  return diouFlat(a.x1, a.y1, a.x2, a.y2, b.x1, b.y1, b.x2, b.y2);
}

function iouFlat(
  ax1: number,
  ay1: number,
  ax2: number,
  ay2: number,
  bx1: number,
  by1: number,
  bx2: number,
  by2: number,
): number {
  const iw = Math.min(ax2, bx2) - Math.max(ax1, bx1);
  const ih = Math.min(ay2, by2) - Math.max(ay1, by1);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter;
  return union > 0 ? inter / union : 0;
}

function diouFlat(
  ax1: number,
  ay1: number,
  ax2: number,
  ay2: number,
  bx1: number,
  by1: number,
  bx2: number,
  by2: number,
): number {
  const cw = Math.max(ax2, bx2) - Math.min(ax1, bx1);
  const ch = Math.max(ay2, by2) - Math.min(ay1, by1);
  const c = cw * cw + ch * ch;
  const i = iouFlat(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2);
  if (c === 0) return i;
  const dx = (ax1 + ax2) / 2 - (bx1 + bx2) / 2;
  const dy = (ay1 + ay2) / 2 - (by1 + by2) / 2;
  return i - Math.pow((dx * dx + dy * dy) / c, 0.6);
}

/**
 * NMS over `order` (candidate indices in score order, e.g. from topByScore). Returns the kept indices in that order,
 * at most `limit` of them. Greedy NMS decides each box from higher-scored boxes only, so the first `limit` kept
 * boxes are the same whether or not the rest is processed: with a limit below the candidates, the loop stops there
 * (each candidate is compared with the kept boxes of its class); without one, every class is swept in x.
 * `threshold` must be >= 0 (the sweep relies on it).
 */
export function nmsCandidates(
  c: Candidates,
  order: Int32Array,
  threshold: number,
  kind: NmsKind = 'iou',
  limit = Infinity,
): Int32Array {
  if (!(threshold >= 0)) throw new RangeError(`NMS threshold must be >= 0, got ${threshold}`);
  const n = order.length;
  if (limit < n) return Int32Array.from(greedyUpTo(c, order, threshold, kind, limit));
  // Coordinates and classes by rank (position in `order`), gathered once for the sweep.
  const x1 = new Float64Array(n);
  const y1 = new Float64Array(n);
  const x2 = new Float64Array(n);
  const y2 = new Float64Array(n);
  const cls = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    const i = order[r];
    const b = c.box[i];
    x1[r] = c.x1[b];
    y1[r] = c.y1[b];
    x2[r] = c.x2[b];
    y2[r] = c.y2[b];
    cls[r] = c.classId[i];
  }
  return Int32Array.from(sweepAll({ x1, y1, x2, y2 }, cls, threshold, kind), (r) => order[r]);
}

/**
 * Candidates in `order`; each is kept unless a kept box of its class overlaps it; stops after `limit` kept.
 * Returns candidate indices. Reads the boxes where they are (no copy): it visits only as far as it needs.
 */
function greedyUpTo(c: Candidates, order: Int32Array, threshold: number, kind: NmsKind, limit: number): number[] {
  const { x1, y1, x2, y2 } = c;
  const keptByClass: number[][] = []; // boxes kept, by class (ids are small non-negative integers)
  const kept: number[] = [];
  const iouKind = kind === 'iou';
  for (let r = 0; r < order.length && kept.length < limit; r++) {
    const i = order[r];
    const a = c.box[i];
    const same = (keptByClass[c.classId[i]] ??= []);
    const ax1 = x1[a];
    const ay1 = y1[a];
    const ax2 = x2[a];
    const ay2 = y2[a];
    const aArea = (ax2 - ax1) * (ay2 - ay1);
    let suppressed = false;
    for (let q = 0; q < same.length; q++) {
      const k = same[q];
      // No overlap: IoU 0 and DIoU <= 0, neither above a threshold >= 0.
      const iw = (ax2 < x2[k] ? ax2 : x2[k]) - (ax1 > x1[k] ? ax1 : x1[k]);
      if (iw <= 0) continue;
      const ih = (ay2 < y2[k] ? ay2 : y2[k]) - (ay1 > y1[k] ? ay1 : y1[k]);
      if (ih <= 0) continue;
      let overlap: number;
      if (iouKind) {
        const inter = iw * ih;
        const union = aArea + (x2[k] - x1[k]) * (y2[k] - y1[k]) - inter;
        overlap = union > 0 ? inter / union : 0;
      } else {
        overlap = diouFlat(x1[k], y1[k], x2[k], y2[k], ax1, ay1, ax2, ay2);
      }
      if (overlap > threshold) {
        suppressed = true;
        break;
      }
    }
    if (suppressed) continue;
    same.push(a);
    kept.push(i);
  }
  return kept;
}

interface RankBoxes {
  x1: Float64Array;
  y1: Float64Array;
  x2: Float64Array;
  y2: Float64Array;
}

/** Every class swept in x; returns the kept ranks in score order. */
function sweepAll(b: RankBoxes, cls: Int32Array, threshold: number, kind: NmsKind): number[] {
  const n = cls.length;
  // Group by class, keeping score order inside each class (a stable counting sort on the class ids present).
  const slotOf = new Int32Array(n);
  const slot = new Map<number, number>();
  for (let r = 0; r < n; r++) {
    let s = slot.get(cls[r]);
    if (s === undefined) slot.set(cls[r], (s = slot.size));
    slotOf[r] = s;
  }
  const starts = new Int32Array(slot.size + 1);
  for (let r = 0; r < n; r++) starts[slotOf[r] + 1]++;
  for (let s = 0; s < slot.size; s++) starts[s + 1] += starts[s];
  const fill = starts.slice(0, slot.size);
  const ranks = new Int32Array(n); // ranks grouped by class, ascending within a class
  for (let r = 0; r < n; r++) ranks[fill[slotOf[r]]++] = r;
  const keptRank = new Uint8Array(n);
  for (let s = 0; s < slot.size; s++)
    suppressClass(b, ranks.subarray(starts[s], starts[s + 1]), threshold, kind, keptRank);
  const kept: number[] = [];
  for (let r = 0; r < n; r++) if (keptRank[r]) kept.push(r);
  return kept;
}

/** Greedy suppression inside one class; `ranks` in score order. Marks kept ranks. */
function suppressClass(b: RankBoxes, ranks: Int32Array, threshold: number, kind: NmsKind, keptRank: Uint8Array): void {
  const m = ranks.length;
  const { x1, y1, x2, y2 } = b;
  if (m === 1) {
    keptRank[ranks[0]] = 1;
    return;
  }
  // x1-sorted index of the class members (k = position in `ranks`): keys pack x1 in 1/16 px steps and k.
  let minX = Infinity;
  let maxW = 0;
  for (let k = 0; k < m; k++) {
    const r = ranks[k];
    if (x1[r] < minX) minX = x1[r];
    if (x2[r] - x1[r] > maxW) maxW = x2[r] - x1[r];
  }
  const SPLIT = 2 ** 21;
  const keys = new Float64Array(m);
  for (let k = 0; k < m; k++) keys[k] = Math.floor((x1[ranks[k]] - minX) * 16) * SPLIT + k;
  keys.sort();
  const byX = new Int32Array(m);
  const xs = new Float64Array(m); // x1 - minX rounded down to 1/16 px
  for (let p = 0; p < m; p++) {
    byX[p] = keys[p] % SPLIT;
    xs[p] = Math.floor(keys[p] / SPLIT) / 16;
  }
  const lowerBound = (v: number) => {
    let lo = 0;
    let hi = m;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const suppressed = new Uint8Array(m);
  for (let k = 0; k < m; k++) {
    if (suppressed[k]) continue;
    const i = ranks[k];
    keptRank[i] = 1;
    const ax1 = x1[i];
    const ay1 = y1[i];
    const ax2 = x2[i];
    const ay2 = y2[i];
    const aArea = (ax2 - ax1) * (ay2 - ay1);
    // boxes that can overlap in x: x1_j < ax2 and x1_j > ax1 - maxW (with a 1/16 px margin for the rounding)
    const hi = lowerBound(ax2 - minX + 1 / 16);
    for (let p = lowerBound(ax1 - minX - maxW - 1 / 16); p < hi; p++) {
      const q = byX[p];
      if (q <= k || suppressed[q]) continue;
      const j = ranks[q];
      const bx1 = x1[j];
      const by1 = y1[j];
      const bx2 = x2[j];
      const by2 = y2[j];
      const iw = (ax2 < bx2 ? ax2 : bx2) - (ax1 > bx1 ? ax1 : bx1);
      if (iw <= 0) continue;
      const ih = (ay2 < by2 ? ay2 : by2) - (ay1 > by1 ? ay1 : by1);
      if (ih <= 0) continue;
      let overlap: number;
      if (kind === 'diou') {
        overlap = diouFlat(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2);
      } else {
        const inter = iw * ih;
        const union = aArea + (bx2 - bx1) * (by2 - by1) - inter;
        overlap = union > 0 ? inter / union : 0;
      }
      if (overlap > threshold) suppressed[q] = 1;
    }
  }
}

/** NMS on objects (tests, small sets): the kept detections, highest score first. */
export function nms(detections: readonly Detection[], threshold: number, kind: NmsKind = 'iou'): Detection[] {
  const c = Candidates.from(detections);
  return c.toDetections(nmsCandidates(c, topByScore(c, c.count), threshold, kind));
}
