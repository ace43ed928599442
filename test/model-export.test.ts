/**
 * The exported ONNX model, run in onnxruntime-node, against an independent darknet implementation:
 * OpenCV's readNetFromDarknet on the same cfg + seeded weights (libopencv-dnn, not ORT, not jetprof).
 */
import test from 'ava';
import * as ort from 'onnxruntime-node';
import { readFileSync } from 'node:fs';
import { decodeHead } from '../src/detect/decode.ts';
import { stretchGeometry } from '../src/detect/geometry.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { loadOpenCv, type Mat } from '../src/video/opencv.ts';
import { makeModel, PERSON_VEHICLE_CFG, YOLOV4_TINY_CFG, type ModelFixture } from './helpers/fixtures.ts';

const cv = loadOpenCv();

/** A deterministic, textured test image (BGR), and its NCHW RGB /255 blob as both OpenCV and jetprof make it. */
function testInput(width: number, height: number): { blob: Mat; input: Float32Array } {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      data[i] = (x * 7 + y * 3) % 256;
      data[i + 1] = (x * y) % 251;
      data[i + 2] = Math.floor(128 + 127 * Math.sin(x / 9) * Math.cos(y / 13));
    }
  }
  const img = new cv.Mat(data, height, width, cv.CV_8UC3);
  const blob = cv.blobFromImage(img, 1 / 255, new cv.Size(width, height), new cv.Vec3(0, 0, 0), true, false);
  const bytes = blob.flattenFloat(1, 3 * width * height).getData();
  return { blob, input: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4) };
}

