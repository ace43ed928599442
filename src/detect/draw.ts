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

export function classColor(classId: number): [number, number, number] {
  return PALETTE[classId % PALETTE.length];
}

export function drawDetections(cv: Cv, frame: Mat, detections: readonly Detection[], labels: readonly string[]): void {
  for (const d of detections) {
    const [b, g, r] = classColor(d.classId);
    const color = new cv.Vec3(b, g, r);
    const x = Math.round(d.x1);
    const y = Math.round(d.y1);
    const w = Math.max(1, Math.round(d.x2) - x);
    const h = Math.max(1, Math.round(d.y2) - y);
    frame.drawRectangle(new cv.Rect(x, y, w, h), color, 2, cv.LINE_8);
    const text = `${labels[d.classId] ?? `class${d.classId}`} ${d.score.toFixed(2)}`;
    frame.putText(text, new cv.Point2(x + 2, Math.max(12, y - 4)), cv.FONT_HERSHEY_SIMPLEX, 0.45, color, 1);
  }
}

export function drawOverlay(cv: Cv, frame: Mat, text: string): void {
  const origin = new cv.Point2(8, 20);
  frame.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, 0.55, new cv.Vec3(0, 0, 0), 3);
  frame.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, 0.55, new cv.Vec3(255, 255, 255), 1);
}
