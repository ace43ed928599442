/**
 * Drawing detections and the live FPS overlay onto a frame (OpenCV Mat, drawn in place), pixel for pixel what
 * OpenCV's own rectangle and putText calls draw, for a fraction of their cost: the part of the frame the drawing reaches is
 * copied into JS memory, every border and text is set there, and it is copied back (two calls a frame, where
 * the binding took two calls of 4-7 us for every box). A text is drawn by OpenCV once, onto a patch, and kept as the
 * pixels it sets (a stamp); a border's pixels follow from its corners.
 */
import type { Cv, Mat } from '../video/opencv.ts';
import type { Detection } from './types.ts';

type Bgr = readonly [number, number, number];
interface Size {
  width: number;
  height: number;
}

/** A fixed BGR palette, one colour per class (cycled). */
export const PALETTE: Bgr[] = [
  [0, 255, 0],
  [255, 128, 0],
  [0, 128, 255],
  [255, 0, 255],
  [0, 255, 255],
  [255, 255, 0],
  [128, 0, 255],
  [0, 0, 255],
  [255, 0, 128],
  [128, 255, 0],
];
/** A box's border and label take its class's colour (one stroke). */
const BOX_COLORS = PALETTE.map((color) => [color]);
const OVERLAY_COLORS: Bgr[] = [
  [0, 0, 0],
  [255, 255, 255],
];

/**
 * Each box's border (thickness 2) and its label, in its class's colour, box after box; then the overlay's lines at
 * the top left (black three pixels wide, then white), each made smaller where it would not fit the frame's width.
 */
export function drawOnFrame(
  cv: Cv,
  frame: Mat,
  detections: readonly Detection[],
  labels: readonly string[],
  overlay: readonly string[] = [],
): void {
  if (detections.length === 0 && overlay.length === 0) return;
  if (frame.type !== cv.CV_8UC3) throw new RangeError(`drawing needs a BGR frame (CV_8UC3), not type ${frame.type}`);
  const marks: Mark[] = [];
  const size = { width: frame.cols, height: frame.rows }; // read once: each is a call into the binding
  for (const d of detections) {
    const x = Math.round(d.x1);
    const y = Math.round(d.y1);
    const colors = BOX_COLORS[d.classId % BOX_COLORS.length];
    // a border: OpenCV's rectangle at thickness 2 (LINE_8) sets a band three pixels wide centred on each side, from
    // corner to corner (its lines' round ends add nothing outside the bands), clipped to the frame
    const right = x + Math.max(1, Math.round(d.x2) - x) - 1;
    const bottom = y + Math.max(1, Math.round(d.y2) - y) - 1;
    const reach = { left: x - 1, top: y - 1, right: right + 1, bottom: bottom + 1 };
    marks.push({ x, y, right, bottom, reach, colors, text: undefined, byOpenCv: false });
    const text = `${labels[d.classId] ?? `class${d.classId}`} ${d.score.toFixed(2)}`;
    marks.push(textMark(cv, size, LABEL, text, x + 2, Math.max(12, y - 4), colors));
  }
  let y = 20;
  for (const text of overlay) {
    const scale = overlayScale(cv, text, size.width);
    marks.push(textMark(cv, size, overlayFont(scale), text, 8, y, OVERLAY_COLORS));
    y += Math.ceil(24 * (scale / 0.55));
  }
  const canvas = canvasOver(cv, frame, size, marks);
  for (const mark of marks) {
    if (!mark.text) paintBorder(canvas, mark);
    else if (mark.byOpenCv) drawByOpenCv(canvas, mark, mark.text);
    else paintStamp(canvas, mark, mark.text.stamp);
  }
  canvas.done();
}

/**
 * One border or text: where it is (a text's origin; a border's corners, `right` and `bottom` inclusive), the pixels
 * it may set (columns and rows, inclusive), its colours (a text's, one for each stroke).
 */
