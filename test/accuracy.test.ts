/**
 * Accuracy: `agree` on hand-built cases, COCO mAP on hand-derived cases (the arithmetic is in each test) and on a
 * generated case against a second implementation written differently here, bad input, and ONNX Runtime against
 * OpenCV DNN on real frames of vtest.avi.
 */
import test from 'ava';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agree } from '../src/accuracy/agree.ts';
import type { CocoAnnotation, CocoDetection, CocoGroundTruth } from '../src/accuracy/coco.ts';
import { cocoMap } from '../src/accuracy/map.ts';
import {
  makeModel,
  requires,
  makeVideo,
  ROOT,
  runCli,
  scratchDir,
  YOLOV4_TINY_CFG,
  inferRun,
  SMALL_LAB_CFG,
} from './helpers/fixtures.ts';

const det = (
  image_id: number,
  category_id: number,
  bbox: [number, number, number, number],
  score: number,
): CocoDetection => ({ image_id, category_id, bbox, score });

// ---------------------------------------------------------------------------------------------------------- agree

test('agree: identical sets match fully', (t) => {
  const boxes = [det(0, 1, [10, 10, 20, 20], 0.9), det(0, 2, [50, 50, 10, 10], 0.8), det(1, 1, [0, 0, 5, 5], 0.7)];
  const a = agree(boxes, boxes);
  t.like(a, { matched: 3, onlyRef: 0, onlyOther: 0, matchedShare: 1, meanIou: 1, maxAbsScoreDiff: 0, frames: 2 });
});

test('agree: a missing box and an extra box', (t) => {
  const ref = [det(0, 1, [10, 10, 20, 20], 0.9), det(0, 1, [100, 100, 20, 20], 0.8)];
  const other = [det(0, 1, [10, 10, 20, 20], 0.85), det(0, 1, [200, 10, 20, 20], 0.6)];
  const a = agree(ref, other);
  // matched 1, the box at 100,100 only in REF, the one at 200,10 only in OTHER: 1 / (1 + 1 + 1)
  t.like(a, { matched: 1, onlyRef: 1, onlyOther: 1, matchedShare: 1 / 3 });
  t.true(Math.abs(a.meanAbsScoreDiff - 0.05) < 1e-12);
  t.deepEqual(a.worstFrames, [{ imageId: 0, onlyRef: 1, onlyOther: 1 }]);
});

test('agree: a shifted box just above and just below the IoU bound', (t) => {
  // 10x10 boxes shifted by s in x: IoU = (10 - s) * 10 / (200 - (10 - s) * 10) = (10 - s) / (10 + s)
  // s = 3.3: 6.7 / 13.3 = 0.5037... >= 0.5 (matched); s = 3.4: 6.6 / 13.4 = 0.4925... < 0.5 (not)
  const ref = [det(0, 1, [0, 0, 10, 10], 0.9)];
  const above = agree(ref, [det(0, 1, [3.3, 0, 10, 10], 0.9)]);
  t.like(above, { matched: 1, onlyRef: 0, onlyOther: 0 });
  t.true(Math.abs(above.meanIou - 6.7 / 13.3) < 1e-12);
  t.like(agree(ref, [det(0, 1, [3.4, 0, 10, 10], 0.9)]), { matched: 0, onlyRef: 1, onlyOther: 1, matchedShare: 0 });
  // the bound itself is a parameter
  t.like(agree(ref, [det(0, 1, [3.4, 0, 10, 10], 0.9)], { iouThreshold: 0.45 }), { matched: 1 });
});

test('agree: a class swap is no match, and is counted as a swap', (t) => {
  const a = agree([det(0, 1, [10, 10, 20, 20], 0.9)], [det(0, 3, [10, 10, 20, 20], 0.9)]);
  t.like(a, { matched: 0, onlyRef: 1, onlyOther: 1, classSwaps: 1 });
  t.deepEqual(
    a.perClass.map((c) => [c.categoryId, c.onlyRef, c.onlyOther]),
    [
      [1, 1, 0],
      [3, 0, 1],
    ],
  );
});

