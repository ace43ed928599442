/**
 * Video in through OpenCV: a file's size, rate, frame count and rotation (OpenCV's FFmpeg back-end, ffprobe for what
 * it does not say), its frames from FFmpeg or a GStreamer pipeline (a Jetson's hardware decoder), and what `auto`
 * decodes with on this machine.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { resourceShortage } from '../util/resources.ts';
import { JetprofError, messageOf } from '../util/errors.ts';
import { requireFile } from '../util/files.ts';
import { type Cv, fileCaptureApi, loadOpenCv, type Mat, openCvWithoutGstreamer, videoBackends } from './opencv.ts';
import {
  boardDecodes,
  boardDecodesFile,
  type FileFormat,
  missingElements,
  readerPlan,
  type VideoIo,
} from './gstreamer.ts';

export interface VideoInfo {
  path: string;
  width: number;
  height: number;
  fps: number;
  /** As the container reports it; may be 0 or approximate for some formats. */
  frameCount: number;
  /**
   * Rotation metadata (degrees) the file carries (phone videos): frames are read as stored, not rotated, since
   * OpenCV 4.6 turns some of them the wrong way; infer says so and how to get upright frames.
   */
  rotation?: number;
  /**
   * A variable-frame-rate file: the highest rate its frames come at (its stream's base rate); `fps` is then the
   * average OpenCV reports, at which its frames are paced (--realtime) and written.
   */
  variableFps?: number;
  /** What decodes the frames: "FFmpeg", "GStreamer avdec_h264", "GStreamer nvv4l2decoder" (a board's NVDEC). */
  decoder?: string;
  /** Why `--video-io auto` did not decode with the board's hardware where it had it. */
  decoderNote?: string;
  /** The size its frames come at where the reader resized them (--frame-size through GStreamer). */
  resizedTo?: [number, number];
}

/** OpenCV's CAP_PROP_ORIENTATION_META and CAP_PROP_ORIENTATION_AUTO (4.5+), which the Node binding does not name. */
const CAP_PROP_ORIENTATION_META = 48;
const CAP_PROP_ORIENTATION_AUTO = 49;

/**
 * What ffprobe says of a file's first video stream: its container and codec (for a GStreamer decoder), and whether its
 * frames are unevenly spaced (a phone's variable-frame-rate video): r_frame_rate (the stream's base rate, the fastest
 * its frames come) and avg_frame_rate (frames over duration) differ by more than 1%; then `variableFps` is the highest
 * rate. Empty where ffprobe is missing or cannot read the file.
 */
function probeFile(path: string): FileFormat & { variableFps?: number } {
  // `--streams 64` opens one file 64 times: it is asked once (again if the file changed)
  const st = statSync(path);
  const key = `${path}\0${st.size}\0${st.mtimeMs}`;
  let known = probed.get(key);
  if (!known) probed.set(key, (known = ffprobeFile(path)));
  return known;
}

const probed = new Map<string, FileFormat & { variableFps?: number }>();

function ffprobeFile(path: string): FileFormat & { variableFps?: number } {
  const ask =
    '-v error -select_streams v:0 -show_entries stream=codec_name,r_frame_rate,avg_frame_rate:format=format_name';
  const r = spawnSync('ffprobe', [...ask.split(' '), '-of', 'json', path], { encoding: 'utf8', timeout: 20_000 });
  let probe: { streams?: Record<string, string>[]; format?: { format_name?: string } } = {};
  try {
    if (r.status === 0) probe = JSON.parse(r.stdout);
  } catch {
    /* not JSON: nothing known */
  }
  const stream = probe.streams?.[0] ?? {};
  const rate = (q = '') => {
    const [num, den] = q.split('/').map(Number);
    return den ? num / den : num;
  };
  const [base, average] = [rate(stream.r_frame_rate), rate(stream.avg_frame_rate)];
  const variable = base > 0 && average > 0 && Math.abs(base - average) / average > 0.01;
  return {
    ...(probe.format?.format_name ? { container: probe.format.format_name } : {}),
    ...(stream.codec_name ? { codec: stream.codec_name } : {}),
    ...(variable ? { variableFps: Math.round(base * 100) / 100 } : {}),
  };
}

export interface VideoSource {
  info: VideoInfo;
  /** The next frame, or null at the end of the video. */
  read(): Mat | null;
  /** The same, decoded on libuv's thread pool so the event loop stays free (pipelined loop). */
  readAsync(): Promise<Mat | null>;
  close(): void;
}

const VIDEO_FIX = 'pass a video OpenCV can decode (mp4/H.264, avi/MJPEG or XVID); `ffprobe FILE` shows what it is';

/**
 * Opens a video file. Its size, rate and frame count come from OpenCV's FFmpeg back-end; its frames from FFmpeg too,
 * or from a GStreamer pipeline (readerPlan): with `gstreamer`, always; with `auto`, where the board's hardware decoder
 * takes the file (a Jetson, H.264 or H.265), falling back to FFmpeg with a note when the pipeline does not start.
 * `size`: the frame size the run wants; a GStreamer reader resizes to it on its own thread (info.resizedTo), FFmpeg's
 * frames come at the video's size and the loop resizes them.
 */
