/** `jetprof map`: COCO mAP of a detections file against ground truth, as pycocotools computes it. */
import { existsSync, statSync } from 'node:fs';
import { Command } from '@commander-js/extra-typings';
import { asCommand, type Program } from './options.ts';
import { loadDetections, loadGroundTruth } from '../accuracy/detections-file.ts';
import { idRange, mapMarkdown } from '../report/accuracy-format.ts';
import { cocoMap } from '../accuracy/map.ts';
import { JetprofError } from '../util/errors.ts';
import { claimOutputs } from '../output/output.ts';
import { sayAnswer } from './answer.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';
import { requireRoom } from '../util/resources.ts';

/**
 * Scoring holds the ground truth and the detections as objects, with their IoU matrices: up to 16 times their size on
 * disk (measured: 25 MB of COCO annotations took 270 MB, a 181 MB file 2.9 GB). Refused in one line when this machine
 * has less room than that (a Nano has 4 GB for everything), instead of dying of it.
 */
function requireMemoryFor(gtPath: string, files: string[]): void {
  const bytes = files.reduce((n, f) => n + (existsSync(f) ? statSync(f).size : 0), 0);
  requireRoom(
    gtPath,
    `scoring ${(bytes / 2 ** 20).toFixed(0)} MB of ground truth and detections`,
    16 * bytes + 128 * 2 ** 20,
    {
      suggestion: 'score on a machine with more memory, or split the ground truth by image id and score the parts',
    },
  );
}

export function mapCommand(): Program {
  const command = new Command('map')
    .summary('COCO mAP of a detections file against ground truth, computed as pycocotools does')
    .description(
      "AP@[.50:.95], AP50, AP75, AP by area and per class, AR@1/10/100, as pycocotools' COCOeval (bbox) computes them.\n" +
        'image_id in the detections is the frame index (infer --detections, warm-up frames included); the ground truth\n' +
        'uses the same ids and decides which frames are scored.\n' +
        "For an 80-class COCO model scored against COCO's own annotations, write the detections with --coco-category-ids.",
    )
    .argument('<detections>', 'detections file (infer --detections) or a run JSON that names one')
    .requiredOption('--gt <annotations.json>', 'COCO ground truth: {images, annotations, categories}')
    .option('-o, --out <file.md>', 'write the Markdown here')
    .option('--json <file.json>', 'write the result as JSON')
    .addHelpText(
      'after',
      helpAfter([{ cmd: 'jetprof map runs/onnx-dets.json --gt annotations/instances_video.json --json map.json' }]),
    )
    .action((detPath, o) => {
      try {
        claimOutputs({ detections: detPath, 'ground truth': o.gt }, { Markdown: o.out, JSON: o.json });
        requireMemoryFor(o.gt, [detPath, o.gt]);
        const dets = loadDetections(detPath);
        const gt = loadGroundTruth(o.gt);
        const gtImages = new Set(gt.images.map((i) => i.id));
        const outside = dets.detections.filter((d) => !gtImages.has(d.image_id));
        if (dets.detections.length > 0 && outside.length === dets.detections.length) {
          throw new JetprofError(
            'BAD_INPUT',
            `${detPath}: none of its ${dets.detections.length} boxes is on an image of ${o.gt} (image ids ${idRange(dets.detections.map((d) => d.image_id))} against ${idRange([...gtImages])})`,
            {
              suggestion:
                'image_id must be the frame index the ground truth uses (infer --detections numbers frames from 0, warm-up included)',
            },
          );
        }
        if (outside.length)
          process.stderr.write(
            `jetprof map: warning: ${outside.length} of ${dets.detections.length} boxes are on images the ground truth does not have; they are left out (pycocotools refuses them)\n`,
          );
        const m = cocoMap(gt, dets.detections);
        sayAnswer(mapMarkdown(m, `COCO mAP: ${dets.label ?? detPath}`), o, () => ({
          schema: 'jetprof.map/1',
          detectionsFile: dets.path,
          gtFile: o.gt,
          ...m,
        }));
      } catch (e) {
        process.exitCode = handleError(e);
      }
    });
  return asCommand(command);
}