test('agree: greedy in score order; each OTHER box matches once; frames with no box on either side still count', (t) => {
  // two REF boxes overlapping one OTHER box: the higher-scored REF box takes it
  const a = agree([det(0, 1, [0, 0, 10, 10], 0.6), det(0, 1, [1, 0, 10, 10], 0.9)], [det(0, 1, [0, 0, 10, 10], 0.9)], {
    frames: [0, 1, 2],
  });
  t.like(a, { matched: 1, onlyRef: 1, onlyOther: 0, frames: 3 });
  t.true(Math.abs(a.meanIou - 90 / 110) < 1e-12, 'the 0.9 box (shifted by 1) matched, not the identical 0.6 one');
});

// ---------------------------------------------------------------------------------------------------------- mAP

const gtOf = (anns: Omit<CocoAnnotation, 'id'>[], images = [1], categories = [1]): CocoGroundTruth => ({
  images: images.map((id) => ({ id })),
  categories: categories.map((id) => ({ id, name: `c${id}` })),
  annotations: anns.map((a, i) => ({ id: i + 1, ...a })),
});
/** Within 1e-12: precision is tp / (fp + tp + eps) as in pycocotools (np.spacing(1)), so 1 reads 0.9999999999999998. */
const close = (a: number, b: number) => Math.abs(a - b) < 1e-12;

test('mAP: one image, one class, one perfect detection: AP 1 at every threshold', (t) => {
  const m = cocoMap(gtOf([{ image_id: 1, category_id: 1, bbox: [10, 10, 50, 50] }]), [
    det(1, 1, [10, 10, 50, 50], 0.9),
  ]);
  for (const k of ['ap', 'ap50', 'ap75'] as const) t.true(close(m[k], 1), `${k} ${m[k]}`);
  t.is(m.ar100, 1);
});

test('mAP: a duplicate detection scored higher and looser (IoU 0.625) than the good one', (t) => {
  // thresholds 0.50, 0.55, 0.60: the duplicate (0.95) matches first, the good one is a false positive after it:
  //   precision 1 at recall 1 -> AP 1.
  // thresholds 0.65 .. 0.95 (7): the duplicate is a false positive first, then the good one: recall [0, 1],
  //   precision [0, 0.5] -> envelope [0.5, 0.5] -> 0.5 at every recall point -> AP 0.5.
  // AP = (3 x 1 + 7 x 0.5) / 10 = 0.65
  const gt = gtOf([{ image_id: 1, category_id: 1, bbox: [0, 0, 10, 10] }]);
  const m = cocoMap(gt, [det(1, 1, [0, 0, 10, 10], 0.9), det(1, 1, [0, 0, 10, 6.25], 0.95)]);
  t.true(close(m.ap, 0.65), `${m.ap}`);
  t.true(close(m.ap50, 1));
  t.true(close(m.ap75, 0.5));
});

test('mAP: a miss halves recall: precision 1 up to recall 0.5, i.e. 51 of the 101 recall points', (t) => {
  const gt = gtOf([
    { image_id: 1, category_id: 1, bbox: [0, 0, 10, 10] },
    { image_id: 1, category_id: 1, bbox: [50, 50, 10, 10] },
  ]);
  const m = cocoMap(gt, [det(1, 1, [0, 0, 10, 10], 0.9)]);
  t.true(close(m.ap, 51 / 101), `${m.ap}`);
  t.is(m.ar100, 0.5);
});

test('mAP: the maxDets boundary: 101 objects, 101 perfect detections, only the top 100 count', (t) => {
  // recall 100/101 with precision 1: the recall points 0, 0.01 .. 0.99 (100 of 101) read 1, the point 1.0 reads 0.
  const anns = Array.from({ length: 101 }, (_, i) => ({
    image_id: 1,
    category_id: 1,
    bbox: [i * 20, 0, 10, 10] as [number, number, number, number],
  }));
  const dets = anns.map((a, i) => det(1, 1, a.bbox, 1 - i / 1000));
  const m = cocoMap(gtOf(anns), dets);
  t.true(close(m.ap, 100 / 101), `${m.ap}`);
  t.true(close(m.ar100, 100 / 101));
  t.true(close(m.ar10, 10 / 101));
  t.true(close(m.ar1, 1 / 101));
});

