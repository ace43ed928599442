/**
 * Postprocess at any density: the flat-array NMS against a brute-force greedy NMS written plainly here, against
 * OpenCV's own NMSBoxes, the linear-time top-N selection against a full sort, the caps, and a dense run end to end.
 */
import test from 'ava';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Candidates, topByScore } from '../src/detect/candidates.ts';
import { candidateFloor, decodeHead } from '../src/detect/decode.ts';
import { stretchGeometry } from '../src/detect/geometry.ts';
import { type NmsKind, nmsCandidates } from '../src/detect/nms.ts';
import { Postprocessor, PostprocessThread } from '../src/detect/postprocess.ts';
import type { JetprofError } from '../src/util/errors.ts';
import type { Detection } from '../src/detect/types.ts';
import type { YoloModelInfo } from '../src/model/metadata.ts';
import { loadOpenCv } from '../src/video/opencv.ts';
import { capNotes } from '../src/report/run-lines.ts';
import { makeModel, makeVideo, PERSON_VEHICLE_CFG, scratchDir, inferRun } from './helpers/fixtures.ts';

/**
 * Greedy NMS as the textbook states it: visit boxes by score (ties: lower index first); keep a box unless a kept
 * box of the same class overlaps it by more than the threshold. Every pair is compared; no index, no sweep.
 */
function bruteForceNms(boxes: Detection[], threshold: number, kind: NmsKind): number[] {
  const order = boxes.map((_, i) => i).sort((a, b) => boxes[b].score - boxes[a].score || a - b);
  const kept: number[] = [];
  for (const i of order) {
    const a = boxes[i];
    let suppressed = false;
    for (const k of kept) {
      const b = boxes[k];
      if (b.classId !== a.classId) continue;
      const iw = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
      const ih = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
      const inter = iw > 0 && ih > 0 ? iw * ih : 0;
      const union = (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter;
      let overlap = union > 0 ? inter / union : 0;
      if (kind === 'diou') {
        const cw = Math.max(a.x2, b.x2) - Math.min(a.x1, b.x1);
        const ch = Math.max(a.y2, b.y2) - Math.min(a.y1, b.y1);
        const c = cw * cw + ch * ch;
        const dx = (a.x1 + a.x2) / 2 - (b.x1 + b.x2) / 2;
        const dy = (a.y1 + a.y2) / 2 - (b.y1 + b.y2) / 2;
        if (c > 0) overlap -= Math.pow((dx * dx + dy * dy) / c, 0.6);
      }
      if (overlap > threshold) {
        suppressed = true;
        break;
      }
    }
    if (!suppressed) kept.push(i);
  }
  return kept;
}

/**
 * Boxes on a coarse grid (in units of `scale` px: quarter pixels to 16 px), so that shared edges, slivers and overlaps
 * exactly at the threshold (IoU 1/2, 1) are frequent; some of zero width or height; scores with ties; then copies of
 * some boxes with other scores (identical boxes).
 */
const boxSetArb = fc
  .record({
    classes: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 30 })),
    scale: fc.constantFrom(0.25, 1, 16),
    raw: fc.array(
      fc.tuple(
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.nat(),
      ),
      { maxLength: 300 },
    ),
    dups: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 12 })), { maxLength: 60 }),
  })
  .map(({ classes, scale, raw, dups }) => {
    const boxes: Detection[] = raw.map(([x, y, w, h, s, c]) => ({
      x1: x * scale,
      y1: y * scale,
      x2: (x + w) * scale,
      y2: (y + h) * scale,
      score: Math.fround(s / 12),
      classId: c % classes,
    }));
    for (const [i, s] of dups) if (boxes.length) boxes.push({ ...boxes[i % boxes.length], score: Math.fround(s / 12) });
    return boxes;
  });

test('NMS equals a brute-force greedy NMS: random sets with ties, zero-area and identical boxes, both kinds, many classes', (t) => {
  fc.assert(
    fc.property(
      boxSetArb,
      fc.constantFrom(0, 0.3, 0.45, 0.5, 0.7, 1),
      fc.constantFrom<NmsKind>('iou', 'diou'),
      fc.integer({ min: 1, max: 120 }),
      (boxes, threshold, kind, limit) => {
        const c = Candidates.from(boxes);
        const order = topByScore(c, c.count);
        const expected = bruteForceNms(boxes, threshold, kind);
        // the same boxes, in the same (score) order; with a limit (--max-det), exactly the first ones
        const all = [...nmsCandidates(c, order, threshold, kind)];
        const first = [...nmsCandidates(c, order, threshold, kind, limit)];
        return (
          JSON.stringify(all) === JSON.stringify(expected) &&
          JSON.stringify(first) === JSON.stringify(expected.slice(0, limit))
        );
      },
    ),
    { numRuns: 400 },
  );
  t.pass('400 random sets agree');
});

