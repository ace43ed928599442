/**
 * Candidate boxes of one frame in flat, reusable typed arrays: decoding writes here without an object per candidate,
 * and selection and NMS read the arrays. A frame of a densely firing model has tens of thousands of candidates.
 */
import type { Detection } from './types.ts';

export class Candidates {
  count = 0;
  x1: Float64Array;
  y1: Float64Array;
  x2: Float64Array;
  y2: Float64Array;
  /** float32, as OpenCV's NMSBoxes takes scores: equal scores compare equal everywhere. */
  score: Float32Array;
  classId: Int32Array;

  constructor(capacity = 1024) {
    this.x1 = new Float64Array(capacity);
    this.y1 = new Float64Array(capacity);
    this.x2 = new Float64Array(capacity);
    this.y2 = new Float64Array(capacity);
    this.score = new Float32Array(capacity);
    this.classId = new Int32Array(capacity);
  }

  /** Empties the buffer, keeping its memory. */
  reset(): this {
    this.count = 0;
    return this;
  }

  push(x1: number, y1: number, x2: number, y2: number, score: number, classId: number): void {
    if (this.count === this.score.length) this.grow();
    const i = this.count++;
    this.x1[i] = x1;
    this.y1[i] = y1;
    this.x2[i] = x2;
    this.y2[i] = y2;
    this.score[i] = score;
    this.classId[i] = classId;
  }

  detection(i: number): Detection {
    return { x1: this.x1[i], y1: this.y1[i], x2: this.x2[i], y2: this.y2[i], score: this.score[i], classId: this.classId[i] };
  }

  /** Objects for a few indices (the kept boxes), or for all candidates. */
  toDetections(indices?: ArrayLike<number>): Detection[] {
    const n = indices ? indices.length : this.count;
    const out = new Array<Detection>(n);
    for (let k = 0; k < n; k++) out[k] = this.detection(indices ? indices[k] : k);
    return out;
  }

  static from(detections: readonly Detection[]): Candidates {
    const c = new Candidates(Math.max(1, detections.length));
    for (const d of detections) c.push(d.x1, d.y1, d.x2, d.y2, d.score, d.classId);
    return c;
  }

  private grow(): void {
    const cap = this.score.length * 2;
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.x1 = f64(this.x1);
    this.y1 = f64(this.y1);
    this.x2 = f64(this.x2);
    this.y2 = f64(this.y2);
    const s = new Float32Array(cap);
    s.set(this.score);
    this.score = s;
    const c = new Int32Array(cap);
    c.set(this.classId);
    this.classId = c;
  }
}

/** Indices below this fit in a sort key beside a 32-bit score (2^32 x 2^21 < 2^53). */
const INDEX_BITS = 2 ** 21;

/**
 * Sort keys that order candidates by score descending, then index ascending (the order OpenCV's NMSBoxes uses:
 * a stable sort by score). A float32's bits, made monotone as an unsigned integer, are exact for every score.
 * Returns undefined when there are too many candidates to pack (then the caller uses a comparator).
 */
export function scoreKeys(c: Candidates): Float64Array | undefined {
  const n = c.count;
  if (n >= INDEX_BITS) return undefined;
  const bits = new Uint32Array(c.score.buffer, c.score.byteOffset, n);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const b = bits[i];
    const ascending = b & 0x80000000 ? ~b >>> 0 : (b | 0x80000000) >>> 0; // negative floats reversed, then positives
    keys[i] = (0xffffffff - ascending) * INDEX_BITS + i;
  }
  return keys;
}

export const indexOfKey = (key: number): number => key % INDEX_BITS;

/**
 * The `k` candidates with the highest scores (ties: lower index first), in that order. Linear-time selection
 * (quickselect on the packed keys), then a sort of the `k` selected only.
 */
export function topByScore(c: Candidates, k: number): Int32Array {
  const n = c.count;
  const keys = scoreKeys(c);
  if (!keys) {
    const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => c.score[b] - c.score[a] || a - b);
    return Int32Array.from(idx.slice(0, k));
  }
  if (k < n) {
    selectSmallest(keys, k);
    const head = keys.subarray(0, k).sort();
    return Int32Array.from(head, indexOfKey);
  }
  keys.sort();
  return Int32Array.from(keys, indexOfKey);
}

/** Rearranges `a` so that its `k` smallest values (all distinct) come first, in any order. Hoare's quickselect. */
export function selectSmallest(a: Float64Array, k: number): void {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    // median of three as the pivot
    const x = a[lo];
    const y = a[mid];
    const z = a[hi];
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return;
  }
}
