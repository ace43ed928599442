/**
 * Darknet .weights reader and writer (AlexeyAB/darknet src/parser.c: load_weights_upto, load_convolutional_weights).
 *
 * Layout: int32 major, minor, revision; then `seen` as uint64 when major*10+minor >= 2 (20-byte header),
 * else uint32 (16-byte header). Then, per convolutional layer in cfg order, float32 little-endian:
 *   biases[filters]; when batch_normalize: scales[filters], rolling_mean[filters], rolling_variance[filters];
 *   weights[filters * (c/groups) * size * size] in OIHW order.
 */
import { readFileSync, statSync } from 'node:fs';
import { JetprofError } from '../util/errors.ts';
import { type ConvLayer, type DarknetCfg, layerShapes, yoloLayers } from './cfg.ts';

interface WeightsHeader {
  major: number;
  minor: number;
  revision: number;
  seen: bigint;
  headerBytes: 16 | 20;
}

interface ConvWeights {
  biases: Float32Array;
  /** Present when batch_normalize=1. */
  bn?: { scales: Float32Array; mean: Float32Array; variance: Float32Array };
  /** OIHW. */
  weights: Float32Array;
}

export interface DarknetWeights {
  header: WeightsHeader;
  /** Keyed by darknet layer index. */
  convs: Map<number, ConvWeights>;
}

interface ConvParamCount {
  layer: ConvLayer;
  inputChannels: number;
  /** Float count of this layer's block in the file. */
  floats: number;
}

export function convParamCounts(cfg: DarknetCfg): ConvParamCount[] {
  const shapes = layerShapes(cfg);
  const counts: ConvParamCount[] = [];
  for (const l of cfg.layers) {
    if (l.kind !== 'convolutional') continue;
    const c = l.index === 0 ? cfg.net.channels : shapes[l.index - 1].c;
    const weights = l.filters * (c / l.groups) * l.size * l.size;
    counts.push({ layer: l, inputChannels: c, floats: l.filters * (l.batchNormalize ? 4 : 1) + weights });
  }
  return counts;
}

function headerBytesFor(major: number, minor: number): 16 | 20 {
  return major * 10 + minor >= 2 ? 20 : 16;
}

/** Exact file size the cfg needs, for a given header size. */
export function expectedWeightsBytes(cfg: DarknetCfg, headerBytes: 16 | 20 = 20): number {
  return headerBytes + 4 * convParamCounts(cfg).reduce((a, c) => a + c.floats, 0);
}

function describeCfg(cfg: DarknetCfg): string {
  const heads = yoloLayers(cfg);
  const classes = heads.length > 0 ? heads[0].classes : 0;
  const name = cfg.path.split('/').pop();
  return `${name} (${classes} classes)`;
}

