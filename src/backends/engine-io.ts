/** A TensorRT engine's inputs and outputs checked against the model jetprof runs through it. Pure. */
import { basename } from 'node:path';
import { PLUGIN_DETECTIONS_OUTPUT, type YoloModelInfo } from '../model/metadata.ts';
import { JetprofError } from '../util/errors.ts';
import { DTYPE_NAMES, type TensorInfo } from './trt-abi.ts';

/** A tensor's dimensions as trtexec prints them (1x3x416x416). */
export function shape(t: TensorInfo): string {
  return t.dims.join('x');
}

/**
 * Checks the engine's IO against the model: one [N,3,H,W] float input of the model's size (N images per run, fixed
 * when the engine was built: `build-engine --batch N`); raw heads or detections.
 */
export function checkEngineIo(
  enginePath: string,
  tensors: TensorInfo[],
  model: YoloModelInfo,
): { input: TensorInfo; outputs: TensorInfo[] } {
  const inputs = tensors.filter((t) => t.isInput);
  const outputs = tensors.filter((t) => !t.isInput);
  const name = basename(enginePath);
  if (inputs.length !== 1)
    throw new JetprofError(
      'BAD_ENGINE',
      `${enginePath}: has ${inputs.length} inputs; jetprof runs YOLO engines with one image input`,
    );
  const [input] = inputs;
  // the model's input: float32 Nx3xHxW, or a frame-input model's uint8 NxHxWx3 (its frame size)
  const f = model.frameInput;
  const [n, ...rest] = input.dims;
  const [type, layout, want] = f
    ? ['uint8', 'NxHxWx3', [f.height, f.width, 3]]
    : ['float32', 'Nx3xHxW', [3, model.inputHeight, model.inputWidth]];
  if (input.dims.length !== 4 || !(n >= 1) || DTYPE_NAMES[input.dtype] !== type || rest[f ? 2 : 0] !== 3) {
    throw new JetprofError(
      'BAD_ENGINE',
      `${enginePath}: input ${input.name} is ${DTYPE_NAMES[input.dtype] ?? input.dtype} ${shape(input)}, not ${type} ${layout}`,
      {
        suggestion: `build the engine from the model it runs with (jetprof build-engine --onnx M.onnx [--batch N]), which has a ${type} ${layout} input`,
      },
    );
  }
  if (rest.some((d, i) => d !== want[i])) {
    const size = f ? `takes ${f.width}x${f.height} frames` : `is ${model.inputWidth}x${model.inputHeight}`;
    throw new JetprofError(
      'BAD_ENGINE',
      `${name} expects input ${shape(input)} but the model ${size} (input shape mismatch)`,
      {
        suggestion: 'pass the --model/--cfg the engine was built from, or build the engine again from this model',
      },
    );
  }
  for (const o of outputs) {
    if (DTYPE_NAMES[o.dtype] !== 'float32') {
      throw new JetprofError(
        'BAD_ENGINE',
        `${enginePath}: output ${o.name} is ${DTYPE_NAMES[o.dtype] ?? o.dtype}; jetprof reads float32 outputs`,
        {
          suggestion: 'build with float32 IO (trtexec keeps IO float32 unless --outputIOFormats is given)',
        },
      );
    }
  }
  const names = new Set(outputs.map((o) => o.name));
  const heads = model.heads.every((hd) => names.has(hd.output));
  if (!heads && !names.has(PLUGIN_DETECTIONS_OUTPUT)) {
    throw new JetprofError(
      'BAD_ENGINE',
      `${enginePath}: outputs ${[...names].join(', ')} are neither the model's YOLO heads (${model.heads.map((hd) => hd.output).join(', ')}) nor tensorrt_demos' ${PLUGIN_DETECTIONS_OUTPUT}`,
      {
        suggestion: 'pass the --model/--cfg the engine was built from',
      },
    );
  }
  return { input, outputs };
}
