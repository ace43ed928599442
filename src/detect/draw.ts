/**
 * Drawing detections and the live FPS overlay onto a frame (OpenCV Mat, drawn in place), pixel for pixel what
 * OpenCV's own rectangle and putText calls draw, for a fraction of their cost: the frame's rows the drawing reaches
 * are copied into JS memory, the borders and texts are set there, and the rows are copied back (two calls a frame,
 * where each box took two calls of 4-7 us). A border's pixels follow from its corners. A text is drawn by OpenCV where
 * it comes first; where it comes again, onto a patch, and kept as the pixels it sets there (a stamp).
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
  // A border that a later box draws again (the same place: one box with several classes, as multi-label decoding
  // gives) is left to that box: each of its pixels is set last by the later border or a later label either way.
  const corners = detections.map((d) => {
    const [x, y] = [Math.round(d.x1), Math.round(d.y1)];
    return [x, y, x + Math.max(1, Math.round(d.x2) - x) - 1, y + Math.max(1, Math.round(d.y2) - y) - 1] as const;
  });
  const places = corners.map((c) => placeKey(...c));
  const lastAt = new Map(places.map((place, i) => [place, i]));
  for (const [i, d] of detections.entries()) {
    const [x, y, right, bottom] = corners[i];
    const colors = BOX_COLORS[d.classId % BOX_COLORS.length];
    if (lastAt.get(places[i]) === i)
      marks.push({ kind: 'border', x, y, right, bottom, rows: [y - 1, bottom + 1], color: colors[0] });
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
    if (mark.kind === 'border') paintBorder(canvas, mark);
    else if (mark.stamp) paintStamp(canvas, mark, mark.stamp);
    else drawByOpenCv(canvas, mark);
  }
  canvas.done();
}

/** A border's corners as one number where each fits 13 bits from -1024 (frames up to 7,167 pixels), else as text. */
function placeKey(x: number, y: number, right: number, bottom: number): number | string {
  if (!(fits13(x) && fits13(y) && fits13(right) && fits13(bottom))) return `${x},${y},${right},${bottom}`;
  return (((x + 1024) * 8192 + y + 1024) * 8192 + right + 1024) * 8192 + bottom + 1024;
}

const fits13 = (v: number) => v >= -1024 && v < 7168;

/** A border (its corners, inclusive) or a text (its origin), and the frame's rows it may set (first and last). */
type Mark = Border | Text;
interface Border {
  kind: 'border';
  x: number;
  y: number;
  right: number;
  bottom: number;
  rows: [number, number];
  color: Bgr;
}
interface Text {
  kind: 'text';
  x: number;
  y: number;
  rows: [number, number];
  text: string;
  font: Font;
  /** A colour for each of the font's strokes. */
  colors: readonly Bgr[];
  /**
   * Where it is set from; none where OpenCV's own call draws it: a text not seen before, or one that crosses the
   * frame's edge (only OpenCV clips a text exactly).
   */
  stamp: Stamp | undefined;
}

/**
 * How a text is drawn: Hershey simplex at a scale, in strokes (a thickness each, drawn in turn), and the stamps made
 * in it, by text, the latest `room` kept.
 */
interface Font {
  scale: number;
  strokes: readonly number[];
  stamps: Map<string, Stamp>;
  /** Texts drawn once, by OpenCV: a text gets its stamp when it comes again (the latest `room` kept). */
  seen: Set<string>;
  room: number;
}

/** A box's label: one stroke; a dense frame's labels repeat (a class and a score: a few hundred a run). */
const LABEL: Font = { scale: 0.45, strokes: [1], stamps: new Map(), seen: new Set(), room: 4096 };
/** The overlay's lines, by scale: black three pixels wide, then white; the FPS line changes as its figures do. */
const overlayFonts = new Map<number, Font>();

function overlayFont(scale: number): Font {
  let font = overlayFonts.get(scale);
  if (!font) overlayFonts.set(scale, (font = { scale, strokes: [3, 1], stamps: new Map(), seen: new Set(), room: 64 }));
  return font;
}

/**
 * The pixels a text sets when OpenCV draws it at a whole-pixel origin: for each stroke, the places from the origin
 * of those it set last, and how far they reach. Hershey text at a whole-pixel origin sets the same pixels wherever it is
 * placed, so where it lies inside the frame they are exactly what drawing it there gives.
 */
