/**
 * GStreamer's part in jetprof's video I/O: which elements this machine has (gst-inspect-1.0, asked once per element),
 * and the two pipelines OpenCV's GStreamer back-end opens. One decodes a file into BGR frames for appsink, one encodes
 * the annotated video from appsrc into H.264 in MP4. On a Jetson both use the board's hardware the way NVIDIA's
 * Accelerated GStreamer guide does (nvv4l2decoder and nvv4l2h264enc, with nvvidconv between system memory and the
 * hardware's NVMM buffers); elsewhere the same shapes run with software elements (avdec_h264, x264enc).
 */
import { spawnSync } from 'node:child_process';
import { JetprofError } from '../util/errors.ts';

/** How video is decoded and encoded: `auto` takes the board's hardware where it is, GStreamer's writer, else FFmpeg. */
export type VideoIo = 'auto' | 'ffmpeg' | 'gstreamer';
export const VIDEO_IO_CHOICES: readonly VideoIo[] = ['auto', 'ffmpeg', 'gstreamer'];

const BASE = 'gstreamer1.0-plugins-base';
const GOOD = 'gstreamer1.0-plugins-good';
const BAD = 'gstreamer1.0-plugins-bad';
const LIBAV = 'gstreamer1.0-libav';
const JETPACK = 'nvidia-l4t-gstreamer (JetPack)';

/** Every element the pipelines use, and the package it comes from (Debian/Ubuntu; JetPack for the board's own). */
const PACKAGE_OF: Record<string, string> = {
  filesrc: 'libgstreamer1.0-0',
  filesink: 'libgstreamer1.0-0',
  appsrc: BASE,
  appsink: BASE,
  videoconvert: BASE,
  decodebin: BASE,
  qtdemux: GOOD,
  avidemux: GOOD,
  matroskademux: GOOD,
  mp4mux: GOOD,
  qtmux: GOOD,
  jpegdec: GOOD,
  h264parse: BAD,
  h265parse: BAD,
  x264enc: 'gstreamer1.0-plugins-ugly',
  avdec_h264: LIBAV,
  avdec_h265: LIBAV,
  avdec_mpeg4: LIBAV,
  avdec_msmpeg4: LIBAV,
  nvv4l2decoder: JETPACK,
  nvv4l2h264enc: JETPACK,
  nvvidconv: JETPACK,
};

const known = new Map<string, boolean>();
let inspector: boolean | undefined;

/** Whether GStreamer has `element` here; undefined when gst-inspect-1.0 is not installed to ask. */
function gstHas(element: string): boolean | undefined {
  inspector ??= spawnSync('gst-inspect-1.0', ['--version'], { encoding: 'utf8' }).status === 0;
  if (!inspector) return undefined;
  let has = known.get(element);
  if (has === undefined) {
    // not --exists: it also asks for a plugin version at least GStreamer's own, and NVIDIA's plugins have their own
    // version numbers (nvvidconv's is not JetPack's GStreamer's)
    has = spawnSync('gst-inspect-1.0', [element], { stdio: 'ignore' }).status === 0;
    known.set(element, has);
  }
  return has;
}

/**
 * The one-line error for elements this machine lacks, or undefined when it has them all (or cannot tell: without
 * gst-inspect-1.0 the pipeline itself says whether it starts).
 */
export function missingElements(
  elements: readonly string[],
  purpose: string,
  fallback: string,
): JetprofError | undefined {
  const missing = elements.filter((e) => gstHas(e) === false);
  if (missing.length === 0) return undefined;
  const packages = [...new Set(missing.map((e) => PACKAGE_OF[e] ?? `the package with ${e}`))];
  const local = packages.filter((p) => p !== JETPACK);
  return new JetprofError(
    'TOOL_MISSING',
    `GStreamer has no ${missing.join(', ')} here: ${purpose} needs ${missing.length === 1 ? 'it' : 'them'}`,
    {
      suggestion: `${local.length ? `sudo apt install ${local.join(' ')}` : 'it comes with JetPack'}, or use ${fallback}`,
    },
  );
}

/** The board's hardware encoder and decoder are there (a Jetson with JetPack's GStreamer plugins). */
export const boardEncodes = () => gstHas('nvv4l2h264enc') === true && gstHas('nvvidconv') === true;
export const boardDecodes = () => gstHas('nvv4l2decoder') === true && gstHas('nvvidconv') === true;

/** A pipeline for OpenCV's GStreamer back-end, the elements it needs, and its name in the run JSON. */
interface GstPlan {
  pipeline: string;
  elements: string[];
  /** "GStreamer x264enc", "GStreamer nvv4l2decoder": what encodes or decodes, as reports name it. */
  name: string;
  /** The board's hardware codec (NVENC/NVDEC) does the work. */
  hardware: boolean;
}

