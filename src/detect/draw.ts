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

/**
 * The overlay's lines at the top left, each made smaller where it would not fit the frame's width (it is never cut).
 * A line is drawn once and copied in after, where it comes again (the weights' warning on every frame, the FPS line
 * while its figures hold): the same pixels, a copy instead of two strokes of text a frame (0.34 ms for two lines).
 */
export function drawOverlay(cv: Cv, frame: Mat, lines: readonly string[]): void {
  let y = 20;
  for (const text of lines) {
    const { scale, patch } = overlayLine(cv, text, y, frame.cols, frame.rows);
    if (patch) {
      // the region, and the Mat copyTo returns (the region again), hold the frame's pixels until released
      const region = frame.getRegion(patch.at);
      patch.image.copyTo(region, patch.mask).release();
      region.release();
    }
    y += Math.ceil(24 * (scale / 0.55));
  }
}

/** Lines drawn, by where and how (the frame's size, the line's place and text), the latest OVERLAY_LINES kept. */
const overlayLines = new WeakMap<Cv, Map<string, OverlayLine>>();
const OVERLAY_LINES = 64;
interface OverlayLine {
  /** overlayScale's, for the frame's width. */
  scale: number;
  /** None where the frame is too small for any of it to show. */
  patch?: {
    image: Mat;
    mask: Mat;
    at: InstanceType<Cv['Rect']>;
    /** The bytes the two Mats are over (kept here: the Mats do not hold them). */
    bytes: Buffer[];
  };
}

/**
 * One overlay line as drawn on a frame of `width` x `height` at `y`: its scale, and the pixels its two strokes touch
 * (the black one three wide, then the white) on a patch of the frame around it, with their mask. Hershey text at a
 * whole-pixel origin draws the same pixels wherever it is placed, so the patch holds exactly what drawing on the
 * frame would.
 */
function overlayLine(cv: Cv, text: string, y: number, width: number, height: number): OverlayLine {
  let cache = overlayLines.get(cv);
  if (!cache) overlayLines.set(cv, (cache = new Map()));
  const key = `${width}x${height} ${y} ${text}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const line: OverlayLine = { scale: overlayScale(cv, text, width) };
  const kept = () => {
    if (cache.size >= OVERLAY_LINES) {
      const [oldest, old] = cache.entries().next().value!;
      cache.delete(oldest);
      old.patch?.image.release();
      old.patch?.mask.release();
    }
    cache.set(key, line);
    return line;
  };
  const scale = line.scale;
  const { size, baseLine } = cv.getTextSize(text, cv.FONT_HERSHEY_SIMPLEX, scale, 3);
  // the text's box, with room for the strokes' width around it, within the frame
  const margin = 8;
  const x0 = Math.max(0, 8 - margin);
  const y0 = Math.max(0, y - size.height - margin);
  const x1 = Math.min(width, 8 + size.width + margin);
  const y1 = Math.min(height, y + baseLine + margin);
  if (x1 <= x0 || y1 <= y0) return kept(); // below a frame this small: nothing of it shows
  const at = new cv.Rect(x0, y0, x1 - x0, y1 - y0);
  // Rule (native memory): the patch and its mask are kept in JS memory, Mats over it, so a run's overlay lines hold
  // none of OpenCV's allocations (test/batch.test.ts counts the Mats a loop leaves alive). The patch starts as a
  // background the strokes cannot draw (they are 0 and 255 only), so what they touch tells from it.
  const unset = new cv.Vec3(1, 1, 1);
  const imageBytes = Buffer.alloc(at.height * at.width * 3, 1);
  const image = new cv.Mat(at.height, at.width, cv.CV_8UC3, imageBytes);
  const origin = new cv.Point2(8 - x0, y - y0);
  image.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, scale, new cv.Vec3(0, 0, 0), 3);
  image.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, scale, new cv.Vec3(255, 255, 255), 1);
  const untouched = image.inRange(unset, unset);
  const drawn = untouched.bitwiseNot();
  const maskBytes = drawn.getData();
  untouched.release();
  drawn.release();
  const mask = new cv.Mat(at.height, at.width, cv.CV_8UC1, maskBytes);
  line.patch = { image, mask, at, bytes: [imageBytes, maskBytes] };
  return kept();
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
