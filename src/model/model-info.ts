/** A .onnx model's YOLO metadata and input signature, read and checked: what every backend and the loops run by. */
import { readFileSync } from 'node:fs';
import { JetprofError } from '../util/errors.ts';
import { requireFile } from '../util/files.ts';
import { checkModelInfo, METADATA_KEY, type YoloModelInfo } from './metadata.ts';
import { readOnnxSignature } from './onnx-export.ts';

/** Reads and checks jetprof's metadata and the input signature of a .onnx file. */
export function readModelInfo(path: string): YoloModelInfo {
  requireFile(path, 'ONNX model', 'pass --model with a .onnx made by `jetprof export`, or --cfg and --weights');
  let sig: ReturnType<typeof readOnnxSignature>;
  try {
    sig = readOnnxSignature(readFileSync(path));
  } catch (e) {
    throw new JetprofError('BAD_MODEL', `${path}: not an ONNX model (${(e as Error).message})`, {
      suggestion: 'export one with `jetprof export --cfg C --weights W`',
    });
  }
  const raw = sig.metadata[METADATA_KEY];
  const fix = {
    suggestion: 'export the model with `jetprof export --cfg C --weights W` so it carries its YOLO metadata',
  };
  if (!raw)
    throw new JetprofError('BAD_MODEL', `${path}: no jetprof YOLO metadata (anchors, classes) in this ONNX model`, fix);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new JetprofError('BAD_MODEL', `${path}: the jetprof metadata is not valid JSON`, fix);
  }
  const info = checkModelInfo(parsed);
  if (typeof info === 'string') throw new JetprofError('BAD_MODEL', `${path}: ${info}`, fix);
  const input = sig.inputs.find((i) => i.name === info.inputName);
  const dims = input?.dims ?? [];
  // float [batch,3,H,W], or a frame-input model's uint8 [batch,h,w,3] (ONNX's FLOAT 1, UINT8 2)
  const f = info.frameInput;
  const [type, want, words] = f
    ? [2, [f.height, f.width, 3], `uint8 [batch,${f.height},${f.width},3]`]
    : [1, [3, info.inputHeight, info.inputWidth], `float [batch,3,${info.inputHeight},${info.inputWidth}]`];
  // the batch dimension: symbolic (jetprof's exports since jetprof-export/3) or a fixed count of images
  const batch = dims[0];
  if (
    !input ||
    input.elemType !== type ||
    dims.length !== 4 ||
    !(typeof batch === 'string' || (Number.isInteger(batch) && batch >= 1)) ||
    want.some((d, i) => dims[i + 1] !== d)
  ) {
    throw new JetprofError(
      'BAD_MODEL',
      `${path}: input must be ${words}, found ${input ? `[${dims.join(',')}]` : 'none'}`,
      fix,
    );
  }
  for (const h of info.heads) {
    if (!sig.outputs.includes(h.output))
      throw new JetprofError('BAD_MODEL', `${path}: output ${h.output} named in the metadata is missing`, fix);
  }
  return { ...info, inputBatch: typeof batch === 'string' ? 'dynamic' : batch };
}
