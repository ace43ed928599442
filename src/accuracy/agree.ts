/**
 * Do two backends see the same objects? Per frame and class, REF's boxes in score order each take the unmatched
 * OTHER box of that frame and class with the highest IoU, when it is at least `iouThreshold` (ties: the first in
 * OTHER's score order). Pure: two lists of COCO detections in, an Agreement out.
 *
 *   matched share = matched / (matched + only in REF + only in OTHER): 1 when both found exactly the same boxes.
 *
 * Boxes left unmatched that overlap a leftover box of another class in the same frame are counted as class swaps
 * (they stay in "only in REF" and "only in OTHER" as well).
 */
import { type CocoDetection, cocoIou } from './coco.ts';

interface ClassAgreement {
  categoryId: number;
  name: string;
  matched: number;
  onlyRef: number;
  onlyOther: number;
  meanIou: number;
}

interface FrameDifference {
  imageId: number;
  onlyRef: number;
  onlyOther: number;
}

export interface Agreement {
  iouThreshold: number;
  frames: number;
  refBoxes: number;
  otherBoxes: number;
  matched: number;
  onlyRef: number;
  onlyOther: number;
  classSwaps: number;
  /** matched / (matched + onlyRef + onlyOther); 1 when both have no box at all. */
  matchedShare: number;
  meanIou: number;
  meanAbsScoreDiff: number;
  maxAbsScoreDiff: number;
  perClass: ClassAgreement[];
  /** The frames with the most unmatched boxes, most first (at most `top`). */
  worstFrames: FrameDifference[];
}

const byScore = (a: CocoDetection, b: CocoDetection) => b.score - a.score;

function groupBy<T>(items: readonly T[], key: (t: T) => number): Map<number, T[]> {
  const m = new Map<number, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = m.get(k);
    if (list) list.push(it);
    else m.set(k, [it]);
  }
  return m;
}

interface AgreeOptions {
  iouThreshold?: number;
  /** Category id -> name, for the per-class table. */
  names?: Map<number, string>;
  top?: number;
  /**
   * The frames to compare (from the run JSONs: a frame without boxes is absent from COCO results). Default: every
   * frame either side has a box in.
   */
  frames?: number[];
}

/** How far below the threshold an IoU may fall by floating-point rounding alone (identical boxes give 1 - 1e-16). */
const IOU_EPSILON = 1e-9;

