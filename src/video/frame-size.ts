/** The frame sizes jetprof writes and takes. Pure, no OpenCV: the CLI's option parser reads it. */

/** What --frame-size takes (its parser and every fix that names a size use these). */
export const FRAME_SIZE_MIN = 32;
export const FRAME_SIZE_MAX = 8192;

/** The nearest size an encoder of even sizes writes that --frame-size also takes: `33x17` -> `32x32`. */
export function evenFrameSize(width: number, height: number): string {
  const even = (v: number) => Math.min(FRAME_SIZE_MAX, Math.max(FRAME_SIZE_MIN, v - (v % 2)));
  return `${even(width)}x${even(height)}`;
}
