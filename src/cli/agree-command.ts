/** `jetprof agree`: do two backends find the same boxes, frame by frame and class by class. */
import { Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { asCommand, parseFraction, parseIntInRange, type Program } from './options.ts';
import { agree } from '../accuracy/agree.ts';
import { type DetectionSource, loadDetections } from '../accuracy/detections-file.ts';
import { agreementMarkdown, idRange } from '../report/accuracy-format.ts';
import { JetprofError } from '../util/errors.ts';
import { claimOutputs, sameFile } from '../output/output.ts';
import { sayAnswer } from './answer.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';

function parseShare(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError(`--min-match must be a share between 0 and 1 (e.g. 0.99), got '${value}'`);
  return n;
}

/**
 * Two results files without their runs (so without the frames each run processed): at least one frame must have boxes
 * on both sides, else they come from different videos or different frames, and a 0% match would say nothing true.
 */
function requireCommonFrames(
  ref: readonly { image_id: number }[],
  other: readonly { image_id: number }[],
  refPath: string,
  otherPath: string,
): void {
  const a = new Set(ref.map((d) => d.image_id));
  const b = new Set(other.map((d) => d.image_id));
  if (a.size === 0 || b.size === 0 || [...a].some((f) => b.has(f))) return;
  throw new JetprofError(
    'NOTHING_TO_COMPARE',
    `nothing overlaps: ${refPath} has boxes in frames ${idRange([...a])}, ${otherPath} in frames ${idRange([...b])}, none in common (two videos, or different frames?)`,
    {
      suggestion: 'compare the detections of two runs over the same video and frames (pass their run JSONs)',
      exitCode: 1,
    },
  );
}

/**
 * The frames both detection files say they processed (warm-up frames left out unless asked), or undefined when a file
 * does not list its frames; two lists that differ are refused in one line.
 */
function framesCompared(
  ref: DetectionSource,
  other: DetectionSource,
  refPath: string,
  otherPath: string,
  includeWarmup: boolean,
): number[] | undefined {
  if (!ref.frames || !other.frames) return undefined;
  const inOther = new Set(other.frames);
  const inRef = new Set(ref.frames);
  const missing = ref.frames.filter((f) => !inOther.has(f));
  const extra = other.frames.filter((f) => !inRef.has(f));
  if (missing.length || extra.length) {
    const [path, list] = missing.length ? [otherPath, missing] : [refPath, extra];
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: frames ${list[0]}${list.length > 1 ? `..${list[list.length - 1]} (${list.length})` : ''} are missing: the two runs did not process the same frames`,
      { suggestion: 'run both on the same video with the same --max-frames (an interrupted run has fewer frames)' },
    );
  }
  if (includeWarmup) return ref.frames;
  const warmupFrames = new Set([...ref.detections, ...other.detections].filter((d) => d.warmup).map((d) => d.image_id));
  return ref.frames.filter((f) => !warmupFrames.has(f));
}

export function agreeCommand(): Program {
  const command = new Command('agree')
    .summary('do two backends find the same boxes? matched share, boxes only in one, mean IoU, score differences')
    .description(
      'Compares two detection files (`infer --detections`, or the run JSONs that name them) frame by frame and class by\n' +
        "class: REF's boxes in score order each match the unmatched OTHER box of highest IoU (at least --iou).\n" +
        'Prints Markdown; --out and --json write it. With --min-match, exits 1 when the matched share is below it\n' +
        '(gate an FP16 or INT8 engine in your own CI).',
    )
    .argument('<ref>', 'reference: detections file or run JSON (e.g. ONNX Runtime FP32)')
    .argument('<other>', 'the one to check: detections file or run JSON (e.g. TensorRT FP16)')
    .option('--iou <t>', 'IoU a match needs', parseFraction('--iou'), 0.5)
    .option('--min-match <share>', 'exit 1 when the matched share is below this (0..1)', parseShare)
    .option('--include-warmup', 'compare warm-up frames too (they are marked in the files)', false)
    .option('--allow-empty', 'exit 0 when neither file has a box (default: exit 1, nothing was compared)', false)
    .option('--top <n>', 'frames listed in "frames that differ most"', parseIntInRange('--top', 1, 10000), 10)
    .option('-o, --out <file.md>', 'write the Markdown here')
    .option('--json <file.json>', 'write the agreement as JSON')
    .addHelpText(
      'after',
      helpAfter([
        {
          cmd: 'jetprof agree runs/onnx.json runs/trt.json --min-match 0.99',
          note: 'gate an FP16 engine: exit 1 below 99% of boxes matched',
        },
        { cmd: 'jetprof agree onnx-dets.json opencv-dets.json --iou 0.7 --json agree.json' },
      ]),
    )
    .action((refPath, otherPath, o) => {
      try {
        claimOutputs({ REF: refPath, OTHER: otherPath }, { Markdown: o.out, JSON: o.json });
        const ref = loadDetections(refPath);
        const other = loadDetections(otherPath);
        if (sameFile(ref.path, other.path)) {
          process.stderr.write(
            `jetprof agree: warning: ${refPath} and ${otherPath} are the same detections (${ref.path}): a file always agrees with itself\n`,
          );
        }
        const keep = (d: { warmup?: boolean }) => o.includeWarmup || !d.warmup;
        const frames = framesCompared(ref, other, refPath, otherPath, o.includeWarmup);
        if (!frames) requireCommonFrames(ref.detections, other.detections, refPath, otherPath);
        const a = agree(ref.detections.filter(keep), other.detections.filter(keep), {
          iouThreshold: o.iou,
          names: ref.names ?? other.names,
          top: o.top,
          frames,
        });
        if (a.refBoxes + a.otherBoxes === 0 && !o.allowEmpty) {
          throw new JetprofError(
            'NOTHING_TO_COMPARE',
            `nothing to compare: neither ${refPath} nor ${otherPath} has a box in the ${a.frames} frame(s) compared, so agreement proves nothing`,
            {
              suggestion: 'use real weights or a lower --conf in infer; --allow-empty accepts it',
              exitCode: 1,
            },
          );
        }
        sayAnswer(agreementMarkdown(a, ref.label ?? 'REF', other.label ?? 'OTHER'), o, () => ({
          schema: 'jetprof.agreement/1',
          ref: ref.path,
          other: other.path,
          ...a,
        }));
        if (o.minMatch !== undefined && a.matchedShare < o.minMatch) {
          process.stderr.write(
            `jetprof agree: matched share ${(a.matchedShare * 100).toFixed(2)}% is below --min-match ${(o.minMatch * 100).toFixed(2)}%\n`,
          );
          process.exitCode = 1;
        }
      } catch (e) {
        process.exitCode = handleError(e);
      }
    });
  return asCommand(command);
}
