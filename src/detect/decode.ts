/**
 * YOLO head decoding, as darknet's forward_yolo_layer + get_yolo_box + get_yolo_detections.
 *
 * A head is the raw conv output, float32 [1, A*(5+C), H, W]; channel a*(5+C)+e holds entry e of anchor a:
 * tx, ty, tw, th, objectness, class 0..C-1.
 *   x = sigmoid(tx)*s - (s-1)/2  (s = scale_x_y),  bx = (col + x)/W
 *   bw = exp(tw) * anchor_w / net_w
 * With new_coords the logistic is already applied by the cfg's activation: x = tx*s - (s-1)/2, bw = tw^2*4*anchor_w/net_w.
 * A cell/anchor is kept when objectness > conf. Class mode 'multi' (darknet's rule, the default): each class with
 * objectness x p(class) > conf becomes a candidate. Class mode 'best' (OpenCV's and Ultralytics' rule): only the
 * class with the highest probability (the first one on a tie), when objectness x p > conf.
 * Candidates go into a reusable flat buffer; nothing is allocated for a cell or class below the threshold.
 */
import { PLUGIN_DETECTIONS_OUTPUT, type YoloHead } from '../model/metadata.ts';
import { Candidates } from './candidates.ts';
import type { Geometry } from './types.ts';

export type ClassMode = 'multi' | 'best';

const sigmoid = (v: number) => 1 / (1 + Math.exp(-v));
const same = (v: number) => v;

interface DecodeOptions {
  classes: number;
  conf: number;
  /** Default 'multi'. */
  classMode?: ClassMode;
  /**
   * 'multi' only: store just the candidates whose float32 score is at least this (candidateFloor's), the others cannot
   * be among the best kept for NMS and cost no exp() and no room. Default 0: every candidate above conf.
   */
  floor?: number;
  /**
   * With a floor: how many candidates scored exactly at it are stored, across the frame's heads (`out.atFloor`
   * counts them). The first ones in decode order are the ones the tie order prefers, so `keep` of them are all the
   * best `keep` can need: a frame whose scores all tie (a model whose outputs do not vary) stores `keep`, not all.
   */
  floorRoom?: number;
}

export function decodeHead(
  data: Float32Array,
  head: YoloHead,
  geometry: Geometry,
  options: DecodeOptions,
  out: Candidates = new Candidates(),
): Candidates {
  const { gridW: W, gridH: H, newCoords } = head;
  const C = options.classes;
  const conf = options.conf;
  const plane = W * H;
  const per = 5 + C;
  const expected = head.anchors.length * per * plane;
  if (data.length !== expected) {
    throw new RangeError(
      `head ${head.output} has ${data.length} values but ${head.anchors.length} anchors x ${per} x ${H}x${W} needs ${expected}`,
    );
  }
  const act = newCoords ? same : sigmoid;
  const best = options.classMode === 'best';
  const floor = options.floor ?? 0;
  const floorRoom = options.floorRoom ?? Infinity;
  // The floor is a float32 score; a score that rounds to it can be half a float32 step (2^-24 of it) below it.
  const scoreBelowFloor = floor * (1 - 2 ** -23);
  const box = new Float64Array(4);
  // Per cell of one anchor: its objectness, the class-value threshold it implies, its box (multi mode); with a floor,
  // conf's own threshold (at or below `low` not a candidate, above `clear` one), so every candidate is counted.
  const cellObj = new Float64Array(plane);
  const cellThreshold = new Float64Array(plane);
  const cellBox = new Int32Array(plane);
  const counting = floor > 0;
  const cellLow = new Float64Array(counting ? plane : 0);
  const cellClear = new Float64Array(counting ? plane : 0);
  for (let a = 0; a < head.anchors.length; a++) {
    const base = a * per * plane;
    let passing = 0; // cells with a class threshold
    for (let cell = 0; cell < plane; cell++) {
      cellThreshold[cell] = Infinity; // no class passes unless set below
      if (counting) cellLow[cell] = cellClear[cell] = Infinity; // nor counts
      const obj = act(data[base + 4 * plane + cell]);
      if (!(obj > conf)) {
        if (obj !== obj) out.nonFinite++; // NaN (an Inf logit is a finite objectness; NaN is what it spreads into)
        continue;
      }
      if (!cellBoxOf(data, base, cell, head, head.anchors[a], geometry, box, out)) continue; // a NaN, counted
      const [x1, y1, x2, y2] = box;
      if (best) {
        const c = bestClass(data, base + 5 * plane + cell, C, plane);
        const score = obj * act(data[base + (5 + c) * plane + cell]);
        if (score > conf) {
          out.passing++;
          out.add(x1, y1, x2, y2, score, c);
        }
        continue;
      }
      // obj x p > conf  <=>  p > conf/obj  <=>  the class value passes a per-cell threshold (its logit without
      // new_coords): the exp is computed only for the classes that pass, not for all C of them. A floor raises it.
      const need = Math.max(conf, scoreBelowFloor) / obj;
      cellObj[cell] = obj;
      if (counting) {
        const at = classThreshold(conf / obj, newCoords);
        cellLow[cell] = at - 1e-6;
        // a value 1e-4 above the exact threshold is above it by far more than rounding, where the sigmoid is not flat
        cellClear[cell] = !newCoords && at < 15 ? at + 1e-4 : Infinity;
      } else if (need >= 1) continue;
      passing++;
      if (need >= 1) continue; // counted, never stored: below the floor whatever its class
      // A hair below the exact threshold, so rounding in log() never drops a class that the exact test keeps.
      cellThreshold[cell] = classThreshold(need, newCoords) - 1e-6;
      cellBox[cell] = out.addBox(x1, y1, x2, y2); // shared by every class of the cell that passes
    }
    if (best || passing === 0) continue; // an anchor no cell of which passes has no class to read
    // Classes outer, cells inner: the reads follow the tensor's memory order (NCHW). A value equal to the one
    // before reuses its probability (no exp(): outputs that repeat, as a saturated or constant model's do).
    let lastV = NaN;
    let lastP = 0;
    for (let c = 0; c < C; c++) {
      const classBase = base + (5 + c) * plane;
      for (let cell = 0; cell < plane; cell++) {
        const v = data[classBase + cell];
        if (!(v > cellThreshold[cell])) {
          // below the floor: counted when it passes conf
          if (counting && (v > cellClear[cell] || (v > cellLow[cell] && cellObj[cell] * act(v) > conf))) out.passing++;
          continue;
        }
        if (v !== lastV) {
          lastV = v;
          lastP = newCoords ? v : 1 / (1 + Math.exp(-v));
        }
        const score = cellObj[cell] * lastP;
        if (!(score > conf)) continue;
        out.passing++;
        const f = Math.fround(score);
        if (f > floor || (f === floor && out.atFloor++ < floorRoom)) out.addCandidate(cellBox[cell], score, c);
      }
    }
  }
  return out;
}