/** Parses a weights file already in memory. `path` is used in messages only. */
export function parseWeights(buf: Uint8Array, cfg: DarknetCfg, path = 'model.weights'): DarknetWeights {
  const fix = { suggestion: 'use the .weights file trained with this cfg (same classes and layers)' };
  if (buf.byteLength < 16) {
    throw new JetprofError(
      'BAD_WEIGHTS',
      `${path} has ${buf.byteLength} bytes but ${describeCfg(cfg)} needs ${expectedWeightsBytes(cfg)}`,
      fix,
    );
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const major = view.getInt32(0, true);
  const minor = view.getInt32(4, true);
  const revision = view.getInt32(8, true);
  const headerBytes = headerBytesFor(major, minor);
  const need = expectedWeightsBytes(cfg, headerBytes);
  if (buf.byteLength !== need) {
    throw new JetprofError(
      'BAD_WEIGHTS',
      `${path} has ${buf.byteLength} bytes but ${describeCfg(cfg)} needs ${need}`,
      fix,
    );
  }
  const seen = headerBytes === 20 ? view.getBigUint64(12, true) : BigInt(view.getUint32(12, true));
  // Copy the payload once: a Buffer from the pool may start at an offset that is not 4-byte aligned.
  const floats = new Float32Array(buf.buffer.slice(buf.byteOffset + headerBytes, buf.byteOffset + buf.byteLength));
  let off = 0;
  const take = (n: number) => {
    const a = floats.subarray(off, off + n);
    off += n;
    return a;
  };
  const convs = new Map<number, ConvWeights>();
  for (const { layer, inputChannels } of convParamCounts(cfg)) {
    const n = layer.filters;
    const biases = take(n);
    const bn = layer.batchNormalize ? { scales: take(n), mean: take(n), variance: take(n) } : undefined;
    const weights = take(n * (inputChannels / layer.groups) * layer.size * layer.size);
    convs.set(layer.index, { biases, bn, weights });
  }
  refuseNonFinite(floats, cfg, path);
  return { header: { major, minor, revision, seen, headerBytes }, convs };
}

/**
 * Weights holding NaN or Inf make every output NaN: the model then finds nothing, silently, and two such backends
 * "agree" perfectly. Refused here, with the count and the first layer that holds one.
 */
function refuseNonFinite(floats: Float32Array, cfg: DarknetCfg, path: string): void {
  let bad = 0;
  let first = -1;
  for (let i = 0; i < floats.length; i++) {
    const v = floats[i];
    if (v - v !== 0) {
      bad++;
      if (first < 0) first = i;
    }
  }
  if (bad === 0) return;
  let start = 0;
  let layer = -1;
  for (const c of convParamCounts(cfg)) {
    if (first < start + c.floats) {
      layer = c.layer.index;
      break;
    }
    start += c.floats;
  }
  throw new JetprofError(
    'BAD_WEIGHTS',
    `${path}: ${bad} of its ${floats.length} values are NaN or Inf, the first in layer ${layer} (convolutional, line ${cfg.layers[layer]?.line ?? '?'} of ${cfg.path.split('/').pop()}): the model would output NaN`,
    {
      suggestion: 'use the weights file as training wrote it (a diverged training run or a damaged copy writes NaN)',
    },
  );
}

export function readWeights(path: string, cfg: DarknetCfg): DarknetWeights {
  let buf: Buffer;
  try {
    if (!statSync(path).isFile()) throw new Error('not a file');
    buf = readFileSync(path);
  } catch {
    throw new JetprofError('FILE_NOT_FOUND', `${path}: weights file not found`, {
      suggestion: 'pass --weights with the darknet .weights file (see README: where weights go)',
    });
  }
  return parseWeights(buf, cfg, path);
}

/** Serializes weights in darknet's layout (20-byte header unless headerBytes is 16). */
export function serializeWeights(cfg: DarknetCfg, w: DarknetWeights): Uint8Array {
  const headerBytes = w.header.headerBytes;
  const out = new Uint8Array(expectedWeightsBytes(cfg, headerBytes));
  const view = new DataView(out.buffer);
  view.setInt32(0, w.header.major, true);
  view.setInt32(4, w.header.minor, true);
  view.setInt32(8, w.header.revision, true);
  if (headerBytes === 20) view.setBigUint64(12, w.header.seen, true);
  else view.setUint32(12, Number(w.header.seen), true);
  const floats = new Float32Array(out.buffer, headerBytes);
  let off = 0;
  const put = (a: Float32Array) => {
    floats.set(a, off);
    off += a.length;
  };
  for (const { layer } of convParamCounts(cfg)) {
    const c = w.convs.get(layer.index);
    if (!c) throw new Error(`no weights for conv layer ${layer.index}`);
    put(c.biases);
    if (layer.batchNormalize) {
      if (!c.bn) throw new Error(`conv layer ${layer.index} needs batch-norm parameters`);
      put(c.bn.scales);
      put(c.bn.mean);
      put(c.bn.variance);
    }
    put(c.weights);
  }
  return out;
}

/**
 * The `seen` counter jetprof writes into generated weights ("JETPROF" in ASCII). No training run reaches it, so
 * the exporter can mark such models and `infer` can say loudly that their detections mean nothing.
 */
export const GENERATED_WEIGHTS_SEEN = 0x4a455450524f46n;

/** mulberry32: a small seeded PRNG, so generated weights are the same on every machine. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Generates valid, numerically tame weights for any cfg: He-scaled uniform conv weights, batch-norm
 * statistics near identity. The detections they produce are MEANINGLESS; they exist for tests and demos.
 * `objectnessBias` (default -4, sigmoid 0.018: few cells fire, like a trained model on an empty scene) set high
 * (e.g. 2) makes a model that fires almost everywhere: the dense case postprocess must stay fast on.
 */
const DEFAULT_OBJECTNESS_BIAS = -4;

export function generateWeights(
  cfg: DarknetCfg,
  seed: number,
  objectnessBias = DEFAULT_OBJECTNESS_BIAS,
): DarknetWeights {
  const rand = seededRandom(seed);
  const uniform = (n: number, lo: number, hi: number) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = lo + (hi - lo) * rand();
    return a;
  };
  const convs = new Map<number, ConvWeights>();
  const heads = new Map(cfg.layers.filter((l) => l.kind === 'yolo').map((l) => [l.index - 1, l]));
  for (const { layer, inputChannels } of convParamCounts(cfg)) {
    const n = layer.filters;
    const fanIn = (inputChannels / layer.groups) * layer.size * layer.size;
    const head = heads.get(layer.index);
    // He-uniform for leaky units keeps activations O(1) through depth; the heads get a quarter of that and
    // negative objectness biases, like a trained model where most cells see no object.
    const limit = Math.sqrt(6 / fanIn) * (head ? 0.25 : 1);
    const weights = uniform(n * fanIn, -limit, limit);
    if (head && !layer.batchNormalize) {
      const per = 5 + head.classes;
      const biases = uniform(n, -0.5, 0.5);
      for (let a = 0; a < head.mask.length; a++) biases[a * per + 4] = objectnessBias;
      convs.set(layer.index, { biases, weights });
      continue;
    }
    if (layer.batchNormalize) {
      convs.set(layer.index, {
        biases: uniform(n, -0.1, 0.1),
        bn: { scales: uniform(n, 0.8, 1.2), mean: uniform(n, -0.1, 0.1), variance: uniform(n, 0.5, 1.5) },
        weights,
      });
    } else {
      convs.set(layer.index, { biases: uniform(n, -0.5, 0.5), weights });
    }
  }
  return { header: { major: 0, minor: 2, revision: 5, seen: GENERATED_WEIGHTS_SEEN, headerBytes: 20 }, convs };
}
