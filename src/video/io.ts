/**
 * Video in and out through OpenCV. The output is written under a temporary name beside the target and renamed
 * by `finish()`, so an interrupted or failed run never leaves a half-written file under the final name.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { resourceShortage } from '../util/resources.ts';
import { JetprofError, messageOf } from '../util/errors.ts';
import {
  freeBytes,
  dropStaging,
  stagingDir,
  removeQuietly,
  removeStalePartials,
  resolveTarget,
  simulatedFault,
  writeError,
  newFileMode,
} from '../output/output.ts';
import { requireFile, requireWritableDir } from '../util/files.ts';
import { EncoderThreads } from './encoder-threads.ts';
import { evenFrameSize } from './frame-size.ts';
import { type Cv, fileCaptureApi, loadOpenCv, type Mat, videoBackends } from './opencv.ts';
import {
  boardDecodes,
  boardDecodesFile,
  type FileFormat,
  missingElements,
  readerPlan,
  type VideoIo,
  writerPlan,
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
  const r = spawnSync(
    'ffprobe',
    [
      '-v',
      'error',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=codec_name,r_frame_rate,avg_frame_rate:format=format_name',
      '-of',
      'json',
      path,
    ],
    { encoding: 'utf8', timeout: 20_000 },
  );
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
 */
