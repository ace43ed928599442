/** `jetprof build-engine`: an ONNX model to a TensorRT engine with trtexec, and its sidecar JSON. */
import { Command } from '@commander-js/extra-typings';
import { asCommand, parseIntInRange, type Program } from './options.ts';
import { claimOutputs } from '../output/output.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';

export function buildEngineCommand(): Program {
  const command = new Command('build-engine')
    .summary('ONNX -> TensorRT engine with trtexec, plus a sidecar JSON (TensorRT version, flags, ONNX sha256)')
    .description(
      'Runs trtexec on this device (engines only run on the TensorRT version and GPU that built them) and writes\n' +
        '<out>.json beside the engine, which `infer --backend trt` uses to warn about version mismatches and to find the ONNX.',
    )
    .requiredOption('--onnx <file.onnx>', 'model exported by `jetprof export`')
    .requiredOption('--out <file.trt>', 'engine to write, e.g. engines/yolov4-tiny.trt')
    .option('--fp16', 'allow FP16 kernels (Jetson Nano, Xavier, Orin all have them)', false)
    .option('--int8', 'allow INT8 kernels (needs a calibration cache for meaningful accuracy)', false)
    .option('--calib <cache>', 'INT8 calibration cache file passed to trtexec --calib')
    .option(
      '--workspace <MB>',
      'builder workspace (trtexec --memPoolSize=workspace:N, or --workspace=N before TensorRT 8.4)',
      parseIntInRange('--workspace', 1),
    )
    .option(
      '--batch <n>',
      'images per run of the engine (trtexec --shapes=<input>:Nx3xHxW): infer with n streams batches one frame of each',
      parseIntInRange('--batch', 1, 64),
      1,
    )
    .option('-q, --quiet', "do not echo trtexec's output", false)
    .addHelpText(
      'after',
      helpAfter([
        { cmd: 'jetprof build-engine --onnx weights/yolov4-tiny.onnx --out engines/yolov4-tiny.trt' },
        {
          cmd: 'jetprof build-engine --onnx weights/yolov4-tiny.onnx --out engines/yolov4-tiny-b4.trt --fp16 --batch 4',
        },
        {
          cmd: 'jetprof build-engine --onnx weights/yolov4-tiny.onnx --out engines/yolov4-tiny-fp16.trt --fp16 --workspace 1024',
        },
      ]),
    )
    .action(async (o) => {
      try {
        claimOutputs(
          { ONNX: o.onnx, 'calibration cache': o.calib },
          { engine: o.out, 'engine sidecar': `${o.out}.json` },
        );
        const { buildEngine } = await import('../backends/build-engine.ts');
        const precision = o.int8 ? 'int8' : o.fp16 ? 'fp16' : 'fp32';
        const s = await buildEngine({
          onnx: o.onnx,
          out: o.out,
          precision,
          calib: o.calib,
          workspaceMb: o.workspace,
          batch: o.batch,
          onOutput: o.quiet ? undefined : (c) => process.stderr.write(c),
        });
        process.stderr.write(
          `built ${o.out} (${precision}, batch ${o.batch}, TensorRT ${s.tensorrt ?? 'version unknown'}) in ${s.buildSeconds.toFixed(1)} s; sidecar ${o.out}.json\n`,
        );
        process.stdout.write(`${o.out}\n`);
      } catch (e) {
        process.exitCode = handleError(e);
      }
    });
  return asCommand(command);
}
