/**
 * The model an infer run uses: the engine's sidecar (read once), the ONNX or the export of --cfg/--weights that
 * supplies the YOLO metadata, and whether OpenCV DNN reads the darknet files itself.
 */
import { existsSync } from 'node:fs';
import { type EngineSidecar, readEngineSidecar } from '../backends/engine-sidecar.ts';
import { ensureExported } from '../model/export-file.ts';
import { readModelInfo } from '../model/model-info.ts';
import { JetprofError } from '../util/errors.ts';
import { sha256File } from '../util/files.ts';
import type { DetectorSession } from '../backends/types.ts';
import type { InferOptions } from './infer-settings.ts';

function resolveModelPath(
  o: Pick<InferOptions, 'model' | 'cfg' | 'weights' | 'labels' | 'engine' | 'strict' | 'onWarning' | 'cacheDir'>,
  onInfo: (m: string) => void,
  sidecar?: EngineSidecar,
): string {
  if (o.engine && !existsSync(o.engine)) {
    throw new JetprofError('FILE_NOT_FOUND', `${o.engine}: TensorRT engine not found`, {
      suggestion:
        'build it on this board: jetprof build-engine --onnx weights/yolov4-tiny.onnx --out engines/yolov4-tiny.trt --fp16',
    });
  }
  if (o.model) return o.model;
  const built = o.engine && !o.cfg ? sidecar?.onnx.path : undefined;
  if (built) {
    onInfo(`using ${built}, the ONNX ${o.engine} was built from (${o.engine}.json), for the YOLO metadata`);
    return built;
  }
  if (o.cfg && o.weights) {
    const { path, exported, note } = ensureExported({
      cfgPath: o.cfg,
      weightsPath: o.weights,
      labelsPath: o.labels,
      strict: o.strict,
      onWarning: o.onWarning,
      cacheDir: o.cacheDir,
    });
    if (note) onInfo(note);
    onInfo(exported ? `exported ${o.cfg} + ${o.weights} to ${path}` : `using cached ${path}`);
    return path;
  }
  throw new JetprofError('BAD_OPTION', 'no model given', {
    suggestion: 'pass --model M.onnx, or --cfg C.cfg --weights W.weights (jetprof make-weights makes test weights)',
  });
}

/** The model is given as darknet files only (--cfg and --weights, no --model): OpenCV DNN then reads them itself (its darknet importer). */
export function darknetFilesOnly(o: Pick<InferOptions, 'cfg' | 'weights' | 'model'>): boolean {
  return !!(o.cfg && o.weights && !o.model);
}

/** The ONNX an engine was built from, by its sidecar's record, else the ONNX given for the metadata. */
export function engineOnnxSha(sidecar: EngineSidecar | undefined, modelPath: string): string | undefined {
  return sidecar?.onnx.sha256 ?? (modelPath.endsWith('.onnx') ? sha256File(modelPath) : undefined);
}

/** The model a run uses: the engine's sidecar (read once), the ONNX or export that supplies the metadata, its facts. */
export function resolveModel(o: InferOptions) {
  const info = o.onInfo ?? (() => undefined);
  // OpenCV's darknet importer reads the cfg and weights itself: the export is only where the metadata comes from
  const importer = o.backend === 'opencv' && darknetFilesOnly(o);
  const onInfo = importer
    ? (m: string) =>
        info(
          /^(exported |using cached )/.test(m)
            ? `${m.replace(/^using cached (.*)$/, 'YOLO metadata (anchors, labels) from the cached export $1').replace(/^(exported .*)$/, '$1 for the YOLO metadata (anchors, labels)')}; OpenCV DNN itself reads ${o.cfg} and ${o.weights} (its darknet importer)`
            : m,
        )
    : info;
  // the engine's sidecar, read once: the ONNX it was built from, its precision, the TensorRT that built it
  const sidecar = o.engine ? readEngineSidecar(o.engine) : undefined;
  const modelPath = resolveModelPath(o, onInfo, sidecar);
  const model = readModelInfo(modelPath);
  // an ONNX with a fixed batch is refused before anything loads (an engine's batch is known once it is open)
  if (o.backend === 'onnx' || (o.backend === 'opencv' && !darknetFilesOnly(o)))
    checkBatchFits({ backend: o.backend, batchSize: model.inputBatch ?? 'dynamic' }, o.plan.batch, o, modelPath);
  if (model.source?.generatedWeights) {
    // A note, not a warning: --quiet hides it; the run JSON (generatedWeights) and the video overlay still say so.
    onInfo(
      'WARNING: this model was made from RANDOM weights (jetprof make-weights): its detections are meaningless; the timings are real',
    );
  }
  return { sidecar, modelPath, model };
}

export type ResolvedModel = ReturnType<typeof resolveModel>;

/**
 * A model or engine with a fixed batch runs only batches of that size: a run that batches another number of frames
 * is refused before it starts, with what builds the right one (padding a shorter batch would time images that are
 * not there).
 */
export function checkBatchFits(
  session: Pick<DetectorSession, 'batchSize' | 'backend'>,
  batch: number,
  o: Pick<InferOptions, 'engine' | 'streams'>,
  modelPath: string,
): void {
  const fixed = session.batchSize;
  if (fixed === 'dynamic' || fixed === batch) return;
  const streams = o.streams.length;
  const setup = `this run batches ${batch} frame${batch === 1 ? '' : 's'} (${streams} stream${streams === 1 ? '' : 's'}${batch === streams ? '' : `, --batch ${batch}`})`;
  if (session.backend === 'tensorrt') {
    throw new JetprofError('BAD_OPTION', `${o.engine}: the engine runs batches of ${fixed}; ${setup}`, {
      suggestion: `build an engine for it: jetprof build-engine --onnx ${modelPath} --batch ${batch} --out ${(o.engine ?? 'E.trt').replace(/(\.[a-z]+)?$/, `-b${batch}$1`)}${batch === 1 ? '' : ', or pass --batch ' + fixed + ' with at least ' + fixed + ' streams'}`,
    });
  }
  throw new JetprofError('BAD_OPTION', `${modelPath}: the model's input has a fixed batch of ${fixed}; ${setup}`, {
    suggestion: 'export it with `jetprof export` (its batch dimension is symbolic), or run with --batch ' + fixed,
  });
}