test('NMS on a large crowded class (the sweep path) equals brute force', (t) => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const boxes: Detection[] = [];
  for (let i = 0; i < 3000; i++) {
    const x = rand() * 900;
    const y = rand() * 500;
    boxes.push({
      x1: x,
      y1: y,
      x2: x + 5 + rand() * 120,
      y2: y + 5 + rand() * 120,
      score: Math.fround(rand()),
      classId: i % 3,
    });
  }
  for (const kind of ['iou', 'diou'] as const) {
    for (const threshold of [0, 0.45]) {
      const c = Candidates.from(boxes);
      const ours = [...nmsCandidates(c, topByScore(c, c.count), threshold, kind)];
      const expected = bruteForceNms(boxes, threshold, kind);
      t.deepEqual(ours, expected, `${kind} ${threshold}`);
      t.deepEqual(
        [...nmsCandidates(c, topByScore(c, c.count), threshold, kind, 40)],
        expected.slice(0, 40),
        `${kind} ${threshold}, first 40`,
      );
      t.true(
        ours.length > 50 && ours.length < 3000,
        `${kind} ${threshold}: ${ours.length} kept, so suppression happened`,
      );
    }
  }
});

test('IoU NMS in best-class mode keeps the same indices as OpenCV NMSBoxes on the same candidates', (t) => {
  const cv = loadOpenCv();
  // A head of random values decoded in best-class mode: real candidates, several per class, then integer boxes
  // (NMSBoxes takes cv::Rect) with area (OpenCV counts two empty boxes as overlapping fully).
  const head = {
    output: 'h',
    gridW: 13,
    gridH: 13,
    anchors: [
      [10, 14],
      [23, 27],
      [37, 58],
    ] as [number, number][],
    scaleXY: 1.05,
    newCoords: false,
  };
  const classes = 5;
  let seed = 11;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const data = Float32Array.from({ length: 3 * (5 + classes) * 169 }, () => (rand() - 0.5) * 6);
  const decoded = decodeHead(data, head, stretchGeometry(416, 416, 416, 416), {
    classes,
    conf: 0.05,
    classMode: 'best',
  }).toDetections();
  const boxes = decoded
    .map((d) => ({ ...d, x1: Math.round(d.x1), y1: Math.round(d.y1), x2: Math.round(d.x2), y2: Math.round(d.y2) }))
    .filter((d) => d.x2 > d.x1 && d.y2 > d.y1);
  t.true(boxes.length > 100, `${boxes.length} candidates`);
  const c = Candidates.from(boxes);
  const ours = [...nmsCandidates(c, topByScore(c, c.count), 0.45, 'iou')];
  for (let cls = 0; cls < classes; cls++) {
    const members = boxes.map((b, i) => [b, i] as const).filter(([b]) => b.classId === cls);
    const rects = members.map(([b]) => new cv.Rect(b.x1, b.y1, b.x2 - b.x1, b.y2 - b.y1));
    const kept = cv
      .NMSBoxes(
        rects,
        members.map(([b]) => b.score),
        0,
        0.45,
      )
      .map((k: number) => members[k][1]);
    t.deepEqual(
      ours.filter((i) => boxes[i].classId === cls),
      kept,
      `class ${cls}: ${members.length} candidates`,
    );
  }
});

test('best-class mode: one candidate per box, its highest class (the first on a tie)', (t) => {
  const head = {
    output: 'h',
    gridW: 1,
    gridH: 1,
    anchors: [[16, 16]] as [number, number][],
    scaleXY: 1,
    newCoords: false,
  };
  const data = Float32Array.from([0, 0, 0, 0, 5, 2, 3, 3, -1]); // classes: 2, 3, 3, -1 (logits)
  const g = stretchGeometry(64, 64, 64, 64);
  const multi = decodeHead(data, head, g, { classes: 4, conf: 0.5 }).toDetections();
  t.deepEqual(
    multi.map((d) => d.classId),
    [0, 1, 2],
  );
  const best = decodeHead(data, head, g, { classes: 4, conf: 0.5, classMode: 'best' }).toDetections();
  t.deepEqual(
    best.map((d) => d.classId),
    [1],
  );
});

