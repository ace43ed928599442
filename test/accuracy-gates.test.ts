/**
 * An accuracy gate must not pass on nothing: two files without a box, a file against itself, weights full of NaN
 * (every output NaN, so no box anywhere), detections on images the ground truth does not have.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireRoom } from '../src/util/resources.ts';
import { makeModel, makeVideo, SMALL_LAB_CFG, runCli, scratchDir } from './helpers/fixtures.ts';

const dir = scratchDir();

test('agree: neither file has a box -> exit 1 "nothing to compare" (unless --allow-empty); a file against itself warns', async (t) => {
  const empty1 = join(dir, 'empty-1.json');
  const empty2 = join(dir, 'empty-2.json');
  writeFileSync(empty1, '[]');
  writeFileSync(empty2, '[]');
  const r = await runCli('jetprof', ['agree', empty1, empty2]);
  t.is(r.code, 1);
  t.is(r.stdout, '', 'no 100% table printed');
  t.regex(
    r.stderr,
    /nothing to compare: neither .*empty-1\.json nor .*empty-2\.json has a box in the 0 frame\(s\) compared/,
  );
  t.is(r.stderr.trim().split('\n').length, 1);
  const allowed = await runCli('jetprof', ['agree', empty1, empty2, '--allow-empty']);
  t.is(allowed.code, 0, allowed.stderr);
  const one = join(dir, 'one-box.json');
  writeFileSync(one, JSON.stringify([{ image_id: 0, category_id: 0, bbox: [1, 2, 30, 40], score: 0.9 }]));
  const self = await runCli('jetprof', ['agree', one, one]);
  t.is(self.code, 0, self.stderr);
  t.regex(
    self.stderr,
    /warning: .*one-box\.json and .*one-box\.json are the same detections .*: a file always agrees with itself/,
  );
});

test('agree --iou 1: a file against its copy matches every box (IoU in floating point is 1 - 1e-16 for identical boxes); two files with no frame in common say nothing overlaps (exit 1), not 0% matched', async (t) => {
  // boxes whose x + w - x is not w in doubles: exact copies still match at --iou 1
  const boxes = Array.from({ length: 200 }, (_, i) => ({
    image_id: i % 20,
    category_id: i % 3,
    bbox: [0.1 * i + 0.3, 0.7 * i + 0.1, 10.3 + i / 7, 20.1 + i / 9],
    score: 0.5 + (i % 50) / 100,
  }));
  const a = join(dir, 'boxes-a.json');
  const b = join(dir, 'boxes-b.json');
  writeFileSync(a, JSON.stringify(boxes));
  writeFileSync(b, JSON.stringify(boxes));
  const json = join(dir, 'agree-iou1.json');
  const r = await runCli('jetprof', ['agree', a, b, '--iou', '1', '--json', json]);
  t.is(r.code, 0, r.stderr);
  const agreement = JSON.parse(readFileSync(json, 'utf8'));
  t.is(agreement.matched, 200);
  t.is(agreement.matchedShare, 1);
  // the same boxes on frames 100..119: no frame in common with frames 0..19
  const later = join(dir, 'boxes-later.json');
  writeFileSync(later, JSON.stringify(boxes.map((x) => ({ ...x, image_id: x.image_id + 100 }))));
  const apart = await runCli('jetprof', ['agree', a, later]);
  t.is(apart.code, 1, apart.stderr);
  t.regex(
    apart.stderr,
    /nothing overlaps: .*boxes-a\.json has boxes in frames 0\.\.19, .*boxes-later\.json in frames 100\.\.119, none in common/,
  );
  t.notRegex(apart.stdout, /0\.00%/);
});

test('map: detections that share no image id with the ground truth -> one line, exit 2; some outside -> a warning', async (t) => {
  const gt = join(dir, 'gt-ids.json');
  writeFileSync(
    gt,
    JSON.stringify({
      images: [{ id: 100 }, { id: 101 }],
      categories: [{ id: 0, name: 'person' }],
      annotations: [{ id: 1, image_id: 100, category_id: 0, bbox: [0, 0, 10, 10] }],
    }),
  );
  const dets = join(dir, 'dets-ids.json');
  writeFileSync(
    dets,
    JSON.stringify([0, 1, 2].map((i) => ({ image_id: i, category_id: 0, bbox: [0, 0, 10, 10], score: 0.9 }))),
  );
  const r = await runCli('jetprof', ['map', dets, '--gt', gt]);
  t.is(r.code, 2);
  t.regex(
    r.stderr,
    /dets-ids\.json: none of its 3 boxes is on an image of .*gt-ids\.json \(image ids 0\.\.2 against 100\.\.101\)/,
  );
  const some = join(dir, 'dets-some.json');
  writeFileSync(
    some,
    JSON.stringify([0, 100].map((i) => ({ image_id: i, category_id: 0, bbox: [0, 0, 10, 10], score: 0.9 }))),
  );
  const ok = await runCli('jetprof', ['map', some, '--gt', gt]);
  t.is(ok.code, 0, ok.stderr);
  t.regex(ok.stderr, /warning: 1 of 2 boxes are on images the ground truth does not have/);
});

test('map over 200,000 boxes on images the ground truth does not have: the same one line (the id range is found without spreading the ids into arguments)', async (t) => {
  const gt = join(dir, 'gt-many.json');
  writeFileSync(
    gt,
    JSON.stringify({
      images: [{ id: 300_000 }],
      categories: [{ id: 0, name: 'person' }],
      annotations: [{ id: 1, image_id: 300_000, category_id: 0, bbox: [0, 0, 10, 10] }],
    }),
  );
  const dets = join(dir, 'dets-many.json');
  writeFileSync(
    dets,
    JSON.stringify(
      Array.from({ length: 200_000 }, (_, i) => ({ image_id: i, category_id: 0, bbox: [0, 0, 10, 10], score: 0.9 })),
    ),
  );
  const r = await runCli('jetprof', ['map', dets, '--gt', gt]);
  t.is(r.code, 2, r.stderr);
  t.regex(
    r.stderr,
    /none of its 200000 boxes is on an image of .*gt-many\.json \(image ids 0\.\.199999 against 300000\)/,
  );
});

test('weights holding NaN or Inf are refused by export and infer: the file, how many values, the first layer', async (t) => {
  const m = makeModel('nan-weights', SMALL_LAB_CFG, 5, (w) => {
    const c = w.convs.get(2)!;
    c.weights[0] = Number.NaN;
    c.weights[1] = Number.POSITIVE_INFINITY;
  });
  const ex = await runCli('jetprof', [
    'export',
    '--cfg',
    m.cfgPath,
    '--weights',
    m.weightsPath,
    '--out',
    join(dir, 'nan.onnx'),
  ]);
  t.is(ex.code, 2);
  t.regex(
    ex.stderr,
    /nan-weights\.weights: 2 of its \d+ values are NaN or Inf, the first in layer 2 \(convolutional, line \d+ of nan-weights\.cfg\)/,
  );
  t.is(ex.stderr.trim().split('\n').length, 1, ex.stderr);
  const video = makeVideo('nan.mp4', 4, 160, 120);
  const inf = await runCli('infer', [
    video,
    '--cfg',
    m.cfgPath,
    '--weights',
    m.weightsPath,
    '--no-write',
    '--warmup',
    '1',
  ]);
  t.is(inf.code, 2);
  t.regex(inf.stderr, /NaN or Inf, the first in layer 2/);
});

test('a model whose outputs are NaN stops the run at the first frame with one line naming the model (no silent 0 detections)', async (t) => {
  // the .onnx is written straight from weights holding NaN (as a broken export or engine would be)
  const m = makeModel('nan-model', SMALL_LAB_CFG, 6, (w) => {
    w.convs.get(0)!.biases.fill(Number.NaN);
  });
  const video = makeVideo('nan-out.mp4', 4, 160, 120);
  for (const pipeline of ['on', 'off']) {
    const json = join(dir, `nan-out-${pipeline}.json`);
    const r = await runCli('infer', [
      video,
      '--model',
      m.onnxPath,
      '--pipeline',
      pipeline,
      '--no-write',
      '--warmup',
      '1',
      '--json',
      json,
    ]);
    t.is(r.code, 2, `${pipeline}: ${r.stderr}`);
    t.regex(
      r.stderr,
      /nan-model\.onnx: the model's outputs hold NaN \(\d+ of the values decode read in this frame\)/,
      pipeline,
    );
  }
});

test('map: ground truth with two annotations of one id is refused in one line naming both (exit 2), not scored', async (t) => {
  const gt = join(dir, 'gt-dup-ids.json');
  writeFileSync(
    gt,
    JSON.stringify({
      images: [{ id: 1 }],
      categories: [{ id: 1, name: 'person' }],
      annotations: [
        { id: 7, image_id: 1, category_id: 1, bbox: [10, 10, 20, 20], area: 400, iscrowd: 0 },
        { id: 7, image_id: 1, category_id: 1, bbox: [50, 50, 20, 20], area: 400, iscrowd: 0 },
      ],
    }),
  );
  const dets = join(dir, 'dets-dup.json');
  writeFileSync(dets, JSON.stringify([{ image_id: 1, category_id: 1, bbox: [10, 10, 20, 20], score: 0.9 }]));
  const r = await runCli('jetprof', ['map', dets, '--gt', gt]);
  t.is(r.code, 2, r.stderr);
  t.regex(
    r.stderr,
    /gt-dup-ids\.json: annotations\[0\] and annotations\[1\] have the same id 7: each annotation needs an id of its own/,
  );
  t.is(r.stderr.trim().split('\n').length, 1);
});

test("map: ground truth too large for this machine's memory is refused in one line before it is read (16 bytes of memory per byte on disk; a Nano has 4 GB)", async (t) => {
  const nano = { memoryBytes: 2.5 * 2 ** 30 };
  // 181 MB of annotations (the case that took 2.9 GB and an OOM)
  const e = t.throws(() =>
    requireRoom('gt.json', 'scoring 181 MB of ground truth and detections', 16 * 181 * 2 ** 20 + 128 * 2 ** 20, {
      suggestion: 'split it',
      room: nano,
    }),
  );
  t.regex(
    e.message,
    /gt\.json: scoring 181 MB of ground truth and detections takes about 3\.0 GB of memory, and this machine has 2\.5 GB to spare/,
  );
  t.notThrows(() => requireRoom('gt.json', 'scoring 25 MB', 16 * 25 * 2 ** 20, { suggestion: 'x', room: nano }));
  // under `ulimit -v` the address space left counts too
  t.throws(() =>
    requireRoom('gt.json', 'scoring 25 MB', 16 * 25 * 2 ** 20, {
      suggestion: 'x',
      room: { memoryBytes: 8 * 2 ** 30, addressRoomBytes: 2 ** 28 },
    }),
  );
  // the real command on a small file goes through
  const gt = join(dir, 'gt-small.json');
  writeFileSync(
    gt,
    JSON.stringify({
      images: [{ id: 1 }],
      categories: [{ id: 1, name: 'person' }],
      annotations: [{ id: 1, image_id: 1, category_id: 1, bbox: [10, 10, 20, 20], area: 400, iscrowd: 0 }],
    }),
  );
  const dets = join(dir, 'dets-small.json');
  writeFileSync(dets, JSON.stringify([{ image_id: 1, category_id: 1, bbox: [10, 10, 20, 20], score: 0.9 }]));
  t.is((await runCli('jetprof', ['map', dets, '--gt', gt])).code, 0);
});
