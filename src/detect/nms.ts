/**
 * Greedy per-class non-maximum suppression.
 * - 'iou': suppress when IoU > threshold (tensorrt_demos' rule, without its +1-pixel convention).
 * - 'diou': suppress when DIoU = IoU - (d^2/c^2)^0.6 > threshold (darknet's greedynms, box.c box_diou), where d is the
 *   distance between centres and c the diagonal of the smallest box enclosing both.
 */
import type { Detection } from './types.ts';

export type NmsKind = 'iou' | 'diou';

export function iou(a: Detection, b: Detection): number {
  const iw = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const ih = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter;
  return union > 0 ? inter / union : 0;
}

export function diou(a: Detection, b: Detection): number {
  const cw = Math.max(a.x2, b.x2) - Math.min(a.x1, b.x1);
  const ch = Math.max(a.y2, b.y2) - Math.min(a.y1, b.y1);
  const c = cw * cw + ch * ch;
  const i = iou(a, b);
  if (c === 0) return i;
  const dx = (a.x1 + a.x2) / 2 - (b.x1 + b.x2) / 2;
  const dy = (a.y1 + a.y2) / 2 - (b.y1 + b.y2) / 2;
  return i - Math.pow((dx * dx + dy * dy) / c, 0.6);
}

/** Returns the kept detections, highest score first within each class, classes in ascending order. */
export function nms(detections: readonly Detection[], threshold: number, kind: NmsKind = 'iou'): Detection[] {
  // One sort by (class, score descending) and flat coordinate arrays for all candidates: a busy frame has thousands.
  const n = detections.length;
  const order = sortByClassThenScore(detections);
  const x1 = new Float64Array(n);
  const y1 = new Float64Array(n);
  const x2 = new Float64Array(n);
  const y2 = new Float64Array(n);
  const area = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const d = detections[order[k]];
    x1[k] = d.x1;
    y1[k] = d.y1;
    x2[k] = d.x2;
    y2[k] = d.y2;
    area[k] = (d.x2 - d.x1) * (d.y2 - d.y1);
  }
  const suppressed = new Uint8Array(n);
  const kept: Detection[] = [];
  for (let start = 0; start < n; ) {
    const classId = detections[order[start]].classId;
    let end = start;
    while (end < n && detections[order[end]].classId === classId) end++;
    if (kind === 'iou' && threshold >= 0 && end - start > 64) {
      sweepIou(start, end, x1, y1, x2, y2, area, threshold, suppressed, (i) => kept.push(detections[order[i]]));
      start = end;
      continue;
    }
    for (let i = start; i < end; i++) {
      if (suppressed[i]) continue;
      const di = detections[order[i]];
      kept.push(di);
      if (kind === 'diou') {
        for (let j = i + 1; j < end; j++) if (!suppressed[j] && diou(di, detections[order[j]]) > threshold) suppressed[j] = 1;
        continue;
      }
      // iou() inlined on the flat arrays, box i held in locals
      const ax1 = x1[i];
      const ay1 = y1[i];
      const ax2 = x2[i];
      const ay2 = y2[i];
      const aArea = area[i];
      for (let j = i + 1; j < end; j++) {
        if (suppressed[j]) continue;
        const iw = (ax2 < x2[j] ? ax2 : x2[j]) - (ax1 > x1[j] ? ax1 : x1[j]);
        if (iw <= 0) continue;
        const ih = (ay2 < y2[j] ? ay2 : y2[j]) - (ay1 > y1[j] ? ay1 : y1[j]);
        if (ih <= 0) continue;
        const inter = iw * ih;
        const union = aArea + area[j] - inter;
        if (union > 0 && inter / union > threshold) suppressed[j] = 1;
      }
    }
    start = end;
  }
  return kept;
}

/**
 * Greedy IoU suppression over one class (indices start..end-1, in score order) that compares each kept box only with
 * the boxes whose x-range can overlap it: the others are found in an x1-sorted index by binary search. Boxes without
 * overlap have IoU 0, which never exceeds a threshold >= 0, so the result equals the all-pairs loop.
 */
function sweepIou(
  start: number,
  end: number,
  x1: Float64Array,
  y1: Float64Array,
  x2: Float64Array,
  y2: Float64Array,
  area: Float64Array,
  threshold: number,
  suppressed: Uint8Array,
  keep: (i: number) => void,
): void {
  const m = end - start;
  const keys = new Float64Array(m);
  let maxW = 0;
  for (let k = 0; k < m; k++) {
    keys[k] = Math.floor(x1[start + k] * 16) * 65536 + k; // x1 in 1/16 px steps, then the index (m < 65536)
    maxW = Math.max(maxW, x2[start + k] - x1[start + k]);
  }
  keys.sort();
  const byX = new Int32Array(m);
  const xs = new Float64Array(m);
  for (let p = 0; p < m; p++) {
    byX[p] = start + (keys[p] % 65536);
    xs[p] = Math.floor(keys[p] / 65536) / 16;
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
  for (let i = start; i < end; i++) {
    if (suppressed[i]) continue;
    keep(i);
    const ax1 = x1[i];
    const ay1 = y1[i];
    const ax2 = x2[i];
    const ay2 = y2[i];
    const hi = lowerBound(ax2 + 1 / 16);
    for (let p = lowerBound(ax1 - maxW - 1 / 16); p < hi; p++) {
      const j = byX[p];
      if (j <= i || suppressed[j]) continue;
      const iw = Math.min(ax2, x2[j]) - Math.max(ax1, x1[j]);
      if (iw <= 0) continue;
      const ih = Math.min(ay2, y2[j]) - Math.max(ay1, y1[j]);
      if (ih <= 0) continue;
      const inter = iw * ih;
      const union = area[i] + area[j] - inter;
      if (union > 0 && inter / union > threshold) suppressed[j] = 1;
    }
  }
}

/**
 * Indices of `detections` by class ascending, then score descending. A comparator sort of a few thousand objects
 * costs about a millisecond in V8; packing (class, 1 - score in 2^-24 steps, index) into one float64 and using the
 * native numeric sort costs a tenth of that. Scores closer than 6e-8 keep their input order.
 */
export function sortByClassThenScore(detections: readonly Detection[]): Int32Array {
  const n = detections.length;
  const order = new Int32Array(n);
  const fits = n < 1 << 16 && detections.every((d) => d.classId >= 0 && d.classId < 1 << 12);
  if (!fits) {
    const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => detections[a].classId - detections[b].classId || detections[b].score - detections[a].score);
    order.set(idx);
    return order;
  }
  const keys = new Float64Array(n);
  const SCORE_STEPS = 2 ** 24 - 1;
  for (let i = 0; i < n; i++) {
    const d = detections[i];
    const s = Math.min(1, Math.max(0, d.score));
    keys[i] = (d.classId * 2 ** 24 + Math.round((1 - s) * SCORE_STEPS)) * 2 ** 16 + i;
  }
  keys.sort();
  for (let i = 0; i < n; i++) order[i] = keys[i] % 2 ** 16;
  return order;
}
