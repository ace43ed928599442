/**
 * What inference needs to know about a YOLO model, stored inside the .onnx (metadata_props key
 * `jetprof.model`) so that a run needs only the .onnx file.
 */
export interface YoloHead {
  /** Graph output name holding this head: [batch, anchors*(5+classes), gridH, gridW]. */
  output: string;
  gridW: number;
  gridH: number;
  /** Anchors of this head (the cfg's anchors picked by mask), [w, h] in network-input pixels. */
  anchors: [number, number][];
  scaleXY: number;
  newCoords: boolean;
}

export interface YoloModelInfo {
  schema: 'jetprof.model/1';
  inputName: string;
  inputWidth: number;
  inputHeight: number;
  classes: number;
  labels: string[];
  heads: YoloHead[];
  /**
   * Preprocessing in the graph (`jetprof export --frame-input WxH`): the input is the frame's own bytes, uint8
   * [batch, height, width, 3] in OpenCV's BGR order, and the graph resizes them to inputWidth x inputHeight, puts
   * them in RGB order, scales them to 0..1 and lays them out NCHW, so TensorRT does it on the GPU and the CPU only
   * copies the frame. Absent: the input is float32 [batch, 3, inputHeight, inputWidth], made on the CPU.
   */
  frameInput?: { width: number; height: number };
  /**
   * Read from the graph (not stored in the metadata): the input's batch dimension, 'dynamic' when symbolic
   * (jetprof's exports) or the fixed number of images one run takes (1 in most other exports).
   */
  inputBatch?: number | 'dynamic';
  /** Where it came from, for the run JSON and reports. */
  source?: {
    cfg?: string;
    weights?: string;
    weightsSha256?: string;
    generatedWeights?: boolean;
    /** sha256 over the cfg, weights and labels bytes, the input size and the exporter version: the cache key. */
    exportKey?: string;
  };
}

export const METADATA_KEY = 'jetprof.model';

/** Name of the single output of engines built by tensorrt_demos (its yolo_layer plugin decodes the heads). */
export const PLUGIN_DETECTIONS_OUTPUT = 'detections';

/** Validates an unknown JSON value as YoloModelInfo; returns an error string or the value. */
export function checkModelInfo(v: unknown): YoloModelInfo | string {
  const o = v as Partial<YoloModelInfo> | null;
  if (!o || typeof o !== 'object') return 'metadata is not an object';
  if (o.schema !== 'jetprof.model/1') return `unknown metadata schema ${JSON.stringify(o.schema)}`;
  if (!Number.isInteger(o.inputWidth) || !Number.isInteger(o.inputHeight))
    return 'metadata lacks inputWidth/inputHeight';
  if (!Number.isInteger(o.classes) || (o.classes as number) < 1) return 'metadata lacks classes';
  if (!Array.isArray(o.heads) || o.heads.length === 0) return 'metadata lacks heads';
  if (!Array.isArray(o.labels)) return 'metadata lacks labels';
  if (o.frameInput && !(Number.isInteger(o.frameInput.width) && Number.isInteger(o.frameInput.height)))
    return 'metadata frameInput lacks width/height';
  return o as YoloModelInfo;
}
