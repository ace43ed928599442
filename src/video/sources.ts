/**
 * Where frames come from, as tensorrt_demos' camera module offers them: a video file, an RTSP or HTTP stream, a V4L2
 * camera (/dev/videoN), a Jetson CSI camera (csi://N: the nvarguscamerasrc GStreamer pipeline), any GStreamer
 * pipeline (gst:...), or a folder of images. A source that cannot open says why in one line. Live sources are
 * endless: --duration or Ctrl-C ends them, with the same finalization as a file.
 */
import { readdirSync, statSync } from 'node:fs';
import { kindOfEntry } from '../util/files.ts';
import { basename, extname, join } from 'node:path';
import { resourceShortage } from '../util/resources.ts';
import { JetprofError, messageOf } from '../util/errors.ts';
import { type Cv, loadOpenCv, type Mat, videoBackends } from './opencv.ts';
import { captureSource, openVideo, type VideoInfo, type VideoSource } from './reader.ts';
import type { VideoIo } from './gstreamer.ts';

type SourceKind = 'file' | 'stream' | 'device' | 'csi' | 'gstreamer' | 'images';

/** Sources that deliver frames at their own pace (cameras, network streams), as opposed to files read at once. */
export function isLive(kind: SourceKind): boolean {
  return kind === 'stream' || kind === 'device' || kind === 'csi' || kind === 'gstreamer';
}

const IMAGE_EXTENSIONS = ['.jpg', '.jpeg', '.png', '.bmp', '.tif', '.tiff', '.webp'];

/** A source argument, classified: what it names and the target to open (a path, a URL, a camera number). */
export interface SourceArg {
  kind: SourceKind;
  target: string;
}

