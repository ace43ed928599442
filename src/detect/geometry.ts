import type { Geometry } from './types.ts';

/** Plain resize to the network size (darknet's default, and the lab's). */
export function stretchGeometry(frameW: number, frameH: number, netW: number, netH: number): Geometry {
  return {
    netW,
    netH,
    frameW,
    frameH,
    scaleX: netW / frameW,
    scaleY: netH / frameH,
    padX: 0,
    padY: 0,
    resizedW: netW,
    resizedH: netH,
  };
}

/** Aspect-preserving resize, centred, padded (tensorrt_demos' letter_box, darknet's letter_box_image). */
export function letterboxGeometry(frameW: number, frameH: number, netW: number, netH: number): Geometry {
  const scale = Math.min(netW / frameW, netH / frameH);
  const resizedW = Math.round(frameW * scale);
  const resizedH = Math.round(frameH * scale);
  const padX = Math.floor((netW - resizedW) / 2);
  const padY = Math.floor((netH - resizedH) / 2);
  return {
    netW,
    netH,
    frameW,
    frameH,
    scaleX: resizedW / frameW,
    scaleY: resizedH / frameH,
    padX,
    padY,
    resizedW,
    resizedH,
  };
}

/** Maps a point from network-input pixels back to frame pixels. */
export function netToFrame(g: Geometry, x: number, y: number): [number, number] {
  return [(x - g.padX) / g.scaleX, (y - g.padY) / g.scaleY];
}
