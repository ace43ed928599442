/**
 * Darknet .cfg parser for YOLOv4-Tiny and its family (yolov3-tiny, custom class counts).
 * Pure: text in, typed layers out. Semantics follow AlexeyAB/darknet src/parser.c (defaults noted per field).
 */
import { JetprofError } from '../util/errors.ts';

export type Activation = 'leaky' | 'linear' | 'logistic' | 'mish' | 'swish' | 'relu';
const ACTIVATIONS: readonly Activation[] = ['leaky', 'linear', 'logistic', 'mish', 'swish', 'relu'];

interface NetSection {
  width: number;
  height: number;
  channels: number;
}

interface LayerBase {
  /** 0-based darknet layer index (the [net] section is not a layer). */
  index: number;
  /** 1-based line of the section header in the cfg. */
  line: number;
}
export interface ConvLayer extends LayerBase {
  kind: 'convolutional';
  filters: number;
  size: number;
  stride: number;
  /** Zero padding on each side: size/2 when pad=1, else the `padding` key (default 0). */
  padding: number;
  groups: number;
  batchNormalize: boolean;
  activation: Activation;
}
export interface RouteLayer extends LayerBase {
  kind: 'route';
  /** Absolute indices of the input layers. */
  layers: number[];
  groups: number;
  groupId: number;
}
interface MaxpoolLayer extends LayerBase {
  kind: 'maxpool';
  size: number;
  stride: number;
  /** Total padding (darknet default size-1); the window starts at -floor(padding/2). */
  padding: number;
}
interface UpsampleLayer extends LayerBase {
  kind: 'upsample';
  stride: number;
}
interface ShortcutLayer extends LayerBase {
  kind: 'shortcut';
  from: number;
  activation: Activation;
}
interface YoloLayer extends LayerBase {
  kind: 'yolo';
  /** Indices into `anchors` used by this head. */
  mask: number[];
  /** All anchors of the cfg, [w, h] in network-input pixels. */
  anchors: [number, number][];
  classes: number;
  scaleXY: number;
  newCoords: boolean;
}
export type Layer = ConvLayer | RouteLayer | MaxpoolLayer | UpsampleLayer | ShortcutLayer | YoloLayer;

export interface DarknetCfg {
  /** File name used in messages. */
  path: string;
  net: NetSection;
  layers: Layer[];
  /** Keys darknet does not know (typos such as `activaton=`), as darknet's "Unused field" lines: `file:line: ...`. */
  warnings: string[];
}

/**
 * The keys darknet's parser.c reads in each section (AlexeyAB/darknet), jetprof's or not: training keys are valid
 * cfg, a key none of them is, is a typo darknet would report as "Unused field".
 */
const KNOWN_KEYS: Record<string, string[]> = {
  net: [
    'batch',
    'subdivisions',
    'width',
    'height',
    'channels',
    'momentum',
    'decay',
    'angle',
    'saturation',
    'exposure',
    'hue',
    'learning_rate',
    'burn_in',
    'max_batches',
    'policy',
    'steps',
    'scales',
    'mosaic',
    'mosaic_bound',
    'cutmix',
    'mixup',
    'letter_box',
    'flip',
    'blur',
    'gaussian_noise',
    'max_chart_loss',
    'label_smooth_eps',
    'optimized_memory',
    'workspace_size_limit_MB',
    'adam',
    'B1',
    'B2',
    'eps',
    'inputs',
    'max_crop',
    'min_crop',
    'aspect',
    'power',
    'gamma',
    'step',
    'seq_scales',
    'sgdr_cycle',
    'sgdr_mult',
    'time_steps',
    'track',
    'augment_speed',
    'init_sequential_subdivisions',
    'sequential_subdivisions',
    'try_fix_nan',
    'weights_reject_freq',
    'loss_scale',
    'dynamic_minibatch',
    'contrastive',
    'contrastive_jit_flip',
    'contrastive_color',
    'unsupervised',
    'use_cuda_graph',
    'equidistant_point',
    'resize_step',
    'attention',
    'adversarial_lr',
    'rotate',
    'num_sigmas_reject_badlabels',
    'badlabels_rejection_percentage',
    'show_receptive_field',
    'max_epochs',
  ],
  convolutional: [
    'filters',
    'size',
    'stride',
    'stride_x',
    'stride_y',
    'pad',
    'padding',
    'groups',
    'batch_normalize',
    'activation',
    'dilation',
    'antialiasing',
    'xnor',
    'bin_output',
    'binary',
    'share_index',
    'sway',
    'rotate',
    'stretch',
    'stretch_sway',
    'assisted_excitation',
    'train_only_bn',
    'deform',
    'flipped',
    'dot',
    'angle',
    'grad_centr',
    'cbn',
    'coordconv',
    'stopbackward',
    'reverse',
  ],
  route: ['layers', 'groups', 'group_id', 'stopbackward', 'stream', 'wait_stream'],
  maxpool: [
    'size',
    'stride',
    'stride_x',
    'stride_y',
    'padding',
    'maxpool_depth',
    'out_channels',
    'antialiasing',
    'train_only_bn',
    'stopbackward',
    'maxpool_zero_nonmax',
  ],
  upsample: ['stride', 'scale', 'stopbackward'],
  shortcut: ['from', 'activation', 'weights_type', 'weights_normalization', 'stopbackward'],
  yolo: [
    'mask',
    'anchors',
    'classes',
    'num',
    'jitter',
    'ignore_thresh',
    'truth_thresh',
    'random',
    'resize',
    'scale_x_y',
    'iou_normalizer',
    'cls_normalizer',
    'obj_normalizer',
    'iou_loss',
    'iou_thresh_kind',
    'beta_nms',
    'nms_kind',
    'iou_thresh',
    'max_delta',
    'counters_per_class',
    'label_smooth_eps',
    'new_coords',
    'objectness_smooth',
    'focal_loss',
    'map',
    'show_details',
    'delta_normalizer',
    'embedding_layer',
    'track_history_size',
    'sim_thresh',
    'dets_for_track',
    'dets_for_show',
    'track_ciou_norm',
    'stopbackward',
  ],
};
KNOWN_KEYS.network = KNOWN_KEYS.net;
KNOWN_KEYS.conv = KNOWN_KEYS.convolutional;