export function openVideo(path: string, cv: Cv = loadOpenCv(), videoIo: VideoIo = 'auto'): VideoSource {
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
  const gst = gstReader(cv, path, format, videoIo);
  if (!gst) return captureSource(cap, info);
  if ('note' in gst) return captureSource(cap, { ...info, decoderNote: gst.note });
  cap.release();
  return captureSource(gst.cap, { ...info, decoder: gst.name }, gst.first);
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
): { cap: InstanceType<Cv['VideoCapture']>; first: Mat; name: string } | { note: string } | undefined {
  if (videoIo === 'ffmpeg' || (videoIo === 'auto' && !boardDecodesFile(format))) return undefined;
  const fallback = '--video-io ffmpeg';
  const plan = readerPlan(path, format);
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

export interface VideoSink {
  path: string;
  codec: string;
  /** What encodes it, and where its time goes (GStreamer x264enc in the write stage, or FFmpeg's own threads). */
  encoder?: string;
  /** Why `auto` did not get GStreamer's writer, when it did not. */
  encoderNote?: string;
  /** The synchronous writes' waits for the encoder (EncoderThreads): how many, and how many found it at work. */
  encoderWaits?: () => { waits: number; busyWaits: number; timedOut: number };
  write(frame: Mat): void;
  /** The same, encoded on libuv's thread pool; call it for one frame at a time, in order. */
  writeAsync(frame: Mat): Promise<void>;
  /** Closes the video, checks that it plays, and renames it to its final name. */
  finish(): Promise<void>;
  /** Closes and deletes the temporary file. */
  abort(): void;
  /** After finish(): the size the video has (an odd frame size is written one pixel smaller by H.264). */
  written?: { width: number; height: number };
}

/**
 * The size of the video at `path` when it opens and yields a frame count or a first frame, else undefined (not
 * playable). H.264 and MPEG-4 encode even sizes only: an odd frame size comes out one pixel smaller.
 */
/**
 * The written video's size and how many frames it holds, or undefined when it does not open. An MP4/MOV index counts
 * its frames exactly (`expected` frames there: done); anywhere else, or when the index disagrees, the frames are
 * counted by reading them: a Matroska or AVI file whose encoder lost its last frames to a full disk still opens.
 */
function playableVideo(
  cv: Cv,
  path: string,
  expected: number,
): { width: number; height: number; frames: number } | undefined {
  try {
    if (statSync(path).size === 0) return undefined;
    const probe = new cv.VideoCapture(path, fileCaptureApi(cv));
    const size = {
      width: Math.round(probe.get(cv.CAP_PROP_FRAME_WIDTH)),
      height: Math.round(probe.get(cv.CAP_PROP_FRAME_HEIGHT)),
    };
    let frames = Math.round(probe.get(cv.CAP_PROP_FRAME_COUNT));
    const indexed = ['.mp4', '.m4v', '.mov'].includes(extname(path).toLowerCase());
    if (!indexed || frames !== expected) {
      frames = 0;
      probe.set(cv.CAP_PROP_POS_FRAMES, 0);
      for (let m = probe.read(); m && !m.empty; m = probe.read()) {
        frames++;
        m.release();
      }
    }
    probe.release();
    return frames > 0 ? { ...size, frames } : undefined;
  } catch {
    return undefined; // OpenCV throws "failed to open capture" on a file without its index (moov atom)
  }
}

/** Containers OpenCV's FFmpeg writer picks from the extension. */
export const VIDEO_EXTENSIONS = ['.mp4', '.m4v', '.mov', '.avi', '.mkv'];

/** Below this much free space the writer stops: an encoder on a full disk fails silently and leaves a broken file. */
const MIN_FREE_BYTES = 4 * 1024 * 1024;

/** The output video's path: a regular file with an extension OpenCV takes for a container. */
function checkVideoPath(path: string) {
  const target = resolveTarget(path);
  if (target.kind !== 'file') {
    throw new JetprofError('BAD_OUTPUT', `${path}: the annotated video must go to a regular file`, {
      suggestion: 'give a .mp4 path, or pass --no-write to write no video',
    });
  }
  if (!VIDEO_EXTENSIONS.includes(extname(path).toLowerCase())) {
    throw new JetprofError(
      'BAD_OUTPUT',
      `${path}: OpenCV picks the video container from the extension, and '${extname(path) || '(none)'}' is not one`,
      {
        suggestion: `name it ${VIDEO_EXTENSIONS.join(', ')} (e.g. ${basename(path, extname(path))}.mp4)`,
      },
    );
  }
  return target;
}

/** This OpenCV has no GStreamer back-end, so --video-io gstreamer cannot `what` (decode, write). */
function openCvWithoutGstreamer(what: 'decode' | 'write'): JetprofError {
  return new JetprofError(
    'TOOL_MISSING',
    `this OpenCV was built without GStreamer (cv.getBuildInformation()), so --video-io gstreamer cannot ${what}`,
    { suggestion: "use --video-io ffmpeg, or Debian's/JetPack's OpenCV (built with GStreamer)" },
  );
}

/** Why the GStreamer writer cannot be used here, or undefined when it can be tried. */
function gstWriterUnavailable(cv: Cv, width: number, height: number): JetprofError | undefined {
  if (!videoBackends(cv).gstreamer) return openCvWithoutGstreamer('write');
  if (width % 2 || height % 2)
    return new JetprofError(
      'BAD_OPTION',
      `x264enc encodes even frame sizes only, and the frames are ${width}x${height}`,
      {
        suggestion: `pass --frame-size ${evenFrameSize(width, height)}, or --video-io ffmpeg (it writes one pixel smaller)`,
      },
    );
  return missingElements(writerPlan('out.mp4').elements, "the video writer's pipeline", '--video-io ffmpeg');
}

/** What `--video-io auto` writes with on this machine (at an even frame size), and why not GStreamer when it is not. */
export function autoWriter(
  cv: Cv,
  width = 960,
  height = 540,
): { kind: 'gstreamer' | 'ffmpeg'; encoder: string; why?: string; fix?: string } {
  const unavailable = gstWriterUnavailable(cv, width, height);
  if (!unavailable) return { kind: 'gstreamer', encoder: writerPlan('out.mp4').name };
  return { kind: 'ffmpeg', encoder: 'FFmpeg libx264', why: unavailable.message, fix: unavailable.suggestion };
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

/**
 * A VideoWriter on the temporary file. GStreamer (x264enc, H.264 in MP4) where this OpenCV has it and the frame size
 * is even (`auto`), else FFmpeg: H.264 (avc1) when it encodes it, else MPEG-4 part 2 (mp4v).
 */
function openWriter(
  cv: Cv,
  path: string,
  tmp: string,
  fps: number,
  width: number,
  height: number,
  videoIo: VideoIo = 'auto',
) {
  let writer: InstanceType<Cv['VideoWriter']> | undefined;
  let codec = '';
  let encoder = '';
  let encoderNote: string | undefined;
  if (videoIo !== 'ffmpeg') {
    const unavailable = gstWriterUnavailable(cv, width, height);
    if (unavailable && videoIo === 'gstreamer') throw unavailable;
    if (unavailable)
      encoderNote = `the video is encoded by FFmpeg, not GStreamer (${unavailable.message}${unavailable.suggestion ? `; ${unavailable.suggestion}` : ''})`;
    if (!unavailable) {
      const plan = writerPlan(tmp);
      try {
        const w = new cv.VideoWriter(plan.pipeline, 0, fps, new cv.Size(width, height), true);
        // filesink creates the file when the pipeline starts: no file, no pipeline
        if (existsSync(tmp)) {
          writer = w;
          codec = 'avc1';
          encoder = plan.name;
        } else w.release();
      } catch {
        removeQuietly(tmp);
      }
      if (!writer && videoIo !== 'gstreamer')
        encoderNote = `the video is encoded by FFmpeg, not GStreamer (its pipeline did not start: ${plan.pipeline}; try it with gst-launch-1.0)`;
      if (!writer && videoIo === 'gstreamer')
        throw new JetprofError(
          'BAD_OUTPUT',
          `${path}: GStreamer could not start the writer's pipeline (${plan.pipeline})`,
          {
            suggestion:
              'check it with gst-launch-1.0 (videotestsrc num-buffers=30 in place of appsrc), or use --video-io ffmpeg',
          },
        );
    }
  }
  for (const fourcc of writer ? [] : ['avc1', 'mp4v']) {
    try {
      const w = new cv.VideoWriter(tmp, cv.VideoWriter.fourcc(fourcc), fps, new cv.Size(width, height), true);
      // OpenCV may return a writer that opened nothing (it says so only on stderr): its file would not exist
      if (!existsSync(tmp)) {
        w.release();
        continue;
      }
      writer = w;
      codec = fourcc;
      encoder = `FFmpeg ${fourcc === 'avc1' ? 'libx264' : 'mpeg4'}`;
      break;
    } catch {
      removeQuietly(tmp);
    }
  }
  if (!writer) {
    const short = resourceShortage(path);
    if (short) throw short;
  }
  if (!writer && basename(path).length > 255) {
    throw new JetprofError(
      'BAD_OUTPUT',
      `${path}: the file name has ${basename(path).length} characters, more than a file system allows (255)`,
      {
        suggestion: 'give --output a shorter name',
      },
    );
  }
  if (!writer) {
    throw new JetprofError(
      'BAD_OUTPUT',
      `${path}: OpenCV could not open a video writer for ${width}x${height} at ${fps} FPS (tried avc1 and mp4v)`,
      {
        suggestion:
          'use a .mp4 or .avi name and a frame size between 32x32 and 8192x8192 (even numbers for H.264), or pass --no-write',
      },
    );
  }
  return { writer, codec, encoder, encoderNote };
}

/**
 * Opens an mp4 writer: H.264 (avc1) when this OpenCV/FFmpeg can encode it, else MPEG-4 part 2 (mp4v). Every failure
 * OpenCV does not report is checked here: the writer really opened (its file exists), free space while writing, and
 * on finish() a file that opens and holds frames, before it replaces anything under the final name.
 */
export function createVideoSink(
  path: string,
  fps: number,
  width: number,
  height: number,
  cv: Cv = loadOpenCv(),
  videoIo: VideoIo = 'auto',
): VideoSink {
  const target = checkVideoPath(path);
  requireWritableDir(target.path);
  removeStalePartials(dirname(target.path));
  // the writer opens its file by name: in a folder of this process's own, where no link can have been planted
  const staging = stagingDir(dirname(target.path));
  const tmp = join(staging, basename(target.path));
  const threads = new EncoderThreads(); // before the writer opens: the threads that appear after it are its own
  let opened: ReturnType<typeof openWriter>;
  try {
    opened = openWriter(cv, path, tmp, fps, width, height, videoIo);
  } catch (e) {
    dropStaging(staging);
    throw e;
  }
  const { writer: w, codec, encoder, encoderNote } = opened;
  threads.opened();
  let closed = false;
  let frames = 0;
  const close = () => {
    if (!closed) {
      closed = true;
      w.release();
      threads.close();
    }
  };
  const dir = dirname(target.path);
  // Every 16 frames: is there room for the next ones? (A full disk makes the encoder fail without a word.)
  const checkSpace = () => {
    if (frames % 16 !== 0) return;
    const fault = simulatedFault(path);
    const free = freeBytes(dir);
    if (fault || (free !== undefined && free < MIN_FREE_BYTES)) {
      close();
      dropStaging(staging);
      throw writeError(path, fault ?? Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }));
    }
  };
  const sink: VideoSink = {
    path,
    codec,
    encoder,
    ...(encoderNote ? { encoderNote } : {}),
    encoderWaits: () => ({ waits: threads.waits, busyWaits: threads.busyWaits, timedOut: threads.timedOut }),
    write(frame) {
      checkSpace();
      w.write(frame);
      // the encoding of this frame (and of earlier ones the encoder held) belongs to this write, not to the next
      // frame's inference
      threads.waitIdle();
      frames++;
    },
    async writeAsync(frame) {
      checkSpace();
      await w.writeAsync(frame);
      frames++;
    },
    async finish() {
      close();
      // What the encoder left must open and hold frames before it replaces an older file under the final name.
      // writeAsync's workers hold the encoder too: the container is finalized when the last of them is freed, just
      // after its callback, so the check waits for the event loop and tries again for a moment.
      let video: { width: number; height: number; frames: number } | undefined;
      for (let attempt = 0; attempt < 40 && video?.frames !== frames; attempt++) {
        await new Promise((r) => setTimeout(r, attempt === 0 ? 0 : 50));
        video = playableVideo(cv, tmp, frames);
      }
      // accepted only when it holds every frame written: an encoder that held 40 frames writes them at release, and
      // a disk that fills then leaves a file that opens with the last ones missing
      if (video?.frames !== frames) {
        // the space as the encoder left it, before its file goes
        const free = freeBytes(dir);
        const full = free !== undefined && free < MIN_FREE_BYTES;
        dropStaging(staging);
        const what = video
          ? `the encoder wrote ${video.frames} of the ${frames} frames`
          : 'the encoder left no playable video';
        throw writeError(
          path,
          Object.assign(new Error(full ? `ENOSPC (${what})` : `EIO: ${what}`), { code: full ? 'ENOSPC' : 'EIO' }),
        );
      }
      sink.written = { width: video.width, height: video.height };
      chmodSync(tmp, newFileMode()); // OpenCV created it with the process' umask (0 under nsys)
      renameSync(tmp, target.path);
      dropStaging(staging);
    },
    abort() {
      close();
      dropStaging(staging);
    },
  };
  return sink;
}