test('mAP: area ranges: a large false positive ranked first hurts large and all, not small or medium', (t) => {
  // GT: small 20x20 (400 < 32^2), medium 50x50 (2500), large 100x100 (10000), each detected perfectly (0.9), plus a
  // large 100x100 false positive elsewhere at 0.95.
  // small/medium: the false positive is outside their range and unmatched -> ignored -> AP 1.
  // large: [FP, TP] -> precision envelope 0.5 -> AP 0.5.
  // all: [FP, TP, TP, TP] -> recall [0, 1/3, 2/3, 1], precision [0, 1/2, 2/3, 3/4] -> envelope 3/4 -> AP 0.75.
  const boxes: [number, number, number, number][] = [
    [0, 0, 20, 20],
    [100, 0, 50, 50],
    [200, 0, 100, 100],
  ];
  const gt = gtOf(boxes.map((bbox) => ({ image_id: 1, category_id: 1, bbox })));
  const m = cocoMap(gt, [...boxes.map((b) => det(1, 1, b, 0.9)), det(1, 1, [500, 500, 100, 100], 0.95)]);
  t.true(
    close(m.apSmall, 1) && close(m.apMedium, 1) && close(m.apLarge, 0.5),
    `${m.apSmall} ${m.apMedium} ${m.apLarge}`,
  );
  t.true(close(m.ap, 0.75), `${m.ap}`);
});

test('mAP: an image without ground truth adds false positives; detections on images outside the ground truth do not count', (t) => {
  // image 1: one object, found at 0.8. image 2 (in the ground truth, no object): a box at 0.9 -> [FP, TP] -> AP 0.5.
  // image 3 is not in the ground truth: its 0.99 box is left out.
  const gt = gtOf([{ image_id: 1, category_id: 1, bbox: [0, 0, 10, 10] }], [1, 2]);
  const m = cocoMap(gt, [
    det(1, 1, [0, 0, 10, 10], 0.8),
    det(2, 1, [0, 0, 10, 10], 0.9),
    det(3, 1, [0, 0, 10, 10], 0.99),
  ]);
  t.true(close(m.ap, 0.5), `${m.ap}`);
  t.is(m.detections, 2);
});

test('mAP: a category without ground truth is left out of the mean; crowd regions ignore what they cover', (t) => {
  const gt = gtOf(
    [
      { image_id: 1, category_id: 1, bbox: [0, 0, 10, 10] },
      { image_id: 1, category_id: 1, bbox: [100, 100, 50, 50], iscrowd: 1 },
    ],
    [1],
    [1, 2],
  );
  // category 2 has detections but no ground truth: skipped (not a 0). The box inside the crowd region matches the
  // crowd (IoU = intersection / detection area = 1) and is ignored, not a false positive, though it scores highest.
  const m = cocoMap(gt, [
    det(1, 1, [0, 0, 10, 10], 0.8),
    det(1, 1, [110, 110, 10, 10], 0.95),
    det(1, 2, [0, 0, 10, 10], 0.9),
  ]);
  t.true(close(m.ap, 1), `${m.ap}`);
  t.deepEqual(
    m.perClass.map((c) => [c.categoryId, Math.round(c.ap * 1e9) / 1e9]),
    [
      [1, 1],
      [2, -1],
    ],
  );
});

/**
 * A second COCO AP, written from the definition rather than from pycocotools' code: at each IoU threshold, greedy
 * matching of detections (by score, stable) to the best unmatched ground truth of the same image and category;
 * AP(t) = mean over the 101 recall points r of the best precision among ranks whose recall is >= r (0 if none).
 * No crowd, no area ranges (area "all"), maxDets 100.
 */
