/**
 * What a run must have measured before its files are written (one measured frame, every stream, an interval that ran
 * the model), and what the user should know about each stream, said the same way whichever loop ran.
 */
import { JetprofError } from '../util/errors.ts';
import type { LoopResult } from './loop-result.ts';
import type { InferOptions } from './infer-settings.ts';
import { evenFrameSize } from '../video/frame-size.ts';

/** A run that measured no frame is an error, whichever way it ended; its output files were left as they were. */
export function requireMeasured(o: InferOptions, loop: LoopResult): void {
  const what = o.streams.map((s) => s.source).join(', ');
  if (loop.tally.frames > 0) return;
  if (loop.interrupted)
    throw new JetprofError(
      'INTERRUPTED',
      `${what}: stopped before the first measured frame (${loop.framesRead} read, --warmup ${o.warmup}): nothing was measured, and the previous output files are kept as they were`,
      { exitCode: 130 },
    );
  throw new JetprofError(
    'BAD_VIDEO',
    `${what}: no frame was measured: it gave ${loop.framesRead} frame(s), all within --warmup ${o.warmup}`,
    { suggestion: `use a longer video, or a smaller --warmup (e.g. --warmup ${Math.max(0, loop.framesRead - 1)})` },
  );
}

/**
 * A run that ended normally reports every stream and the model's figures: a stream that yielded no measured frame
 * beside others (an undecodable file), or --interval that ran the model on no measured frame, is an error with the
 * counts, never a row of NaN or of a model that did not run. Its outputs were left as they were.
 */
export function requireComplete(o: InferOptions, loop: LoopResult): void {
  if (loop.interrupted) return;
  const empty = loop.streams.filter((s) => s.record.frames === 0);
  if (empty.length > 0) {
    const s = empty[0];
    throw new JetprofError(
      'BAD_VIDEO',
      `${s.record.source}: stream ${s.record.index} gave no measured frame (${s.framesRead} read, --warmup ${o.warmup}) while the other streams ran: undecodable, empty or too short; nothing was written`,
      { suggestion: `check it with \`ffprobe ${s.record.source}\`, or run without it` },
    );
  }
  const inferred = loop.tally.measured.inferred;
  if (o.interval && inferred && !inferred.some((x) => x === 1)) {
    const n = inferred.length;
    throw new JetprofError(
      'BAD_OPTION',
      `--interval ${o.interval}: the model ran on none of the ${n} measured frame(s) (it runs on one frame in every ${o.interval + 1} of a stream, and its ${loop.inferredFrames} run(s) fell within --warmup ${o.warmup}): there is no inference figure; nothing was written`,
      { suggestion: `use a smaller --interval (at most ${Math.max(0, n - 1)} here) or a longer video` },
    );
  }
}

/** What the user should know about each stream, said the same way whichever loop ran: one warning each. */
export function warnAboutStreams(o: InferOptions, loop: LoopResult): void {
  const several = loop.streams.length > 1;
  for (const s of loop.streams) {
    const src = s.record.source;
    const who = several ? `stream ${s.record.index} (${src})` : src;
    if (s.video.rotation)
      o.onWarning(
        `${who}: carries rotation metadata (${s.video.rotation}°, a phone video?): its frames were read as stored, not turned (OpenCV 4.6 turns some the wrong way); for upright frames, re-encode with the rotation applied: ffmpeg -i ${src} -c:v libx264 upright.mp4`,
      );
    if (s.video.variableFps !== undefined)
      o.onWarning(
        `${who}: variable frame rate (up to ${s.video.variableFps} FPS, ${+s.video.fps.toFixed(2)} on average): --realtime paces its frames evenly at the average and the video is written at it, so the frames' own times are not kept; for a constant rate: ffmpeg -i ${src} -vf fps=${Math.round(s.video.fps)} -c:v libx264 constant.mp4`,
      );
    const out = s.record.output;
    const [w, h] = s.frameSize;
    if (out?.width && out.height && (out.width !== w || out.height !== h))
      o.onWarning(
        `${out.path}: written at ${out.width}x${out.height}, not the ${w}x${h} of the frames (${out.codec} encodes even sizes only; the run JSON records both); --frame-size ${evenFrameSize(w, h)} writes the frames as measured`,
      );
    const declared = s.video.frameCount;
    const cut =
      !loop.interrupted &&
      !s.live &&
      s.record.endedEarly === undefined &&
      declared > 0 &&
      s.framesRead < declared &&
      (o.maxFrames === undefined || s.framesRead < o.maxFrames) &&
      o.duration === undefined;
    if (cut)
      o.onWarning(
        `${who}: the stream ended after ${s.framesRead} of the ${declared} frames its container declares (a cut or damaged file?); the figures cover the ${s.framesRead} decoded`,
      );
    const early = s.record.endedEarly;
    if (early)
      o.onWarning(
        `${who}: ${early.reason} after ${(s.lastEndMs / 1000).toFixed(1)} s and ${early.framesRead} frames${o.duration !== undefined ? ` (of --duration ${o.duration} s)` : ''}; the figures cover those frames`,
      );
  }
}
