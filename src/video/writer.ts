/**
 * Video out through OpenCV: the annotated video written under a temporary name beside the target and renamed by
 * `finish()` once every frame is in a playable file, so an interrupted or failed run never leaves a half-written file
 * under the final name; FFmpeg's writer or a GStreamer pipeline (x264enc, a Jetson's nvv4l2h264enc); a folder of
 * images for an image folder's frames.
 */
import { chmodSync, existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { resourceShortage } from '../util/resources.ts';
import { JetprofError } from '../util/errors.ts';
import {
  freeBytes,
  StagingFolder,
  removeQuietly,
  resolveTarget,
  simulatedFault,
  writeError,
  newFileMode,
} from '../output/output.ts';
import { makeDirs, requireWritableDir } from '../util/files.ts';
import { processRef, runCommand, signalProcess } from '../util/process.ts';
import { EncoderThreads } from './encoder-threads.ts';
import { evenFrameSize } from './frame-size.ts';
import { type Cv, fileCaptureApi, loadOpenCv, type Mat, openCvWithoutGstreamer, videoBackends } from './opencv.ts';
import { missingElements, type VideoIo, writerPlan } from './gstreamer.ts';

export interface VideoSink {
  path: string;
  codec: string;
  /** What encodes it, and where its time goes (GStreamer x264enc in the write stage, or FFmpeg's own threads). */
  encoder?: string;
  /** Why `auto` did not get GStreamer's writer, when it did not. */
  encoderNote?: string;
  /** The waits for the encoder (settle(), EncoderThreads): how many, how many found it at work, how many timed out. */
  encoderWaits?: () => { waits: number; busyWaits: number; timedOut: number };
  /** The CPU time the encoder's own threads used (ms), once the video is closed; absent where /proc cannot tell. */
  encoderCpuMs?: number;
  /**
   * Hands the frame to the encoder, which encodes it on threads of its own (FFmpeg's libx264, GStreamer's streaming
   * thread): call settle() before anything whose time must not hold the encoder's, such as the model's next run.
   */
  write(frame: Mat): void;
  /** Blocks until the encoder has done every frame written so far (see EncoderThreads); at once where nothing is left. */
  settle(): void;
  /** The same, encoded on libuv's thread pool; call it for one frame at a time, in order. */
  writeAsync(frame: Mat): Promise<void>;
  /**
   * Closes the video and checks that it plays, still under its temporary name. `cameraSpanS`: the camera's time from
   * the first written frame's arrival to the last one's, given when frames were dropped (--realtime); the video is
   * then stretched to it (realTime).
   */
  finish(o?: { cameraSpanS?: number }): Promise<void>;
  /** After finish(): renames it to its final name, with the run's other files (run-record.ts writeRunFiles). */
  commit(): void;
  /** Closes and deletes the temporary file (after a commit: nothing left to delete). */
  abort(): void;
  /** After finish(): the size the video has (an odd frame size is written one pixel smaller by H.264). */
  written?: { width: number; height: number };
  /** After finish() with dropped frames: how the video keeps the camera's time, or why it does not. */
  realTime?: RealTime;
}

/**
 * A paced run that dropped frames writes fewer frames than the camera delivered: at the camera's rate its video would
 * play faster than the camera ran (8 s of camera time in 1.5 s with 80% dropped). The file's timestamps are stretched
 * by `scale`, the camera's span over the video's (ffmpeg -itsscale, stream copy: no re-encode), so the video lasts as
 * long as the camera ran, each kept frame on screen for about as long as the camera took to deliver the next.
 */
export interface RealTime {
  scale: number;
  stretched: boolean;
  /** Why it was not stretched (no ffmpeg, ffmpeg failed), when it was not. */
  why?: string;
}

/**
 * Stretches the staged video `tmp` (holding `frames` frames) by `scale` in place, or says why not. ffmpeg runs beside
 * the event loop (a slow disk must not hold Ctrl-C and SIGTERM up), ended after 600 s or when this process exits.
 */
async function stretchToCameraTime(cv: Cv, tmp: string, frames: number, scale: number): Promise<RealTime> {
  const out = `${tmp}.stretched${extname(tmp)}`;
  let r: { code: number; output: Buffer } | undefined;
  let failed: string | undefined;
  try {
    r = await runCommand('ffmpeg', ['-v', 'error', '-y', '-itsscale', scale.toFixed(6), '-i', tmp, '-c', 'copy', out], {
      onSpawn: (pid) => {
        const end = () => signalProcess(processRef(pid), 'SIGKILL');
        const timer = setTimeout(end, 600_000);
        process.once('exit', end);
        return () => {
          clearTimeout(timer);
          process.removeListener('exit', end);
        };
      },
    });
  } catch (e) {
    failed =
      (e as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'ffmpeg is not installed (bash scripts/setup.sh installs it)'
        : (e as Error).message;
  }
  const said = r?.output.toString('utf8').trim().split('\n').pop();
  const why =
    failed ??
    (r!.code !== 0
      ? `ffmpeg exit ${r!.code}${said ? `: ${said}` : ''}`
      : playableVideo(cv, out, frames)?.frames !== frames
        ? 'the stretched copy did not hold every frame'
        : undefined);
  if (why) {
    removeQuietly(out);
    return { scale, stretched: false, why };
  }
  renameSync(out, tmp);
  return { scale, stretched: true };
}

/**
 * The written video's size and how many frames it holds, or undefined when it does not open. An MP4/MOV index counts
 * its frames exactly (`expected` frames there: done); anywhere else, or when the index disagrees, the frames are
 * counted by reading their packets: a Matroska or AVI file whose encoder lost its last frames to a full disk still
 * opens.
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
      // its packets, not decoded (FFmpeg's raw mode; where a back-end has none, decoded): 795 frames at 960x540 in
      // 24 ms where decoding them took 4.4 s, at the end of every run written to .avi or .mkv
      probe.set(cv.CAP_PROP_FORMAT, -1);
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
const VIDEO_EXTENSIONS = ['.mp4', '.m4v', '.mov', '.avi', '.mkv'];

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
 * What the encoder left in `tmp`, once it opens and holds all `frames`; else `drop` and a write error (a full disk
 * named as such). writeAsync's workers hold the encoder too: the container is finalized when the last of them is
 * freed, just after its callback, so this waits for the event loop and tries again for a moment, reading the file
 * again only when it changed (a short Matroska or AVI file left by a full disk was counted 40 times, by decoding it:
 * 14 s of CPU for 15 frames at 960x540). Accepted only with every frame written: an encoder that held 40 frames
 * writes them at release, and a disk that fills then leaves a file that opens with the last ones missing.
 */
async function encodedVideo(
  cv: Cv,
  path: string,
  tmp: string,
  frames: number,
  drop: () => void,
): Promise<{ width: number; height: number; frames: number }> {
  let video: { width: number; height: number; frames: number } | undefined;
  let read: string | undefined; // the size and time of the file as last read
  for (let attempt = 0; attempt < 40 && video?.frames !== frames; attempt++) {
    await new Promise((r) => setTimeout(r, attempt === 0 ? 0 : 50));
    const st = statSync(tmp, { bigint: true, throwIfNoEntry: false });
    const now = st ? `${st.size}:${st.mtimeNs}` : 'none';
    if (now === read) continue;
    read = now;
    video = playableVideo(cv, tmp, frames);
  }
  if (video?.frames === frames) return video;
  // the space as the encoder left it, before its file goes
  const free = freeBytes(dirname(tmp));
  const full = free !== undefined && free < MIN_FREE_BYTES;
  drop();
  const what = video
    ? `the encoder wrote ${video.frames} of the ${frames} frames`
    : 'the encoder left no playable video';
  throw writeError(
    path,
    Object.assign(new Error(full ? `ENOSPC (${what})` : `EIO: ${what}`), {
      code: full ? 'ENOSPC' : 'EIO',
      detail: what,
    }),
  );
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
  // the writer opens its file by name: in a folder of this process's own, where no link can have been planted
  const staging = new StagingFolder(dirname(target.path), path);
  const tmp = staging.path(basename(target.path));
  const threads = new EncoderThreads(); // before the writer opens: the threads that appear after it are its own
  let opened: ReturnType<typeof openWriter>;
  try {
    opened = openWriter(cv, path, tmp, fps, width, height, videoIo);
  } catch (e) {
    staging.drop();
    throw e;
  }
  const { writer: w, codec, encoder, encoderNote } = opened;
  threads.opened();
  let closed = false;
  let frames = 0;
  const close = () => {
    if (!closed) {
      closed = true;
      const cpu = threads.cpuMs(); // before the release ends the encoder's threads
      if (cpu !== undefined) sink.encoderCpuMs = Math.round(cpu);
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
      staging.drop();
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
      frames++;
    },
    settle() {
      if (!closed) threads.waitIdle();
    },
    async writeAsync(frame) {
      checkSpace();
      await w.writeAsync(frame);
      frames++;
    },
    async finish(o) {
      close();
      const video = await encodedVideo(cv, path, tmp, frames, () => staging.drop());
      sink.written = { width: video.width, height: video.height };
      // the camera's span over the video's, from the first frame to the last (at the writer's rate)
      if (o?.cameraSpanS && frames > 1)
        sink.realTime = await stretchToCameraTime(cv, tmp, frames, o.cameraSpanS / ((frames - 1) / fps));
      chmodSync(tmp, newFileMode()); // OpenCV created it with the process' umask (0 under nsys)
    },
    commit: () => staging.commit([basename(target.path)]),
    abort() {
      close();
      staging.drop();
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
    makeDirs(dir);
  } catch (e) {
    throw writeError(dir, e);
  }
  if (!statSync(dir).isDirectory())
    throw new JetprofError('BAD_OUTPUT', `${dir}: the annotated images go to a folder, and this is a file`, {
      suggestion: 'give a folder name with --output',
    });
  const staging = new StagingFolder(dir); // a new folder of this process's own, never one found there
  const staged: string[] = [];
  let i = 0;
  const write = (frame: Mat) => {
    const name = names[i++] ?? `frame-${String(i).padStart(6, '0')}.jpg`;
    const file = staging.path(name);
    try {
      // encoded here and written by Node, not cv.imwrite: on a full disk imwrite writes nothing and says nothing,
      // where Node's write fails with the system's reason (ENOSPC), named with the image
      writeFileSync(file, cv.imencode(extname(name) || '.jpg', frame));
      staged.push(name);
    } catch (e) {
      throw writeError(join(dir, name), e);
    }
  };
  return {
    path: dir,
    codec: 'images',
    write,
    settle() {}, // imwrite has written the image when it returns
    async writeAsync(frame) {
      write(frame);
    },
    async finish() {}, // each image was complete when its write returned
    commit: () => staging.commit(staged),
    abort: () => staging.drop(),
  };
}
