import test from 'ava';
import { decodeHead } from '../src/detect/decode.ts';
import { letterboxGeometry, netToFrame, stretchGeometry } from '../src/detect/geometry.ts';
import { diou, iou, nms } from '../src/detect/nms.ts';
import type { Detection } from '../src/detect/types.ts';
import type { YoloHead } from '../src/model/metadata.ts';
import type { Cv } from '../src/video/opencv.ts';
import { drawnByOpenCv } from './helpers/draw-reference.ts';

// One anchor (16x16 px), one class, a 2x2 grid on a 64x64 network input, scale_x_y 1.1.
const HEAD: YoloHead = { output: 'h', gridW: 2, gridH: 2, anchors: [[16, 16]], scaleXY: 1.1, newCoords: false };
const logit = (p: number) => Math.log(p / (1 - p));

/** A head tensor [1, 6, 2, 2] that is empty except one cell. */
function headWith(
  cell: number,
  e: { tx: number; ty: number; tw: number; th: number; obj: number; cls: number },
): Float32Array {
  const data = new Float32Array(6 * 4).fill(-20); // objectness ~0 everywhere else
  const v = [e.tx, e.ty, e.tw, e.th, e.obj, e.cls];
  for (let k = 0; k < 6; k++) data[k * 4 + cell] = v[k];
  return data;
}

test('decode: hand-computed box with scale_x_y, exp(tw) x anchor, stretched back to the frame', (t) => {
  // cell 2 = row 1, col 0. sigmoid(tx)=0.5 -> x = 0.5*1.1 - 0.05 = 0.5; sigmoid(ty)=0.25 -> y = 0.25*1.1 - 0.05 = 0.225
  // cx = (0 + 0.5)/2 * 64 = 16; cy = (1 + 0.225)/2 * 64 = 39.2; w = 2*16 = 32; h = 0.5*16 = 8
  const data = headWith(2, {
    tx: 0,
    ty: logit(0.25),
    tw: Math.log(2),
    th: Math.log(0.5),
    obj: logit(0.9),
    cls: logit(0.8),
  });
  const g = stretchGeometry(128, 96, 64, 64); // frame 128x96: x / 0.5, y / (64/96)
  const dets = decodeHead(data, HEAD, g, { classes: 1, conf: 0.3 }).toDetections();
  t.is(dets.length, 1);
  const d = dets[0];
  t.is(d.classId, 0);
  t.true(Math.abs(d.score - 0.72) < 1e-6);
  t.true(Math.abs(d.x1 - 0) < 1e-4); // (16 - 16) / 0.5
  t.true(Math.abs(d.x2 - 64) < 1e-4); // (16 + 16) / 0.5
  t.true(Math.abs(d.y1 - (39.2 - 4) * 1.5) < 1e-4);
  t.true(Math.abs(d.y2 - (39.2 + 4) * 1.5) < 1e-4);
});

test('decode: objectness x class must exceed conf (darknet rule)', (t) => {
  const data = headWith(0, { tx: 0, ty: 0, tw: 0, th: 0, obj: logit(0.9), cls: logit(0.3) }); // 0.27
  t.is(decodeHead(data, HEAD, stretchGeometry(64, 64, 64, 64), { classes: 1, conf: 0.3 }).toDetections().length, 0);
  t.is(decodeHead(data, HEAD, stretchGeometry(64, 64, 64, 64), { classes: 1, conf: 0.25 }).toDetections().length, 1);
});

test('decode: new_coords uses the values as given and w = tw^2 * 4 * anchor', (t) => {
  const head = { ...HEAD, scaleXY: 2, newCoords: true };
  // x = 0.5*2 - 0.5 = 0.5 -> cx = 0.5/2*64 = 16; w = 0.5^2*4*16 = 16
  const data = headWith(0, { tx: 0.5, ty: 0.5, tw: 0.5, th: 0.5, obj: 0.9, cls: 0.9 });
  const [d] = decodeHead(data, head, stretchGeometry(64, 64, 64, 64), {
    classes: 1,
    conf: 0.5,
  }).toDetections();
  t.deepEqual(
    [d.x1, d.y1, d.x2, d.y2].map((v) => Math.round(v * 1e4) / 1e4),
    [8, 8, 24, 24],
  );
  t.true(Math.abs(d.score - 0.81) < 1e-6);
});

