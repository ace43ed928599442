/**
 * Candidate boxes of one frame in flat, reusable typed arrays: decoding writes here without an object per candidate,
 * and selection and NMS read the arrays. A frame of a densely firing model has 200,000 candidates (every anchor of
 * every cell, every class), so a box is stored once per cell and shared by that cell's class candidates.
 */
import type { Detection } from './types.ts';

export class Candidates {
  /** Candidates: score, class and the box they share with the other classes of their cell. */
  count = 0;
  /** float32, as OpenCV's NMSBoxes takes scores: equal scores compare equal everywhere. */
  score: Float32Array;
  classId: Int32Array;
  box: Int32Array;
  /** Boxes, in frame pixels (corners). */
  boxCount = 0;
  x1: Float64Array;
  y1: Float64Array;
  x2: Float64Array;
  y2: Float64Array;

  constructor(capacity = 1024) {
    this.score = new Float32Array(capacity);
    this.classId = new Int32Array(capacity);
    this.box = new Int32Array(capacity);
    this.x1 = new Float64Array(capacity);
    this.y1 = new Float64Array(capacity);
    this.x2 = new Float64Array(capacity);
    this.y2 = new Float64Array(capacity);
  }

  /** Model output values that were NaN or Inf where decode read them (a broken model); 0 normally. */
  nonFinite = 0;
  /** Candidates decode found scored exactly at its floor (stored or not: see decodeHead's floorRoom). */
  atFloor = 0;
  /** Candidates decode found above conf, stored or not (below its floor). */
  passing = 0;

  /** Empties the buffer, keeping its memory. */
  reset(): this {
    this.count = 0;
    this.boxCount = 0;
    this.nonFinite = 0;
    this.atFloor = 0;
    this.passing = 0;
    return this;
  }

  /** Adds a box; returns its index for addCandidate. */
  addBox(x1: number, y1: number, x2: number, y2: number): number {
    if (this.boxCount === this.x1.length) this.growBoxes();
    const b = this.boxCount++;
    this.x1[b] = x1;
    this.y1[b] = y1;
    this.x2[b] = x2;
    this.y2[b] = y2;
    return b;
  }

  addCandidate(box: number, score: number, classId: number): void {
    if (this.count === this.score.length) this.growCandidates();
    const i = this.count++;
    this.score[i] = score;
    this.classId[i] = classId;
    this.box[i] = box;
  }

  /** A candidate with a box of its own. */
  add(x1: number, y1: number, x2: number, y2: number, score: number, classId: number): void {
    this.addCandidate(this.addBox(x1, y1, x2, y2), score, classId);
  }

  detection(i: number): Detection {
    const b = this.box[i];
    return {
      x1: this.x1[b],
      y1: this.y1[b],
      x2: this.x2[b],
      y2: this.y2[b],
      score: this.score[i],
      classId: this.classId[i],
    };
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
    for (const d of detections) c.add(d.x1, d.y1, d.x2, d.y2, d.score, d.classId);
    return c;
  }

  private growBoxes(): void {
    const cap = this.x1.length * 2;
    const grow = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.x1 = grow(this.x1);
    this.y1 = grow(this.y1);
    this.x2 = grow(this.x2);
    this.y2 = grow(this.y2);
  }

  private growCandidates(): void {
    const cap = this.score.length * 2;
    const s = new Float32Array(cap);
    s.set(this.score);
    this.score = s;
    const c = new Int32Array(cap);
    c.set(this.classId);
    this.classId = c;
    const b = new Int32Array(cap);
    b.set(this.box);
    this.box = b;
  }
}

/** Buffers topByScore reuses from frame to frame (a dense frame needs about 3 MB; allocating them anew costs GC). */
export class SortScratch {
  private u32: Uint32Array[] = [new Uint32Array(0), new Uint32Array(0), new Uint32Array(0)];
  private i32: Int32Array[] = [new Int32Array(0), new Int32Array(0)];
  readonly histogram = new Int32Array(65536);
  readonly bytes = new Int32Array(256);

  u32s(n: number): Uint32Array[] {
    if (this.u32[0].length < n) this.u32 = this.u32.map(() => new Uint32Array(Math.ceil(Math.max(n, 1024) * 1.5)));
    return this.u32.map((a) => a.subarray(0, n));
  }

  i32s(n: number): Int32Array[] {
    if (this.i32[0].length < n) this.i32 = this.i32.map(() => new Int32Array(Math.ceil(Math.max(n, 1024) * 1.5)));
    return this.i32.map((a) => a.subarray(0, n));
  }
}

/**
 * The `k` candidates with the highest scores, in that order; ties keep their index order (as OpenCV NMSBoxes'
 * stable sort). Linear time: the float32 bits made monotone as unsigned integers (then inverted, so high scores
 * sort first) are the keys; a histogram of their top 16 bits finds the bucket where the k-th candidate lies, and only
 * the candidates at or above it are radix-sorted (stable LSD, 8 bits a pass, passes where every key agrees skipped).
 * Exact for every float32 score (-0 and 0 are one score). With `scratch`, the result is a view into it, valid until its next use.
 */
export function topByScore(c: Candidates, k: number, scratch = new SortScratch()): Int32Array {
  const n = c.count;
  const bits = new Uint32Array(c.score.buffer, c.score.byteOffset, n);
  const [keys, pickedKeys, keysOut] = scratch.u32s(n);
  for (let i = 0; i < n; i++) {
    const b = bits[i] === 0x80000000 ? 0 : bits[i]; // -0 is 0: equal scores keep their index order
    keys[i] = ~(b & 0x80000000 ? ~b : b | 0x80000000) >>> 0; // negative floats reversed below the positives
  }
  let bound = 65536; // every bucket
  if (k < n) {
    const counts = scratch.histogram.fill(0);
    for (let i = 0; i < n; i++) counts[keys[i] >>> 16]++;
    let seen = 0;
    for (bound = 0; seen < k; bound++) seen += counts[bound];
  }
  const [picked, orderOut] = scratch.i32s(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (keys[i] >>> 16 < bound) {
      pickedKeys[m] = keys[i];
      picked[m++] = i;
    }
  }
  const order = radixSort(
    pickedKeys.subarray(0, m),
    picked.subarray(0, m),
    keysOut.subarray(0, m),
    orderOut.subarray(0, m),
    scratch.bytes,
  );
  return k < m ? order.subarray(0, k) : order;
}

/** Stable LSD radix sort of `order` by `keys` (aligned), using the two `...Out` buffers; returns the sorted order. */
function radixSort(
  keysIn: Uint32Array,
  orderIn: Int32Array,
  keysOutIn: Uint32Array,
  orderOutIn: Int32Array,
  counts: Int32Array,
): Int32Array {
  const n = keysIn.length;
  let keys = keysIn;
  let order = orderIn;
  let keysOut = keysOutIn;
  let orderOut = orderOutIn;
  for (let shift = 0; shift < 32; shift += 8) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[(keys[i] >>> shift) & 255]++;
    if (n === 0 || counts[(keys[0] >>> shift) & 255] === n) continue; // nothing moves in this pass
    let sum = 0;
    for (let d = 0; d < 256; d++) {
      const c0 = counts[d];
      counts[d] = sum;
      sum += c0;
    }
    for (let i = 0; i < n; i++) {
      const d = (keys[i] >>> shift) & 255;
      const p = counts[d]++;
      keysOut[p] = keys[i];
      orderOut[p] = order[i];
    }
    [keys, keysOut] = [keysOut, keys];
    [order, orderOut] = [orderOut, order];
  }
  return order;
}
