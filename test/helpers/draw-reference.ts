/** Drawing as OpenCV's own calls do it, box by box: what jetprof's drawing must match pixel for pixel (test, bench 7). */
import { PALETTE } from '../../src/detect/draw.ts';
import { overlayScale } from '../../src/detect/stamps.ts';
import type { Detection } from '../../src/detect/types.ts';
import type { Cv, Mat } from '../../src/video/opencv.ts';

/** Each box's rectangle (thickness 2) and label in its class's colour in turn, then each overlay line's two strokes. */
export function drawnByOpenCv(
  cv: Cv,
  frame: Mat,
  detections: readonly Detection[],
  labels: readonly string[],
  overlay: readonly string[],
): void {
  for (const d of detections) {
    const color = new cv.Vec3(...PALETTE[d.classId % PALETTE.length]);
    const [x, y] = [Math.round(d.x1), Math.round(d.y1)];
    const [w, h] = [Math.max(1, Math.round(d.x2) - x), Math.max(1, Math.round(d.y2) - y)];
    frame.drawRectangle(new cv.Rect(x, y, w, h), color, 2, cv.LINE_8);
    const text = `${labels[d.classId] ?? `class${d.classId}`} ${d.score.toFixed(2)}`;
    frame.putText(text, new cv.Point2(x + 2, Math.max(12, y - 4)), cv.FONT_HERSHEY_SIMPLEX, 0.45, color, 1);
  }
  let y = 20;
  for (const text of overlay) {
    const scale = overlayScale(cv, text, frame.cols);
    const origin = new cv.Point2(8, y);
    frame.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, scale, new cv.Vec3(0, 0, 0), 3);
    frame.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, scale, new cv.Vec3(255, 255, 255), 1);
    y += Math.ceil(24 * (scale / 0.55));
  }
}