function plainAp(gt: CocoGroundTruth, dets: CocoDetection[]): number {
  const thresholds = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.8999999999999999, 0.95];
  const iou = (a: number[], b: number[]) => {
    const iw = Math.max(0, Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]));
    const ih = Math.max(0, Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]));
    const inter = iw * ih;
    return inter > 0 ? inter / (a[2] * a[3] + b[2] * b[3] - inter) : 0;
  };
  const values: number[] = [];
  for (const cat of gt.categories.map((c) => c.id)) {
    const nGt = gt.annotations.filter((a) => a.category_id === cat).length;
    if (nGt === 0) continue;
    // per image: its detections by score (stable), the first 100
    const ranked: { d: CocoDetection; key: number }[] = [];
    for (const img of gt.images.map((i) => i.id)) {
      const mine = dets.map((d, k) => ({ d, k })).filter(({ d }) => d.image_id === img && d.category_id === cat);
      mine.sort((a, b) => b.d.score - a.d.score || a.k - b.k);
      mine.slice(0, 100).forEach(({ d }) => ranked.push({ d, key: ranked.length }));
    }
    for (const thr of thresholds) {
      const isTp = new Map<CocoDetection, boolean>();
      for (const img of gt.images.map((i) => i.id)) {
        const gts = gt.annotations.filter((a) => a.image_id === img && a.category_id === cat);
        const taken = new Set<number>();
        for (const { d } of ranked.filter((r) => r.d.image_id === img)) {
          let best = -1;
          let bestIou = Math.min(thr, 1 - 1e-10);
          gts.forEach((g, gi) => {
            const v = iou(d.bbox, g.bbox);
            if (!taken.has(gi) && v >= bestIou) {
              best = gi;
              bestIou = v;
            }
          });
          if (best >= 0) taken.add(best);
          isTp.set(d, best >= 0);
        }
      }
      const order = [...ranked].sort((a, b) => b.d.score - a.d.score || a.key - b.key);
      let tp = 0;
      const points: { recall: number; precision: number }[] = [];
      order.forEach(({ d }, i) => {
        if (isTp.get(d)) tp++;
        points.push({ recall: tp / nGt, precision: tp / (i + 1) });
      });
      let sum = 0;
      for (let r = 0; r <= 100; r++) {
        const reach = points.filter((p) => p.recall >= r / 100 - 1e-12);
        sum += reach.length ? Math.max(...reach.map((p) => p.precision)) : 0;
      }
      values.push(sum / 101);
    }
  }
  return values.reduce((a, b) => a + b, 0) / values.length;
}

test('mAP on a generated case (40 frames, 4 classes, jittered, missing and duplicate boxes) equals a second implementation', (t) => {
  let seed = 5;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const anns: Omit<CocoAnnotation, 'id'>[] = [];
  const dets: CocoDetection[] = [];
  for (let img = 0; img < 40; img++) {
    for (let k = 0; k < 1 + Math.floor(rand() * 6); k++) {
      const cat = 1 + Math.floor(rand() * 4);
      const bbox: [number, number, number, number] = [
        Math.floor(rand() * 500),
        Math.floor(rand() * 300),
        20 + Math.floor(rand() * 150),
        20 + Math.floor(rand() * 150),
      ];
      anns.push({ image_id: img, category_id: cat, bbox });
      if (rand() < 0.15) continue; // missed
      const j = () => (rand() - 0.5) * 0.3 * bbox[2];
      dets.push(
        det(
          img,
          cat,
          [bbox[0] + j(), bbox[1] + j(), bbox[2] * (0.8 + rand() * 0.4), bbox[3] * (0.8 + rand() * 0.4)],
          Math.round(rand() * 1000) / 1000,
        ),
      );
      if (rand() < 0.2)
        dets.push(det(img, cat, [bbox[0] + j(), bbox[1] + j(), bbox[2], bbox[3]], Math.round(rand() * 1000) / 1000)); // duplicate
    }
    if (rand() < 0.3)
      dets.push(
        det(img, 1 + Math.floor(rand() * 4), [rand() * 600, rand() * 400, 40, 40], Math.round(rand() * 1000) / 1000),
      ); // false positive
  }
  const gt = gtOf(
    anns,
    Array.from({ length: 40 }, (_, i) => i),
    [1, 2, 3, 4],
  );
  // areas all and no crowd: pycocotools' per-image evaluation and the definition agree exactly here
  const m = cocoMap(gt, dets);
  const expected = plainAp(gt, dets);
  t.true(Math.abs(m.ap - expected) < 1e-12, `COCOeval-style ${m.ap} vs plain ${expected}`);
  t.true(m.ap > 0.2 && m.ap < 0.95, `a non-trivial AP: ${m.ap}`);
});