test('top-N selection (radix sort on the score bits) equals a full sort by score, ties by index, negatives included', (t) => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.integer({ min: -20, max: 20 }).map((v) => v / 20),
          fc.float({ noNaN: true }),
        ),
        { minLength: 1, maxLength: 700 },
      ),
      fc.integer({ min: 1, max: 800 }),
      (raw, k) => {
        const scores = raw.map(Math.fround);
        const c = new Candidates(4);
        scores.forEach((s, i) => c.add(i, i, i + 1, i + 1, s, 0));
        const expected = scores
          .map((_, i) => i)
          .sort((a, b) => scores[b] - scores[a] || a - b)
          .slice(0, k);
        return JSON.stringify([...topByScore(c, Math.min(k, c.count))]) === JSON.stringify(expected);
      },
    ),
    { numRuns: 300, examples: [[[-0, 0], 1]] }, // -0 and 0 tie: the first index wins (a CI run found it)
  );
  t.pass();
});

test('caps: --max-candidates keeps the top scores for NMS, --max-det the top boxes after it; both are reported', (t) => {
  const model: YoloModelInfo = {
    schema: 'jetprof.model/1',
    inputName: 'input',
    inputWidth: 64,
    inputHeight: 64,
    classes: 3,
    labels: ['a', 'b', 'c'],
    heads: [{ output: 'h', gridW: 8, gridH: 8, anchors: [[4, 4]], scaleXY: 1, newCoords: false }],
  };
  // every cell confident, every class above the threshold: 8x8x3 = 192 small, non-overlapping candidates
  const data = new Float32Array(8 * 64);
  for (let cell = 0; cell < 64; cell++) {
    data[4 * 64 + cell] = 4;
    for (let c = 0; c < 3; c++) data[(5 + c) * 64 + cell] = 1 + ((cell * 3 + c) % 7) / 10;
  }
  const outputs = new Map([['h', data]]);
  const g = stretchGeometry(64, 64, 64, 64);
  const base = { conf: 0.3, nms: 0.5, nmsKind: 'iou' as const, classMode: 'multi' as const };
  const free = new Postprocessor(model, g, { ...base, maxCandidates: 1000, maxDet: 1000 }).run(outputs);
  t.like(free, { candidates: 192, candidatesCapped: false, detectionsCapped: false });
  t.is(free.detections.length, 192);
  const capped = new Postprocessor(model, g, { ...base, maxCandidates: 50, maxDet: 20 }).run(outputs);
  t.like(capped, { candidates: 192, candidatesCapped: true, detectionsCapped: true });
  t.is(capped.detections.length, 20);
  const top = [...free.detections]
    .sort((a, b) => b.score - a.score)
    .slice(0, 20)
    .map((d) => d.score);
  t.deepEqual(
    capped.detections.map((d) => d.score),
    top,
    'the highest scores, highest first',
  );
});

test('a dense run (seeded weights, --conf 0.001) keeps at most --max-det boxes a frame and reports the capped frames', async (t) => {
  const model = makeModel('dense', PERSON_VEHICLE_CFG, 21);
  const video = makeVideo('dense.mp4', 6, 320, 240);
  const json = join(scratchDir(), 'dense.json');
  const { run: returned } = await inferRun([
    video,
    '--model',
    model.onnxPath,
    '--conf',
    '0.001',
    '--max-det',
    '40',
    '--max-candidates',
    '2000',
    '--warmup',
    '1',
    '--no-write',
    '--json',
    json,
  ]);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.frames, 5);
  t.true(
    run.perFrame.detections.every((n: number) => n <= 40),
    `${run.perFrame.detections}`,
  );
  t.true(
    run.perFrame.candidates.every((n: number) => n > 2000),
    `a dense model: ${run.perFrame.candidates} candidates`,
  );
  t.like(run.postprocess, {
    conf: 0.001,
    maxDet: 40,
    maxCandidates: 2000,
    framesCandidatesCapped: 5,
    framesDetectionsCapped: 5,
  });
  const notes = capNotes(returned).join('\n'); // the notes infer prints
  t.regex(
    notes,
    /5 of 5 frames had more than --max-candidates 2000 candidates \(up to \d+\): only the top 2000 by score entered NMS/,
  );
  t.regex(notes, /5 of 5 frames kept more than --max-det 40 boxes after NMS/);
});

