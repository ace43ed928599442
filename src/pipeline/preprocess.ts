/**
 * A frame to the network's input, the same in both loops: resized (and letterboxed when the geometry pads), then one
 * float blob (NCHW, RGB, 0..1) per frame or per batch, its values copied into buffers reused frame after frame
 * (InputBuffers), so a frame makes no garbage V8 must collect beside the next inference.
 */
import type { Geometry } from '../detect/types.ts';
import { type Cv, type Mat } from '../video/opencv.ts';

/** Where a run is after a frame: frames done over all streams, and the run's figures so far (the progress line). */

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
 * Where a loop's preprocessed inputs go: a few Float32Arrays used in turn, instead of the new 2 MB Buffer a frame
 * that Mat.getData() allocates (416x416 float32). Every Mat and ArrayBuffer counts as V8 external memory, and their
 * churn (a frame's Mats and its input, about 8 MB a frame at 960x540) made V8 run a full collection every ~10 frames,
 * its concurrent marking beside the next inference (what reusing them bought: docs/MEASUREMENTS.md).
 * `count`: how many inputs are alive at once (the sequential loop: 1, the model has run on it before the next one is
 * made; the pipelined loop: its frames in flight, plus one). Each backend is done with its input when its run's
 * promise settles (ONNX Runtime's worker gets a copy; TensorRT copies it to the device).
 */
export class InputBuffers {
  private readonly slots: { input: Float32Array; mat: Mat }[] = [];
  private next = 0;

  constructor(private readonly count: number) {}

  /** The values of `flat` (a 1xN float Mat) in the next buffer, reused once it is N long. */
  fill(cv: Cv, flat: Mat, length: number): Float32Array {
    const i = this.next;
    this.next = (this.next + 1) % this.count;
    let slot = this.slots[i];
    if (slot?.input.length !== length) {
      const input = new Float32Array(length);
      // a Mat over the array's own memory (this constructor wraps, not copies): copyTo writes straight into it
      slot = this.slots[i] = { input, mat: new cv.Mat(1, length, cv.CV_32F, Buffer.from(input.buffer)) };
    }
    flat.copyTo(slot.mat);
    return slot.input;
  }
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
