/** `jetprof export` and `jetprof make-weights`. */
import { existsSync, readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import { asCommand, parseIntInRange, parseSize, type Program } from './options.ts';
import { defaultExportPath, exportModelFile, labelsFileOf, loadCfg, makeWeightsFile } from '../model/export-file.ts';
import { fetchWeights, YOLOV4_TINY_WEIGHTS_URL } from '../model/fetch-weights.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { parseWeights } from '../model/weights.ts';
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

export function fetchWeightsCommand(): Program {
  const command = new Command('fetch-weights')
    .summary('download the public YOLOv4-Tiny weights (AlexeyAB/darknet release), checked against the cfg')
    .description(
      'Downloads the trained YOLOv4-Tiny weights that tensorrt_demos and the lab use, for weights/yolov4-tiny.cfg (80 COCO classes, names in weights/yolov4-tiny.names). The bytes must be exactly what the cfg needs, and hold no NaN or Inf, before they are written under the final name. A download that fails, is cut short, or hangs writes nothing. scripts/setup.sh runs it; offline, the demo uses seeded random weights instead.',
    )
    .addOption(
      // the URL is longer than a terminal line: the help names it in words (and prints it whole in the notes)
      new Option('--url <url>', 'where to download from').default(
        YOLOV4_TINY_WEIGHTS_URL,
        "the AlexeyAB/darknet release's yolov4-tiny.weights",
      ),
    )
    .option('--cfg <file.cfg>', 'the cfg the weights are for', 'weights/yolov4-tiny.cfg')
    .option('--out <file.weights>', 'where they go', 'weights/yolov4-tiny.weights')
    .option('--timeout <s>', 'give up after this many seconds', parseIntInRange('--timeout', 1, 86_400), 300)
    .option(
      '--idle-timeout <s>',
      'give up after this many seconds without a byte',
      parseIntInRange('--idle-timeout', 1, 3600),
      30,
    )
    .option('--force', 'download again even when --out already holds weights that fit the cfg', false)
    .addHelpText(
      'after',
      helpAfter([
        { cmd: 'jetprof fetch-weights' },
        {
          cmd: 'jetprof fetch-weights --url http://mirror.local/yolov4-tiny.weights',
          note: 'from a mirror on your network',
        },
      ]),
    )
    .action(async (o) => {
      try {
        claimOutputs({ cfg: o.cfg }, { weights: o.out });
        if (!o.force && existsSync(o.out)) {
          try {
            parseWeights(readFileSync(o.out), loadCfg(o.cfg), o.out);
            process.stderr.write(
              `jetprof fetch-weights: ${o.out} already holds weights that fit ${o.cfg} (--force downloads again)\n`,
            );
            process.stdout.write(`${o.out}\n`);
            return;
          } catch {
            /* not weights for this cfg: download */
          }
        }
        process.stderr.write(`jetprof fetch-weights: ${o.url} -> ${o.out}\n`);
        const t0 = Date.now();
        const bytes = await fetchWeights({
          url: o.url,
          cfgPath: o.cfg,
          outPath: o.out,
          timeoutMs: o.timeout * 1000,
          idleMs: o.idleTimeout * 1000,
        });
        process.stderr.write(
          `jetprof fetch-weights: wrote ${o.out} (${bytes} bytes, checked against ${o.cfg}) in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
        );
        process.stdout.write(`${o.out}\n`);
      } catch (e) {
        process.exitCode = handleError(e);
      }
    });
  return asCommand(command);
}

export function makeWeightsCommand(): Program {
  const command = new Command('make-weights')
    .summary('write seeded random weights for a cfg (tests and demos; detections are meaningless)')
    .description(
      'Writes a darknet .weights file for any cfg from a seeded generator: the same seed gives the same bytes on every machine. The detections such weights make are meaningless (jetprof marks them, and infer and the report say so); the timings are real, which is what the demo and the tests need where no trained weights can be downloaded.',
    )
    .requiredOption('--cfg <file.cfg>', 'darknet cfg')
    .requiredOption('--out <file.weights>', 'output weights file')
    .option(
      '--seed <n>',
      'PRNG seed (same seed, same bytes on every machine)',
      parseIntInRange('--seed', 0, 2 ** 32 - 1),
      1,
    )
    .option(
      '--objectness-bias <b>',
      "bias of the heads' objectness logits: -4 (default) fires rarely, like a trained model; 2 fires almost everywhere (a dense model, to test postprocess)",
      (v: string) => {
        const n = Number(v);
        if (v.trim() === '' || !Number.isFinite(n) || Math.abs(n) > 20)
          throw new InvalidArgumentError(`--objectness-bias must be a number between -20 and 20, got '${v}'`);
        return n;
      },
    )
    .addHelpText(
      'after',
      helpAfter([
        { cmd: 'jetprof make-weights --cfg weights/yolov4-tiny.cfg --seed 1 --out weights/yolov4-tiny-seed1.weights' },
        {
          cmd: 'jetprof make-weights --cfg weights/yolov4-tiny.cfg --seed 1 --objectness-bias 2 --out weights/yolov4-tiny-dense.weights',
          note: 'a model that fires almost everywhere (postprocess under load)',
        },
      ]),
    )
    .action((o) => {
      try {
        claimOutputs({ cfg: o.cfg }, { weights: o.out });
        const bytes = makeWeightsFile(o.cfg, o.seed, o.out, o.objectnessBias);
        process.stderr.write(
          `wrote ${o.out} (${bytes} bytes, seed ${o.seed}). These weights are RANDOM: detections made with them mean nothing.\n`,
        );
        process.stdout.write(`${o.out}\n`);
      } catch (e) {
        process.exitCode = handleError(e);
      }
    });
  return asCommand(command);
}

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

/** "frame 960x540 uint8 BGR, resized in the graph to " for a model that preprocesses in its graph, else nothing. */
function frameWords(info: YoloModelInfo): string {
  const f = info.frameInput;
  return f ? `frame ${f.width}x${f.height} uint8 BGR, preprocessed in the graph to ` : '';
}
