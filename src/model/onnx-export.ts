/**
 * Darknet cfg + weights -> ONNX (opset 13), in TypeScript. The graph computes what darknet computes:
 * - convolutional: Conv with batch-norm folded into weights and bias (exact algebra in float64, stored as float32),
 *   explicit pads (darknet's size/2), group; then the activation (LeakyRelu 0.1, Sigmoid, Mish as
 *   Softplus-Tanh-Mul, Swish as Sigmoid-Mul, Relu).
 * - route: Concat of the inputs; with groups, a channel Slice of each input first (yolov4-tiny's CSP split).
 * - maxpool: MaxPool with pads [floor(p/2), p - floor(p/2)] so the output size is darknet's (w + p - size)/stride + 1.
 * - upsample: Resize nearest (asymmetric, floor); shortcut: Add.
 * - yolo: no node; the raw conv tensor feeding each [yolo] is a graph output named `yolo_<layer index>`.
 * The batch dimension of the input and of every output is symbolic (`batch`): the graph has no Reshape, so ONNX
 * Runtime and OpenCV DNN run one image or a batch of several (one frame from each stream) with the same file.
 * Decoding parameters (anchors, mask, scale_x_y, new_coords, classes, labels) go into the model metadata.
 */
import onnxProto from 'onnx-proto';
import { JetprofError } from '../util/errors.ts';
import { type Activation, type ConvLayer, type DarknetCfg, type Layer, layerShapes, type RouteLayer } from './cfg.ts';
import { METADATA_KEY, type YoloHead, type YoloModelInfo } from './metadata.ts';
import type { DarknetWeights } from './weights.ts';

const { onnx } = onnxProto;
type INodeProto = onnxProto.onnx.INodeProto;
type ITensorProto = onnxProto.onnx.ITensorProto;
type IAttributeProto = onnxProto.onnx.IAttributeProto;

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const UINT8 = onnx.TensorProto.DataType.UINT8;
const BN_EPSILON = 0.00001; // darknet normalize_cpu