/**
 * The box of one cell of one anchor, in frame pixels (corners, clamped to the frame), into `box`; false where a value
 * is NaN (a broken model output), counted in `out.nonFinite`.
 */
function cellBoxOf(
  data: Float32Array,
  base: number,
  cell: number,
  head: YoloHead,
  [anchorW, anchorH]: readonly [number, number],
  g: Geometry,
  box: Float64Array,
  out: Candidates,
): boolean {
  const { gridW: W, gridH: H, scaleXY: s, newCoords } = head;
  const plane = W * H;
  const act = newCoords ? same : sigmoid;
  const row = Math.floor(cell / W);
  const col = cell - row * W;
  const tx = act(data[base + cell]) * s - (s - 1) / 2;
  const ty = act(data[base + plane + cell]) * s - (s - 1) / 2;
  const tw = data[base + 2 * plane + cell];
  const th = data[base + 3 * plane + cell];
  const bw = newCoords ? tw * tw * 4 * anchorW : Math.exp(tw) * anchorW; // network-input pixels
  const bh = newCoords ? th * th * 4 * anchorH : Math.exp(th) * anchorH;
  const cx = ((col + tx) / W) * g.netW;
  const cy = ((row + ty) / H) * g.netH;
  box[0] = clamp((cx - bw / 2 - g.padX) / g.scaleX, g.frameW);
  box[1] = clamp((cy - bh / 2 - g.padY) / g.scaleY, g.frameH);
  box[2] = clamp((cx + bw / 2 - g.padX) / g.scaleX, g.frameW);
  box[3] = clamp((cy + bh / 2 - g.padY) / g.scaleY, g.frameH);
  if (box[0] === box[0] && box[1] === box[1] && box[2] === box[2] && box[3] === box[3]) return true;
  out.nonFinite++;
  return false;
}

/** Every SAMPLE_EVERY-th class value is read by candidateFloor, and the scores of those that pass place the floor. */
const SAMPLE_EVERY = 32;

/**
 * For a frame whose candidates exceed `keep` (--max-candidates) many times over ('multi' mode: a model firing
 * everywhere): a score floor below which none can be among the `keep` best, placed from the scores of every
 * SAMPLE_EVERY-th class value's candidate (with 15% and 64 samples to spare), so that decodeHead computes and stores
 * about `keep` x 1.15 of them, not all (202,800 on such a frame of yolov4-tiny); decodeHead counts them all exactly.
 * Undefined when the sample says there are not that many (the floor would save nothing). The caller checks that at
 * least `keep` candidates came out above the floor, and decodes without one where not: the result is exact either
 * way. `floorFor(k)`: the same for fewer than `keep` (undefined where the samples cannot place it).
 */
