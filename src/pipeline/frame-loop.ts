/**
 * The sequential frame loop: read -> preprocess -> inference -> postprocess (decode, NMS, draw) -> write, one
 * frame at a time, each stage timed with process.hrtime.bigint() and wrapped in an NVTX range inside a `frame`
 * range. Warm-up frames run the same path but are left out of every statistic.
 */
import type { DetectorSession } from '../backends/types.ts';
import { drawDetections, drawOverlay } from '../detect/draw.ts';
import { letterboxGeometry, stretchGeometry } from '../detect/geometry.ts';
import { type PostprocessOptions, Postprocessor } from '../detect/postprocess.ts';
import type { Detection, Geometry } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { JetprofError } from '../util/errors.ts';
import { createImageFolderSink, createVideoSink, type VideoSink, type VideoSource } from '../video/io.ts';
import { openSource } from '../video/sources.ts';
import { type Cv, loadOpenCv, type Mat } from '../video/opencv.ts';
import type { Nvtx } from './nvtx.ts';
import { LoopTally } from './loop-tally.ts';
import { nsToMs } from './stages.ts';

export interface FrameLoopOptions {
  videoPath: string;
  /** The model file, named in errors (NaN outputs). */
  modelName?: string;
  /** Where to write the annotated video; undefined writes nothing (--no-write). */
  outputPath?: string;
  /** Resize frames to this size first (the lab used 960x540); default: the video's size. */
  frameSize?: [number, number];
  letterbox: boolean;
  postprocess: PostprocessOptions;
  /** Keep every box of every frame (for --detections). */
  keepBoxes?: boolean;
  maxFrames?: number;
  warmupFrames: number;
  nvtx: Nvtx;
  /** Polled between frames; true stops reading (Ctrl-C): the run is marked interrupted. */
  shouldStop: () => boolean;
  /** Polled between frames; true ends the run normally (--duration on an endless source). */
  shouldEnd?: () => boolean;
  onFrame?: (p: { frame: number; totalFrames: number; measured: number; wallMs: number; inferenceMs: number }) => void;
}

export interface FrameLoopResult {
  tally: LoopTally;
  video: VideoSource['info'];
  frameSize: [number, number];
  output?: { path: string; codec: string };
  framesRead: number;
  interrupted: boolean;
  /** The source gave no more frames (the end of a file; for a live source, it stopped or the connection dropped). */
  endOfStream?: boolean;
}

/**
 * NVTX range names: warm-up frames get `warmup-` names of their own, so that a profiler's instance counts of
 * `frame`, `read`, ... `write` equal the frames the FPS figures measure.
 */
export function rangeName(name: string, index: number, warmupFrames: number): string {
  return index < warmupFrames ? `warmup-${name}` : name;
}

/**
 * cv.blobFromImage does resize, BGR->RGB, /255 and HWC->NCHW in one native call. Returns the blob's values and the
 * blob Mat itself (OpenCV DNN takes the Mat).
 */
export function preprocessFrame(cv: Cv, frame: Mat, g: Geometry): { input: Float32Array; blob: Mat } {
  let img = frame;
  if (g.padX !== 0 || g.padY !== 0 || g.resizedW !== g.netW || g.resizedH !== g.netH) {
    img = frame
      .resize(g.resizedH, g.resizedW)
      .copyMakeBorder(g.padY, g.netH - g.resizedH - g.padY, g.padX, g.netW - g.resizedW - g.padX, cv.BORDER_CONSTANT, new cv.Vec3(127, 127, 127));
  }
  const blob = cv.blobFromImage(img, 1 / 255, new cv.Size(g.netW, g.netH), new cv.Vec3(0, 0, 0), true, false);
  const bytes = blob.flattenFloat(1, 3 * g.netW * g.netH).getData();
  return { input: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), blob };
}

/**
 * Reads frame `index` (resized to `size` when given) inside a `read` NVTX range nested in a `frame` range, and
 * returns it with the `frame` range left open for the caller to pop; at the end of the video it returns null with
 * no range open. Once the container's frame count is reached, the read that only finds the end of the stream gets
 * an `end-of-stream` range of its own, so that every `frame` and `read` range stands for a real frame (a frame
 * found there all the same, from a wrong count in the container, is processed as usual).
 */
export function readFrame(source: VideoSource, index: number, nvtx: Nvtx, size: [number, number] | undefined, warmupFrames: number): Mat | null {
  const pastCount = source.info.frameCount > 0 && index >= source.info.frameCount;
  const name = (n: string) => rangeName(n, index, warmupFrames);
  let frame: Mat | null = null;
  if (pastCount) {
    nvtx.push('end-of-stream');
    frame = source.read();
    nvtx.pop();
    if (!frame) return null;
    nvtx.push(name('frame'));
    nvtx.push(name('read'));
  } else {
    nvtx.push(name('frame'));
    nvtx.push(name('read'));
    frame = source.read();
  }
  if (frame && size) frame = frame.resize(size[1], size[0]);
  nvtx.pop();
  if (!frame) nvtx.pop();
  return frame;
}

