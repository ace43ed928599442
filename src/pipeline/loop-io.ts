/**
 * What both frame loops share, so that they are peers: the options and result, opening the source, the geometry and
 * the output (closed on failure), reading one frame inside its NVTX ranges (with the end-of-stream rule that keeps
 * the instance counts equal to the frames), preprocessing, drawing, and finishing the output.
 */
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
  /** --no-draw: write the frames without boxes or overlay (default: draw). */
  draw?: boolean;
  onFrame?: (p: { frame: number; totalFrames: number; measured: number; wallMs: number; inferenceMs: number }) => void;
}

export interface FrameLoopResult {
  tally: LoopTally;
  video: VideoSource['info'];
  frameSize: [number, number];
  output?: { path: string; codec: string; width?: number; height?: number };
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

/** The frame resized (and letterboxed when the geometry pads) to the network's input size, still BGR bytes. */
export function letterboxFrame(cv: Cv, frame: Mat, g: Geometry): Mat {
  if (g.padX === 0 && g.padY === 0 && g.resizedW === g.netW && g.resizedH === g.netH) return frame;
  return frame
    .resize(g.resizedH, g.resizedW)
    .copyMakeBorder(
      g.padY,
      g.netH - g.resizedH - g.padY,
      g.padX,
      g.netW - g.resizedW - g.padX,
      cv.BORDER_CONSTANT,
      new cv.Vec3(127, 127, 127),
    );
}

/**
 * cv.blobFromImage does resize, BGR->RGB, /255 and HWC->NCHW in one native call. Returns the blob's values and the
 * blob Mat itself (OpenCV DNN takes the Mat).
 */
export function preprocessFrame(cv: Cv, frame: Mat, g: Geometry): { input: Float32Array; blob: Mat } {
  const img = letterboxFrame(cv, frame, g);
  const blob = cv.blobFromImage(img, 1 / 255, new cv.Size(g.netW, g.netH), new cv.Vec3(0, 0, 0), true, false);
  const bytes = blob.flattenFloat(1, 3 * g.netW * g.netH).getData();
  return { input: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), blob };
}

/**
 * Several letterboxed images (one frame from each stream of a batch) as one NCHW blob, through cv.blobFromImages:
 * the images one after the other, each exactly what preprocessFrame makes of it.
 */
export function batchBlob(cv: Cv, images: Mat[], netW: number, netH: number): { input: Float32Array; blob: Mat } {
  const blob = cv.blobFromImages(images, 1 / 255, new cv.Size(netW, netH), new cv.Vec3(0, 0, 0), true, false);
  const bytes = blob.flattenFloat(1, images.length * 3 * netW * netH).getData();
  return { input: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), blob };
}

/** How a loop opens and closes NVTX ranges: nested push/pop (sequential loop) or start/end handles (overlapping frames). */
export interface RangeOps {
  open(name: string): unknown;
  close(range: unknown): void;
}

/** push/pop: a range closes the innermost open one (the sequential loop nests them). */
export const pushPopRanges = (nvtx: Nvtx): RangeOps => ({ open: (n) => nvtx.push(n), close: () => nvtx.pop() });

/** start/end: ranges of different frames overlap (the pipelined loop). */
export const startEndRanges = (nvtx: Nvtx): RangeOps => ({ open: (n) => nvtx.start(n), close: (r) => nvtx.end(r) });

/**
 * Reads frame `index` (resized to `size` when given) inside a `read` NVTX range nested in a `frame` range, and
 * returns it with its `frame` range left open for the caller to close; at the end of the video it returns null with
 * no range open. Once the container's frame count is reached, the read that only finds the end of the stream gets
 * an `end-of-stream` range of its own, so that every `frame` and `read` range stands for a real frame (a frame
 * found there all the same, from a wrong count in the container, is processed as usual). Both loops read through
 * this one function, so their NVTX instance counts stay in step.
 */
export async function readNextFrame(
  read: () => Mat | null | Promise<Mat | null>,
  frameCount: number,
  index: number,
  ranges: RangeOps,
  size: [number, number] | undefined,
  warmupFrames: number,
): Promise<{ frame: Mat; frameRange: unknown } | null> {
  const name = (n: string) => rangeName(n, index, warmupFrames);
  let frame: Mat | null;
  let frameRange: unknown;
  let readRange: unknown;
  if (frameCount > 0 && index >= frameCount) {
    const probe = ranges.open('end-of-stream');
    frame = await read();
    ranges.close(probe);
    if (!frame) return null;
    frameRange = ranges.open(name('frame'));
    readRange = ranges.open(name('read'));
  } else {
    frameRange = ranges.open(name('frame'));
    readRange = ranges.open(name('read'));
    frame = await read();
  }
  if (frame && size) frame = frame.resize(size[1], size[0]);
  ranges.close(readRange);
  if (!frame) {
    ranges.close(frameRange);
    return null;
  }
  return { frame, frameRange };
}

/** What both loops open first: OpenCV, the video, the frame geometry, and the output video (closed on failure). */
export function openLoopIo(model: YoloModelInfo, o: FrameLoopOptions) {
  const cv = loadOpenCv();
  const source = openSource(o.videoPath, cv);
  const [frameW, frameH] = o.frameSize ?? [source.info.width, source.info.height];
  const resize: [number, number] | undefined =
    frameW !== source.info.width || frameH !== source.info.height ? [frameW, frameH] : undefined;
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
  return { cv, source, frameW, frameH, resize, g, sink, post, draw: o.draw !== false };
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
export async function finishLoop(
  io: LoopIo,
  tally: LoopTally,
  frames: number,
  interrupted: boolean,
): Promise<FrameLoopResult> {
  const { source, sink } = io;
  source.close();
  const keep = frames > 0 && tally.frames > 0;
  if (sink && keep) await sink.finish();
  else sink?.abort();
  return {
    tally,
    video: source.info,
    frameSize: [io.frameW, io.frameH],
    output:
      sink && keep
        ? {
            path: sink.path,
            codec: sink.codec,
            ...(sink.written ? { width: sink.written.width, height: sink.written.height } : {}),
          }
        : undefined,
    framesRead: frames,
    interrupted,
  };
}

/** Draws the boxes and the FPS overlay when a video is written; returns the time it took (ms). */
export function drawFrame(
  io: LoopIo,
  frame: Mat,
  detections: Detection[],
  tally: LoopTally,
  backend: string,
  model: YoloModelInfo,
): number {
  if (!io.sink || !io.draw) return 0; // --no-draw: frames are written as read (DeepStream's 'without OSD')
  const t0 = process.hrtime.bigint();
  drawDetections(io.cv, frame, detections, model.labels);
  drawOverlay(io.cv, frame, tally.overlayText(backend, !!model.source?.generatedWeights));
  return nsToMs(process.hrtime.bigint() - t0);
}
