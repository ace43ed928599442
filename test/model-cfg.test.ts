import test from 'ava';
import { layerShapes, parseCfg, yoloLayers } from '../src/model/cfg.ts';
import { convParamCounts, expectedWeightsBytes } from '../src/model/weights.ts';
import { JetprofError } from '../src/util/errors.ts';
import { loadCfgFile, PERSON_VEHICLE_CFG, YOLOV4_TINY_CFG } from './helpers/fixtures.ts';

test('yolov4-tiny.cfg has the 38 layers of anchors.md §6.1 and 21 weighted convs', (t) => {
  const cfg = loadCfgFile(YOLOV4_TINY_CFG);
  t.is(cfg.layers.length, 38);
  t.is(convParamCounts(cfg).length, 21);
  const shapes = layerShapes(cfg);
  t.deepEqual(shapes[0], { c: 32, h: 208, w: 208 });
  t.deepEqual(shapes[3], { c: 32, h: 104, w: 104 }); // route groups=2 group_id=1
  t.deepEqual(shapes[9], { c: 128, h: 52, w: 52 }); // maxpool 2/2
  t.deepEqual(shapes[29], { c: 255, h: 13, w: 13 });
  t.deepEqual(shapes[34], { c: 384, h: 26, w: 26 });
  t.deepEqual(shapes[36], { c: 255, h: 26, w: 26 });
  const heads = yoloLayers(cfg);
  t.deepEqual(
    heads.map((h) => h.mask),
    [
      [3, 4, 5],
      [1, 2, 3],
    ],
  );
  t.is(heads[0].scaleXY, 1.05);
  t.deepEqual(heads[0].anchors[5], [344, 319]);
});

test('the 80-class yolov4-tiny needs exactly 24,251,276 bytes of weights (20-byte header)', (t) => {
  const cfg = loadCfgFile(YOLOV4_TINY_CFG);
  t.is(expectedWeightsBytes(cfg, 20), 24_251_276);
  t.is(expectedWeightsBytes(cfg, 16), 24_251_272);
});

test('the lab cfg is 640x480 with 2 classes and 20x15 / 40x30 heads', (t) => {
  const cfg = loadCfgFile(PERSON_VEHICLE_CFG);
  const shapes = layerShapes(cfg);
  t.deepEqual(shapes[29], { c: 21, h: 15, w: 20 });
  t.deepEqual(shapes[36], { c: 21, h: 30, w: 40 });
});

const TINY = `[net]
width=64
height=64
channels=3
[convolutional]
filters=8
size=3
stride=2
pad=1
activation=leaky
`;

function cfgError(t: import('ava').ExecutionContext, text: string, message: RegExp) {
  const e = t.throws(() => parseCfg(text, 'bad.cfg'), { instanceOf: JetprofError, message });
  t.is((e as JetprofError).code, 'BAD_CFG');
}

test('bad call - unknown section names the file and line', (t) => {
  cfgError(t, `${TINY}\n[dropout]\nprobability=.5\n`, /^bad\.cfg:12: section \[dropout\] is not supported/);
});

test('bad call - unknown activation names the line', (t) => {
  cfgError(t, TINY.replace('activation=leaky', 'activation=gelu'), /^bad\.cfg:10: activation=gelu is not supported/);
});

test('bad call - non-integer value names the key and line', (t) => {
  cfgError(t, TINY.replace('filters=8', 'filters=eight'), /^bad\.cfg:6: filters=eight is not an integer/);
});

test('bad call - route to a layer that does not exist', (t) => {
  cfgError(t, `${TINY}[route]\nlayers=-5\n`, /^bad\.cfg:12: layer reference -5 from layer 1 points outside/);
});

test('bad call - yolo whose filters do not match anchors x (5 + classes)', (t) => {
  const text = `${TINY}[yolo]\nmask=0\nanchors=10,14\nclasses=2\nnum=1\n`;
  cfgError(t, text, /^bad\.cfg:11: the layer before \[yolo\] has 8 filters but 1 anchors x \(5 \+ 2 classes\) needs 7/);
});

test('comments, #[section] and ; lines are skipped as darknet does', (t) => {
  const cfg = parseCfg(`# header\n${TINY}#[convolutional]\n; note\n`, 'ok.cfg');
  t.is(cfg.layers.length, 1);
  t.is(cfg.layers[0].kind, 'convolutional');
});

test('maxpool defaults follow darknet: padding = size - 1', (t) => {
  const cfg = parseCfg(`${TINY}[maxpool]\nsize=2\nstride=1\n`, 'mp.cfg');
  const mp = cfg.layers[1];
  t.is(mp.kind, 'maxpool');
  if (mp.kind === 'maxpool') t.is(mp.padding, 1);
  t.deepEqual(layerShapes(cfg)[1], { c: 8, h: 32, w: 32 }); // size 2 stride 1 keeps 32x32
});
