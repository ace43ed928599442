/**
 * Drawing detections and the live FPS overlay onto a frame (OpenCV Mat, drawn in place), pixel for pixel what
 * OpenCV's own rectangle and putText calls draw, for a fraction of their cost: the frame's rows the drawing reaches
 * are copied into JS memory, the borders and texts are set there, and the rows are copied back (two calls a frame,
 * where each box took two calls of 4-7 us). A border's pixels follow from its corners. A text is drawn by OpenCV where
 * it comes first; where it comes again, onto a patch, and kept as the pixels it sets there (a stamp).
 */
import type { Cv, Mat } from '../video/opencv.ts';
import { type Bgr, Canvas, type Size } from './canvas.ts';
import { type Font, LABEL, measure, overlayFont, overlayScale, type Stamp, stampFor } from './stamps.ts';
import type { Detection } from './types.ts';

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
  // the rows the marks reach (where a text crosses the frame's edge, the canvas clips it as the frame does: canvas.ts)
  let [top, bottom] = [size.height, -1];
  for (const { rows } of marks) [top, bottom] = [Math.min(top, rows[0]), Math.max(bottom, rows[1])];
  const canvas = Canvas.over(cv, frame, size, top, bottom);
  for (const m of marks) {
    if (m.kind === 'border') canvas.border(m.x, m.y, m.right, m.bottom, m.color);
    else if (m.stamp) canvas.stamp(m.x, m.y, m.stamp, m.colors);
    else canvas.text(m.x, m.y, m.text, m.font, m.colors);
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
 * A text at (x, y) in its font, its strokes in `colors`: from its stamp where it came before; else drawn by OpenCV
 * (a text that comes once, as the FPS line whose figures change, costs no stamp).
 */
function textMark(cv: Cv, frame: Size, font: Font, text: string, x: number, y: number, colors: readonly Bgr[]): Text {
  const stamp = stampFor(cv, text, font);
  if (!stamp) {
    const { size, baseLine, margin } = measure(cv, text, font);
    // drawn by OpenCV: with two rows to spare past any it sets (see canvas.ts)
    const rows: [number, number] = [y - size.height - margin - 2, y + baseLine + margin + 2];
    return { kind: 'text', x, y, rows, text, font, colors, stamp: undefined };
  }
  const inside =
    x + stamp.left >= 0 && x + stamp.right < frame.width && y + stamp.up >= 0 && y + stamp.down < frame.height;
  const spare = inside ? 0 : 2;
  const rows: [number, number] = [y + stamp.up - spare, y + stamp.down + spare];
  return { kind: 'text', x, y, rows, text, font, colors, stamp: inside ? stamp : undefined };
}
