/** `jetprof fetch-weights` and `jetprof make-weights`: the public weights, or seeded ones for a timing demo. */
import { existsSync, readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import { asCommand, parseIntInRange, type Program } from './options.ts';
import { loadCfg, makeWeightsFile } from '../model/export-file.ts';
import { fetchWeights, YOLOV4_TINY_WEIGHTS_URL } from '../model/fetch-weights.ts';
import { parseWeights } from '../model/weights.ts';
import { claimOutputs } from '../output/output.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';

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