function location(file: string): string {
  return `"${file.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/**
 * The writer's pipeline. x264 with tune=zerolatency (no look-ahead, no B-frames) encodes each frame as it arrives on
 * appsrc's streaming thread, which a synchronous write then waits for (EncoderThreads); FFmpeg's libx264 holds a
 * look-ahead of frames. superfast: at x264enc's fixed 2 Mbit/s the file is as large as with its default (medium), and
 * a frame encodes about four times faster. threads=1: x264's own threads slowed the next inference even after the
 * wait had seen them idle; with one, the write stage holds the encoding (figures of both choices:
 * docs/MEASUREMENTS.md). On a Jetson nvvidconv copies each BGRx frame into the encoder's NVMM buffers and
 * nvv4l2h264enc encodes it on NVENC (h264parse and qtmux as NVIDIA's guide writes them). The trailing `sync=false`
 * keeps FFmpeg (tried first by OpenCV) from taking the string for a file name with a container's extension. OpenCV
 * finds its appsrc by the name `opencvsrc`, and EncoderThreads the streaming threads by it.
 */
export function gstWriterPipeline(file: string, hardware = false): string {
  const encode = hardware
    ? 'videoconvert ! video/x-raw,format=BGRx ! nvvidconv ! nvv4l2h264enc ! h264parse ! qtmux'
    : 'videoconvert ! x264enc tune=zerolatency speed-preset=superfast threads=1 ! mp4mux';
  return `appsrc name=opencvsrc ! ${encode} ! filesink location=${location(file)} sync=false`;
}

/** The writer's plan here: the board's encoder where it is, x264enc elsewhere. */
export function writerPlan(file: string): GstPlan {
  const hardware = boardEncodes();
  return {
    pipeline: gstWriterPipeline(file, hardware),
    elements: hardware
      ? ['appsrc', 'videoconvert', 'nvvidconv', 'nvv4l2h264enc', 'h264parse', 'qtmux', 'filesink']
      : ['appsrc', 'videoconvert', 'x264enc', 'mp4mux', 'filesink'],
    name: hardware ? 'GStreamer nvv4l2h264enc' : 'GStreamer x264enc',
    hardware,
  };
}

/** A file's container and video codec, as ffprobe names them (format_name, codec_name). */
export interface FileFormat {
  container?: string;
  codec?: string;
}

/** The demuxer for a container ffprobe names (a list such as "mov,mp4,m4a,3gp,3g2,mj2"). */
function demuxerOf(container = ''): string | undefined {
  const names = container.split(',');
  if (names.includes('mp4') || names.includes('mov')) return 'qtdemux';
  if (names.includes('matroska') || names.includes('webm')) return 'matroskademux';
  if (names.includes('avi')) return 'avidemux';
  return undefined;
}

const PARSER_OF: Record<string, string> = { h264: 'h264parse', hevc: 'h265parse' };
const SOFTWARE_DECODER_OF: Record<string, string> = {
  h264: 'avdec_h264',
  hevc: 'avdec_h265',
  mjpeg: 'jpegdec',
  mpeg4: 'avdec_mpeg4',
  msmpeg4v3: 'avdec_msmpeg4',
};

/** The hardware decoder takes H.264 and H.265 in MP4, MKV or AVI (with its parser before it). */
export function boardDecodesFile(format: FileFormat): boolean {
  return boardDecodes() && !!demuxerOf(format.container) && !!PARSER_OF[format.codec ?? ''];
}

/**
 * The reader's pipeline for a file: demuxer, parser and decoder named where the format is known (so the run says
 * which decoder worked), else decodebin. On a Jetson nvv4l2decoder decodes on NVDEC into NVMM buffers and nvvidconv
 * brings them to BGRx in system memory; videoconvert makes the BGR OpenCV takes. appsink's `sync=false`: a file is
 * read as fast as it decodes, not at its playing speed. The pipeline decodes on its own streaming thread, the next
 * frame while the loop works on this one: a read takes a decoded frame, the decoding is not in the read stage.
 * `size` (--frame-size, where it is not the video's): the frames are resized there too, by nvvidconv on a Jetson (its
 * VIC) and videoscale elsewhere (stretched as OpenCV's resize stretches, no borders), so no CPU of the loop's does it.
 */
export function readerPlan(file: string, format: FileFormat, size?: readonly [number, number]): GstPlan {
  const demux = demuxerOf(format.container);
  const parse = PARSER_OF[format.codec ?? ''];
  const hardware = boardDecodesFile(format);
  const software = SOFTWARE_DECODER_OF[format.codec ?? ''];
  const toBgr = 'videoconvert ! video/x-raw,format=BGR ! appsink sync=false';
  const src = `filesrc location=${location(file)}`;
  const wh = size ? `,width=${size[0]},height=${size[1]}` : '';
  if (hardware) {
    return {
      pipeline: `${src} ! ${demux} ! ${parse} ! nvv4l2decoder ! nvvidconv ! video/x-raw,format=BGRx${wh} ! ${toBgr}`,
      elements: ['filesrc', demux!, parse, 'nvv4l2decoder', 'nvvidconv', 'videoconvert', 'appsink'],
      name: `GStreamer nvv4l2decoder${size ? ', resized by nvvidconv' : ''}`,
      hardware,
    };
  }
  // software: scaled in the decoder's own format (fewer bytes than BGR), before the conversion
  const scale = size ? ` ! videoscale add-borders=false ! video/x-raw${wh}` : '';
  const scaled = (name: string) => `GStreamer ${name}${size ? ', resized by videoscale' : ''}`;
  const scaler = size ? ['videoscale'] : [];
  if (demux && software) {
    const chain = [demux, ...(parse ? [parse] : []), software];
    return {
      pipeline: `${src} ! ${chain.join(' ! ')}${scale} ! ${toBgr}`,
      elements: ['filesrc', ...chain, ...scaler, 'videoconvert', 'appsink'],
      name: scaled(software),
      hardware,
    };
  }
  return {
    pipeline: `${src} ! decodebin${scale} ! ${toBgr}`,
    elements: ['filesrc', 'decodebin', ...scaler, 'videoconvert', 'appsink'],
    name: scaled('decodebin'),
    hardware,
  };
}
