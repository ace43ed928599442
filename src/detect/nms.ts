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
  const overlap = kind === 'diou' ? diou : iou;
  const byClass = new Map<number, Detection[]>();
  for (const d of detections) {
    const list = byClass.get(d.classId);
    if (list) list.push(d);
    else byClass.set(d.classId, [d]);
  }
  const kept: Detection[] = [];
  for (const classId of [...byClass.keys()].sort((a, b) => a - b)) {
    const list = byClass.get(classId)!.sort((a, b) => b.score - a.score);
    const suppressed = new Uint8Array(list.length);
    for (let i = 0; i < list.length; i++) {
      if (suppressed[i]) continue;
      kept.push(list[i]);
      for (let j = i + 1; j < list.length; j++) {
        if (!suppressed[j] && overlap(list[i], list[j]) > threshold) suppressed[j] = 1;
      }
    }
  }
  return kept;
}