// ---------------------------------------------------------------------------------------------------------- CLI

const dir = join(scratchDir(), 'accuracy');
mkdirSync(dir, { recursive: true });

test('jetprof agree and map from the command line; --min-match gates with exit 1', async (t) => {
  const ref = join(dir, 'ref.json');
  const other = join(dir, 'other.json');
  writeFileSync(ref, JSON.stringify([det(0, 0, [10, 10, 20, 20], 0.9), det(1, 0, [40, 40, 20, 20], 0.8)]));
  writeFileSync(other, JSON.stringify([det(0, 0, [10, 10, 20, 20], 0.9)]));
  const r = await runCli('jetprof', ['agree', ref, other, '--json', join(dir, 'agree.json')]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /50\.00% of boxes matched at IoU >= 0\.5 \(1 matched, 1 only in REF, 0 only in OTHER\)/);
  t.like(JSON.parse(readFileSync(join(dir, 'agree.json'), 'utf8')), {
    schema: 'jetprof.agreement/1',
    matched: 1,
    onlyRef: 1,
  });
  const gated = await runCli('jetprof', ['agree', ref, other, '--min-match', '0.9']);
  t.is(gated.code, 1);
  t.regex(gated.stderr, /matched share 50\.00% is below --min-match 90\.00%/);
  const gt = join(dir, 'gt.json');
  writeFileSync(
    gt,
    JSON.stringify(
      gtOf(
        [
          { image_id: 0, category_id: 0, bbox: [10, 10, 20, 20] },
          { image_id: 1, category_id: 0, bbox: [40, 40, 20, 20] },
        ],
        [0, 1],
        [0],
      ),
    ),
  );
  const m = await runCli('jetprof', ['map', ref, '--gt', gt]);
  t.is(m.code, 0, m.stderr);
  t.regex(m.stdout, /\| AP @\[IoU=0\.50:0\.95, area=all, maxDets=100\] \| 1\.000 \|/);
});

