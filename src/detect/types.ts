/** One detection in frame pixels (corners), with its class and score (objectness x class probability). */
export interface Detection {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  score: number;
  classId: number;
  /** --interval: the track this box belongs to (an IoU tracker carries boxes between inferences). */
  trackId?: number;
}

/**
 * How a frame maps onto the network input: net_px = frame_px * scale + pad.
 * Stretch resize: scaleX = netW/frameW, scaleY = netH/frameH, pads 0.
 * Letterbox: one scale for both axes, the image centred, the rest padded.
 */
export interface Geometry {
  netW: number;
  netH: number;
  frameW: number;
  frameH: number;
  scaleX: number;
  scaleY: number;
  padX: number;
  padY: number;
  /** Size of the resized image inside the network input (equals netW x netH when stretching). */
  resizedW: number;
  resizedH: number;
}

/** The boxes of one frame, for the detections file. */
export interface FrameBoxes {
  index: number;
  warmup: boolean;
  detections: Detection[];
}
