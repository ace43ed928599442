/**
 * Video in and out through OpenCV. The output is written under a temporary name beside the target and renamed
 * by `finish()`, so an interrupted or failed run never leaves a half-written file under the final name.
 */
import { renameSync } from 'node:fs';
import { JetprofError, messageOf } from '../util/errors.ts';
import { partialPath, removeQuietly, requireFile, requireWritableDir } from '../util/files.ts';
import { type Cv, loadOpenCv, type Mat } from './opencv.ts';

export interface VideoInfo {
  path: string;
  width: number;
  height: number;
  fps: number;
  /** As the container reports it; may be 0 or approximate for some formats. */
  frameCount: number;
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

export function openVideo(path: string, cv: Cv = loadOpenCv()): VideoSource {
  requireFile(path, 'video', 'check the path (scripts/fetch-sample-video.sh puts a sample in videos/)');
  let cap: InstanceType<Cv['VideoCapture']>;
  try {
    cap = new cv.VideoCapture(path);
  } catch (e) {
    throw new JetprofError('BAD_VIDEO', `${path}: not a video OpenCV can open (${messageOf(e)})`, { suggestion: VIDEO_FIX });
  }
  const info: VideoInfo = {
    path,
    width: Math.round(cap.get(cv.CAP_PROP_FRAME_WIDTH)),
    height: Math.round(cap.get(cv.CAP_PROP_FRAME_HEIGHT)),
    fps: cap.get(cv.CAP_PROP_FPS),
    frameCount: Math.max(0, Math.round(cap.get(cv.CAP_PROP_FRAME_COUNT))),
  };
  if (!(info.width > 0 && info.height > 0)) {
    cap.release();
    throw new JetprofError('BAD_VIDEO', `${path}: not a video OpenCV can decode (no frame size)`, { suggestion: VIDEO_FIX });
  }
  if (!(info.fps > 0 && info.fps < 1000)) info.fps = 30;
  return {
    info,
    read() {
      const m = cap.read();
      return m.empty ? null : m;
    },
    async readAsync() {
      const m = await cap.readAsync();
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
  write(frame: Mat): void;
  /** The same, encoded on libuv's thread pool; call it for one frame at a time, in order. */
  writeAsync(frame: Mat): Promise<void>;
  /** Closes the video and renames it to its final name. */
  finish(): void;
  /** Closes and deletes the temporary file. */
  abort(): void;
}

/** Opens an mp4 writer: H.264 (avc1) when this OpenCV/FFmpeg can encode it, else MPEG-4 part 2 (mp4v). */
export function createVideoSink(path: string, fps: number, width: number, height: number, cv: Cv = loadOpenCv()): VideoSink {
  requireWritableDir(path);
  const tmp = partialPath(path);
  let writer: InstanceType<Cv['VideoWriter']> | undefined;
  let codec = '';
  for (const fourcc of ['avc1', 'mp4v']) {
    try {
      const w = new cv.VideoWriter(tmp, cv.VideoWriter.fourcc(fourcc), fps, new cv.Size(width, height), true);
      writer = w;
      codec = fourcc;
      break;
    } catch {
      removeQuietly(tmp);
    }
  }
  if (!writer) {
    throw new JetprofError('BAD_OUTPUT', `${path}: OpenCV cannot encode mp4 here (tried avc1 and mp4v)`, {
      suggestion: 'install ffmpeg-enabled OpenCV (libopencv-dev on Debian, JetPack OpenCV on Jetson) or pass --no-write',
    });
  }
  const w = writer;
  let closed = false;
  const close = () => {
    if (!closed) {
      closed = true;
      w.release();
    }
  };
  return {
    path,
    codec,
    write(frame) {
      w.write(frame);
    },
    writeAsync(frame) {
      return w.writeAsync(frame);
    },
    finish() {
      close();
      renameSync(tmp, path);
    },
    abort() {
      close();
      removeQuietly(tmp);
    },
  };
}