test('bad input - not COCO results, ground truth without images or categories, frames missing from one side: one line, exit 2', async (t) => {
  const notCoco = join(dir, 'not-coco.json');
  writeFileSync(notCoco, JSON.stringify([{ image_id: 0, bbox: [1, 2, 3] }]));
  const ok = join(dir, 'ok.json');
  writeFileSync(ok, '[]');
  const r1 = await runCli('jetprof', ['agree', notCoco, ok]);
  t.is(r1.code, 2);
  t.regex(
    r1.stderr,
    /not-coco\.json: entry 0 is not a COCO detection \(category_id is not an integer\) \(fix: pass the file written by `infer --detections F\.json`/,
  );
  t.is(r1.stderr.trim().split('\n').length, 1);
  const noImages = join(dir, 'no-images.json');
  writeFileSync(noImages, JSON.stringify({ annotations: [], categories: [] }));
  const r2 = await runCli('jetprof', ['map', ok, '--gt', noImages]);
  t.is(r2.code, 2);
  t.regex(r2.stderr, /no-images\.json: COCO annotations without "images"/);
  const noCats = join(dir, 'no-cats.json');
  writeFileSync(noCats, JSON.stringify({ images: [{ id: 0 }], annotations: [] }));
  t.regex(
    (await runCli('jetprof', ['map', ok, '--gt', noCats])).stderr,
    /no-cats\.json: COCO annotations without "categories"/,
  );
  // two run JSONs that did not process the same frames
  const runA = join(dir, 'run-a.json');
  const runB = join(dir, 'run-b.json');
  const run = (frames: number) => ({
    schema: 'jetprof.run/2',
    detectionsFile: 'ok.json',
    warmup: { index: [0] },
    perFrame: { index: Array.from({ length: frames }, (_, i) => i + 1) },
    setup: { label: 'x' },
  });
  writeFileSync(runA, JSON.stringify(run(10)));
  writeFileSync(runB, JSON.stringify(run(6)));
  const r3 = await runCli('jetprof', ['agree', runA, runB]);
  t.is(r3.code, 2);
  t.regex(
    r3.stderr,
    /run-b\.json: frames 7\.\.10 \(4\) are missing: the two runs did not process the same frames \(fix: run both on the same video with the same --max-frames/,
  );
  const missing = await runCli('jetprof', ['agree', join(dir, 'nope.json'), ok]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /nope\.json: detections file not found/);
});

// ------------------------------------------------------------------------------------- real frames, two backends

const VTEST = join(ROOT, 'videos', 'vtest.avi');
requires(existsSync(VTEST), 'videos/vtest.avi is missing: bash scripts/fetch-sample-video.sh')(
  'ONNX Runtime and OpenCV DNN on the same .onnx find the same boxes on real vtest frames (>= 99% matched, mean IoU >= 0.99); a detections file another run wrote over is never taken for theirs',
  async (t) => {
    // seeded 80-class weights with objectness bias -1: at --conf 0.46, tens of boxes per frame on vtest.avi
    const model = makeModel('agree', YOLOV4_TINY_CFG, 3, undefined, -1);
    const runs: Record<string, string> = {};
    for (const backend of ['onnx', 'opencv']) {
      const json = join(dir, `vtest-${backend}.json`);
      await inferRun([
        '--backend',
        backend,
        VTEST,
        '--model',
        model.onnxPath,
        '--max-frames',
        '20',
        '--warmup',
        '2',
        '--conf',
        '0.46',
        '--no-write',
        '-q',
        '--detections',
        join(dir, `vtest-${backend}-dets.json`),
        '--json',
        json,
      ]);
      runs[backend] = json;
    }
    const opencvRun = JSON.parse(readFileSync(runs.opencv, 'utf8'));
    t.like(opencvRun.setup, { executionProvider: 'cpu', precision: 'fp32', label: 'opencv-fp32-cpu-sequential' });
    t.regex(opencvRun.backendDetail, /^OpenCV DNN 4\.\d+\.\d+ \(cpu\), ONNX importer$/);
    const perFrame: number[] = opencvRun.perFrame.detections;
    t.true(
      perFrame.every((n) => n >= 10 && n < 300),
      `tens of boxes per frame: ${perFrame}`,
    );
    const json = join(dir, 'vtest-agree.json');
    const r = await runCli('jetprof', ['agree', runs.onnx, runs.opencv, '--min-match', '0.99', '--json', json]);
    t.is(r.code, 0, r.stderr);
    const a = JSON.parse(readFileSync(json, 'utf8'));
    t.is(a.frames, 18, 'the measured frames, warm-up excluded');
    t.true(a.matched >= 180, `${a.matched} boxes matched`);
    t.true(a.matchedShare >= 0.99, `matched share ${a.matchedShare}`);
    t.true(a.meanIou >= 0.99, `mean IoU ${a.meanIou}`);

    // the report reads speed and accuracy together: agreement against ONNX Runtime, and mAP with --gt (here ground
    // truth made from ONNX Runtime's own measured-frame boxes, so its AP is 1 and OpenCV DNN's is too)
    const dets = JSON.parse(readFileSync(join(dir, 'vtest-onnx-dets.json'), 'utf8')).filter(
      (d: { warmup?: boolean }) => !d.warmup,
    );
    const frames = [...new Set<number>(dets.map((d: { image_id: number }) => d.image_id))];
    const gt = join(dir, 'vtest-gt.json');
    writeFileSync(
      gt,
      JSON.stringify({
        images: frames.map((id) => ({ id })),
        categories: Array.from({ length: 80 }, (_, id) => ({ id, name: `c${id}` })),
        annotations: dets.map((d: CocoDetection, i: number) => ({
          id: i + 1,
          image_id: d.image_id,
          category_id: d.category_id,
          bbox: d.bbox,
        })),
      }),
    );
    const rep = await runCli('jetprof', ['report', '--run', runs.onnx, '--run', runs.opencv, '--gt', gt]);
    t.is(rep.code, 0, rep.stderr);
    t.regex(rep.stdout, /\| ONNX Runtime \(CPU, FP32\) \| reference \|  \|  \|  \| 1\.000 \| 1\.000 \|/);
    t.regex(
      rep.stdout,
      /\| OpenCV DNN \(CPU, FP32\) \| 100\.00% \(\d+\) \| 1\.0000 \| 0 \/ 0 \| [\d.]+ \/ [\d.]+ \| 1\.000 \| 1\.000 \|/,
    );

    // another run writes its boxes over OpenCV DNN's file (two compares into one --out-dir): never taken for this run's
    writeFileSync(join(dir, 'vtest-opencv-dets.json'), JSON.stringify(dets.slice(1)));
    const replaced = await runCli('jetprof', ['agree', runs.onnx, runs.opencv]);
    t.is(replaced.code, 2, replaced.stderr);
    t.regex(
      replaced.stderr,
      /vtest-opencv-dets\.json: not the detections .*vtest-opencv\.json wrote \(the file changed since/,
    );
    const rep2 = await runCli('jetprof', ['report', '--run', runs.onnx, '--run', runs.opencv]);
    t.is(rep2.code, 0, rep2.stderr);
    t.notRegex(rep2.stdout, /\| OpenCV DNN \(CPU, FP32\) \| 100\.00%/);
    t.regex(rep2.stdout, /not the detections .*vtest-opencv\.json wrote/);
  },
);

test('--backend opencv --ep cuda without CUDA in this OpenCV: one warning line, then the CPU', async (t) => {
  const model = makeModel('cv-cuda', SMALL_LAB_CFG, 2);
  const video = makeVideo('cv-cuda.mp4', 4, 160, 120);
  const r = await runCli('infer-opencv', [
    video,
    '--model',
    model.onnxPath,
    '--ep',
    'cuda',
    '--warmup',
    '1',
    '--no-write',
    '-q',
    '--json',
    '-',
  ]);
  t.is(r.code, 0, r.stderr);
  t.regex(
    r.stderr,
    /^infer: OpenCV 4\.\d+\.\d+ here was built without CUDA and cuDNN \(cv\.getBuildInformation\(\)\); using the CPU\. On a Jetson, build OpenCV with -D WITH_CUDA=ON/m,
  );
  t.like(JSON.parse(r.stdout).setup, { executionProvider: 'cpu', label: 'opencv-fp32-cpu-sequential' });
  const bad = await runCli('infer-opencv', [video, '--model', model.onnxPath, '--ep', 'tensorrt']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--ep tensorrt is an ONNX Runtime provider; OpenCV DNN takes --ep cpu or cuda/);
});

test("a run file's detectionsFile is read only inside the run's folder: a path outside it, or one naming a run (itself included), is one line and exit 2; the file itself can be given", async (t) => {
  const dir = join(scratchDir(), 'dets-confined');
  mkdirSync(join(dir, 'runs'), { recursive: true });
  const secret = join(dir, 'secret.json');
  writeFileSync(secret, JSON.stringify([{ image_id: 0, category_id: 0, bbox: [1, 2, 3, 4], score: 0.9 }]));
  const run = (name: string, detectionsFile: string) => {
    const p = join(dir, 'runs', name);
    writeFileSync(p, JSON.stringify({ schema: 'jetprof.run/2', detectionsFile, setup: { label: name } }));
    return p;
  };
  const outside = run('outside.json', '../secret.json');
  const absolute = run('absolute.json', secret);
  const self = run('self.json', 'self.json');
  for (const [file, named] of [
    [outside, '../secret.json'],
    [absolute, secret],
  ]) {
    const r = await runCli('jetprof', ['agree', file, secret]);
    t.is(r.code, 2, r.stderr);
    t.regex(
      r.stderr,
      new RegExp(
        `its detectionsFile names .*${named.split('/').pop()!.replace('.', '\\.')}.*, outside the run's folder \\(fix: pass the detections file itself`,
      ),
    );
    t.notRegex(r.stderr, /bbox|0\.9/, 'nothing of the file outside is echoed');
  }
  const loop = await runCli('jetprof', ['agree', self, secret]);
  t.is(loop.code, 2, loop.stderr);
  t.regex(loop.stderr, /self\.json: named by .*self\.json as its detections, but not a COCO results list/);
  const direct = await runCli('jetprof', ['agree', secret, secret]);
  t.is(direct.code, 0, direct.stderr);
});
