/**
 * File-level model tasks: export a cfg+weights pair to .onnx (cached beside the weights), make seeded weights,
 * and load a .onnx's metadata for inference. This is the I/O edge of src/model.
 */
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { JetprofError } from '../util/errors.ts';
import { writeOutput } from '../output/output.ts';
import { fileExists, readLines, requireFile, sha256File } from '../util/files.ts';
import { type DarknetCfg, parseCfg, withInputSize, yoloLayers } from './cfg.ts';
import type { YoloModelInfo } from './metadata.ts';
import { readModelInfo } from './model-info.ts';
import { exportOnnx } from './onnx-export.ts';
import { GENERATED_WEIGHTS_SEEN, generateWeights, readWeights, serializeWeights } from './weights.ts';

interface CfgCheck {
  /** Unknown keys are errors (exit 2), not warnings. */
  strict?: boolean;
  onWarning?: (message: string) => void;
}

export function loadCfg(path: string, check: CfgCheck = {}): DarknetCfg {
  requireFile(
    path,
    'darknet cfg',
    'pass --cfg with the .cfg of your model (weights/yolov4-tiny.cfg ships with jetprof)',
  );
  const cfg = parseCfg(readFileSync(path, 'utf8'), path);
  if (check.strict && cfg.warnings.length) {
    throw new JetprofError('BAD_CFG', cfg.warnings[0].replace(/; darknet ignores it too.*$/, ''), {
      suggestion: 'fix the key, or drop --strict to read the cfg as darknet does (ignoring it)',
    });
  }
  for (const w of cfg.warnings) check.onWarning?.(`warning: ${w}`);
  return cfg;
}

/** Labels: the given file, else `<cfg name>.names` beside the cfg, else class0..N-1. */
function loadLabels(cfgPath: string, classes: number, labelsPath?: string): string[] {
  const candidate = labelsPath ?? join(dirname(cfgPath), `${basename(cfgPath, extname(cfgPath))}.names`);
  if (labelsPath) requireFile(labelsPath, 'labels file', 'pass --labels with one class name per line');
  if (!fileExists(candidate)) return Array.from({ length: classes }, (_, i) => `class${i}`);
  const labels = readLines(candidate);
  if (labels.length !== classes) {
    throw new JetprofError('BAD_INPUT', `${candidate} has ${labels.length} labels but the cfg has ${classes} classes`, {
      suggestion: 'use the .names file that matches the cfg',
    });
  }
  return labels;
}

interface ExportRequest extends CfgCheck {
  cfgPath: string;
  weightsPath: string;
  outPath: string;
  labelsPath?: string;
  inputSize?: [number, number];
  /** The frame size of a model that takes the frame's own bytes (preprocessing in the graph). */
  frameInput?: [number, number];
}

/** Bumped whenever the exporter's output for the same inputs changes: cached exports of older versions are redone. */
const EXPORTER_VERSION = 'jetprof-export/3'; // 3: symbolic batch dimension

/** The labels file an export reads: the given one, or `<cfg name>.names` beside the cfg when it exists (an input too). */
export function labelsFileOf(req: Pick<ExportRequest, 'cfgPath' | 'labelsPath'>): string | undefined {
  const candidate =
    req.labelsPath ?? join(dirname(req.cfgPath), `${basename(req.cfgPath, extname(req.cfgPath))}.names`);
  return fileExists(candidate) ? candidate : undefined;
}

/** What an export depends on, hashed: the bytes of cfg, weights and labels, the input size, the exporter version. */
export function exportKey(req: Omit<ExportRequest, 'outPath'>): string {
  const h = createHash('sha256')
    .update(EXPORTER_VERSION)
    .update('\0cfg\0')
    .update(readFileSync(req.cfgPath))
    .update('\0weights\0')
    .update(readFileSync(req.weightsPath));
  const labels = labelsFileOf(req);
  if (labels) h.update('\0labels\0').update(readFileSync(labels));
  if (req.inputSize) h.update(`\0size\0${req.inputSize[0]}x${req.inputSize[1]}`);
  if (req.frameInput) h.update(`\0frame\0${req.frameInput[0]}x${req.frameInput[1]}`);
  return h.digest('hex');
}