interface Stamp {
  strokes: { dx: Int16Array; dy: Int16Array }[];
  left: number;
  right: number;
  up: number;
  down: number;
  /** Each stroke's pixels' places in a frame's bytes from the origin's, for frames `width` wide (the latest asked). */
  places?: { width: number; at: Int32Array[] };
}

function stampOf(cv: Cv, text: string, { scale, strokes, stamps, room }: Font): Stamp {
  const { size, baseLine, margin } = measure(cv, text, scale, strokes);
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
  // the pixels each stroke set last: counted, then placed
  const stamp: Stamp = { strokes: [], left: 0, right: 0, up: 0, down: 0 };
  const counts = strokes.map(() => 0);
  for (let py = 0, i = 0; py < h; py++)
    for (let px = 0; px < w; px++, i++)
      if (bytes[i]) {
        if (px === 0 || py === 0 || px === w - 1 || py === h - 1)
          throw new RangeError(`the text "${text}" reaches its patch's edge: its margin is too small`);
        counts[bytes[i] - 1]++;
        stamp.left = Math.min(stamp.left, px - ox);
        stamp.right = Math.max(stamp.right, px - ox);
        stamp.up = Math.min(stamp.up, py - oy);
        stamp.down = Math.max(stamp.down, py - oy);
      }
  stamp.strokes = counts.map((n) => ({ dx: new Int16Array(n), dy: new Int16Array(n) }));
  counts.fill(0);
  for (let py = 0, i = 0; py < h; py++)
    for (let px = 0; px < w; px++, i++)
      if (bytes[i]) {
        const k = bytes[i] - 1;
        stamp.strokes[k].dx[counts[k]] = px - ox;
        stamp.strokes[k].dy[counts[k]++] = py - oy;
      }
  if (stamps.size >= room) stamps.delete(stamps.keys().next().value!);
  stamps.set(text, stamp);
  return stamp;
}

/** OpenCV's measure of a text, and room around it for the strokes' width: nothing it sets lies past that. */
function measure(cv: Cv, text: string, scale: number, strokes: readonly number[]) {
  const thickest = Math.max(...strokes);
  return { ...cv.getTextSize(text, cv.FONT_HERSHEY_SIMPLEX, scale, thickest), margin: 4 + thickest };
}

/**
 * A text at (x, y) in its font, its strokes in `colors`: from its stamp where it came before; else drawn by OpenCV
 * (a text that comes once, as the FPS line whose figures change, costs no stamp).
 */
function textMark(cv: Cv, frame: Size, font: Font, text: string, x: number, y: number, colors: readonly Bgr[]): Text {
  const stamp = font.stamps.get(text) ?? (font.seen.has(text) ? stampOf(cv, text, font) : undefined);
  if (!stamp) {
    if (font.seen.size >= font.room) font.seen.delete(font.seen.values().next().value!);
    font.seen.add(text);
    const { size, baseLine, margin } = measure(cv, text, font.scale, font.strokes);
    // drawn by OpenCV: with two rows to spare past any it sets (see canvasOver)
    const rows: [number, number] = [y - size.height - margin - 2, y + baseLine + margin + 2];
    return { kind: 'text', x, y, rows, text, font, colors, stamp: undefined };
  }
  const inside =
    x + stamp.left >= 0 && x + stamp.right < frame.width && y + stamp.up >= 0 && y + stamp.down < frame.height;
  const spare = inside ? 0 : 2;
  const rows: [number, number] = [y + stamp.up - spare, y + stamp.down + spare];
  return { kind: 'text', x, y, rows, text, font, colors, stamp: inside ? stamp : undefined };
}

/**
 * The frame's rows the marks reach, in JS memory: `bytes` holds their pixels (BGR) from the frame's row `top`, `mat`
 * is a Mat over them. Rule (native memory): the bytes are kept here, a buffer for each of the last four frame sizes,
 * and the Mats over them are released in `done`, so drawing holds none of OpenCV's allocations (test/batch.test.ts
 * counts the Mats a loop leaves alive).
 */
interface Canvas {
  bytes: Buffer;
  top: number;
  width: number;
  height: number;
  mat: Mat;
  cv: Cv;
  done(): void;
}

const canvasBytes = new Map<string, Buffer>();