test('letterbox: geometry centres the image and boxes map back to the frame', (t) => {
  const g = letterboxGeometry(200, 100, 64, 64); // scale 0.32 -> 64x32, padY = 16
  t.like(g, { resizedW: 64, resizedH: 32, padX: 0, padY: 16 });
  t.deepEqual(netToFrame(g, 32, 32), [100, 50]); // network centre is the frame centre
  t.deepEqual(netToFrame(g, 0, 16), [0, 0]);
  // the decoded box of cell 0 (row 0, col 0): cx = cy = 0.5/2*64 = 16, 16x16 px -> net box (8,8)-(24,24)
  const data = headWith(0, { tx: 0, ty: 0, tw: 0, th: 0, obj: logit(0.99), cls: logit(0.99) });
  const [d] = decodeHead(data, { ...HEAD, scaleXY: 1 }, g, { classes: 1, conf: 0.5 }).toDetections();
  t.true(Math.abs(d.x1 - 8 / 0.32) < 1e-4);
  t.true(Math.abs(d.x2 - 24 / 0.32) < 1e-4);
  t.is(d.y1, 0); // (8 - 16)/0.32 < 0: clipped to the frame
  t.true(Math.abs(d.y2 - (24 - 16) / 0.32) < 1e-4);
});

const box = (x1: number, y1: number, x2: number, y2: number, score: number, classId = 0): Detection => ({
  x1,
  y1,
  x2,
  y2,
  score,
  classId,
});

test('iou and diou by hand', (t) => {
  const a = box(0, 0, 10, 10, 0.9);
  const b = box(3, 0, 13, 10, 0.8);
  t.true(Math.abs(iou(a, b) - 70 / 130) < 1e-12);
  // d^2 = 9, c^2 = 13^2 + 10^2 = 269
  t.true(Math.abs(diou(a, b) - (70 / 130 - Math.pow(9 / 269, 0.6))) < 1e-12);
  t.is(iou(a, box(20, 20, 30, 30, 1)), 0);
});

test('nms: IoU suppresses a shifted box that DIoU (darknet greedynms) keeps', (t) => {
  const dets = [box(3, 0, 13, 10, 0.8), box(0, 0, 10, 10, 0.9)];
  // IoU 0.538 > 0.45 suppresses; DIoU 0.538 - 0.130 = 0.408 < 0.45 keeps
  // scores are kept as float32, as OpenCV's NMSBoxes takes them
  t.deepEqual(
    nms(dets, 0.45, 'iou').map((d) => d.score),
    [Math.fround(0.9)],
  );
  t.deepEqual(
    nms(dets, 0.45, 'diou').map((d) => d.score),
    [Math.fround(0.9), Math.fround(0.8)],
  );
});

test('nms works per class: overlapping boxes of different classes both stay', (t) => {
  const kept = nms([box(0, 0, 10, 10, 0.9, 0), box(0, 0, 10, 10, 0.8, 1), box(1, 1, 10, 10, 0.7, 0)], 0.5);
  t.deepEqual(
    kept.map((d) => [d.classId, d.score]),
    [
      [0, Math.fround(0.9)],
      [1, Math.fround(0.8)],
    ],
  );
});

test('bad call - decode rejects a head of the wrong size', (t) => {
  t.throws(
    () =>
      decodeHead(new Float32Array(10), HEAD, stretchGeometry(64, 64, 64, 64), {
        classes: 1,
        conf: 0.3,
      }).toDetections(),
    {
      instanceOf: RangeError,
      message: /head h has 10 values but 1 anchors x 6 x 2x2 needs 24/,
    },
  );
});

