/** `jetprof export`: a darknet cfg and weights to the ONNX model every backend runs. */
import { Command } from '@commander-js/extra-typings';
import { asCommand, parseSize, type Program } from './options.ts';
import { defaultExportPath, exportModelFile, labelsFileOf } from '../model/export-file.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { claimOutputs } from '../output/output.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';

export function exportCommand(): Program {
  const command = new Command('export')
    .summary('darknet cfg + weights -> ONNX (no Python needed)')
    .description(
      'Converts a darknet cfg + weights (yolov4-tiny family) to an ONNX model whose outputs are the raw YOLO heads.\n' +
        'Anchors, masks, scale_x_y, classes and labels go into the model metadata, so `infer` needs only the .onnx.',
    )
    .requiredOption('--cfg <file.cfg>', 'darknet cfg')
    .requiredOption('--weights <file.weights>', 'darknet weights (16- or 20-byte header)')
    .option('--out <file.onnx>', 'output (default: beside the weights, <weights name>.onnx)')
    .option('--labels <file.names>', 'class names (default: <cfg>.names beside the cfg)')
    .option(
      '--input-size <WxH>',
      'network input size (default: width/height from the cfg; multiples of 32)',
      parseSize('--input-size'),
    )
    .option(
      '--frame-input <WxH>',
      "the model takes the frame's own bytes (uint8 BGR at WxH, e.g. 960x540) and resizes, reorders and scales them in the graph: TensorRT does the preprocessing on the GPU, the CPU only copies the frame",
      parseSize('--frame-input'),
    )
    .addHelpText(
      'after',
      helpAfter([
        {
          cmd: 'jetprof export --cfg weights/yolov4-tiny.cfg --weights weights/yolov4-tiny.weights --out weights/yolov4-tiny.onnx',
        },
        {
          cmd: 'jetprof export --cfg weights/yolov4-tiny.cfg --weights weights/yolov4-tiny.weights --frame-input 960x540',
          note: "preprocessing in the engine for the lab's 960x540 frames (weights/yolov4-tiny-frame960x540.onnx)",
        },
      ]),
    )
    .option('--strict', 'a cfg key darknet does not know is an error, not a warning', false)
    .action((o) => {
      try {
        const out = o.out ?? defaultExportPath(o.weights, o.inputSize, o.frameInput);
        claimOutputs(
          { cfg: o.cfg, weights: o.weights, labels: labelsFileOf({ cfgPath: o.cfg, labelsPath: o.labels }) },
          { ONNX: out },
        );
        const t0 = Date.now();
        const info = exportModelFile({
          cfgPath: o.cfg,
          weightsPath: o.weights,
          outPath: out,
          labelsPath: o.labels,
          inputSize: o.inputSize,
          frameInput: o.frameInput,
          strict: o.strict,
          onWarning: (m) => process.stderr.write(`jetprof export: ${m}\n`),
        });
        const heads = info.heads.map((h) => `${h.output} ${h.gridW}x${h.gridH}`).join(', ');
        process.stderr.write(
          `exported ${out} in ${Date.now() - t0} ms: input ${frameWords(info)}${info.inputWidth}x${info.inputHeight}, ${info.classes} classes, heads ${heads}\n`,
        );
        process.stdout.write(`${out}\n`);
      } catch (e) {
        process.exitCode = handleError(e);
      }
    });
  return asCommand(command);
}

/** "frame 960x540 uint8 BGR, resized in the graph to " for a model that preprocesses in its graph, else nothing. */
function frameWords(info: YoloModelInfo): string {
  const f = info.frameInput;
  return f ? `frame ${f.width}x${f.height} uint8 BGR, preprocessed in the graph to ` : '';
}