export function candidateFloor(
  heads: readonly { data: Float32Array; head: YoloHead }[],
  classes: number,
  conf: number,
  keep: number,
): { floor: number; floorFor: (k: number) => number | undefined } | undefined {
  const cells = heads.map(({ data, head }) => passingCells(data, head, classes, conf));
  if (cells.reduce((n, c) => n + c.count, 0) * classes <= keep) return undefined;
  const samples: number[] = [];
  for (let h = 0; h < heads.length; h++) {
    const { data, head } = heads[h];
    const { obj, low } = cells[h];
    const plane = head.gridW * head.gridH;
    for (let a = 0; a < head.anchors.length; a++) {
      for (let c = 0; c < classes; c++) {
        const base = (a * (5 + classes) + 5 + c) * plane;
        // each plane from another offset, so that the sample does not keep to a few columns of the grid
        for (let cell = (c * 7) % SAMPLE_EVERY; cell < plane; cell += SAMPLE_EVERY) {
          const v = data[base + cell];
          const k = a * plane + cell;
          if (!(v > low[k])) continue;
          const score = obj[k] * (head.newCoords ? v : sigmoid(v));
          if (score > conf) samples.push(Math.fround(score));
        }
      }
    }
  }
  const sorted = Float64Array.from(samples).sort();
  // every sample the same score (a model whose outputs do not vary) is a floor too: decode stores `k` ties
  const floorFor = (k: number) => {
    const j = Math.ceil((k / SAMPLE_EVERY) * 1.15) + 64;
    return j < sorted.length ? sorted[sorted.length - j] : undefined;
  };
  const floor = floorFor(keep);
  return floor === undefined ? undefined : { floor, floorFor };
}

/**
 * A head's cells by anchor: their objectness, and the class value at or below which a class is not a candidate
 * there (`low`, a hair below the exact threshold), and how many cells pass conf at all. A cell that does not has
 * `low` at Infinity.
 */
function passingCells(data: Float32Array, head: YoloHead, classes: number, conf: number) {
  const plane = head.gridW * head.gridH;
  const obj = new Float64Array(head.anchors.length * plane);
  const low = new Float64Array(obj.length).fill(Infinity);
  let count = 0;
  for (let a = 0; a < head.anchors.length; a++) {
    for (let cell = 0, k = a * plane; cell < plane; cell++, k++) {
      const logit = data[(a * (5 + classes) + 4) * plane + cell];
      const o = head.newCoords ? logit : sigmoid(logit);
      if (!(o > conf)) continue;
      obj[k] = o;
      low[k] = classThreshold(conf / o, head.newCoords) - 1e-6;
      count++;
    }
  }
  return { obj, low, count };
}

/** The class value at which objectness `obj` times the class's probability reaches `need` x obj: its logit. */
function classThreshold(need: number, newCoords: boolean): number {
  if (need <= 0) return -Infinity;
  return newCoords ? need : Math.log(need / (1 - need));
}

/** The class with the highest value of `classes` values `stride` apart from `first` (the first one on a tie). */
function bestClass(data: Float32Array, first: number, classes: number, stride: number): number {
  let best = 0;
  for (let c = 1; c < classes; c++) if (data[first + c * stride] > data[first + best * stride]) best = c;
  return best;
}

function clamp(v: number, max: number): number {
  return v < 0 ? 0 : v > max ? max : v;
}

/**
 * Decodes tensorrt_demos' plugin output: rows of 7 floats (x, y, w, h, box confidence, class id, class probability),
 * x/y the top-left corner and w/h the size, all as fractions of the network input (yolo_layer.cu); rows the plugin
 * left empty are zeros. Kept when confidence x probability >= conf, as tensorrt_demos' _postprocess_yolo.
 */
export function decodePluginDetections(
  data: Float32Array,
  geometry: Geometry,
  conf: number,
  classes: number,
  out: Candidates = new Candidates(),
): Candidates {
  if (data.length % 7 !== 0)
    throw new RangeError(`${PLUGIN_DETECTIONS_OUTPUT} has ${data.length} values, not a multiple of 7`);
  const { netW, netH, frameW, frameH, padX, padY, scaleX, scaleY } = geometry;
  for (let i = 0; i < data.length; i += 7) {
    const score = data[i + 4] * data[i + 6];
    if (!(score >= conf)) continue;
    const classId = Math.round(data[i + 5]);
    if (classId < 0 || classId >= classes) continue;
    const x = data[i] * netW;
    const y = data[i + 1] * netH;
    const w = data[i + 2] * netW;
    const h = data[i + 3] * netH;
    out.add(
      clamp((x - padX) / scaleX, frameW),
      clamp((y - padY) / scaleY, frameH),
      clamp((x + w - padX) / scaleX, frameW),
      clamp((y + h - padY) / scaleY, frameH),
      score,
      classId,
    );
  }
  return out;
}