/** What a source argument names (a folder is told from a file by a stat; everything else by its form). */
export function classifySource(spec: string): SourceArg {
  if (/^(rtsps?|rtmp|https?|udp|tcp):\/\//i.test(spec)) return { kind: 'stream', target: spec };
  if (/^\/dev\/video\d+$/.test(spec)) return { kind: 'device', target: spec };
  const csi = /^csi:\/\/(\d+)$/i.exec(spec);
  if (csi) return { kind: 'csi', target: csi[1] };
  if (/^gst:/i.test(spec)) return { kind: 'gstreamer', target: spec.slice(4) };
  try {
    if (statSync(spec).isDirectory()) return { kind: 'images', target: spec };
  } catch {
    /* not there: the file source says so */
  }
  return { kind: 'file', target: spec };
}

/** The mode a CSI camera is asked for: 1280x720 at 30 FPS, which the usual sensors (IMX219, IMX477) all give. */
const CSI_MODE = { width: 1280, height: 720, fps: 30 };

/**
 * The pipeline for a Jetson CSI camera (nvarguscamerasrc), converted to BGR for OpenCV's appsink; `size`
 * (--frame-size): nvvidconv resizes the frames too, on the VIC, not the CPU.
 */
export function csiPipeline(sensorId: number, size?: readonly [number, number]): string {
  const { width, height, fps } = CSI_MODE;
  return [
    `nvarguscamerasrc sensor-id=${sensorId}`,
    `video/x-raw(memory:NVMM), width=(int)${width}, height=(int)${height}, format=(string)NV12, framerate=(fraction)${fps}/1`,
    'nvvidconv',
    `video/x-raw, format=(string)BGRx${size ? `, width=(int)${size[0]}, height=(int)${size[1]}` : ''}`,
    'videoconvert',
    'video/x-raw, format=(string)BGR',
    'appsink drop=true max-buffers=2',
  ].join(' ! ');
}

/** A short name for default outputs: rtsp://host:8554/live -> live, /dev/video0 -> video0, csi://0 -> csi0. */
export function sourceStem(spec: string, known: SourceArg = classifySource(spec)): string {
  const { kind, target } = known;
  if (kind === 'csi') return `csi${target}`;
  if (kind === 'gstreamer') return 'gstreamer';
  if (kind === 'stream') return basename(new URL(target).pathname) || new URL(target).hostname || 'stream';
  if (kind === 'images') return basename(target.replace(/\/+$/, ''));
  return basename(target, extname(target));
}

function fromCapture(
  cv: Cv,
  cap: InstanceType<Cv['VideoCapture']>,
  path: string,
  live: boolean,
  decoder: string,
): VideoSource {
  const first = cap.read();
  if (first.empty) {
    cap.release();
    throw new JetprofError('BAD_VIDEO', `${path}: opened, but no frame arrived`, {
      suggestion: 'check that the camera or stream is sending (ffplay URL, or v4l2-ctl --list-devices)',
    });
  }
  const info: VideoInfo = {
    path,
    width: first.cols,
    height: first.rows,
    fps: cap.get(cv.CAP_PROP_FPS),
    frameCount: live ? 0 : Math.max(0, Math.round(cap.get(cv.CAP_PROP_FRAME_COUNT))),
    decoder,
  };
  return captureSource(cap, info, first); // the frame read to learn the size is the first one handed out
}

function openCapture(
  cv: Cv,
  target: string | number,
  api: number,
  path: string,
  why: (e: string) => { message: string; suggestion: string },
): InstanceType<Cv['VideoCapture']> {
  try {
    return new cv.VideoCapture(target, api);
  } catch (e) {
    const short = resourceShortage(path);
    if (short) throw short;
    const { message, suggestion } = why(messageOf(e));
    throw new JetprofError('BAD_VIDEO', `${path}: ${message}`, { suggestion });
  }
}

/** The sorted image files of a folder, as a source (one frame per image; `names` for the output folder). */
function openImageFolder(dir: string, cv: Cv): VideoSource & { names: string[] } {
  const names = readdirSync(dir)
    .filter((f) => IMAGE_EXTENSIONS.includes(extname(f).toLowerCase()))
    .sort();
  if (names.length === 0) {
    throw new JetprofError('BAD_VIDEO', `${dir}: a folder without images (${IMAGE_EXTENSIONS.join(', ')})`, {
      suggestion: 'pass a folder of images, or a video',
    });
  }
  // every entry a regular file, checked before the first frame: a FIFO would block the read (and the signals with
  // it), a folder named x.jpg would fail the run after the earlier images were processed
  for (const name of names) {
    const what = kindOfEntry(join(dir, name));
    if (what !== 'file')
      throw new JetprofError('BAD_VIDEO', `${join(dir, name)}: ${what}, not an image file`, {
        suggestion: 'remove it from the folder (or rename it without an image extension)',
      });
  }
  const read = (i: number): Mat => {
    const file = join(dir, names[i]);
    let m: Mat;
    try {
      m = cv.imread(file);
    } catch (e) {
      throw new JetprofError('BAD_VIDEO', `${file}: not an image OpenCV can decode (${messageOf(e)})`, {
        suggestion: 'remove it from the folder',
      });
    }
    if (m.empty)
      throw new JetprofError('BAD_VIDEO', `${file}: not an image OpenCV can decode`, {
        suggestion: 'remove it from the folder',
      });
    return m;
  };
  const first = read(0);
  let next = 0;
  const nextFrame = () => (next < names.length ? (next === 0 ? (next++, first) : read(next++)) : null);
  return {
    names,
    info: {
      path: dir,
      width: first.cols,
      height: first.rows,
      fps: 1,
      frameCount: names.length,
      decoder: 'OpenCV imread',
    },
    read: nextFrame,
    readAsync: async () => nextFrame(),
    close() {},
  };
}

/** Opens any source jetprof reads; one line naming it and the fix when it cannot. */
export function openSource(
  spec: string,
  cv: Cv = loadOpenCv(),
  known: SourceArg = classifySource(spec),
  videoIo: VideoIo = 'auto',
  /** The frame size the run wants: a file read through GStreamer comes resized to it (reader.ts openVideo). */
  size?: readonly [number, number],
): VideoSource & { kind: SourceKind; names?: string[] } {
  const { kind, target } = known;
  switch (kind) {
    case 'file':
      return { ...openVideo(target, cv, videoIo, size), kind };
    case 'images':
      return { ...openImageFolder(target, cv), kind };
    case 'stream': {
      // TCP for RTSP: UDP through NAT and firewalls loses packets silently
      process.env.OPENCV_FFMPEG_CAPTURE_OPTIONS ??= 'rtsp_transport;tcp';
      const cap = openCapture(cv, target, cv.CAP_FFMPEG, spec, (e) => ({
        message: `the stream could not be opened (refused, timed out or no such path: ${e.split('\n')[0]})`,
        suggestion: 'check the URL and that the server is up (ffplay URL shows it)',
      }));
      return { ...fromCapture(cv, cap, spec, true, 'FFmpeg'), kind };
    }
    case 'device': {
      try {
        statSync(target);
      } catch {
        throw new JetprofError('BAD_VIDEO', `${target}: no such device`, {
          suggestion: 'list the cameras with `v4l2-ctl --list-devices` (package v4l-utils)',
        });
      }
      const cap = openCapture(cv, Number(target.slice('/dev/video'.length)), cv.CAP_V4L2, spec, (e) => ({
        message: `the camera could not be opened (${e.split('\n')[0]})`,
        suggestion: 'is it in use by another program?',
      }));
      return { ...fromCapture(cv, cap, spec, true, 'V4L2'), kind };
    }
    case 'csi':
    case 'gstreamer': {
      if (!videoBackends(cv).gstreamer) {
        throw new JetprofError(
          'BAD_VIDEO',
          `${spec}: this OpenCV was built without GStreamer (cv.getBuildInformation())`,
          { suggestion: 'use the OpenCV JetPack ships, or build OpenCV with -D WITH_GSTREAMER=ON' },
        );
      }
      const resize = size && (size[0] !== CSI_MODE.width || size[1] !== CSI_MODE.height) ? size : undefined;
      const pipeline = kind === 'csi' ? csiPipeline(Number(target), resize) : target;
      const cap = openCapture(cv, pipeline, cv.CAP_GSTREAMER, spec, (e) => ({
        message: `the GStreamer pipeline could not start (${e.split('\n')[0]})`,
        suggestion:
          kind === 'csi'
            ? 'is a CSI camera connected, and nvargus-daemon running (sudo systemctl restart nvargus-daemon)?'
            : 'try the pipeline with gst-launch-1.0 first',
      }));
      return {
        ...fromCapture(
          cv,
          cap,
          spec,
          true,
          kind === 'gstreamer'
            ? 'GStreamer (the source pipeline)'
            : `GStreamer nvarguscamerasrc${resize ? ', resized by nvvidconv' : ''}`,
        ),
        kind,
      };
    }
  }
}