function ints(name: string, values: number[]): IAttributeProto {
  return { name, type: onnx.AttributeProto.AttributeType.INTS, ints: values };
}
function int(name: string, value: number): IAttributeProto {
  return { name, type: onnx.AttributeProto.AttributeType.INT, i: value };
}
function float(name: string, value: number): IAttributeProto {
  return { name, type: onnx.AttributeProto.AttributeType.FLOAT, f: value };
}
function str(name: string, value: string): IAttributeProto {
  return { name, type: onnx.AttributeProto.AttributeType.STRING, s: new TextEncoder().encode(value) };
}
function floatTensor(name: string, dims: number[], data: Float32Array): ITensorProto {
  return { name, dims, dataType: FLOAT, rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}
function int64Tensor(name: string, data: number[]): ITensorProto {
  const raw = new BigInt64Array(data.map((v) => BigInt(v)));
  return { name, dims: [data.length], dataType: INT64, rawData: new Uint8Array(raw.buffer) };
}

/** Folds darknet batch-norm into conv weights and bias. */
function foldBatchNorm(
  weights: Float32Array,
  biases: Float32Array,
  bn: { scales: Float32Array; mean: Float32Array; variance: Float32Array } | undefined,
): { weights: Float32Array; bias: Float32Array } {
  if (!bn) return { weights, bias: biases };
  const filters = biases.length;
  const per = weights.length / filters;
  const w = new Float32Array(weights.length);
  const b = new Float32Array(filters);
  for (let o = 0; o < filters; o++) {
    const k = bn.scales[o] / Math.sqrt(bn.variance[o] + BN_EPSILON);
    for (let i = 0; i < per; i++) w[o * per + i] = weights[o * per + i] * k;
    b[o] = biases[o] - bn.mean[o] * k;
  }
  return { weights: w, bias: b };
}

class GraphBuilder {
  nodes: INodeProto[] = [];
  initializers: ITensorProto[] = [];
  private counter = 0;

  node(opType: string, inputs: string[], attrs: IAttributeProto[] = [], name?: string): string {
    const out = name ?? `${opType.toLowerCase()}_${this.counter++}`;
    this.nodes.push({ opType, input: inputs, output: [out], name: out, attribute: attrs });
    return out;
  }
  constantInt64(name: string, data: number[]): string {
    this.initializers.push(int64Tensor(name, data));
    return name;
  }
  activation(x: string, act: Activation, name: string): string {
    switch (act) {
      case 'linear':
        return x;
      case 'leaky':
        return this.node('LeakyRelu', [x], [float('alpha', 0.1)], name);
      case 'relu':
        return this.node('Relu', [x], [], name);
      case 'logistic':
        return this.node('Sigmoid', [x], [], name);
      case 'swish':
        return this.node('Mul', [x, this.node('Sigmoid', [x], [], `${name}_sigmoid`)], [], name);
      case 'mish': {
        const t = this.node('Tanh', [this.node('Softplus', [x], [], `${name}_softplus`)], [], `${name}_tanh`);
        return this.node('Mul', [x, t], [], name);
      }
    }
  }
}

interface ExportOptions {
  labels?: string[];
  source?: YoloModelInfo['source'];
  /** The frame's own bytes as the input, preprocessed in the graph (YoloModelInfo.frameInput). */
  frameInput?: { width: number; height: number };
}

interface ExportedModel {
  bytes: Uint8Array;
  info: YoloModelInfo;
}

/** Darknet's maxpool: pads [floor(p/2), p - floor(p/2)], so the output size is (w + p - size)/stride + 1. */
function maxPool(g: GraphBuilder, l: Extract<Layer, { kind: 'maxpool' }>, id: string, prev: string): string {
  const begin = Math.floor(l.padding / 2);
  const end = l.padding - begin;
  const attrs = [
    ints('kernel_shape', [l.size, l.size]),
    ints('strides', [l.stride, l.stride]),
    ints('pads', [begin, begin, end, end]),
  ];
  return g.node('MaxPool', [prev], attrs, id);
}

/** Darknet's upsample: nearest, asymmetric, floor (each value repeated stride x stride times). */
function upsample(g: GraphBuilder, l: Extract<Layer, { kind: 'upsample' }>, id: string, prev: string): string {
  const scales = `${id}_scales`;
  g.initializers.push(floatTensor(scales, [4], new Float32Array([1, 1, l.stride, l.stride])));
  const attrs = [
    str('mode', 'nearest'),
    str('coordinate_transformation_mode', 'asymmetric'),
    str('nearest_mode', 'floor'),
  ];
  return g.node('Resize', [prev, '', scales], attrs, id);
}

/**
 * The CPU's preprocessing (pipeline/preprocess.ts: cv.resize INTER_LINEAR, BGR to RGB, x 1/255, HWC to NCHW) as the
 * graph's first nodes, from the frame's uint8 BGR bytes [batch, H, W, 3]. The resize is linear with half-pixel
 * centres, as OpenCV's, on float values (OpenCV rounds its resized bytes: the two differ by up to half a level, 0.002
 * after scaling); sizes, not scales, so the output is exactly the network's size whatever the ratio.
 */
function frameToNetwork(
  g: GraphBuilder,
  input: string,
  net: { width: number; height: number },
  frame: { width: number; height: number },
): string {
  const values = g.node('Cast', [input], [int('to', FLOAT)], 'frame_float');
  const nchw = g.node('Transpose', [values], [ints('perm', [0, 3, 1, 2])], 'frame_nchw');
  const order = g.constantInt64('frame_rgb_order', [2, 1, 0]);
  let rgb = g.node('Gather', [nchw, order], [int('axis', 1)], 'frame_rgb');
  if (frame.width !== net.width || frame.height !== net.height) {
    const shape = g.node('Shape', [rgb], [], 'frame_shape');
    const nc = g.node('Slice', [shape, g.constantInt64('frame_nc_start', [0]), g.constantInt64('frame_nc_end', [2])]);
    const sizes = g.node('Concat', [nc, g.constantInt64('net_hw', [net.height, net.width])], [int('axis', 0)]);
    const attrs = [str('mode', 'linear'), str('coordinate_transformation_mode', 'half_pixel')];
    rgb = g.node('Resize', [rgb, '', '', sizes], attrs, 'frame_resized');
  }
  g.initializers.push(floatTensor('frame_scale', [], new Float32Array([1 / 255])));
  return g.node('Mul', [rgb, 'frame_scale'], [], 'frame_scaled');
}

export function exportOnnx(cfg: DarknetCfg, weights: DarknetWeights, options: ExportOptions = {}): ExportedModel {
  const shapes = layerShapes(cfg);
  const g = new GraphBuilder();
  const inputName = 'input';
  const outputs: string[] = [];
  const tensorOf: string[] = [];
  const heads: YoloHead[] = [];
  let classes = 0;
  let prev = options.frameInput ? frameToNetwork(g, inputName, cfg.net, options.frameInput) : inputName;
  let prevChannels = cfg.net.channels;

  for (const l of cfg.layers) {
    const id = `l${l.index}_${l.kind}`;
    let out: string;
    switch (l.kind) {
      case 'convolutional':
        out = convolution(g, l, id, prev, prevChannels, weights);
        break;
      case 'route':
        out = route(g, l, id, tensorOf, shapes);
        break;
      case 'maxpool':
        out = maxPool(g, l, id, prev);
        break;
      case 'upsample':
        out = upsample(g, l, id, prev);
        break;
      case 'shortcut':
        out = g.activation(
          g.node('Add', [prev, tensorOf[l.from]], [], l.activation === 'linear' ? id : `${id}_add`),
          l.activation,
          id,
        );
        break;
      case 'yolo': {
        const name = `yolo_${l.index}`;
        g.node('Identity', [prev], [], name);
        outputs.push(name);
        const shape = shapes[l.index];
        heads.push({
          output: name,
          gridW: shape.w,
          gridH: shape.h,
          anchors: l.mask.map((m) => l.anchors[m]),
          scaleXY: l.scaleXY,
          newCoords: l.newCoords,
        });
        classes = l.classes;
        out = prev;
        break;
      }
    }
    tensorOf.push(out);
    prev = out;
    prevChannels = shapes[l.index].c;
  }
  if (heads.length === 0) {
    throw new JetprofError(
      'BAD_CFG',
      `${cfg.path}: no [yolo] layer, so this is not a YOLO detector (jetprof reads the yolov4-tiny family)`,
      {
        suggestion:
          'use the cfg the weights were trained with; it ends with [yolo] sections (see weights/yolov4-tiny.cfg)',
      },
    );
  }

  const labels =
    options.labels && options.labels.length === classes
      ? options.labels
      : Array.from({ length: classes }, (_, i) => `class${i}`);
  const info: YoloModelInfo = {
    schema: 'jetprof.model/1',
    inputName,
    inputWidth: cfg.net.width,
    inputHeight: cfg.net.height,
    classes,
    labels,
    heads,
    ...(options.frameInput ? { frameInput: options.frameInput } : {}),
    source: options.source,
  };
  return { bytes: encodeModel(cfg, g, info), info };
}

/** The graph and its metadata as ONNX bytes: opset 13, the input and every head with a symbolic batch dimension. */
function encodeModel(cfg: DarknetCfg, g: GraphBuilder, info: YoloModelInfo): Uint8Array {
  const { inputName, heads, classes } = info;
  // [batch, ...dims]: the first dimension symbolic (BATCH_DIM), the others fixed
  const valueInfo = (name: string, dims: number[], elemType = FLOAT) => ({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: [{ dimParam: BATCH_DIM }, ...dims.map((d) => ({ dimValue: d }))] },
      },
    },
  });
  const model = onnx.ModelProto.create({
    irVersion: 7,
    producerName: 'jetprof',
    producerVersion: '0.1.0',
    opsetImport: [{ domain: '', version: 13 }],
    metadataProps: [{ key: METADATA_KEY, value: JSON.stringify(info) }],
    graph: {
      name:
        cfg.path
          .split('/')
          .pop()
          ?.replace(/\.cfg$/, '') ?? 'yolo',
      node: g.nodes,
      initializer: g.initializers,
      input: [
        info.frameInput
          ? valueInfo(inputName, [info.frameInput.height, info.frameInput.width, 3], UINT8)
          : valueInfo(inputName, [cfg.net.channels, cfg.net.height, cfg.net.width]),
      ],
      output: heads.map((h) => valueInfo(h.output, [h.anchors.length * (5 + classes), h.gridH, h.gridW])),
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** A convolution with its batch norm folded into the weights and bias, then its activation. */
function convolution(
  g: GraphBuilder,
  l: ConvLayer,
  id: string,
  prev: string,
  prevChannels: number,
  weights: DarknetWeights,
): string {
  const w = weights.convs.get(l.index);
  if (!w) throw new Error(`no weights for layer ${l.index}`);
  const folded = foldBatchNorm(w.weights, w.biases, w.bn);
  const wName = `${id}.weight`;
  const bName = `${id}.bias`;
  g.initializers.push(floatTensor(wName, [l.filters, prevChannels / l.groups, l.size, l.size], folded.weights));
  g.initializers.push(floatTensor(bName, [l.filters], folded.bias));
  const p = l.padding;
  const conv = g.node(
    'Conv',
    [prev, wName, bName],
    [
      ints('kernel_shape', [l.size, l.size]),
      ints('strides', [l.stride, l.stride]),
      ints('pads', [p, p, p, p]),
      ints('dilations', [1, 1]),
      int('group', l.groups),
    ],
    l.activation === 'linear' ? id : `${id}_conv`,
  );
  return g.activation(conv, l.activation, id);
}

/** A route: the layers it names, concatenated on channels; with groups, the group's slice of each. */
function route(
  g: GraphBuilder,
  l: RouteLayer,
  id: string,
  tensorOf: string[],
  shapes: ReturnType<typeof layerShapes>,
): string {
  const parts = l.layers.map((src) => {
    if (l.groups === 1) return tensorOf[src];
    const c = shapes[src].c / l.groups;
    const starts = g.constantInt64(`${id}_from${src}_starts`, [l.groupId * c]);
    const ends = g.constantInt64(`${id}_from${src}_ends`, [(l.groupId + 1) * c]);
    const axes = g.constantInt64(`${id}_from${src}_axes`, [1]);
    return g.node('Slice', [tensorOf[src], starts, ends, axes], [], `${id}_slice${src}`);
  });
  return parts.length === 1 ? parts[0] : g.node('Concat', parts, [int('axis', 1)], id);
}

/** The name of the exported graph's symbolic batch dimension (ONNX Runtime's freeDimensionOverrides key). */
const BATCH_DIM = 'batch';

/**
 * The same model with its batch dimension fixed to `batch` on the input and every output (what TensorRT builds a
 * static engine from: `jetprof build-engine --batch N`). Every other byte of the model is kept.
 */
export function withFixedBatch(bytes: Uint8Array, batch: number): Uint8Array {
  const model = onnx.ModelProto.decode(bytes);
  const initNames = new Set((model.graph?.initializer ?? []).map((t) => t.name));
  for (const v of [...(model.graph?.input ?? []), ...(model.graph?.output ?? [])]) {
    if (initNames.has(v.name)) continue;
    const dim = v.type?.tensorType?.shape?.dim;
    if (dim && dim.length > 0) dim[0] = { dimValue: batch };
  }
  return onnx.ModelProto.encode(model).finish();
}

/** Reads jetprof's metadata and the graph input/output signature from .onnx bytes, without ONNX Runtime. */
export function readOnnxSignature(bytes: Uint8Array): {
  metadata: Record<string, string>;
  inputs: { name: string; elemType: number; dims: (number | string)[] }[];
  outputs: string[];
} {
  const model = onnx.ModelProto.decode(bytes);
  const metadata: Record<string, string> = {};
  for (const p of model.metadataProps ?? []) metadata[p.key ?? ''] = p.value ?? '';
  const initNames = new Set((model.graph?.initializer ?? []).map((t) => t.name));
  const inputs = (model.graph?.input ?? [])
    .filter((i) => !initNames.has(i.name))
    .map((i) => ({
      name: i.name ?? '',
      elemType: i.type?.tensorType?.elemType ?? 0,
      dims: (i.type?.tensorType?.shape?.dim ?? []).map((d) => (d.dimParam ? d.dimParam : Number(d.dimValue ?? 0))),
    }));
  return { metadata, inputs, outputs: (model.graph?.output ?? []).map((o) => o.name ?? '') };
}
