import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateWeights, parseWeights, readWeights, serializeWeights } from '../src/model/weights.ts';
import { JetprofError } from '../src/util/errors.ts';
import { loadCfgFile, PERSON_VEHICLE_CFG, scratchDir } from './helpers/fixtures.ts';

const cfg = loadCfgFile(PERSON_VEHICLE_CFG);
/** Byte equality of typed arrays (ava's deepEqual walks every element and is slow on millions). */
const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const sameBytes = (a: ArrayBufferView, b: ArrayBufferView) => bytesOf(a).equals(bytesOf(b));
const generated = generateWeights(cfg, 3);

test('20-byte and 16-byte headers both load, to the same parameters', (t) => {
  const v20 = serializeWeights(cfg, generated);
  const v16 = serializeWeights(cfg, {
    ...generated,
    header: { major: 0, minor: 1, revision: 0, seen: 1000n, headerBytes: 16 },
  });
  t.is(v20.byteLength - v16.byteLength, 4);
  const a = parseWeights(v20, cfg);
  const b = parseWeights(v16, cfg);
  t.is(a.header.headerBytes, 20);
  t.is(b.header.headerBytes, 16);
  t.is(b.header.seen, 1000n);
  for (const [index, conv] of a.convs) {
    t.true(sameBytes(b.convs.get(index)!.weights, conv.weights), `layer ${index} weights`);
    t.true(sameBytes(b.convs.get(index)!.biases, conv.biases), `layer ${index} biases`);
  }
  // and they are what was generated
  t.true(sameBytes(a.convs.get(0)!.bn!.variance, generated.convs.get(0)!.bn!.variance));
  t.true(sameBytes(a.convs.get(29)!.weights, generated.convs.get(29)!.weights));
});

test('bad call - a truncated weights file names its size and what the cfg needs', (t) => {
  const bytes = serializeWeights(cfg, generated);
  const path = join(scratchDir(), 'truncated.weights');
  writeFileSync(path, bytes.subarray(0, 363_334));
  const e = t.throws(() => readWeights(path, cfg), { instanceOf: JetprofError });
  t.is(e?.message, `${path} has 363334 bytes but yolov4-tiny-person-vehicle.cfg (2 classes) needs ${bytes.byteLength}`);
  t.is((e as JetprofError).code, 'BAD_WEIGHTS');
});

test('bad call - an oversized weights file (e.g. the 80-class file for a 2-class cfg) fails the same way', (t) => {
  const bytes = serializeWeights(cfg, generated);
  const bigger = new Uint8Array(bytes.byteLength + 1024);
  bigger.set(bytes);
  t.throws(() => parseWeights(bigger, cfg, 'w.weights'), {
    message: `w.weights has ${bigger.byteLength} bytes but yolov4-tiny-person-vehicle.cfg (2 classes) needs ${bytes.byteLength}`,
  });
});

test('bad call - a missing weights file says so', (t) => {
  t.throws(() => readWeights('/nonexistent/x.weights', cfg), {
    message: /^\/nonexistent\/x\.weights: weights file not found/,
  });
});

test('generated weights are the same for the same seed and differ across seeds', (t) => {
  t.true(sameBytes(serializeWeights(cfg, generateWeights(cfg, 3)), serializeWeights(cfg, generated)));
  t.false(sameBytes(serializeWeights(cfg, generateWeights(cfg, 4)), serializeWeights(cfg, generated)));
});
