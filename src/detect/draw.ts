/** Drawing detections and the live FPS overlay onto a frame (OpenCV Mat, drawn in place). */
import type { Cv, Mat } from '../video/opencv.ts';
import type { Detection } from './types.ts';

/** A fixed BGR palette, one colour per class (cycled). */
const PALETTE: [number, number, number][] = [
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

/** The palette as the binding's colour objects, made once per OpenCV module, not a native object for every box. */
const paletteVecs = new WeakMap<Cv, InstanceType<Cv['Vec3']>[]>();

function classColors(cv: Cv): InstanceType<Cv['Vec3']>[] {
  let vecs = paletteVecs.get(cv);
  if (!vecs) paletteVecs.set(cv, (vecs = PALETTE.map(([b, g, r]) => new cv.Vec3(b, g, r))));
  return vecs;
}

/**
 * Each box's border, then its label. A border that a later box draws again (the same pixels: one box with several
 * classes, as multi-label decoding gives) is left to that box: each of its pixels is written last by the later
 * border or a later label either way, so the frame is the same, with one border drawn where there were several.
 */
export function drawDetections(cv: Cv, frame: Mat, detections: readonly Detection[], labels: readonly string[]): void {
  const colors = classColors(cv);
  const rects = detections.map((d) => {
    const x = Math.round(d.x1);
    const y = Math.round(d.y1);
    return [x, y, Math.max(1, Math.round(d.x2) - x), Math.max(1, Math.round(d.y2) - y)] as const;
  });
  const keys = rects.map((r) => r.join());
  const lastOf = new Map(keys.map((k, i) => [k, i]));
  for (const [i, d] of detections.entries()) {
    const color = colors[d.classId % colors.length];
    const [x, y, w, h] = rects[i];
    if (lastOf.get(keys[i]) === i) frame.drawRectangle(new cv.Rect(x, y, w, h), color, 2, cv.LINE_8);
    const text = `${labels[d.classId] ?? `class${d.classId}`} ${d.score.toFixed(2)}`;
    frame.putText(text, new cv.Point2(x + 2, Math.max(12, y - 4)), cv.FONT_HERSHEY_SIMPLEX, 0.45, color, 1);
  }
}

/** The overlay's lines at the top left, each made smaller where it would not fit the frame's width (it is never cut). */
export function drawOverlay(cv: Cv, frame: Mat, lines: readonly string[]): void {
  let y = 20;
  for (const text of lines) {
    const scale = overlayScale(cv, text, frame.cols);
    const origin = new cv.Point2(8, y);
    frame.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, scale, new cv.Vec3(0, 0, 0), 3);
    frame.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, scale, new cv.Vec3(255, 255, 255), 1);
    y += Math.ceil(24 * (scale / 0.55));
  }
}

/** 0.55, or less where the text would reach past the frame's right edge (8 px margins). */
export function overlayScale(cv: Cv, text: string, width: number): number {
  const wide = (scale: number) => cv.getTextSize(text, cv.FONT_HERSHEY_SIMPLEX, scale, 3).size.width;
  let scale = 0.55;
  // text width is not quite proportional to the scale (the strokes are whole pixels): shrink until it fits
  for (let k = 0; k < 20 && scale > 0.2 && wide(scale) > width - 16; k++)
    scale = Math.max(0.2, scale * Math.min(0.95, (width - 16) / wide(scale)));
  return scale;
}