interface Mark {
  x: number;
  y: number;
  right: number;
  bottom: number;
  reach: { left: number; top: number; right: number; bottom: number };
  colors: readonly Bgr[];
  text: { font: Font; text: string; stamp: Stamp } | undefined;
  /** Where a text crosses the frame's edge: drawn by OpenCV's own call, as only it clips a text exactly. */
  byOpenCv: boolean;
}

/**
 * How a text is drawn: Hershey simplex at a scale, in strokes (a thickness each, drawn in turn), and the stamps made
 * in it, by text, the latest 4096 kept (a dense frame's labels repeat: a class and a score).
 */
interface Font {
  scale: number;
  strokes: readonly number[];
  stamps: Map<string, Stamp>;
}

/** A box's label: one stroke. */
const LABEL: Font = { scale: 0.45, strokes: [1], stamps: new Map() };
/** The overlay's lines, by scale: black three pixels wide, then white. */
const overlayFonts = new Map<number, Font>();

function overlayFont(scale: number): Font {
  let font = overlayFonts.get(scale);
  if (!font) overlayFonts.set(scale, (font = { scale, strokes: [3, 1], stamps: new Map() }));
  return font;
}

/**
 * The pixels a text sets when OpenCV draws it at a whole-pixel origin: for each stroke, the places from the origin
 * of those it set last, and how far they reach. Hershey text at a whole-pixel origin sets the same pixels wherever it is
 * placed, so where it lies inside the frame they are exactly what drawing it there gives.
 */
interface Stamp {
  strokes: { dx: number[]; dy: number[] }[];
  left: number;
  right: number;
  up: number;
  down: number;
  /** Each stroke's pixels' places in a frame's bytes from the origin's, for frames `width` wide (the latest asked). */
  places?: { width: number; at: Int32Array[] };
}

function stampOf(cv: Cv, text: string, { scale, strokes, stamps }: Font): Stamp {
  const hit = stamps.get(text);
  if (hit) return hit;
  const thickest = Math.max(...strokes);
  const { size, baseLine } = cv.getTextSize(text, cv.FONT_HERSHEY_SIMPLEX, scale, thickest);
  // room around the text for the strokes' width, so nothing it sets is cut by the patch's edge
  const margin = 4 + thickest;
  const w = size.width + 2 * margin;
  const h = size.height + baseLine + 2 * margin;
  const ox = margin;
  const oy = size.height + margin;
  const bytes = Buffer.alloc(w * h);
  const patch = new cv.Mat(h, w, cv.CV_8UC1, bytes);
  const origin = new cv.Point2(ox, oy);
  strokes.forEach((thickness, k) =>
    patch.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, scale, new cv.Vec3(k + 1, 0, 0), thickness),
  );
  patch.release();
  const set = strokes.map(() => ({ dx: [] as number[], dy: [] as number[] }));
  for (let i = 0; i < bytes.length; i++)
    if (bytes[i]) {
      const px = i % w;
      const py = (i - px) / w;
      if (px === 0 || py === 0 || px === w - 1 || py === h - 1)
        throw new RangeError(`the text "${text}" reaches its patch's edge: its margin is too small`);
      set[bytes[i] - 1].dx.push(px - ox);
      set[bytes[i] - 1].dy.push(py - oy);
    }
  const dx = set.flatMap((p) => p.dx);
  const dy = set.flatMap((p) => p.dy);
  const stamp: Stamp = {
    strokes: set,
    left: Math.min(0, ...dx),
    right: Math.max(0, ...dx),
    up: Math.min(0, ...dy),
    down: Math.max(0, ...dy),
  };
  if (stamps.size >= 4096) stamps.delete(stamps.keys().next().value!);
  stamps.set(text, stamp);
  return stamp;
}

