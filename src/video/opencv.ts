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
    const mod = require('@u4/opencv4nodejs') as { cv: Cv };
    cached = mod.cv;
    return cached;
  } catch (e) {
    throw new JetprofError('TOOL_MISSING', `OpenCV for Node (@u4/opencv4nodejs) could not be loaded: ${messageOf(e).split('\n')[0]}`, {
      suggestion: 'run scripts/setup.sh (it installs libopencv-dev and builds the binding with OPENCV4NODEJS_DISABLE_AUTOBUILD=1)',
    });
  }
}