/** Levenshtein distance (small strings: cfg keys). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur.push(Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = cur;
  }
  return prev[b.length];
}

function unknownKeyWarnings(sections: RawSection[], path: string): string[] {
  const out: string[] = [];
  for (const s of sections) {
    const known = KNOWN_KEYS[s.name];
    if (!known) continue;
    for (const [key, e] of s.keys) {
      if (known.includes(key)) continue;
      const nearest = [...known].sort((a, b) => editDistance(key, a) - editDistance(key, b))[0];
      const hint =
        editDistance(key, nearest) <= Math.max(2, Math.floor(key.length / 3)) ? ` (did you mean '${nearest}'?)` : '';
      out.push(
        `${path}:${e.line}: unknown key '${key}' in [${s.name}]${hint}; darknet ignores it too ("Unused field")`,
      );
    }
  }
  return out;
}

interface Shape {
  c: number;
  h: number;
  w: number;
}

interface RawSection {
  name: string;
  line: number;
  keys: Map<string, { value: string; line: number }>;
}

function splitSections(text: string, path: string): RawSection[] {
  const sections: RawSection[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i].replace(/\s+/g, '');
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    if (line.startsWith('[')) {
      if (!line.endsWith(']')) throw cfgError(path, lineNo, `malformed section header '${lines[i].trim()}'`);
      sections.push({ name: line.slice(1, -1), line: lineNo, keys: new Map() });
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) throw cfgError(path, lineNo, `expected key=value, found '${lines[i].trim()}'`);
    if (sections.length === 0) throw cfgError(path, lineNo, 'key before the first [section]');
    const value = line.slice(eq + 1).replace(/#.*$/, '');
    sections[sections.length - 1].keys.set(line.slice(0, eq), { value, line: lineNo });
  }
  return sections;
}

function cfgError(path: string, line: number, what: string): JetprofError {
  return new JetprofError('BAD_CFG', `${path}:${line}: ${what}`, {
    suggestion: 'fix the cfg (jetprof reads darknet cfgs of the yolov4-tiny family)',
  });
}

/** Reads typed values from one section, each error naming the file and line. */
class SectionReader {
  constructor(
    private readonly s: RawSection,
    private readonly path: string,
  ) {}