test("drawing: each box's border and label in its class's colour, the same frame after frame", async (t) => {
  const { loadOpenCv } = await import('../src/video/opencv.ts');
  const { drawOnFrame } = await import('../src/detect/draw.ts');
  const cv = loadOpenCv();
  const box = (classId: number, x1: number, y1: number): Detection => ({
    x1,
    y1,
    x2: x1 + 40,
    y2: y1 + 30,
    score: 0.9,
    classId,
  });
  const draw = () => {
    const m = new cv.Mat(120, 200, cv.CV_8UC3, [0, 0, 0]);
    drawOnFrame(cv, m, [box(0, 10, 40), box(7, 120, 60)], ['person']);
    return m;
  };
  const a = draw();
  // the palette's first colour (green) and eighth (red, BGR 0,0,255): on the border, and not inside the box
  t.deepEqual(a.atRaw(40, 10), [0, 255, 0]);
  t.deepEqual(a.atRaw(75, 140), [0, 0, 0]);
  t.deepEqual(a.atRaw(60, 120), [0, 0, 255]);
  // each label above its box, in its colour ("person 0.90", and "class7 0.90" for a class without a name)
  const coloured = (x0: number, x1: number, y0: number, y1: number, bgr: number[]) => {
    let n = 0;
    for (let y = y0; y < y1; y++)
      for (let x = x0; x < x1; x++) if (JSON.stringify(a.atRaw(y, x)) === JSON.stringify(bgr)) n++;
    return n;
  };
  t.true(coloured(12, 60, 26, 38, [0, 255, 0]) > 10, 'the first label is drawn');
  t.true(coloured(122, 195, 46, 58, [0, 0, 255]) > 10, 'the second label is drawn');
  const b = draw();
  t.is(a.absdiff(b).cvtColor(cv.COLOR_BGR2GRAY).countNonZero(), 0, 'the second frame is drawn the same');
  for (const m of [a, b]) m.release();
});

test("drawing in JS memory gives the pixels OpenCV's own calls give: boxes inside, across every edge and on each other, labels that fall off the frame, overlay lines on frames down to one a line does not reach", async (t) => {
  const { loadOpenCv } = await import('../src/video/opencv.ts');
  const { drawOnFrame } = await import('../src/detect/draw.ts');
  const cv = loadOpenCv();
  let seed = 11;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const labels = Array.from({ length: 12 }, (_, i) => `class-${i}`);
  let compared = 0;
  for (const [w, h] of [
    [960, 540],
    [320, 240],
    [97, 61],
    [40, 16],
    [8, 8],
  ])
    for (let k = 0; k < 12; k++) {
      // up to 80 boxes, some across an edge or past it, some several classes on one place
      const boxes: Detection[] = Array.from({ length: Math.floor(rand() * 80) }, () => {
        const [x1, y1] = [rand() * (w + 60) - 30, rand() * (h + 60) - 30];
        const [bw, bh] = k % 3 === 0 ? [1 + rand() * 3, 1 + rand() * 3] : [rand() * w * 0.6, rand() * h * 0.6];
        return { x1, y1, x2: x1 + bw, y2: y1 + bh, score: rand(), classId: Math.floor(rand() * 14) };
      });
      boxes.push(...boxes.slice(0, 5).map((d) => ({ ...d, classId: d.classId + 1 })));
      // and far past the frame (places kept by text, not by number), one of them twice
      const far: Detection = { x1: -3000, y1: 5, x2: w + 9000, y2: h - 5, score: 0.5, classId: 3 };
      boxes.push(far, { ...far, classId: 4 });
      const overlay =
        k % 4 === 1
          ? []
          : [`onnx  so far: inference ${(k % 3) * 1.5} FPS  end-to-end ${(k % 2) * 2.5} FPS`, 'gj|_[]{} ÄÖ'];
      // a frame with detail under the drawing: pixels nothing sets must stay as they are
      const base = new cv.Mat(h, w, cv.CV_8UC3, [30, 120, 200]);
      base.drawRectangle(new cv.Rect(0, 0, Math.ceil(w / 2), Math.ceil(h / 2)), new cv.Vec3(1, 1, 1), -1, cv.LINE_8);
      const expected = base.copy();
      drawnByOpenCv(cv, expected, boxes, labels, overlay);
      // twice: the texts drawn by OpenCV where they come first, then from their stamps
      for (const time of ['first', 'again']) {
        const got = base.copy();
        drawOnFrame(cv, got, boxes, labels, overlay);
        const differ = got.absdiff(expected).cvtColor(cv.COLOR_BGR2GRAY).countNonZero();
        t.is(differ, 0, `${w}x${h}, frame ${k}, ${time}`);
        got.release();
        compared++;
      }
      for (const m of [base, expected]) m.release();
    }
  t.is(compared, 120);
});

