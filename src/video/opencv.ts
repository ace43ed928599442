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
    // Files go through FFmpeg. Where this OpenCV has it, keep GStreamer from retrying a bad file and printing its
    // own error (read when the first VideoCapture opens, so setting it now is in time).
    if (/FFMPEG:\s+YES/.test(cached.getBuildInformation())) process.env.OPENCV_VIDEOIO_PRIORITY_GSTREAMER ??= '0';
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