/** A text at (x, y) in its font, its strokes in `colors`. */
function textMark(cv: Cv, frame: Size, font: Font, text: string, x: number, y: number, colors: readonly Bgr[]): Mark {
  const stamp = stampOf(cv, text, font);
  const reach = { left: x + stamp.left, top: y + stamp.up, right: x + stamp.right, bottom: y + stamp.down };
  const byOpenCv = reach.left < 0 || reach.right >= frame.width || reach.top < 0 || reach.bottom >= frame.height;
  if (byOpenCv) {
    // drawn by OpenCV: two pixels to spare on every side (see canvasOver)
    Object.assign(reach, {
      left: reach.left - 2,
      top: reach.top - 2,
      right: reach.right + 2,
      bottom: reach.bottom + 2,
    });
  }
  return { x, y, right: reach.right, bottom: reach.bottom, reach, colors, text: { font, text, stamp }, byOpenCv };
}

/**
 * The part of the frame the marks reach, in JS memory: `bytes` holds its pixels (BGR, `width` a row) from the
 * frame's column `left` and row `top`, `mat` is a Mat over them. Rule (native memory): the bytes are kept here, one
 * buffer per frame size, and the Mats over them are released in `done`, so drawing holds none of OpenCV's
 * allocations (test/batch.test.ts counts the Mats a loop leaves alive).
 */
interface Canvas {
  bytes: Buffer;
  left: number;
  top: number;
  width: number;
  height: number;
  mat: Mat;
  cv: Cv;
  done(): void;
}

const canvasBytes = new Map<string, Buffer>();

function canvasOver(cv: Cv, frame: Mat, size: Size, marks: readonly Mark[]): Canvas {
  let [left, top, right, bottom] = [size.width, size.height, -1, -1];
  for (const { reach } of marks) {
    left = Math.min(left, reach.left);
    top = Math.min(top, reach.top);
    right = Math.max(right, reach.right);
    bottom = Math.max(bottom, reach.bottom);
  }
  // the marks' reach, within the frame. OpenCV clips a text's lines to the image before drawing them: a text that
  // crosses the frame's edge is clipped on the canvas as on the frame, as the canvas stops at the frame's edge where
  // the text crosses it, and elsewhere holds it with two pixels to spare (no end of its lines lies past the canvas)
  [left, top] = [Math.max(0, left), Math.max(0, top)];
  const [width, height] = [Math.min(size.width, right + 1) - left, Math.min(size.height, bottom + 1) - top];
  const key = `${size.width}x${size.height}`;
  let bytes = canvasBytes.get(key);
  if (!bytes) {
    if (canvasBytes.size >= 8) canvasBytes.delete(canvasBytes.keys().next().value!);
    canvasBytes.set(key, (bytes = Buffer.alloc(size.width * size.height * 3)));
  }
  const shown = width > 0 && height > 0;
  const mat = new cv.Mat(shown ? height : 1, shown ? width : 1, cv.CV_8UC3, bytes);
  const region = shown ? frame.getRegion(new cv.Rect(left, top, width, height)) : undefined;
  // copyTo returns a Mat over its target, held until released
  region?.copyTo(mat).release();
  return {
    bytes,
    left,
    top,
    width: shown ? width : 0,
    height: shown ? height : 0,
    mat,
    cv,
    done() {
      if (region) {
        mat.copyTo(region).release();
        region.release();
      }
      mat.release();
    },
  };
}

function paintBorder(c: Canvas, { x, y, right, bottom, colors }: Mark): void {
  const color = colors[0];
  fill(c, x, right, y - 1, y + 1, color);
  fill(c, x, right, bottom - 1, bottom + 1, color);
  side(c, x - 1, y, bottom, color);
  side(c, right - 1, y, bottom, color);
}

