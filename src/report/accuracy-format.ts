/** Agreement and mAP as Markdown, for the console, `--out` and the report. Pure. */
import { markdownTable } from './tables.ts';
import { maxOf, minOf } from '../util/stats.ts';
import type { Agreement } from '../accuracy/agree.ts';
import type { MapResult } from '../accuracy/map.ts';

const pct = (v: number) => `${(v * 100).toFixed(2)}%`;

/** Image ids (frames) as a range, as agree's and map's refusals name them ("3..17", or "5"). */
export function idRange(ids: number[]): string {
  const lo = minOf(ids);
  const hi = maxOf(ids);
  return lo === hi ? String(lo) : `${lo}..${hi}`;
}
const f3 = (v: number) => (v < 0 ? 'n/a' : v.toFixed(3));

/** One line: the figures a speed table is read with. */
function agreementLine(a: Agreement, ref: string, other: string): string {
  return `${other} vs ${ref}: ${pct(a.matchedShare)} of boxes matched at IoU >= ${a.iouThreshold} (${a.matched} matched, ${a.onlyRef} only in ${ref}, ${a.onlyOther} only in ${other}${a.classSwaps ? `, ${a.classSwaps} class swaps` : ''}), mean IoU ${a.meanIou.toFixed(4)}, score difference mean ${a.meanAbsScoreDiff.toFixed(4)} max ${a.maxAbsScoreDiff.toFixed(4)}, over ${a.frames} frames`;
}

export function agreementMarkdown(a: Agreement, ref: string, other: string): string {
  const out = [`## Agreement: ${other} vs ${ref}`, '', agreementLine(a, ref, other), ''];
  out.push(
    markdownTable(
      ['', 'value'],
      [
        ['matched share', pct(a.matchedShare)],
        ['boxes in REF / OTHER', `${a.refBoxes} / ${a.otherBoxes}`],
        ['matched', a.matched],
        [`only in REF (${ref})`, a.onlyRef],
        [`only in OTHER (${other})`, a.onlyOther],
        ['class swaps', a.classSwaps],
        ['mean IoU of matches', a.meanIou.toFixed(4)],
        ['score difference, mean / max', `${a.meanAbsScoreDiff.toFixed(4)} / ${a.maxAbsScoreDiff.toFixed(4)}`],
      ],
      ['l', 'r'],
    ),
    '',
  );
  if (a.perClass.length) {
    out.push(
      '**Per class**',
      '',
      markdownTable(
        ['class', 'matched', 'only REF', 'only OTHER', 'mean IoU'],
        a.perClass.map((c) => [c.name, c.matched, c.onlyRef, c.onlyOther, c.matched ? c.meanIou.toFixed(4) : '']),
        ['l', 'r', 'r', 'r', 'r'],
      ),
      '',
    );
  }
  if (a.worstFrames.length) {
    out.push(
      '**Frames that differ most**',
      '',
      markdownTable(
        ['frame', 'only REF', 'only OTHER'],
        a.worstFrames.map((f) => [f.imageId, f.onlyRef, f.onlyOther]),
        ['r', 'r', 'r'],
      ),
      '',
    );
  }
  out.push(
    "Matched share = matched / (matched + only in REF + only in OTHER); boxes are matched per frame and class, REF's in score order, each to the unmatched OTHER box of highest IoU.",
    '',
  );
  return out.join('\n');
}

export function mapMarkdown(m: MapResult, title = 'COCO mAP'): string {
  return [
    `## ${title}`,
    '',
    markdownTable(
      ['metric', 'value'],
      [
        ['AP @[IoU=0.50:0.95, area=all, maxDets=100]', f3(m.ap)],
        ['AP @[IoU=0.50]', f3(m.ap50)],
        ['AP @[IoU=0.75]', f3(m.ap75)],
        ['AP small / medium / large', `${f3(m.apSmall)} / ${f3(m.apMedium)} / ${f3(m.apLarge)}`],
        ['AR maxDets 1 / 10 / 100', `${f3(m.ar1)} / ${f3(m.ar10)} / ${f3(m.ar100)}`],
      ],
      ['l', 'r'],
    ),
    '',
    markdownTable(
      ['class', 'AP', 'AP50'],
      m.perClass.map((c) => [c.name, f3(c.ap), f3(c.ap50)]),
      ['l', 'r', 'r'],
    ),
    '',
    `${m.images} images, ${m.annotations} annotations, ${m.detections} detections on them; computed as pycocotools' COCOeval (bbox): 101-point interpolation, area ranges, maxDets 100. n/a: nothing to evaluate.`,
    '',
  ].join('\n');
}