test('a frame firing everywhere decodes only what can be among the --max-candidates best, and gives exactly what decoding every candidate gives: boxes, order, count (random logits, ties, new_coords, best-class mode)', (t) => {
  const classes = 6;
  const heads = [
    {
      output: 'a',
      gridW: 13,
      gridH: 13,
      anchors: [
        [80, 80],
        [130, 170],
        [340, 320],
      ],
      scaleXY: 1.05,
      newCoords: false,
    },
    {
      output: 'b',
      gridW: 26,
      gridH: 26,
      anchors: [
        [20, 30],
        [40, 60],
        [80, 80],
      ],
      scaleXY: 1.05,
      newCoords: false,
    },
  ] as YoloModelInfo['heads'];
  const model = (newCoords: boolean): YoloModelInfo => ({
    schema: 'jetprof.model/1',
    inputName: 'input',
    inputWidth: 416,
    inputHeight: 416,
    classes,
    labels: Array.from({ length: classes }, (_, i) => `c${i}`),
    heads: heads.map((h) => ({ ...h, newCoords })),
  });
  const g = stretchGeometry(960, 540, 416, 416);
  /** Every value of the heads: logits around `centre` (new_coords: in 0..1), a share of them copied (ties). */
  const frame = (seed: number, centre: number, newCoords: boolean, levels = 0) => {
    let s = seed;
    const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // with `levels`, the logits take that many values only: thousands of scores tie, at the floor too
    const spread = () => (levels ? Math.floor(rand() * levels) / levels : rand());
    return new Map(
      heads.map((h) => {
        const data = new Float32Array(h.anchors.length * (5 + classes) * h.gridW * h.gridH);
        for (let i = 0; i < data.length; i++) data[i] = newCoords ? spread() : centre + (spread() - 0.5) * 4;
        for (let i = 0; i < data.length; i += 97) data[i] = data[(i * 7) % data.length]; // ties across cells
        return [h.output, data];
      }),
    );
  };
  const settingsOf = (conf: number, keep: number) =>
    ({ conf, nms: 0.5, nmsKind: 'iou', classMode: 'multi', maxCandidates: keep, maxDet: 300 }) as const;
  /** What decoding every candidate gives: the path the floor must not change. */
  const everything = (
    m: YoloModelInfo,
    outputs: Map<string, Float32Array>,
    o: { conf: number; keep: number; classMode: 'multi' | 'best'; nms?: number },
  ) => {
    const c = new Candidates();
    for (const h of m.heads)
      decodeHead(outputs.get(h.output)!, h, g, { classes, conf: o.conf, classMode: o.classMode }, c);
    const order = topByScore(c, Math.min(c.count, o.keep));
    return {
      detections: c.toDetections(nmsCandidates(c, order, o.nms ?? 0.5, 'iou', 301).subarray(0, 300)),
      candidates: c.count,
    };
  };
  let floored = 0;
  for (const [seed, centre, newCoords, conf, keep, classMode, levels] of [
    [1, 3, false, 0.3, 3000, 'multi', 0],
    [2, 3, false, 0.001, 3000, 'multi', 0],
    [3, 1, false, 0.3, 500, 'multi', 0],
    [4, 5, false, 0.25, 1000, 'multi', 0],
    [5, 0, true, 0.2, 2000, 'multi', 0],
    [6, 3, false, 0.3, 3000, 'best', 0],
    [7, 3, false, 0.3, 100_000, 'multi', 0],
    // NMS 1 suppresses nothing: every candidate entering NMS comes out, so the ties chosen at the floor are compared
    [8, 3, false, 0.3, 3000, 'multi', 3],
    [9, 3, false, 0.3, 200, 'multi', 2],
    [10, 0, true, 0.2, 150, 'multi', 2],
    // --max-candidates at least 4 x 8 x (--max-det + 1): the best 2408 are decoded first (all the NMS 1 case needs)
    [11, 3, false, 0.01, 10_000, 'multi', 0],
    [12, 3, false, 0.01, 10_000, 'multi', 3],
  ] as const) {
    const nms = levels ? 1 : 0.5;
    const m = model(newCoords);
    const outputs = frame(seed, centre, newCoords, levels);
    const opts = { conf, keep, classMode, nms };
    const r = new Postprocessor(m, g, {
      conf,
      nms,
      nmsKind: 'iou',
      classMode,
      maxCandidates: keep,
      maxDet: 300,
    }).run(outputs);
    const ref = everything(m, outputs, opts);
    t.is(r.candidates, ref.candidates, `case ${seed}: the count of every candidate`);
    t.deepEqual(r.detections, ref.detections, `case ${seed}: the same boxes in the same order`);
    t.is(r.candidatesCapped, ref.candidates > keep);
    const hs = m.heads.map((head) => ({ head, data: outputs.get(head.output)! }));
    if (classMode === 'multi' && candidateFloor(hs, classes, conf, keep)) floored++;
  }
  t.true(floored >= 9, `the floor was used in ${floored} of the cases`);
  // where NMS keeps --max-det + 1 boxes among the best few, only about 8 x that many are decoded and sorted (NMS 1
  // keeps every box it sees); the exact boxes are case 8's above
  const ahead = new Postprocessor(model(false), g, { ...settingsOf(0.01, 10_000), nms: 1 });
  ahead.run(frame(12, 3, false, 3));
  const decoded = (ahead as unknown as { buffer: Candidates }).buffer.count;
  t.true(decoded >= 8 * 301 && decoded < 10_000, `${decoded} decoded of up to 10000`);
  // a model whose outputs do not vary: every score ties at the floor, and decode stores --max-candidates of them
  const flat = new Map(
    heads.map((h) => [h.output, new Float32Array(h.anchors.length * (5 + classes) * h.gridW * h.gridH).fill(5)]),
  );
  const flatHeads = model(false).heads.map((head) => ({ head, data: flat.get(head.output)! }));
  t.truthy(candidateFloor(flatHeads, classes, 0.3, 3000), 'the tied frame has a floor');
  const post = new Postprocessor(model(false), g, settingsOf(0.3, 3000));
  t.is(post.run(flat).candidates, 15210, 'every candidate counted, stored or not');
  t.deepEqual(
    post.run(flat).detections,
    everything(model(false), flat, { conf: 0.3, keep: 3000, classMode: 'multi' }).detections,
  );
  const c = (post as unknown as { buffer: Candidates }).buffer;
  t.is(c.count, 3000, 'the first 3000 ties are stored, not all 15210');
  t.is(c.atFloor, 15210);
});

