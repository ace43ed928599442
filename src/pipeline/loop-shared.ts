/**
 * What the frame loops share, so that they are peers: opening each stream's source, geometry and output (closed on
 * failure), reading one frame inside its NVTX ranges (with the end-of-stream rule that keeps the instance counts equal
 * to the frames) and drawing. Their options are loop-options.ts, preprocessing preprocess.ts, a frame's tail
 * frame-tail.ts.
 */
import { drawOnFrame } from '../detect/draw.ts';
import { letterboxGeometry, stretchGeometry } from '../detect/geometry.ts';
import { Postprocessor } from '../detect/postprocess.ts';
import type { Detection } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { JetprofError } from '../util/errors.ts';
import { autoWriter, createImageFolderSink, createVideoSink, type VideoSink } from '../video/writer.ts';
import { memoryRoom } from '../util/resources.ts';
import { memoryShortage, type WriterKind } from './memory-estimate.ts';
import { openSource } from '../video/sources.ts';
import { type Cv, loadOpenCv, type Mat } from '../video/opencv.ts';
import { type RangeKind, rangeName, type RangeOps } from './nvtx.ts';
import type { LoopOptions, StreamSpec } from './loop-options.ts';
import type { LoopTally } from './loop-tally.ts';
import { nsToMs } from './stages.ts';

/**
 * Reads frame `index` (resized to `size` when given) inside a `read` NVTX range nested in a `frame` range, and
 * returns it with its `frame` range left open for the caller to close; at the end of the video it returns null with
 * no range open. Once the container's frame count is reached, the read that only finds the end of the stream gets
 * an `end-of-stream` range of its own, so that every `frame` and `read` range stands for a real frame (a frame
 * found there all the same, from a wrong count in the container, is processed as usual). Both loops read through
 * this one function, so their NVTX instance counts stay in step. `pooled`: decoded and resized on libuv's pool (the
 * binding's async calls), the calling thread free meanwhile; else on it.
 */
export async function readNextFrame(
  source: { read(): Mat | null; readAsync(): Promise<Mat | null> },
  pooled: boolean,
  frameCount: number,
  index: number,
  ranges: RangeOps,
  size: [number, number] | undefined,
  warmupFrames: number,
): Promise<{ frame: Mat; frameRange: unknown } | null> {
  const name = (n: RangeKind) => rangeName(n, index, warmupFrames);
  let frame: Mat | null;
  let frameRange: unknown;
  let readRange: unknown;
  if (frameCount > 0 && index >= frameCount) {
    const probe = ranges.open('end-of-stream');
    frame = await (pooled ? source.readAsync() : source.read());
    ranges.close(probe);
    if (!frame) return null;
    frameRange = ranges.open(name('frame'));
    readRange = ranges.open(name('read'));
  } else {
    frameRange = ranges.open(name('frame'));
    readRange = ranges.open(name('read'));
    frame = await (pooled ? source.readAsync() : source.read());
  }
  if (frame && size) {
    const decoded = frame;
    frame = pooled ? await decoded.resizeAsync(size[1], size[0]) : decoded.resize(size[1], size[0]);
    decoded.release();
  }
  ranges.close(readRange);
  if (!frame) {
    ranges.close(frameRange);
    return null;
  }
  return { frame, frameRange };
}

/** Refuses a run whose streams (all taken at the first one's frame size) would not fit in the memory available. */
function checkMemory(o: LoopOptions, cv: Cv, width: number, height: number, noVideo: boolean): void {
  const room = memoryRoom();
  if (room === undefined) return;
  const writer: WriterKind = noVideo
    ? 'none'
    : o.videoIo === 'ffmpeg' || o.videoIo === 'gstreamer'
      ? o.videoIo
      : autoWriter(cv, width, height).kind;
  const short = memoryShortage(o.streams.length, width, height, writer, room);
  if (short) throw short;
}

/** What a loop opens for each stream: OpenCV, the source, the frame geometry, the postprocessor and the output (closed on failure). */
export function openLoopIo(model: YoloModelInfo, o: LoopOptions, spec: StreamSpec) {
  if (o.letterbox && model.frameInput)
    throw new JetprofError(
      'BAD_OPTION',
      `${o.modelName}: resizes the frame in its graph (export --frame-input), without --letterbox's padding`,
      {
        suggestion: 'drop --letterbox, or use the model exported without --frame-input',
      },
    );
  const cv = loadOpenCv();
  const source = openSource(spec.source, cv, spec.arg, o.videoIo, o.frameSize);
  const [frameW, frameH] = o.frameSize ?? [source.info.width, source.info.height];
  // a GStreamer reader resized the frames already, on its own thread; else the loop resizes them after each read
  const [readW, readH] = source.info.resizedTo ?? [source.info.width, source.info.height];
  const resize: [number, number] | undefined = frameW !== readW || frameH !== readH ? [frameW, frameH] : undefined;
  const g = (o.letterbox ? letterboxGeometry : stretchGeometry)(frameW, frameH, model.inputWidth, model.inputHeight);
  const post = new Postprocessor(model, g, o.postprocess, o.modelName);
  let sink: VideoSink | undefined;
  try {
    // before the first writer opens: do all the streams fit in memory (the encoders hold most of it)?
    if (spec === o.streams[0]) checkMemory(o, cv, frameW, frameH, !spec.outputPath || source.kind === 'images');
    sink = !spec.outputPath
      ? undefined
      : source.kind === 'images'
        ? createImageFolderSink(spec.outputPath, source.names ?? [], cv)
        : createVideoSink(spec.outputPath, source.info.fps, frameW, frameH, cv, o.videoIo);
  } catch (e) {
    source.close();
    throw e;
  }
  return { spec, cv, source, frameW, frameH, resize, g, sink, post, draw: o.draw !== false };
}

export type LoopIo = ReturnType<typeof openLoopIo>;

/** Every stream's io, in order; a failure closes the ones already open. */
export function openStreams(model: YoloModelInfo, o: LoopOptions): LoopIo[] {
  const ios: LoopIo[] = [];
  try {
    for (const spec of o.streams) ios.push(openLoopIo(model, o, spec));
  } catch (e) {
    abortStreams(ios);
    throw e;
  }
  return ios;
}

/** After a failure: every output dropped (the previous files stay as they were), every source closed. */
export function abortStreams(ios: readonly LoopIo[]): void {
  for (const io of ios) {
    io.sink?.abort();
    io.source.close();
  }
}

export function noFrameDecoded(videoPath: string): JetprofError {
  return new JetprofError('BAD_VIDEO', `${videoPath}: no frame could be decoded (empty video or unsupported codec)`, {
    suggestion: 'check it with `ffprobe`; re-encode with `ffmpeg -i IN -c:v libx264 OUT.mp4`',
  });
}

/** Draws the boxes and the FPS overlay when a video is written; returns the time it took (ms). */
export function drawFrame(
  io: LoopIo,
  frame: Mat,
  detections: Detection[],
  tally: LoopTally,
  backend: string,
  model: YoloModelInfo,
  stream?: number,
): number {
  if (!io.sink || !io.draw) return 0; // --no-draw: frames are written as read (DeepStream's 'without OSD')
  const t0 = process.hrtime.bigint();
  const overlay = tally.overlayText(backend, !!model.source?.generatedWeights, stream);
  drawOnFrame(io.cv, frame, detections, model.labels, overlay);
  return nsToMs(process.hrtime.bigint() - t0);
}

/** A count the run plan sets (run-plan.ts): a whole number of 1 or more, else a RangeError (a loop would spin on NaN). */
export function planned(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} ${value}: the run plan gives 1 or more`);
  return value;
}
