/**
 * A frame to the network's input, the same in both loops: resized (and letterboxed when the geometry pads), then one
 * float blob (NCHW, RGB, 0..1) per frame or per batch, its values copied into buffers reused frame after frame
 * (InputBuffers), so a frame makes no garbage V8 must collect beside the next inference.
 */
import type { Geometry } from '../detect/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { type Cv, type Mat } from '../video/opencv.ts';

/**
 * The frame resized (and letterboxed when the geometry pads) to the network's input size, still BGR bytes; the frame
 * itself when it already has that size. The resized image in between is released at once (see InputBuffers).
 */
export function letterboxFrame(cv: Cv, frame: Mat, g: Geometry): Mat {
  if (g.padX === 0 && g.padY === 0 && g.resizedW === g.netW && g.resizedH === g.netH) return frame;
  const resized = frame.resize(g.resizedH, g.resizedW);
  const boxed = resized.copyMakeBorder(
    g.padY,
    g.netH - g.resizedH - g.padY,
    g.padX,
    g.netW - g.resizedW - g.padX,
    cv.BORDER_CONSTANT,
    new cv.Vec3(127, 127, 127),
  );
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
  fill(cv: Cv, flat: Mat, length: number): Float32Array {
    const slot = this.slot(Float32Array, length, (input) => [
      // a Mat over the array's own memory (this constructor wraps, not copies): copyTo writes straight into it
      new cv.Mat(1, length, cv.CV_32F, Buffer.from(input.buffer)),
    ]);
    flat.copyTo(slot.mats[0]);
    return slot.input as Float32Array;
  }

  /** The bytes of `images` (h x w BGR each) one after the other in the next buffer, each through a Mat over its part. */
  fillBytes(cv: Cv, images: Mat[], w: number, h: number): Uint8Array {
    const size = h * w * 3;
    const slot = this.slot(Uint8Array, images.length * size, (input) =>
      images.map((_, k) => new cv.Mat(h, w, cv.CV_8UC3, Buffer.from(input.buffer, k * size, size))),
    );
    images.forEach((img, k) => img.copyTo(slot.mats[k]));
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
export function modelInput(
  cv: Cv,
  frames: { frame: Mat; g: Geometry }[],
  model: YoloModelInfo,
  into?: InputBuffers,
): ModelInput {
  const f = model.frameInput;
  const images = frames.map((x) =>
    f
      ? x.frame.cols === f.width && x.frame.rows === f.height
        ? x.frame
        : x.frame.resize(f.height, f.width)
      : letterboxFrame(cv, x.frame, x.g),
  );
  try {
    if (f) return { input: into ? into.fillBytes(cv, images, f.width, f.height) : frameBytesOf(images) };
    return batchBlob(cv, images, model.inputWidth, model.inputHeight, into);
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
function blobValues(cv: Cv, blob: Mat, length: number, into: InputBuffers | undefined): Float32Array {
  const flat = blob.flattenFloat(1, length);
  try {
    if (into) return into.fill(cv, flat, length);
    const bytes = flat.getData();
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  } finally {
    flat.release();
  }
}

/**
 * cv.blobFromImage does resize, BGR->RGB, /255 and HWC->NCHW in one native call. Returns the blob's values and the
 * blob Mat itself (OpenCV DNN takes the Mat).
 */
export function preprocessFrame(
  cv: Cv,
  frame: Mat,
  g: Geometry,
  into?: InputBuffers,
): { input: Float32Array; blob: Mat } {
  const img = letterboxFrame(cv, frame, g);
  const blob = cv.blobFromImage(img, 1 / 255, new cv.Size(g.netW, g.netH), new cv.Vec3(0, 0, 0), true, false);
  if (img !== frame) img.release();
  return { input: blobValues(cv, blob, 3 * g.netW * g.netH, into), blob };
}

/**
 * Several letterboxed images (one frame from each stream of a batch) as one NCHW blob, through cv.blobFromImages:
 * the images one after the other, each exactly what preprocessFrame makes of it.
 */
export function batchBlob(
  cv: Cv,
  images: Mat[],
  netW: number,
  netH: number,
  into?: InputBuffers,
): { input: Float32Array; blob: Mat } {
  const blob = cv.blobFromImages(images, 1 / 255, new cv.Size(netW, netH), new cv.Vec3(0, 0, 0), true, false);
  return { input: blobValues(cv, blob, images.length * 3 * netW * netH, into), blob };
}