/** A border's side: the pixels x..x+2 of rows y0..y1 (as fill, each row's nine bytes set at once). */
function side(c: Canvas, x: number, y0: number, y1: number, color: Bgr): void {
  if (x < c.left || x + 2 >= c.left + c.width) return fill(c, x, x + 2, y0, y1, color);
  const [b, g, r] = color;
  const bytes = c.bytes;
  const stride = c.width * 3;
  const ya = Math.max(c.top, y0);
  const yb = Math.min(c.top + c.height - 1, y1);
  for (let o = ((ya - c.top) * c.width + x - c.left) * 3, last = o + (yb - ya) * stride; o <= last; o += stride) {
    bytes[o] = bytes[o + 3] = bytes[o + 6] = b;
    bytes[o + 1] = bytes[o + 4] = bytes[o + 7] = g;
    bytes[o + 2] = bytes[o + 5] = bytes[o + 8] = r;
  }
}

/** Sets the pixels in x0..x1 and y0..y1 (inclusive, frame coordinates) that are on the canvas. */
function fill(c: Canvas, x0: number, x1: number, y0: number, y1: number, [b, g, r]: Bgr): void {
  const xa = Math.max(c.left, x0);
  const xb = Math.min(c.left + c.width - 1, x1);
  const ya = Math.max(c.top, y0);
  const yb = Math.min(c.top + c.height - 1, y1);
  if (xa > xb || ya > yb) return;
  const bytes = c.bytes;
  const stride = c.width * 3;
  const n = (xb - xa + 1) * 3;
  const first = ((ya - c.top) * c.width + xa - c.left) * 3;
  const last = first + (yb - ya) * stride;
  // a wide row is set once and copied (a native copy); a narrow one (a side's three pixels) set row by row
  const wide = n > 24;
  for (let row = first; row <= last; row += stride)
    if (wide && row > first) bytes.copyWithin(row, first, first + n);
    else
      for (let o = row, e = row + n; o < e; o += 3) {
        bytes[o] = b;
        bytes[o + 1] = g;
        bytes[o + 2] = r;
      }
}

function paintStamp(c: Canvas, { x, y, colors }: Mark, stamp: Stamp): void {
  const width = c.width;
  if (stamp.places?.width !== width) {
    const at = stamp.strokes.map(({ dx, dy }) => Int32Array.from(dx, (x, i) => (dy[i] * width + x) * 3));
    stamp.places = { width, at };
  }
  const bytes = c.bytes;
  const base = ((y - c.top) * width + x - c.left) * 3;
  stamp.places.at.forEach((at, k) => {
    const [b, g, r] = colors[k];
    for (let i = 0; i < at.length; i++) {
      const o = base + at[i];
      bytes[o] = b;
      bytes[o + 1] = g;
      bytes[o + 2] = r;
    }
  });
}

/** A text that crosses the frame's edge, drawn by OpenCV onto the canvas, stroke after stroke. */
function drawByOpenCv(c: Canvas, { x, y, colors }: Mark, { font, text }: { font: Font; text: string }): void {
  const origin = new c.cv.Point2(x - c.left, y - c.top);
  font.strokes.forEach((thickness, k) =>
    c.mat.putText(text, origin, c.cv.FONT_HERSHEY_SIMPLEX, font.scale, new c.cv.Vec3(...colors[k]), thickness),
  );
}

/** 0.55, or less where the text would reach past the frame's right edge (8 px margins); kept by text and width. */
const scales = new Map<string, number>();

export function overlayScale(cv: Cv, text: string, width: number): number {
  const key = `${width} ${text}`;
  const hit = scales.get(key);
  if (hit !== undefined) return hit;
  const wide = (scale: number) => cv.getTextSize(text, cv.FONT_HERSHEY_SIMPLEX, scale, 3).size.width;
  let scale = 0.55;
  // text width is not quite proportional to the scale (the strokes are whole pixels): shrink until it fits
  for (let k = 0; k < 20 && scale > 0.2 && wide(scale) > width - 16; k++)
    scale = Math.max(0.2, scale * Math.min(0.95, (width - 16) / wide(scale)));
  if (scales.size >= 256) scales.delete(scales.keys().next().value!);
  scales.set(key, scale);
  return scale;
}