/** What both loops open first: OpenCV, the video, the frame geometry, and the output video (closed on failure). */
export function openLoopIo(model: YoloModelInfo, o: FrameLoopOptions) {
  const cv = loadOpenCv();
  const source = openSource(o.videoPath, cv);
  const [frameW, frameH] = o.frameSize ?? [source.info.width, source.info.height];
  const resize: [number, number] | undefined = frameW !== source.info.width || frameH !== source.info.height ? [frameW, frameH] : undefined;
  const g = (o.letterbox ? letterboxGeometry : stretchGeometry)(frameW, frameH, model.inputWidth, model.inputHeight);
  const post = new Postprocessor(model, g, o.postprocess, o.modelName);
  let sink: VideoSink | undefined;
  try {
    sink = !o.outputPath
      ? undefined
      : source.kind === 'images'
        ? createImageFolderSink(o.outputPath, source.names ?? [], cv)
        : createVideoSink(o.outputPath, source.info.fps, frameW, frameH, cv);
  } catch (e) {
    source.close();
    throw e;
  }
  return { cv, source, frameW, frameH, resize, g, sink, post };
}

export type LoopIo = ReturnType<typeof openLoopIo>;

export function noFrameDecoded(videoPath: string): JetprofError {
  return new JetprofError('BAD_VIDEO', `${videoPath}: no frame could be decoded (empty video or unsupported codec)`, {
    suggestion: 'check it with `ffprobe`; re-encode with `ffmpeg -i IN -c:v libx264 OUT.mp4`',
  });
}

/**
 * After a loop that ran without error: closes the video, finishes the output. A run that measured no frame (all
 * warm-up, or stopped before the first measured one) fails or measured nothing: its video is dropped, so the file
 * under the final name stays as it was.
 */
export async function finishLoop(io: LoopIo, tally: LoopTally, frames: number, interrupted: boolean): Promise<FrameLoopResult> {
  const { source, sink } = io;
  source.close();
  const keep = frames > 0 && tally.frames > 0;
  if (sink && keep) await sink.finish();
  else sink?.abort();
  return {
    tally,
    video: source.info,
    frameSize: [io.frameW, io.frameH],
    output: sink && keep ? { path: sink.path, codec: sink.codec } : undefined,
    framesRead: frames,
    interrupted,
  };
}

/** Draws the boxes and the FPS overlay when a video is written; returns the time it took (ms). */
export function drawFrame(io: LoopIo, frame: Mat, detections: Detection[], tally: LoopTally, backend: string, model: YoloModelInfo): number {
  if (!io.sink) return 0;
  const t0 = process.hrtime.bigint();
  drawDetections(io.cv, frame, detections, model.labels);
  drawOverlay(io.cv, frame, tally.overlayText(backend, !!model.source?.generatedWeights));
  return nsToMs(process.hrtime.bigint() - t0);
}

export async function runFrameLoop(session: DetectorSession, model: YoloModelInfo, o: FrameLoopOptions): Promise<FrameLoopResult> {
  const io = openLoopIo(model, o);
  const { cv, source, resize, g, sink } = io;
  const tally = new LoopTally(o.warmupFrames, model.labels, o.keepBoxes);
  let framesRead = 0;
  let interrupted = false;
  let endOfStream = false;
  const totalFrames = o.maxFrames ? Math.min(o.maxFrames, source.info.frameCount || o.maxFrames) : source.info.frameCount;
  const { nvtx } = o;
  try {
    for (;;) {
      if (o.maxFrames !== undefined && framesRead >= o.maxFrames) break;
      if (o.shouldEnd?.()) break;
      if (o.shouldStop()) {
        interrupted = true;
        break;
      }
      const t0 = process.hrtime.bigint();
      tally.begin(t0);
      const frame = readFrame(source, framesRead, nvtx, resize, o.warmupFrames);
      if (!frame) {
        endOfStream = true;
        break;
      }
      const name = (n: string) => rangeName(n, framesRead, o.warmupFrames);
      const t1 = process.hrtime.bigint();
      nvtx.push(name('preprocess'));
      const { input, blob } = preprocessFrame(cv, frame, g);
      nvtx.pop();
      const t2 = process.hrtime.bigint();
      nvtx.push(name('inference'));
      const result = await session.run(input, blob);
      nvtx.pop();
      const t3 = process.hrtime.bigint();
      nvtx.push(name('postprocess'));
      const frameResult = io.post.run(result.outputs);
      const drawMs = drawFrame(io, frame, frameResult.detections, tally, session.backend, model);
      nvtx.pop();
      const t4 = process.hrtime.bigint();
      nvtx.push(name('write'));
      sink?.write(frame);
      nvtx.pop();
      const t5 = process.hrtime.bigint();
      nvtx.pop();
      tally.record(
        { index: framesRead, t0, tInference: t2, tPostprocess: t3, tEnd: t5, readMs: nsToMs(t1 - t0), preprocessMs: nsToMs(t2 - t1), inferenceMs: nsToMs(t3 - t2), postprocessMs: nsToMs(t4 - t3), drawMs, writeMs: nsToMs(t5 - t4) },
        result,
        frameResult,
      );
      framesRead++;
      o.onFrame?.(tally.progress(framesRead, totalFrames));
    }
    if (framesRead === 0 && !interrupted) throw noFrameDecoded(o.videoPath);
  } catch (e) {
    sink?.abort();
    source.close();
    throw e;
  }
  return { ...(await finishLoop(io, tally, framesRead, interrupted)), endOfStream };
}
