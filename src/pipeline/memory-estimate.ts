/**
 * What N streams need in memory, from figures measured on this project's 2-core VM (peak RSS with
 * `/usr/bin/time -v infer vtest.avi --streams N --frame-size 1920x1080 --max-frames 30`, N = 1, 4, 8): about 380 MB for
 * the process and the model, and per stream, per pixel of its frames, 18 bytes for decoding and the frames in flight,
 * 51 more while GStreamer's x264enc (zerolatency, superfast) writes it, 198 more for FFmpeg's libx264 (its look-ahead
 * holds dozens of frames). At 1080p: 37, 143 and 448 MB a stream. Checked before the first stream's writer opens, so a
 * run that cannot fit is refused in one line instead of swapping or being killed halfway with its files unfinished.
 */
import { JetprofError } from '../util/errors.ts';

export const BASE_BYTES = 380 * 2 ** 20;
export const BYTES_PER_PIXEL = { read: 18, gstreamer: 51, ffmpeg: 198 } as const;

export type WriterKind = 'gstreamer' | 'ffmpeg' | 'none';

/** Bytes one stream of `pixels` a frame needs, writing with `writer`. */
export function streamBytes(pixels: number, writer: WriterKind): number {
  return pixels * (BYTES_PER_PIXEL.read + (writer === 'none' ? 0 : BYTES_PER_PIXEL[writer]));
}

export function estimateBytes(streams: number, pixels: number, writer: WriterKind): number {
  return BASE_BYTES + streams * streamBytes(pixels, writer);
}

const gb = (b: number) => `${(b / 2 ** 30).toFixed(1)} GB`;

/**
 * Undefined when `streams` streams of width x height fit in `availableBytes`; else the error that says the estimate,
 * what is available and the fixes, with how many streams would fit.
 */
export function memoryShortage(
  streams: number,
  width: number,
  height: number,
  writer: WriterKind,
  availableBytes: number,
): JetprofError | undefined {
  const pixels = width * height;
  const need = estimateBytes(streams, pixels, writer);
  if (need <= availableBytes) return undefined;
  const fit = Math.max(0, Math.floor((availableBytes - BASE_BYTES) / streamBytes(pixels, writer)));
  const fixes = [
    writer !== 'none' ? `--no-write (about ${gb(estimateBytes(streams, pixels, 'none'))})` : undefined,
    writer === 'ffmpeg' ? `--video-io gstreamer (about ${gb(estimateBytes(streams, pixels, 'gstreamer'))})` : undefined,
    `at most ${fit} stream${fit === 1 ? '' : 's'} at this size`,
    `a smaller --frame-size (memory grows with the pixels)`,
  ].filter(Boolean);
  return new JetprofError(
    'RESOURCE',
    `${streams} streams at ${width}x${height}${writer === 'none' ? '' : ` written by ${writer === 'gstreamer' ? "GStreamer's x264enc" : "FFmpeg's libx264"}`} need about ${gb(need)} of memory (${(streamBytes(pixels, writer) / 2 ** 20).toFixed(0)} MB a stream, measured), and this machine has ${gb(availableBytes)} available`,
    { suggestion: fixes.join(', or ') },
  );
}