  private entry(key: string) {
    return this.s.keys.get(key);
  }
  has(key: string): boolean {
    return this.s.keys.has(key);
  }
  int(key: string, fallback: number): number {
    const e = this.entry(key);
    if (!e) return fallback;
    if (!/^[-+]?\d+$/.test(e.value)) throw cfgError(this.path, e.line, `${key}=${e.value} is not an integer`);
    return Number(e.value);
  }
  positiveInt(key: string, fallback: number): number {
    const v = this.int(key, fallback);
    if (v <= 0)
      throw cfgError(this.path, this.entry(key)?.line ?? this.s.line, `${key}=${v} must be a positive integer`);
    return v;
  }
  float(key: string, fallback: number): number {
    const e = this.entry(key);
    if (!e) return fallback;
    const v = Number(e.value);
    if (e.value === '' || !Number.isFinite(v)) throw cfgError(this.path, e.line, `${key}=${e.value} is not a number`);
    return v;
  }
  ints(key: string): number[] | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    const parts = e.value.split(',').filter((p) => p !== '');
    if (parts.length === 0 || parts.some((p) => !/^[-+]?\d+$/.test(p))) {
      throw cfgError(this.path, e.line, `${key}=${e.value} is not a list of integers`);
    }
    return parts.map(Number);
  }
  floats(key: string): number[] | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    const parts = e.value.split(',').filter((p) => p !== '');
    const values = parts.map(Number);
    if (parts.length === 0 || values.some((v) => !Number.isFinite(v))) {
      throw cfgError(this.path, e.line, `${key}=${e.value} is not a list of numbers`);
    }
    return values;
  }
  activation(fallback: Activation): Activation {
    const e = this.entry('activation');
    if (!e) return fallback;
    if (!(ACTIVATIONS as readonly string[]).includes(e.value)) {
      throw cfgError(this.path, e.line, `activation=${e.value} is not supported (one of: ${ACTIVATIONS.join(', ')})`);
    }
    return e.value as Activation;
  }
  lineOf(key: string): number {
    return this.entry(key)?.line ?? this.s.line;
  }
}

/** Resolves a darknet layer reference: negative is relative to `index`, non-negative is absolute. */
function resolveRef(ref: number, index: number, path: string, line: number): number {
  const abs = ref < 0 ? index + ref : ref;
  if (abs < 0 || abs >= index)
    throw cfgError(path, line, `layer reference ${ref} from layer ${index} points outside [0, ${index})`);
  return abs;
}

/** One layer section of the cfg (index: its place among the layers, for relative references). */
function parseLayer(s: RawSection, r: SectionReader, index: number, path: string): Layer {
  const base = { index, line: s.line };
  switch (s.name) {
    case 'convolutional':
    case 'conv': {
      const size = r.positiveInt('size', 1);
      const pad = r.int('pad', 0);
      return {
        ...base,
        kind: 'convolutional',
        filters: r.positiveInt('filters', 1),
        size,
        stride: r.positiveInt('stride', 1),
        padding: pad ? Math.floor(size / 2) : r.int('padding', 0),
        groups: r.positiveInt('groups', 1),
        batchNormalize: r.int('batch_normalize', 0) !== 0,
        activation: r.activation('logistic'),
      };
    }
    case 'route': {
      const refs = r.ints('layers');
      if (!refs) throw cfgError(path, s.line, '[route] needs layers=');
      return {
        ...base,
        kind: 'route',
        layers: refs.map((ref) => resolveRef(ref, index, path, r.lineOf('layers'))),
        groups: r.positiveInt('groups', 1),
        groupId: r.int('group_id', 0),
      };
    }
    case 'maxpool': {
      const stride = r.positiveInt('stride', 1);
      const size = r.positiveInt('size', stride);
      return { ...base, kind: 'maxpool', size, stride, padding: r.int('padding', size - 1) };
    }
    case 'upsample':
      return { ...base, kind: 'upsample', stride: r.positiveInt('stride', 2) };
    case 'shortcut': {
      const from = r.int('from', -1);
      return {
        ...base,
        kind: 'shortcut',
        from: resolveRef(from, index, path, r.lineOf('from')),
        activation: r.activation('linear'),
      };
    }
    case 'yolo': {
      const num = r.positiveInt('num', 1);
      const classes = r.positiveInt('classes', 20);
      const flat = r.floats('anchors') ?? [];
      if (flat.length !== num * 2) {
        throw cfgError(path, r.lineOf('anchors'), `anchors has ${flat.length} numbers but num=${num} needs ${num * 2}`);
      }
      const anchors: [number, number][] = [];
      for (let i = 0; i < num; i++) anchors.push([flat[2 * i], flat[2 * i + 1]]);
      const mask = r.ints('mask') ?? anchors.map((_, i) => i);
      for (const m of mask) {
        if (m < 0 || m >= num) throw cfgError(path, r.lineOf('mask'), `mask index ${m} is out of range [0, ${num})`);
      }
      return {
        ...base,
        kind: 'yolo',
        mask,
        anchors,
        classes,
        scaleXY: r.float('scale_x_y', 1),
        newCoords: r.int('new_coords', 0) !== 0,
      };
    }
    default:
      throw cfgError(
        path,
        s.line,
        `section [${s.name}] is not supported (convolutional, route, maxpool, upsample, shortcut, yolo)`,
      );
  }
}

