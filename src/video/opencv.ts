/**
 * The only module that loads OpenCV (@u4/opencv4nodejs). Loaded on first use, never at import, so that
 * `jetprof parse` and `jetprof report` start without it. Its install-time logger prints to stdout on load;
 * it is silenced first so stdout stays clean for data.
 */
import { createRequire } from 'node:module';
import type * as CvModule from '@u4/opencv4nodejs';
import { JetprofError, messageOf } from '../util/errors.ts';

export type Cv = typeof CvModule.cv;
export type Mat = CvModule.Mat;

let cached: Cv | undefined;

let backends: { ffmpeg: boolean; gstreamer: boolean } | undefined;

/** Which of OpenCV's video back-ends this build has (cv.getBuildInformation(), read once: every open asks). */
export function videoBackends(cv: Cv): { ffmpeg: boolean; gstreamer: boolean } {
  if (backends) return backends;
  const info = cv.getBuildInformation();
  backends = { ffmpeg: /FFMPEG:\s+YES/.test(info), gstreamer: /GStreamer:\s+YES/.test(info) };
  return backends;
}

/**
 * The back-end files are read with: FFmpeg where this OpenCV has it, so that GStreamer never retries a bad file and
 * prints its own error (GStreamer stays available for pipelines: the annotated video's writer, `gst:` sources).
 */
export function fileCaptureApi(cv: Cv): number {
  return videoBackends(cv).ffmpeg ? cv.CAP_FFMPEG : cv.CAP_ANY;
}

export function loadOpenCv(): Cv {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  try {
    const cvPath = require.resolve('@u4/opencv4nodejs');
    const fromCv = createRequire(cvPath);
    try {
      (fromCv('@u4/opencv-build') as { Log: { silence: boolean } }).Log.silence = true;
    } catch {
      /* an older layout without the logger: nothing to silence */
    }
    // FFmpeg's own log lines ("moov atom not found") would break jetprof's one-line errors: quiet them.
    process.env.OPENCV_FFMPEG_LOGLEVEL ??= '-8';
    process.env.OPENCV_LOG_LEVEL ??= 'ERROR';
    const mod = require('@u4/opencv4nodejs') as { cv: Cv };
    cached = mod.cv;
    return cached;
  } catch (e) {
    throw new JetprofError(
      'TOOL_MISSING',
      `OpenCV for Node (@u4/opencv4nodejs) could not be loaded: ${messageOf(e).split('\n')[0]}`,
      {
        suggestion:
          'run scripts/setup.sh (it installs libopencv-dev and builds the binding with OPENCV4NODEJS_DISABLE_AUTOBUILD=1)',
      },
    );
  }
}

/** This OpenCV has no GStreamer back-end, so --video-io gstreamer cannot `what` (decode, write). */
export function openCvWithoutGstreamer(what: 'decode' | 'write'): JetprofError {
  return new JetprofError(
    'TOOL_MISSING',
    `this OpenCV was built without GStreamer (cv.getBuildInformation()), so --video-io gstreamer cannot ${what}`,
    { suggestion: "use --video-io ffmpeg, or Debian's/JetPack's OpenCV (built with GStreamer)" },
  );
}
