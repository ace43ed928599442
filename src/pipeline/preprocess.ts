/**
 * A frame to the network's input, the same in both loops: resized (and letterboxed when the geometry pads), then one
 * float blob (NCHW, RGB, 0..1) per frame or per batch, its values copied into buffers reused frame after frame
 * (InputBuffers), so a frame makes no garbage V8 must collect beside the next inference.
 */
import type { Geometry } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { type Cv, type Mat } from '../video/opencv.ts';

/**
 * The OpenCV calls preprocessing makes: on the calling thread, or on libuv's pool through the binding's asynchronous
 * calls (the pipelined loop: its main thread starts each call and takes its result, the pixels are worked on another
 * core while it runs the other stages; a Nano's main thread is what limits a run).
 */
export interface CvCalls {
  cv: Cv;
  resize(img: Mat, rows: number, cols: number): Mat | Promise<Mat>;
  border(img: Mat, top: number, bottom: number, left: number, right: number): Mat | Promise<Mat>;
  blob(images: Mat[], netW: number, netH: number): Mat | Promise<Mat>;
  copy(from: Mat, to: Mat): unknown;
}

/** The preprocessing calls on this thread (`pooled`: on libuv's pool). */
export function cvCalls(cv: Cv, pooled = false): CvCalls {
  const grey = new cv.Vec3(127, 127, 127);
  // resize, BGR->RGB, /255 and HWC->NCHW in one native call
  const blobArgs = (w: number, h: number) => [1 / 255, new cv.Size(w, h), new cv.Vec3(0, 0, 0), true, false] as const;
  return pooled
    ? {
        cv,
        resize: (img, rows, cols) => img.resizeAsync(rows, cols),
        border: (img, t, b, l, r) => img.copyMakeBorderAsync(t, b, l, r, cv.BORDER_CONSTANT, grey),
        blob: (images, w, h) => cv.blobFromImagesAsync(images, ...blobArgs(w, h)),
        copy: (from, to) => from.copyToAsync(to),
      }
    : {
        cv,
        resize: (img, rows, cols) => img.resize(rows, cols),
        border: (img, t, b, l, r) => img.copyMakeBorder(t, b, l, r, cv.BORDER_CONSTANT, grey),
        blob: (images, w, h) => cv.blobFromImages(images, ...blobArgs(w, h)),
        copy: (from, to) => from.copyTo(to),
      };
}

/**
 * The frame resized (and letterboxed when the geometry pads) to the network's input size, still BGR bytes; the frame
 * itself when it already has that size. The resized image in between is released at once (see InputBuffers).
 */
export async function letterboxFrame(calls: CvCalls, frame: Mat, g: Geometry): Promise<Mat> {
  if (g.padX === 0 && g.padY === 0 && g.resizedW === g.netW && g.resizedH === g.netH) return frame;
  const resized = await calls.resize(frame, g.resizedH, g.resizedW);
  const boxed = await calls.border(resized, g.padY, g.netH - g.resizedH - g.padY, g.padX, g.netW - g.resizedW - g.padX);
  resized.release();
  return boxed;
}

/**
 * Rule (native memory). Where a loop's preprocessed inputs go: a few Float32Arrays used in turn, instead of the new 2 MB Buffer a frame
 * that Mat.getData() allocates (416x416 float32). Every Mat and ArrayBuffer counts as V8 external memory, and their
 * churn (a frame's Mats and its input, about 8 MB a frame at 960x540) made V8 run a full collection every ~10 frames,
 * its concurrent marking beside the next inference (what reusing them bought: docs/MEASUREMENTS.md).
 * `count`: how many inputs are alive at once (the sequential loop: 1, the model has run on it before the next one is
 * made; the pipelined loop: its frames in flight, plus one). Each backend is done with its input when its run's
 * promise settles (ONNX Runtime's worker gets a copy; TensorRT copies it to the device). A count too small overwrites
 * an input before its run (test/batch.test.ts: the buffers used in turn, and the Mats a run leaves).
 */
export class InputBuffers {
  private readonly slots: { input: Float32Array | Uint8Array; mats: Mat[] }[] = [];
  private next = 0;

  constructor(private readonly count: number) {}

  /** The values of `flat` (a 1xN float Mat) in the next buffer, reused once it is N long. */
  async fill(calls: CvCalls, flat: Mat, length: number): Promise<Float32Array> {
    const { cv } = calls;
    const slot = this.slot(Float32Array, length, (input) => [
      // a Mat over the array's own memory (this constructor wraps, not copies): copyTo writes straight into it
      new cv.Mat(1, length, cv.CV_32F, Buffer.from(input.buffer)),
    ]);
    await calls.copy(flat, slot.mats[0]);
    return slot.input as Float32Array;
  }