export function exportModelFile(req: ExportRequest): YoloModelInfo {
  let cfg = loadCfg(req.cfgPath, req);
  const weights = readWeights(req.weightsPath, cfg);
  if (req.inputSize) cfg = withInputSize(cfg, req.inputSize[0], req.inputSize[1]);
  const classes = yoloLayers(cfg)[0]?.classes ?? 0;
  const labels = loadLabels(req.cfgPath, classes, req.labelsPath);
  const { bytes, info } = exportOnnx(cfg, weights, {
    labels,
    ...(req.frameInput ? { frameInput: { width: req.frameInput[0], height: req.frameInput[1] } } : {}),
    source: {
      cfg: basename(req.cfgPath),
      weights: basename(req.weightsPath),
      weightsSha256: sha256File(req.weightsPath),
      ...(weights.header.seen === GENERATED_WEIGHTS_SEEN ? { generatedWeights: true } : {}),
      exportKey: exportKey(req),
    },
  });
  writeOutput(req.outPath, bytes);
  return info;
}

/** `jetprof export`'s default output for a cfg+weights pair: `<weights dir>/<weights name>[-WxH].onnx` (not a cache: cacheFileBeside is infer's). */
export function defaultExportPath(
  weightsPath: string,
  inputSize?: [number, number],
  frameInput?: [number, number],
): string {
  const stem = basename(weightsPath, extname(weightsPath));
  const size = inputSize ? `-${inputSize[0]}x${inputSize[1]}` : '';
  const frame = frameInput ? `-frame${frameInput[0]}x${frameInput[1]}` : '';
  return join(dirname(weightsPath), `${stem}${size}${frame}.onnx`);
}

/** Where infer caches its export beside the weights: `<weights file>[-WxH].onnx` (yolov4-tiny.weights.onnx). */
function cacheFileBeside(weightsPath: string, inputSize?: [number, number]): string {
  const size = inputSize ? `-${inputSize[0]}x${inputSize[1]}` : '';
  return `${weightsPath}${size}.onnx`;
}

/** The user's cache folder: $XDG_CACHE_HOME/jetprof, else ~/.cache/jetprof. */
function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'jetprof');
}

/** The export key a .onnx carries, or undefined when it is not a jetprof export (a user's own model) or unreadable. */
function exportKeyOf(path: string): string | undefined {
  try {
    return readModelInfo(path).source?.exportKey;
  } catch {
    return undefined;
  }
}

const writableDir = (dir: string) => {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * Exports unless a cached .onnx was made from exactly these inputs: its metadata carries the export key (a hash of
 * the cfg, weights and labels bytes, the input size and the exporter version), compared on every use. The cache sits
 * beside the weights (`<weights>.onnx`), or in `cacheDir` (--cache-dir; default $XDG_CACHE_HOME/jetprof) when the
 * weights' folder is read-only or that name holds a file jetprof did not export: a user's file is never overwritten.
 * The cfg is parsed first either way, so a broken cfg fails even with a cache. Returns the .onnx path, whether it
 * exported, and why it cached away from the weights, when it did.
 */
export function ensureExported(req: Omit<ExportRequest, 'outPath'> & { cacheDir?: string }): {
  path: string;
  exported: boolean;
  note?: string;
} {
  requireFile(
    req.weightsPath,
    'weights file',
    'pass --weights with the darknet .weights file (see README: where weights go)',
  );
  loadCfg(req.cfgPath, req);
  const key = exportKey(req);
  const beside = cacheFileBeside(req.weightsPath, req.inputSize);
  let outPath = beside;
  let note: string | undefined;
  if (req.cacheDir) {
    outPath = join(req.cacheDir, `${basename(beside, '.onnx')}-${key.slice(0, 12)}.onnx`);
  } else if (fileExists(beside) && exportKeyOf(beside) === undefined) {
    outPath = join(userCacheDir(), `${basename(beside, '.onnx')}-${key.slice(0, 12)}.onnx`);
    note = `${beside} is not a model jetprof exported, so it is left alone; the export is cached in ${dirname(outPath)} instead (--cache-dir to choose)`;
  } else if (!writableDir(dirname(beside))) {
    outPath = join(userCacheDir(), `${basename(beside, '.onnx')}-${key.slice(0, 12)}.onnx`);
    note = `${dirname(beside)} is read-only: the export is cached in ${dirname(outPath)} (--cache-dir to choose)`;
  }
  if (fileExists(outPath) && exportKeyOf(outPath) === key)
    return { path: outPath, exported: false, ...(note ? { note } : {}) };
  mkdirSync(dirname(outPath), { recursive: true });
  exportModelFile({ ...req, outPath, onWarning: undefined }); // warned above already
  return { path: outPath, exported: true, ...(note ? { note } : {}) };
}

export function makeWeightsFile(cfgPath: string, seed: number, outPath: string, objectnessBias?: number): number {
  const cfg = loadCfg(cfgPath);
  const bytes = serializeWeights(cfg, generateWeights(cfg, seed, objectnessBias));
  writeOutput(outPath, bytes);
  return bytes.byteLength;
}