export function openVideo(
  path: string,
  cv: Cv = loadOpenCv(),
  videoIo: VideoIo = 'auto',
  size?: readonly [number, number],
): VideoSource {
  requireFile(path, 'video', 'check the path (scripts/fetch-sample-video.sh puts a sample in videos/)');
  let cap: InstanceType<Cv['VideoCapture']>;
  try {
    cap = new cv.VideoCapture(path, fileCaptureApi(cv));
  } catch (e) {
    // out of file descriptors or memory, the open fails the same way: the real cause first
    const short = resourceShortage(path);
    if (short) throw short;
    throw new JetprofError('BAD_VIDEO', `${path}: not a video OpenCV can open (${messageOf(e)})`, {
      suggestion: VIDEO_FIX,
    });
  }
  const rotation = Math.round(cap.get(CAP_PROP_ORIENTATION_META) || 0) % 360;
  if (rotation !== 0) cap.set(CAP_PROP_ORIENTATION_AUTO, 0);
  const fps = cap.get(cv.CAP_PROP_FPS);
  const { variableFps, ...format } = probeFile(path);
  const info: VideoInfo = {
    path,
    width: Math.round(cap.get(cv.CAP_PROP_FRAME_WIDTH)),
    height: Math.round(cap.get(cv.CAP_PROP_FRAME_HEIGHT)),
    fps,
    frameCount: Math.max(0, Math.round(cap.get(cv.CAP_PROP_FRAME_COUNT))),
    decoder: videoBackends(cv).ffmpeg ? 'FFmpeg' : 'OpenCV',
    ...(rotation !== 0 ? { rotation } : {}),
    ...(variableFps !== undefined ? { variableFps } : {}),
  };
  if (!(info.width > 0 && info.height > 0)) {
    cap.release();
    throw new JetprofError('BAD_VIDEO', `${path}: not a video OpenCV can decode (no frame size)`, {
      suggestion: VIDEO_FIX,
    });
  }
  const resize = size && (size[0] !== info.width || size[1] !== info.height) ? size : undefined;
  const gst = gstReader(cv, path, format, videoIo, resize);
  if (!gst) return captureSource(cap, info);
  if ('note' in gst) return captureSource(cap, { ...info, decoderNote: gst.note });
  cap.release();
  const resizedTo: [number, number] | undefined = resize && [gst.first.cols, gst.first.rows];
  return captureSource(gst.cap, { ...info, decoder: gst.name, ...(resizedTo ? { resizedTo } : {}) }, gst.first);
}

/**
 * The GStreamer capture `videoIo` asks for, with its first frame (read to know it decodes), or a note saying why
 * `auto` stays with FFmpeg; undefined when FFmpeg is the choice. `gstreamer` that cannot decode is one line.
 */
function gstReader(
  cv: Cv,
  path: string,
  format: FileFormat,
  videoIo: VideoIo,
  size: readonly [number, number] | undefined,
): { cap: InstanceType<Cv['VideoCapture']>; first: Mat; name: string } | { note: string } | undefined {
  if (videoIo === 'ffmpeg' || (videoIo === 'auto' && !boardDecodesFile(format))) return undefined;
  const fallback = '--video-io ffmpeg';
  const plan = readerPlan(path, format, size);
  const unavailable = !videoBackends(cv).gstreamer
    ? openCvWithoutGstreamer('decode')
    : missingElements(plan.elements, "the video reader's pipeline", fallback);
  if (unavailable && videoIo === 'gstreamer')
    throw new JetprofError(unavailable.code, `${path}: ${unavailable.message}`, { suggestion: unavailable.suggestion });
  if (unavailable) return { note: `decoded by FFmpeg, not the board's decoder (${unavailable.message})` };
  let cap: InstanceType<Cv['VideoCapture']> | undefined;
  try {
    cap = new cv.VideoCapture(plan.pipeline, cv.CAP_GSTREAMER);
    const first = cap.read();
    if (!first.empty) return { cap, first, name: plan.name };
  } catch {
    /* did not start: said below */
  }
  cap?.release();
  if (videoIo === 'auto') return { note: `decoded by FFmpeg: GStreamer's pipeline did not start (${plan.pipeline})` };
  throw new JetprofError('BAD_VIDEO', `${path}: GStreamer could not decode it (${plan.pipeline})`, {
    suggestion: `check the pipeline with gst-launch-1.0 (fakesink in place of appsink), or use ${fallback}`,
  });
}

/**
 * The one VideoSource over an OpenCV VideoCapture, for files, streams and cameras alike. `first`: a frame already read
 * (a live source is read once to learn its size), handed out first. An fps the container does not know becomes 30.
 */
export function captureSource(cap: InstanceType<Cv['VideoCapture']>, info: VideoInfo, first?: Mat): VideoSource {
  if (!(info.fps > 0 && info.fps < 1000)) info.fps = 30;
  let pending = first;
  const take = (): Mat | undefined => {
    const m = pending;
    pending = undefined;
    return m;
  };
  return {
    info,
    read() {
      const m = take() ?? cap.read();
      return m.empty ? null : m;
    },
    async readAsync() {
      const m = take() ?? (await cap.readAsync());
      return m.empty ? null : m;
    },
    close() {
      cap.release();
    },
  };
}

/** What `--video-io auto` decodes files with on this machine, in the words doctor prints. */
export function autoReader(cv: Cv): { decoder: string; detail: string } {
  if (videoBackends(cv).gstreamer && boardDecodes())
    return {
      decoder: 'GStreamer nvv4l2decoder',
      detail: "the board's NVDEC for H.264 and H.265 files (MP4, MKV, AVI); FFmpeg for other codecs",
    };
  return {
    decoder: 'FFmpeg',
    detail: videoBackends(cv).gstreamer
      ? "no nvv4l2decoder here (a Jetson's, from JetPack); --video-io gstreamer decodes with GStreamer's software decoders"
      : 'this OpenCV has no GStreamer',
  };
}