  /** The bytes of `images` (h x w BGR each) one after the other in the next buffer, each through a Mat over its part. */
  async fillBytes(calls: CvCalls, images: Mat[], w: number, h: number): Promise<Uint8Array> {
    const { cv } = calls;
    const size = h * w * 3;
    const slot = this.slot(Uint8Array, images.length * size, (input) =>
      images.map((_, k) => new cv.Mat(h, w, cv.CV_8UC3, Buffer.from(input.buffer, k * size, size))),
    );
    await Promise.all(images.map((img, k) => calls.copy(img, slot.mats[k])));
    return slot.input as Uint8Array;
  }

  private slot(
    kind: Float32ArrayConstructor | Uint8ArrayConstructor,
    length: number,
    wrap: (a: ArrayLike<number> & { buffer: ArrayBuffer }) => Mat[],
  ) {
    const i = this.next;
    this.next = (this.next + 1) % this.count;
    const slot = this.slots[i];
    if (slot?.input.length === length && slot.input instanceof kind) return slot;
    const input = new kind(length);
    return (this.slots[i] = { input, mats: wrap(input) });
  }
}

/**
 * What the model runs on: NCHW float32 values made on the CPU with their blob Mat (OpenCV DNN takes the Mat), or, for
 * a model that preprocesses in its graph (YoloModelInfo.frameInput), the frames' own BGR bytes.
 */
export interface ModelInput {
  input: Float32Array | Uint8Array;
  blob?: Mat;
}

/**
 * The frames of one run of the model (one, or one from each stream of a batch) as its input, the same in both loops:
 * each frame resized (and letterboxed) for its stream's geometry into one blob, or, for a model that preprocesses in
 * its graph, copied as they are (resized on the CPU only when a frame is not the size the model takes).
 */
export async function modelInput(
  calls: CvCalls,
  frames: { frame: Mat; g: Geometry }[],
  model: YoloModelInfo,
  into?: InputBuffers,
): Promise<ModelInput> {
  const f = model.frameInput;
  const images = await Promise.all(
    frames.map((x) =>
      f
        ? x.frame.cols === f.width && x.frame.rows === f.height
          ? x.frame
          : calls.resize(x.frame, f.height, f.width)
        : letterboxFrame(calls, x.frame, x.g),
    ),
  );
  try {
    if (f) return { input: into ? await into.fillBytes(calls, images, f.width, f.height) : frameBytesOf(images) };
    return await batchBlob(calls, images, model.inputWidth, model.inputHeight, into);
  } finally {
    images.forEach((img, k) => img !== frames[k].frame && img.release());
  }
}

/** The images' bytes one after the other in a new array (one-off callers). */
function frameBytesOf(images: Mat[]): Uint8Array {
  const parts = images.map((m) => m.getData());
  return new Uint8Array(Buffer.concat(parts));
}

/** The blob's values: into the next of `into`, or a new array (one-off callers: tests, the bench's bare loop). */
async function blobValues(calls: CvCalls, blob: Mat, length: number, into?: InputBuffers): Promise<Float32Array> {
  // a 1xN header over the blob's own values (no copy)
  const flat = blob.flattenFloat(1, length);
  try {
    if (into) return await into.fill(calls, flat, length);
    const bytes = flat.getData();
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  } finally {
    flat.release();
  }
}

/** One frame as the network's input (one-off callers): its blob's values, and the blob Mat (OpenCV DNN takes it). */
export async function preprocessFrame(
  calls: CvCalls,
  frame: Mat,
  g: Geometry,
  into?: InputBuffers,
): Promise<{ input: Float32Array; blob: Mat }> {
  const img = await letterboxFrame(calls, frame, g);
  try {
    return await batchBlob(calls, [img], g.netW, g.netH, into);
  } finally {
    if (img !== frame) img.release();
  }
}

/**
 * Letterboxed images (one frame, or one from each stream of a batch) as one NCHW blob, through cv.blobFromImages:
 * the images one after the other, each exactly what it alone makes.
 */
export async function batchBlob(
  calls: CvCalls,
  images: Mat[],
  netW: number,
  netH: number,
  into?: InputBuffers,
): Promise<{ input: Float32Array; blob: Mat }> {
  const blob = await calls.blob(images, netW, netH);
  return { input: await blobValues(calls, blob, images.length * 3 * netW * netH, into), blob };
}