export function agree(ref: readonly CocoDetection[], other: readonly CocoDetection[], o: AgreeOptions = {}): Agreement {
  const thr = o.iouThreshold ?? 0.5;
  const refByFrame = groupBy(ref, (d) => d.image_id);
  const otherByFrame = groupBy(other, (d) => d.image_id);
  const frames = o.frames ?? [...new Set([...refByFrame.keys(), ...otherByFrame.keys()])].sort((a, b) => a - b);
  const perClass = new Map<number, ClassAgreement & { iouSum: number }>();
  const classRow = (id: number) => {
    let row = perClass.get(id);
    if (!row)
      perClass.set(
        id,
        (row = {
          categoryId: id,
          name: o.names?.get(id) ?? String(id),
          matched: 0,
          onlyRef: 0,
          onlyOther: 0,
          meanIou: 0,
          iouSum: 0,
        }),
      );
    return row;
  };
  let matched = 0;
  let iouSum = 0;
  let scoreDiffSum = 0;
  let maxScoreDiff = 0;
  let classSwaps = 0;
  const frameDiffs: FrameDifference[] = [];
  for (const frame of frames) {
    const r = refByFrame.get(frame) ?? [];
    const t = otherByFrame.get(frame) ?? [];
    const leftRef: CocoDetection[] = [];
    const leftOther: CocoDetection[] = [];
    const classes = new Set([...r.map((d) => d.category_id), ...t.map((d) => d.category_id)]);
    for (const cls of classes) {
      const rs = r.filter((d) => d.category_id === cls).sort(byScore);
      const ts = t.filter((d) => d.category_id === cls).sort(byScore);
      const row = classRow(cls);
      const m = matchBoxes(rs, ts, thr);
      for (const [d, e, v] of m.pairs) {
        matched++;
        row.matched++;
        iouSum += v;
        row.iouSum += v;
        const diff = Math.abs(d.score - e.score);
        scoreDiffSum += diff;
        if (diff > maxScoreDiff) maxScoreDiff = diff;
      }
      leftRef.push(...m.onlyRef);
      leftOther.push(...m.onlyOther);
      row.onlyRef += m.onlyRef.length;
      row.onlyOther += m.onlyOther.length;
    }
    classSwaps += countClassSwaps(leftRef, leftOther, thr);
    if (leftRef.length || leftOther.length)
      frameDiffs.push({ imageId: frame, onlyRef: leftRef.length, onlyOther: leftOther.length });
  }
  const onlyRef = [...perClass.values()].reduce((s, c) => s + c.onlyRef, 0);
  const onlyOther = [...perClass.values()].reduce((s, c) => s + c.onlyOther, 0);
  const frameSet = new Set(frames);
  const total = matched + onlyRef + onlyOther;
  return {
    iouThreshold: thr,
    frames: frames.length,
    refBoxes: ref.filter((d) => frameSet.has(d.image_id)).length,
    otherBoxes: other.filter((d) => frameSet.has(d.image_id)).length,
    matched,
    onlyRef,
    onlyOther,
    classSwaps,
    matchedShare: total === 0 ? 1 : matched / total,
    meanIou: matched ? iouSum / matched : 0,
    meanAbsScoreDiff: matched ? scoreDiffSum / matched : 0,
    maxAbsScoreDiff: maxScoreDiff,
    perClass: [...perClass.values()]
      .sort((a, b) => a.categoryId - b.categoryId)
      .map(({ iouSum: s, ...c }) => ({ ...c, meanIou: c.matched ? s / c.matched : 0 })),
    worstFrames: frameDiffs
      .sort((a, b) => b.onlyRef + b.onlyOther - (a.onlyRef + a.onlyOther) || a.imageId - b.imageId)
      .slice(0, o.top ?? 10),
  };
}

/**
 * One class of one frame: REF's boxes in score order each take the unmatched OTHER box of highest IoU (at least
 * `thr`); the pairs with their IoU, and the boxes left on each side.
 */
function matchBoxes(rs: CocoDetection[], ts: CocoDetection[], thr: number) {
  const used = new Uint8Array(ts.length);
  const pairs: [CocoDetection, CocoDetection, number][] = [];
  const onlyRef: CocoDetection[] = [];
  for (const a of rs) {
    let best = -1;
    let bestIou = thr;
    for (let j = 0; j < ts.length; j++) {
      if (used[j]) continue;
      const v = cocoIou(a.bbox, ts[j].bbox);
      // IoU in floating point: a box and its exact copy give 0.9999999..., which --iou 1 must still match
      if (v + IOU_EPSILON < thr) continue;
      if (best < 0 || v > bestIou) {
        best = j;
        bestIou = v;
      }
    }
    if (best < 0) {
      onlyRef.push(a);
      continue;
    }
    used[best] = 1;
    pairs.push([a, ts[best], bestIou]);
  }
  return { pairs, onlyRef, onlyOther: ts.filter((_, j) => !used[j]) };
}

/** Boxes left unmatched in REF that an unmatched OTHER box of another class covers (IoU >= thr): a class swap each. */
function countClassSwaps(leftRef: CocoDetection[], leftOther: CocoDetection[], thr: number): number {
  const swapped = new Uint8Array(leftOther.length);
  let swaps = 0;
  for (const a of leftRef) {
    const j = leftOther.findIndex(
      (d, k) => !swapped[k] && d.category_id !== a.category_id && cocoIou(a.bbox, d.bbox) >= thr,
    );
    if (j >= 0) {
      swapped[j] = 1;
      swaps++;
    }
  }
  return swaps;
}