/**
 * Annotated images into a folder, one per input image under the same name (an image-folder source). They are written
 * into a hidden staging folder inside it (`.jetprof-out-<pid>-XXXXXX`) and moved in only when the run finishes: a run
 * that fails on a late image leaves the previous images as they were.
 */
export function createImageFolderSink(dir: string, names: readonly string[], cv: Cv = loadOpenCv()): VideoSink {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw writeError(dir, e);
  }
  if (!statSync(dir).isDirectory())
    throw new JetprofError('BAD_OUTPUT', `${dir}: the annotated images go to a folder, and this is a file`, {
      suggestion: 'give a folder name with --output',
    });
  removeStalePartials(dir);
  let staging: string;
  try {
    staging = stagingDir(dir); // a new folder of this process's own, never one found there
  } catch (e) {
    throw writeError(dir, e);
  }
  const staged: string[] = [];
  let i = 0;
  const write = (frame: Mat) => {
    const name = names[i++] ?? `frame-${String(i).padStart(6, '0')}.jpg`;
    const file = join(staging, name);
    try {
      cv.imwrite(file, frame);
      staged.push(name);
    } catch (e) {
      throw writeError(join(dir, name), e);
    }
  };
  const drop = () => dropStaging(staging);
  return {
    path: dir,
    codec: 'images',
    write,
    async writeAsync(frame) {
      write(frame);
    },
    async finish() {
      try {
        for (const name of staged) renameSync(join(staging, name), join(dir, name));
      } catch (e) {
        throw writeError(dir, e);
      } finally {
        drop();
      }
    },
    abort() {
      drop();
    },
  };
}