function canvasOver(cv: Cv, frame: Mat, size: Size, marks: readonly Mark[]): Canvas {
  let [top, bottom] = [size.height, -1];
  for (const { rows } of marks) [top, bottom] = [Math.min(top, rows[0]), Math.max(bottom, rows[1])];
  // the rows the marks reach, within the frame. OpenCV clips a text's lines to the image before drawing them: a text
  // that crosses the frame's edge is clipped on the canvas as on the frame, as the canvas has the frame's columns,
  // stops at its top or bottom where the text crosses them, and else holds the text's rows with two to spare (no end
  // of its lines lies past the canvas)
  top = Math.max(0, top);
  const [width, height] = [size.width, Math.min(size.height, bottom + 1) - top];
  const key = `${size.width}x${size.height}`;
  let bytes = canvasBytes.get(key);
  if (!bytes) {
    if (canvasBytes.size >= 4) canvasBytes.delete(canvasBytes.keys().next().value!);
    canvasBytes.set(key, (bytes = Buffer.alloc(size.width * size.height * 3)));
  }
  const shown = height > 0;
  const mat = new cv.Mat(shown ? height : 1, shown ? width : 1, cv.CV_8UC3, bytes);
  const region = shown ? frame.getRegion(new cv.Rect(0, top, width, height)) : undefined;
  // copyTo returns a Mat over its target, held until released
  region?.copyTo(mat).release();
  return {
    bytes,
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

/**
 * A border as OpenCV's rectangle sets it at thickness 2 (LINE_8): a band three pixels wide centred on each side, from
 * corner to corner (its lines' round ends add nothing outside the bands), clipped to the frame.
 */
function paintBorder(c: Canvas, { x, y, right, bottom, color }: Border): void {
  fill(c, x, right, y - 1, y + 1, color);
  fill(c, x, right, bottom - 1, bottom + 1, color);
  side(c, x - 1, y, bottom, color);
  side(c, right - 1, y, bottom, color);
}

/** A border's side: the pixels x..x+2 of rows y0..y1 (as fill, each row's nine bytes set at once). */
function side(c: Canvas, x: number, y0: number, y1: number, color: Bgr): void {
  if (x < 0 || x + 2 >= c.width) return fill(c, x, x + 2, y0, y1, color);
  const [b, g, r] = color;
  const bytes = c.bytes;
  const stride = c.width * 3;
  const ya = Math.max(c.top, y0);
  const yb = Math.min(c.top + c.height - 1, y1);
  for (let o = ((ya - c.top) * c.width + x) * 3, last = o + (yb - ya) * stride; o <= last; o += stride) {
    bytes[o] = bytes[o + 3] = bytes[o + 6] = b;
    bytes[o + 1] = bytes[o + 4] = bytes[o + 7] = g;
    bytes[o + 2] = bytes[o + 5] = bytes[o + 8] = r;
  }
}

/** Sets the pixels in x0..x1 and y0..y1 (inclusive, frame coordinates) that are on the canvas. */
function fill(c: Canvas, x0: number, x1: number, y0: number, y1: number, [b, g, r]: Bgr): void {
  const xa = Math.max(0, x0);
  const xb = Math.min(c.width - 1, x1);
  const ya = Math.max(c.top, y0);
  const yb = Math.min(c.top + c.height - 1, y1);
  if (xa > xb || ya > yb) return;
  const bytes = c.bytes;
  const stride = c.width * 3;
  const n = (xb - xa + 1) * 3;
  const first = ((ya - c.top) * c.width + xa) * 3;
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

function paintStamp(c: Canvas, { x, y, colors }: Text, stamp: Stamp): void {
  const width = c.width;
  if (stamp.places?.width !== width) {
    const at = stamp.strokes.map(({ dx, dy }) => {
      const places = new Int32Array(dx.length);
      for (let i = 0; i < dx.length; i++) places[i] = (dy[i] * width + dx[i]) * 3;
      return places;
    });
    stamp.places = { width, at };
  }
  const bytes = c.bytes;
  const base = ((y - c.top) * width + x) * 3;
  const strokes = stamp.places.at;
  for (let k = 0; k < colors.length; k++) {
    const at = strokes[k];
    const [b, g, r] = colors[k];
    for (let i = 0; i < at.length; i++) {
      const o = base + at[i];
      bytes[o] = b;
      bytes[o + 1] = g;
      bytes[o + 2] = r;
    }
  }
}

/** A text drawn by OpenCV onto the canvas, stroke after stroke. */
function drawByOpenCv(c: Canvas, { x, y, colors, font, text }: Text): void {
  const origin = new c.cv.Point2(x, y - c.top);
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
