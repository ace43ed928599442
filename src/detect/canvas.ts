/**
 * A frame's rows in JS memory, where drawing sets pixels as OpenCV's own calls would: copied out of the frame once and
 * back once (two calls into the binding a frame, however much is drawn). Rule (native memory): the bytes are kept
 * here, a buffer for each of the last four frame sizes, and the Mats over them are released in `done`, so drawing
 * holds none of OpenCV's allocations (test/batch.test.ts counts the Mats a loop leaves alive).
 */
import type { Cv, Mat } from '../video/opencv.ts';
import { type Font, placesOf, type Stamp } from './stamps.ts';

export type Bgr = readonly [number, number, number];
export interface Size {
  width: number;
  height: number;
}

const buffers = new Map<string, Buffer>();

export class Canvas {
  private constructor(
    /** The rows' pixels, BGR, from the frame's row `top`; `mat` is a Mat over them. */
    private readonly bytes: Buffer,
    private readonly top: number,
    private readonly width: number,
    private readonly height: number,
    private readonly mat: Mat,
    private readonly cv: Cv,
    private readonly region: Mat | undefined,
  ) {}

  /**
   * The frame's rows `top` to `bottom`, within the frame, at its full width. OpenCV clips a text's lines to the image
   * before drawing them: a text that crosses the frame's edge is clipped here as on the frame, as the canvas has the
   * frame's columns, stops at its top or bottom where the text crosses them, and else holds the text's rows with two
   * to spare (no end of its lines lies past the canvas): the rows asked for must say so.
   */
  static over(cv: Cv, frame: Mat, size: Size, top: number, bottom: number): Canvas {
    top = Math.max(0, top);
    const height = Math.max(0, Math.min(size.height, bottom + 1) - top);
    const key = `${size.width}x${size.height}`;
    let bytes = buffers.get(key);
    if (!bytes) {
      if (buffers.size >= 4) buffers.delete(buffers.keys().next().value!);
      buffers.set(key, (bytes = Buffer.alloc(size.width * size.height * 3)));
    }
    const mat = new cv.Mat(Math.max(1, height), height ? size.width : 1, cv.CV_8UC3, bytes);
    const region = height ? frame.getRegion(new cv.Rect(0, top, size.width, height)) : undefined;
    // copyTo returns a Mat over its target, held until released
    region?.copyTo(mat).release();
    return new Canvas(bytes, top, height ? size.width : 0, height, mat, cv, region);
  }

  /** The rows back into the frame; the Mats released. */
  done(): void {
    if (this.region) {
      this.mat.copyTo(this.region).release();
      this.region.release();
    }
    this.mat.release();
  }

  /**
   * A border as OpenCV's rectangle sets it at thickness 2 (LINE_8), corners inclusive: a band three pixels wide
   * centred on each side, from corner to corner (its lines' round ends add nothing outside the bands), clipped.
   */
  border(x: number, y: number, right: number, bottom: number, color: Bgr): void {
    this.fill(x, right, y - 1, y + 1, color);
    this.fill(x, right, bottom - 1, bottom + 1, color);
    this.side(x - 1, y, bottom, color);
    this.side(right - 1, y, bottom, color);
  }

  /** A text from its stamp at (x, y), wholly inside the frame, its strokes in `colors`. */
  stamp(x: number, y: number, stamp: Stamp, colors: readonly Bgr[]): void {
    const bytes = this.bytes;
    const base = ((y - this.top) * this.width + x) * 3;
    const strokes = placesOf(stamp, this.width);
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

  /** A text drawn by OpenCV's own call, stroke after stroke. */
  text(x: number, y: number, text: string, font: Font, colors: readonly Bgr[]): void {
    const cv = this.cv;
    const origin = new cv.Point2(x, y - this.top);
    font.strokes.forEach((thickness, k) =>
      this.mat.putText(text, origin, cv.FONT_HERSHEY_SIMPLEX, font.scale, new cv.Vec3(...colors[k]), thickness),
    );
  }

  /** A border's side: the pixels x..x+2 of rows y0..y1 (as fill, each row's nine bytes set at once). */
  private side(x: number, y0: number, y1: number, color: Bgr): void {
    if (x < 0 || x + 2 >= this.width) return this.fill(x, x + 2, y0, y1, color);
    const [b, g, r] = color;
    const bytes = this.bytes;
    const stride = this.width * 3;
    const ya = Math.max(this.top, y0);
    const yb = Math.min(this.top + this.height - 1, y1);
    for (let o = ((ya - this.top) * this.width + x) * 3, last = o + (yb - ya) * stride; o <= last; o += stride) {
      bytes[o] = bytes[o + 3] = bytes[o + 6] = b;
      bytes[o + 1] = bytes[o + 4] = bytes[o + 7] = g;
      bytes[o + 2] = bytes[o + 5] = bytes[o + 8] = r;
    }
  }

  /** Sets the pixels in x0..x1 and y0..y1 (inclusive, frame coordinates) that are on the canvas. */
  private fill(x0: number, x1: number, y0: number, y1: number, [b, g, r]: Bgr): void {
    const xa = Math.max(0, x0);
    const xb = Math.min(this.width - 1, x1);
    const ya = Math.max(this.top, y0);
    const yb = Math.min(this.top + this.height - 1, y1);
    if (xa > xb || ya > yb) return;
    const bytes = this.bytes;
    const stride = this.width * 3;
    const n = (xb - xa + 1) * 3;
    const first = ((ya - this.top) * this.width + xa) * 3;
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
}
