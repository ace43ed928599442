/**
 * Stamps: the pixels a text sets when OpenCV draws it (Hershey simplex at a whole-pixel origin), kept by font and
 * text so that drawing it again sets them from JS memory (draw.ts) instead of calling OpenCV. A text gets its stamp the
 * second time it comes. Pure but for OpenCV's drawing of the text onto its patch.
 */
import type { Cv } from '../video/opencv.ts';

/**
 * How a text is drawn: Hershey simplex at a scale, in strokes (a thickness each, drawn in turn), and the stamps made
 * in it, by text, the latest `room` kept.
 */
export interface Font {
  scale: number;
  strokes: readonly number[];
  stamps: Map<string, Stamp>;
  /** Texts drawn once, by OpenCV: a text gets its stamp when it comes again (the latest `room` kept). */
  seen: Set<string>;
  room: number;
}

/** A box's label: one stroke; a dense frame's labels repeat (a class and a score: a few hundred a run). */
export const LABEL: Font = { scale: 0.45, strokes: [1], stamps: new Map(), seen: new Set(), room: 4096 };
/** The overlay's lines, by scale: black three pixels wide, then white; the FPS line changes as its figures do. */
const overlayFonts = new Map<number, Font>();

export function overlayFont(scale: number): Font {
  let font = overlayFonts.get(scale);
  if (!font) overlayFonts.set(scale, (font = { scale, strokes: [3, 1], stamps: new Map(), seen: new Set(), room: 64 }));
  return font;
}

/**
 * The pixels a text sets when OpenCV draws it at a whole-pixel origin: for each stroke, the places from the origin
 * of those it set last, and how far they reach. Hershey text at a whole-pixel origin sets the same pixels wherever it
 * is placed, so where it lies inside the frame they are exactly what drawing it there gives.
 */
export interface Stamp {
  strokes: { dx: Int16Array; dy: Int16Array }[];
  left: number;
  right: number;
  up: number;
  down: number;
  /** Each stroke's pixels' places in a frame's bytes from the origin's, for frames `width` wide (the latest asked). */
  places?: { width: number; at: Int32Array[] };
}

/**
 * A text's stamp where it came before in its font (made the second time it comes); undefined the first time, the
 * text then remembered: a text that comes once, as the FPS line whose figures change, costs no stamp.
 */
export function stampFor(cv: Cv, text: string, font: Font): Stamp | undefined {
  const stamp = font.stamps.get(text) ?? (font.seen.has(text) ? stampOf(cv, text, font) : undefined);
  if (!stamp) {
    if (font.seen.size >= font.room) font.seen.delete(font.seen.values().next().value!);
    font.seen.add(text);
  }
  return stamp;
}

function stampOf(cv: Cv, text: string, font: Font): Stamp {
  const { scale, strokes, stamps, room } = font;
  const { size, baseLine, margin } = measure(cv, text, font);
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

/** OpenCV's measure of a text in its font, and room around it for the strokes' width: nothing it sets lies past it. */
export function measure(cv: Cv, text: string, { scale, strokes }: Font) {
  const thickest = Math.max(...strokes);
  return { ...cv.getTextSize(text, cv.FONT_HERSHEY_SIMPLEX, scale, thickest), margin: 4 + thickest };
}

/** Each stroke's pixels' places in the bytes of a BGR picture `width` wide, from the origin's (kept for the width). */
export function placesOf(stamp: Stamp, width: number): Int32Array[] {
  if (stamp.places?.width !== width) {
    const at = stamp.strokes.map(({ dx, dy }) => {
      const places = new Int32Array(dx.length);
      for (let i = 0; i < dx.length; i++) places[i] = (dy[i] * width + dx[i]) * 3;
      return places;
    });
    stamp.places = { width, at };
  }
  return stamp.places.at;
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