test("a label's text is drawn by OpenCV where it comes the first time, made a stamp the second, and set from its stamp after: the second frame's labels ask OpenCV nothing; a text that comes once costs no stamp", async (t) => {
  const { loadOpenCv } = await import('../src/video/opencv.ts');
  const { drawOnFrame } = await import('../src/detect/draw.ts');
  const cv = loadOpenCv();
  const asked: string[] = [];
  // getTextSize measures a text drawn by OpenCV, and a stamp's patch: a text set from its stamp asks nothing
  const counting = new Proxy(cv, {
    get: (target, k) =>
      k === 'getTextSize'
        ? (...args: Parameters<Cv['getTextSize']>) => (asked.push(args[0]), target.getTextSize(...args))
        : target[k as keyof Cv],
  }) as Cv;
  const boxes: Detection[] = Array.from({ length: 60 }, (_, i) => {
    const [x1, y1] = [20 + (i % 10) * 60, 30 + Math.floor(i / 10) * 80];
    return { x1, y1, x2: x1 + 40, y2: y1 + 50, score: 0.5 + (i % 3) / 100, classId: i % 4 };
  });
  const labels = ['stamp-a', 'stamp-b', 'stamp-c', 'stamp-d'];
  const frame = new cv.Mat(540, 720, cv.CV_8UC3, [0, 0, 0]);
  drawOnFrame(counting, frame, boxes, labels);
  t.deepEqual(
    [...new Set(asked)].sort(),
    [
      'stamp-a 0.50',
      'stamp-b 0.51',
      'stamp-c 0.52',
      'stamp-d 0.50',
      'stamp-a 0.51',
      'stamp-b 0.52',
      'stamp-c 0.50',
      'stamp-d 0.51',
      'stamp-a 0.52',
      'stamp-b 0.50',
      'stamp-c 0.51',
      'stamp-d 0.52',
    ].sort(),
  );
  t.is(
    asked.length,
    24,
    'each of the 12 texts twice: drawn by OpenCV where it comes first, a stamp where it comes again',
  );
  asked.length = 0;
  const before = frame.copy();
  drawOnFrame(counting, frame, boxes, labels);
  t.deepEqual(asked, [], 'the second frame: every label from its stamp');
  t.is(frame.absdiff(before).cvtColor(cv.COLOR_BGR2GRAY).countNonZero(), 0, 'the same pixels');
  // a text that comes once (a score seen on one frame) is drawn by OpenCV, and costs no stamp until it comes again
  const once: Detection[] = [{ x1: 100, y1: 100, x2: 150, y2: 150, score: 0.77, classId: 2 }];
  const counts = [1, 2, 3].map(() => {
    asked.length = 0;
    drawOnFrame(counting, frame, once, labels);
    return asked.length;
  });
  t.deepEqual(counts, [1, 1, 0], 'drawn by OpenCV (measured), made a stamp (measured), set from it');
  for (const m of [frame, before]) m.release();
});