function matToFloats(m: Mat): Float32Array {
  const n = m.sizes.reduce((a, b) => a * b, 1);
  const b = m.flattenFloat(1, n).getData();
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

async function compareHeads(t: import('ava').ExecutionContext, m: ModelFixture) {
  const { width, height } = m.cfg.net;
  const { blob, input } = testInput(width, height);
  const net = cv.readNetFromDarknet(m.cfgPath, m.weightsPath);
  const info = readModelInfo(m.onnxPath);
  // OpenCV names a darknet conv layer `conv_<index>`; the conv before each [yolo] is the raw head.
  const convNames = info.heads.map((h) => `conv_${Number(h.output.replace('yolo_', '')) - 1}`);
  net.setInput(blob);
  const reference = net.forward(convNames).map(matToFloats);
  const session = await ort.InferenceSession.create(m.onnxPath);
  const out = await session.run({ [info.inputName]: new ort.Tensor('float32', input, [1, 3, height, width]) });
  info.heads.forEach((h, i) => {
    const got = out[h.output].data as Float32Array;
    const ref = reference[i];
    t.is(got.length, ref.length, `${h.output} size`);
    let maxDiff = 0;
    let lo = Infinity;
    let hi = -Infinity;
    for (let k = 0; k < ref.length; k++) {
      maxDiff = Math.max(maxDiff, Math.abs(got[k] - ref[k]));
      lo = Math.min(lo, ref[k]);
      hi = Math.max(hi, ref[k]);
    }
    t.true(hi - lo > 1, `${h.output} has a non-trivial range (${lo}..${hi})`);
    t.true(maxDiff <= 1e-3 * (hi - lo), `${h.output}: max abs diff ${maxDiff} vs range ${hi - lo}`);
  });
  await session.release();
  return { net, blob, out, info };
}

test('yolov4-tiny 416x416, 80 classes: ONNX Runtime output equals OpenCV darknet on both heads', async (t) => {
  await compareHeads(t, makeModel('v4tiny80', YOLOV4_TINY_CFG, 11));
});

test('lab model 640x480, 2 classes: ONNX Runtime output equals OpenCV darknet on both heads', async (t) => {
  await compareHeads(t, makeModel('personvehicle', PERSON_VEHICLE_CFG, 12));
});

// Layer types and options beyond yolov4-tiny: shortcut, stride-1 maxpool (yolov3-tiny), mish/swish/logistic,
// grouped conv, pad=0 with explicit padding, upsample.
const FAMILY_CFG = `[net]
width=96
height=64
channels=3
[convolutional]
batch_normalize=1
filters=16
size=3
stride=2
pad=1
activation=mish
[maxpool]
size=2
stride=1
[convolutional]
batch_normalize=1
filters=16
size=3
stride=1
pad=1
groups=4
activation=swish
[shortcut]
from=-2
activation=linear
[convolutional]
filters=16
size=1
stride=1
pad=0
padding=0
activation=logistic
[maxpool]
size=2
stride=2
[convolutional]
batch_normalize=1
filters=32
size=3
stride=2
pad=1
activation=leaky
[convolutional]
filters=21
size=1
stride=1
pad=1
activation=linear
[yolo]
mask=3,4,5
anchors=10,14, 23,27, 37,58, 81,82, 135,169, 344,319
classes=2
num=6
scale_x_y=1.1
[route]
layers=-4
[upsample]
stride=2
[convolutional]
filters=21
size=1
stride=1
pad=1
activation=linear
[yolo]
mask=0,1,2
anchors=10,14, 23,27, 37,58, 81,82, 135,169, 344,319
classes=2
num=6
`;

test('family cfg (shortcut, mish, swish, logistic, grouped conv, stride-1 maxpool, upsample) equals OpenCV darknet', async (t) => {
  await compareHeads(t, makeModel('family', FAMILY_CFG, 13));
});

test('decoded boxes and scores equal OpenCV darknet yolo layer (scale_x_y 1.05, anchors, mask)', async (t) => {
  // High objectness biases so that OpenCV keeps class scores (it zeroes those under 0.2) and they can be compared.
  const m = makeModel('decode80', YOLOV4_TINY_CFG, 21, (w) => {
    for (const layer of [29, 36]) for (let a = 0; a < 3; a++) w.convs.get(layer)!.biases[a * 85 + 4] = 3;
  });
  const { net, out, info } = await compareHeads(t, m);
  // OpenCV's yolo layer output: one row per (cell, anchor) = (row*W + col)*A + a; x, y, w, h normalised to the
  // network input, then objectness, then objectness x p(class) (zeroed below its 0.2 threshold).
  const yoloNames = info.heads.map((h) => h.output);
  const decodedRef = net
    .forward(yoloNames)
    .map((mat) => ({ rows: mat.sizes[0], cols: mat.sizes[1], data: matToFloats(mat) }));
  const g = stretchGeometry(info.inputWidth, info.inputHeight, info.inputWidth, info.inputHeight);
  let compared = 0;
  let scores = 0;
  info.heads.forEach((h, i) => {
    const ref = decodedRef[i];
    t.is(ref.cols, 5 + info.classes);
    t.is(ref.rows, h.gridW * h.gridH * h.anchors.length);
    // Decode every candidate (threshold below any score) and index them by cell and anchor.
    const head = out[h.output].data as Float32Array;
    for (let a = 0; a < h.anchors.length; a++) {
      const single = { ...h, anchors: [h.anchors[a]] };
      const per = 5 + info.classes;
      const plane = h.gridW * h.gridH;
      const slice = head.subarray(a * per * plane, (a + 1) * per * plane);
      const cands = decodeHead(slice, single, g, { classes: info.classes, conf: -1 });
      // Every cell passes a threshold of -1, so cell k owns box k; candidates are found by (box, class).
      const byCellClass = new Map<number, number>();
      for (let i = 0; i < cands.count; i++) byCellClass.set(cands.box[i] * info.classes + cands.classId[i], i);
      const det = (cell: number, c: number) => cands.detection(byCellClass.get(cell * info.classes + c)!);
      for (let cell = 0; cell < plane; cell += 7) {
        const refRow = ref.data.subarray((cell * h.anchors.length + a) * ref.cols);
        const d = det(cell, 0); // class 0 of this cell
        const cx = (d.x1 + d.x2) / 2 / info.inputWidth;
        const cy = (d.y1 + d.y2) / 2 / info.inputHeight;
        if (d.x1 > 0 && d.y1 > 0 && d.x2 < info.inputWidth && d.y2 < info.inputHeight) {
          // unclipped boxes: centre and size must match darknet's decode
          t.true(Math.abs(cx - refRow[0]) < 1e-4, `x of cell ${cell} anchor ${a}: ${cx} vs ${refRow[0]}`);
          t.true(Math.abs(cy - refRow[1]) < 1e-4, `y of cell ${cell} anchor ${a}`);
          t.true(Math.abs((d.x2 - d.x1) / info.inputWidth - refRow[2]) < 1e-4, `w of cell ${cell} anchor ${a}`);
          t.true(Math.abs((d.y2 - d.y1) / info.inputHeight - refRow[3]) < 1e-4, `h of cell ${cell} anchor ${a}`);
          compared++;
        }
        for (let c = 0; c < info.classes; c++) {
          const refScore = refRow[5 + c];
          if (refScore > 0) {
            t.true(Math.abs(det(cell, c).score - refScore) < 1e-4, `score of class ${c}`);
            scores++;
          }
        }
      }
    }
  });
  t.true(compared > 100, `compared ${compared} unclipped boxes`);
  t.true(scores > 1000, `compared ${scores} class scores`);
});

test('the exported model carries its decoding metadata', (t) => {
  const m = makeModel('meta', readFileSync(PERSON_VEHICLE_CFG, 'utf8'), 5);
  const info = readModelInfo(m.onnxPath);
  t.like(info, { inputWidth: 640, inputHeight: 480, classes: 2, inputName: 'input' });
  t.deepEqual(
    info.heads.map((h) => [h.output, h.gridW, h.gridH]),
    [
      ['yolo_30', 20, 15],
      ['yolo_37', 40, 30],
    ],
  );
  t.deepEqual(info.heads[1].anchors, [
    [23, 27],
    [37, 58],
    [81, 82],
  ]);
  t.is(info.heads[0].scaleXY, 1.05);
});
