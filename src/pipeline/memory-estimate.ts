/**
 * What N streams need in memory, from figures measured on this project's 2-core VM with `infer vtest.avi --streams N
 * --frame-size 1920x1080` (N = 1, 4, 8, 64): peak RSS (`/usr/bin/time -v`) about 380 MB for the process and the model,
 * and per stream, per pixel of its frames, 27 bytes for decoding and the frames in flight, 44 more while GStreamer's
 * x264enc (zerolatency, superfast) writes it, 198 more for FFmpeg's libx264 (its look-ahead holds dozens of frames):
 * at 1080p 53, 140 and 445 MiB a stream (64 streams measured 3.7 and 9.2 GiB peak RSS, not writing and with x264enc).
 * Address space (VmPeak, which `ulimit -v` limits: thread stacks and malloc arenas count in full) per stream and
 * pixel: 26, +97 and +165 bytes (55, 256 and 397 MB at 1080p). Checked before the first stream's writer opens, so a
 * run that cannot fit is refused in one line instead of swapping, or dying halfway (GLib aborts when an allocation
 * fails) with its files unfinished.
 */
import { JetprofError } from '../util/errors.ts';

export const BASE_BYTES = 380 * 2 ** 20;
const BYTES_PER_PIXEL = { read: 27, gstreamer: 44, ffmpeg: 198 } as const;
const ADDRESS_BYTES_PER_PIXEL = { read: 26, gstreamer: 97, ffmpeg: 165 } as const;

export type WriterKind = 'gstreamer' | 'ffmpeg' | 'none';

/** One stream of `pixels` a frame, writing with `writer`, by a table of bytes per pixel: reading, plus its encoder. */
function perStream(table: typeof BYTES_PER_PIXEL | typeof ADDRESS_BYTES_PER_PIXEL, pixels: number, writer: WriterKind) {
  return pixels * (table.read + (writer === 'none' ? 0 : table[writer]));
}

/** Bytes of memory (RSS) one stream of `pixels` a frame needs, writing with `writer`. */
export const streamBytes = (pixels: number, writer: WriterKind) => perStream(BYTES_PER_PIXEL, pixels, writer);

/** Bytes of address space one stream takes. */
const streamAddressBytes = (pixels: number, writer: WriterKind) => perStream(ADDRESS_BYTES_PER_PIXEL, pixels, writer);

export function estimateBytes(streams: number, pixels: number, writer: WriterKind): number {
  return BASE_BYTES + streams * streamBytes(pixels, writer);
}

/** What the process may still take: memory (counting what it holds) and, under `ulimit -v`, address space left. */
interface MemoryRoom {
  memoryBytes: number;
  addressRoomBytes?: number;
}

const gb = (b: number) => `${(b / 2 ** 30).toFixed(1)} GB`;
const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;

/**
 * Undefined when `streams` streams of width x height fit; else the error that says the estimate, what there is, and
 * the fixes, with how many streams would fit.
 */
export function memoryShortage(
  streams: number,
  width: number,
  height: number,
  writer: WriterKind,
  room: MemoryRoom,
): JetprofError | undefined {
  const pixels = width * height;
  const need = estimateBytes(streams, pixels, writer);
  const needAddress = streams * streamAddressBytes(pixels, writer);
  const memoryShort = need > room.memoryBytes;
  const addressShort = room.addressRoomBytes !== undefined && needAddress > room.addressRoomBytes;
  if (!memoryShort && !addressShort) return undefined;
  const fit = Math.max(
    0,
    Math.min(
      Math.floor((room.memoryBytes - BASE_BYTES) / streamBytes(pixels, writer)),
      room.addressRoomBytes !== undefined
        ? Math.floor(room.addressRoomBytes / streamAddressBytes(pixels, writer))
        : Infinity,
    ),
  );
  const what = `${streams} streams at ${width}x${height}${writer === 'none' ? '' : ` written by ${writer === 'gstreamer' ? "GStreamer's x264enc" : "FFmpeg's libx264"}`}`;
  const message = memoryShort
    ? `${what} need about ${gb(need)} of memory (${mb(streamBytes(pixels, writer))} a stream, measured), and this machine has ${gb(room.memoryBytes)} available`
    : `${what} need about ${gb(needAddress)} more address space (${mb(streamAddressBytes(pixels, writer))} a stream, measured), and ulimit -v leaves this process ${gb(room.addressRoomBytes!)}`;
  const fixes = [
    writer !== 'none'
      ? `--no-write (about ${gb(memoryShort ? estimateBytes(streams, pixels, 'none') : streams * streamAddressBytes(pixels, 'none'))})`
      : undefined,
    writer === 'ffmpeg'
      ? `--video-io gstreamer (about ${gb(memoryShort ? estimateBytes(streams, pixels, 'gstreamer') : streams * streamAddressBytes(pixels, 'gstreamer'))})`
      : undefined,
    `at most ${fit} stream${fit === 1 ? '' : 's'} at this size`,
    'a smaller --frame-size (memory grows with the pixels)',
    addressShort ? 'a higher ulimit -v' : undefined,
  ].filter(Boolean);
  return new JetprofError('RESOURCE', message, { suggestion: fixes.join(', or ') });
}