export function parseCfg(text: string, path = 'model.cfg'): DarknetCfg {
  const sections = splitSections(text, path);
  if (sections.length === 0 || (sections[0].name !== 'net' && sections[0].name !== 'network')) {
    throw cfgError(path, sections[0]?.line ?? 1, 'the first section must be [net]');
  }
  const netReader = new SectionReader(sections[0], path);
  const net: NetSection = {
    width: netReader.positiveInt('width', 416),
    height: netReader.positiveInt('height', 416),
    channels: netReader.positiveInt('channels', 3),
  };
  const layers: Layer[] = [];
  for (const s of sections.slice(1)) {
    layers.push(parseLayer(s, new SectionReader(s, path), layers.length, path));
  }
  const cfg: DarknetCfg = { path, net, layers, warnings: unknownKeyWarnings(sections, path) };
  layerShapes(cfg); // validates channel arithmetic, with line numbers
  return cfg;
}

/** Output shape of every layer, following darknet's arithmetic. Throws BAD_CFG on impossible shapes. */
export function layerShapes(cfg: DarknetCfg): Shape[] {
  const shapes: Shape[] = [];
  let prev: Shape = { c: cfg.net.channels, h: cfg.net.height, w: cfg.net.width };
  for (const l of cfg.layers) {
    let out: Shape;
    switch (l.kind) {
      case 'convolutional': {
        if (prev.c % l.groups !== 0 || l.filters % l.groups !== 0) {
          throw cfgError(
            cfg.path,
            l.line,
            `groups=${l.groups} does not divide ${prev.c} input channels and ${l.filters} filters`,
          );
        }
        const h = Math.floor((prev.h + 2 * l.padding - l.size) / l.stride) + 1;
        const w = Math.floor((prev.w + 2 * l.padding - l.size) / l.stride) + 1;
        out = { c: l.filters, h, w };
        break;
      }
      case 'route': {
        const inputs = l.layers.map((i) => shapes[i]);
        for (const s of inputs) {
          if (s.h !== inputs[0].h || s.w !== inputs[0].w)
            throw cfgError(cfg.path, l.line, 'route inputs have different sizes');
          if (s.c % l.groups !== 0)
            throw cfgError(cfg.path, l.line, `groups=${l.groups} does not divide ${s.c} channels`);
        }
        if (l.groupId < 0 || l.groupId >= l.groups)
          throw cfgError(cfg.path, l.line, `group_id=${l.groupId} is out of range [0, ${l.groups})`);
        out = { c: inputs.reduce((a, s) => a + s.c / l.groups, 0), h: inputs[0].h, w: inputs[0].w };
        break;
      }
      case 'maxpool':
        out = {
          c: prev.c,
          h: Math.floor((prev.h + l.padding - l.size) / l.stride) + 1,
          w: Math.floor((prev.w + l.padding - l.size) / l.stride) + 1,
        };
        break;
      case 'upsample':
        out = { c: prev.c, h: prev.h * l.stride, w: prev.w * l.stride };
        break;
      case 'shortcut': {
        const s = shapes[l.from];
        if (s.c !== prev.c || s.h !== prev.h || s.w !== prev.w)
          throw cfgError(cfg.path, l.line, 'shortcut inputs have different shapes');
        out = prev;
        break;
      }
      case 'yolo': {
        const need = l.mask.length * (5 + l.classes);
        if (prev.c !== need) {
          throw cfgError(
            cfg.path,
            l.line,
            `the layer before [yolo] has ${prev.c} filters but ${l.mask.length} anchors x (5 + ${l.classes} classes) needs ${need}`,
          );
        }
        out = prev;
        break;
      }
    }
    if (out.h <= 0 || out.w <= 0)
      throw cfgError(cfg.path, l.line, `layer ${l.index} has an empty output (${out.w}x${out.h})`);
    shapes.push(out);
    prev = out;
  }
  return shapes;
}

/** Returns a copy of the cfg with another network input size (must keep every head's grid integral). */
export function withInputSize(cfg: DarknetCfg, width: number, height: number): DarknetCfg {
  const resized: DarknetCfg = { ...cfg, net: { ...cfg.net, width, height } };
  layerShapes(resized);
  return resized;
}

export function yoloLayers(cfg: DarknetCfg): YoloLayer[] {
  return cfg.layers.filter((l): l is YoloLayer => l.kind === 'yolo');
}

/** Multiply-adds x 2 of every convolution, as darknet prints "BFLOPs" (yolov4-tiny at 416x416: 6.9e9). */
export function convFlops(cfg: DarknetCfg): number {
  const shapes = layerShapes(cfg);
  let flops = 0;
  let prevC = cfg.net.channels;
  cfg.layers.forEach((l, i) => {
    if (l.kind === 'convolutional')
      flops += 2 * l.size * l.size * (prevC / l.groups) * l.filters * shapes[i].h * shapes[i].w;
    prevC = shapes[i].c;
  });
  return flops;
}