test('the postprocess thread (the pipelined loop) answers each frame in order with what the Postprocessor gives here; a NaN frame is refused in one line; close() ends it', async (t) => {
  const model: YoloModelInfo = {
    schema: 'jetprof.model/1',
    inputName: 'input',
    inputWidth: 416,
    inputHeight: 416,
    classes: 3,
    labels: ['a', 'b', 'c'],
    heads: [
      {
        output: 'h',
        gridW: 13,
        gridH: 13,
        anchors: [
          [81, 82],
          [135, 169],
          [344, 319],
        ],
        scaleXY: 1.05,
        newCoords: false,
      },
    ],
  };
  const g = stretchGeometry(640, 480, 416, 416);
  const settings = {
    conf: 0.3,
    nms: 0.5,
    nmsKind: 'iou',
    classMode: 'multi',
    maxCandidates: 300,
    maxDet: 100,
  } as const;
  let seed = 5;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const frames = Array.from(
    { length: 6 },
    () => new Map([['h', Float32Array.from({ length: 3 * 8 * 169 }, () => rand() * 8 - 4)]]),
  );
  const here = new Postprocessor(model, g, settings, 'm.onnx');
  const thread = new PostprocessThread(here);
  try {
    await thread.ready; // the loop waits for it before its first frame
    // handed over all at once: the answers come back in order, each the frame's own
    const answers = await Promise.all(frames.map((f) => thread.run(f)));
    frames.forEach((f, i) => t.deepEqual(answers[i], here.run(f), `frame ${i}`));
    t.true(answers.some((a) => a.detections.length > 0));
    t.is(frames[0].get('h')!.length, 3 * 8 * 169, "the loop's outputs are left as they were (copied over, not moved)");
    const nan = new Map([['h', new Float32Array(3 * 8 * 169).fill(Number.NaN)]]);
    const e = await t.throwsAsync(thread.run(nan), { message: /^m\.onnx: the model's outputs hold NaN/ });
    t.is((e as JetprofError).code, 'BAD_MODEL');
    t.regex((e as JetprofError).suggestion ?? '', /export or build it again/);
    t.deepEqual(await thread.run(frames[1]), here.run(frames[1]), 'a refused frame does not end the thread');
  } finally {
    await thread.close();
  }
  await t.throwsAsync(thread.run(frames[0]));
});
