/**
 * The one check independent of jetprof's exporter: OpenCV's own darknet importer (readNetFromDarknet on the cfg and
 * weights, not jetprof's .onnx) and ONNX Runtime on jetprof's export must find the same boxes on real vtest.avi
 * frames, for several generated models and at a normal and a mAP-style threshold. Both go through the same backend
 * sessions, decode and NMS that `infer` uses.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agree } from '../src/accuracy/agree.ts';
import type { CocoDetection } from '../src/accuracy/coco.ts';
import { createOnnxSession } from '../src/backends/onnx.ts';
import { createOpenCvSession, darknetHeadNames } from '../src/backends/opencv.ts';
import { stretchGeometry } from '../src/detect/geometry.ts';
import { Postprocessor } from '../src/detect/postprocess.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { cvCalls, preprocessFrame } from '../src/pipeline/preprocess.ts';
import { loadOpenCv, type Mat } from '../src/video/opencv.ts';
import {
  makeModel,
  requires,
  PERSON_VEHICLE_CFG,
  ROOT,
  runCli,
  scratchDir,
  YOLOV4_TINY_CFG,
  type ModelFixture,
} from './helpers/fixtures.ts';

const VTEST = join(ROOT, 'videos', 'vtest.avi');
const FRAMES = 6;

/** yolov4-tiny.cfg with another class count and input size (filters of each head = 3 x (5 + classes)). */
function variantCfg(classes: number, width: number, height: number): string {
  return readFileSync(YOLOV4_TINY_CFG, 'utf8')
    .replace(/^width=\d+/m, `width=${width}`)
    .replace(/^height=\d+/m, `height=${height}`)
    .replace(/^classes=80/gm, `classes=${classes}`)
    .replace(/^filters=255/gm, `filters=${3 * (5 + classes)}`);
}

function vtestFrames(n: number): Mat[] {
  const cv = loadOpenCv();
  const cap = new cv.VideoCapture(VTEST);
  const frames: Mat[] = [];
  for (let i = 0; i < n * 10 && frames.length < n; i++) {
    const f = cap.read();
    if (i % 10 === 0) frames.push(f); // spread over the first seconds: people move
  }
  cap.release();
  return frames;
}

async function boxesOf(
  m: ModelFixture,
  backend: 'onnx' | 'opencv',
  frames: Mat[],
  conf: number,
): Promise<CocoDetection[]> {
  const cv = loadOpenCv();
  const info = readModelInfo(m.onnxPath);
  const session =
    backend === 'onnx'
      ? await createOnnxSession(m.onnxPath, { threads: 2 })
      : createOpenCvSession(
          { cfg: m.cfgPath, weights: m.weightsPath },
          { outputNames: info.heads.map((h) => h.output), threads: 2 },
        );
  const out: CocoDetection[] = [];
  try {
    for (const [i, frame] of frames.entries()) {
      const g = stretchGeometry(frame.cols, frame.rows, info.inputWidth, info.inputHeight);
      const post = new Postprocessor(info, g, {
        conf: conf,
        nms: 0.5,
        nmsKind: 'iou',
        classMode: 'multi',
        maxCandidates: 30000,
        maxDet: 300,
      });
      const { input, blob } = await preprocessFrame(cvCalls(cv), frame, g);
      const { outputs } = await session.run(input, blob);
      for (const d of post.run(outputs).detections)
        out.push({ image_id: i, category_id: d.classId, bbox: [d.x1, d.y1, d.x2 - d.x1, d.y2 - d.y1], score: d.score });
    }
  } finally {
    await session.dispose();
  }
  return out;
}

const models: [string, () => ModelFixture][] = [
  ['80 classes, 416x416', () => makeModel('dk-80', YOLOV4_TINY_CFG, 11, undefined, -0.4)],
  ['3 classes, 320x192 (not square)', () => makeModel('dk-3', variantCfg(3, 320, 192), 12, undefined, -0.4)],
  [
    "2 classes, 640x480 (the lab's person/vehicle cfg)",
    () => makeModel('dk-2', PERSON_VEHICLE_CFG, 13, undefined, -0.4),
  ],
  // darknet before 0.2 wrote a 16-byte header (`seen` as uint32): both readers must skip exactly 16 bytes
  [
    'an old 16-byte weights header',
    () =>
      makeModel(
        'dk-old',
        YOLOV4_TINY_CFG,
        14,
        (w) => Object.assign(w.header, { major: 0, minor: 1, headerBytes: 16 }),
        -0.4,
      ),
  ],
];

for (const [name, make] of models) {
  requires(
    existsSync(VTEST),
    'videos/vtest.avi is missing: bash scripts/fetch-sample-video.sh',
    true,
  )(`OpenCV's darknet importer and ONNX Runtime find the same boxes on vtest.avi: ${name}`, async (t) => {
    const m = make();
    const frames = vtestFrames(FRAMES);
    t.is(frames.length, FRAMES);
    for (const conf of [0.3, 0.001]) {
      const ort = await boxesOf(m, 'onnx', frames, conf);
      const dk = await boxesOf(m, 'opencv', frames, conf);
      const a = agree(ort, dk, { frames: frames.map((_, i) => i) });
      t.true(a.refBoxes >= FRAMES * 3, `conf ${conf}: boxes to compare (${a.refBoxes})`);
      t.log(`${name} conf ${conf}: ${a.refBoxes} boxes, share ${a.matchedShare}, IoU ${a.meanIou}`);
      t.true(
        a.matchedShare >= 0.99,
        `conf ${conf}: matched share ${a.matchedShare} (${a.matched} matched, ${a.onlyRef} only ORT, ${a.onlyOther} only OpenCV)`,
      );
      t.true(a.meanIou >= 0.99, `conf ${conf}: mean IoU ${a.meanIou}`);
    }
  });
}

test('darknetHeadNames: the layer created before permute_N feeds yolo_N (conv, or its activation / batch norm)', (t) => {
  const names = [
    'conv_0',
    'bn_0',
    'leaky_1',
    'conv_29',
    'permute_30',
    'yolo_30',
    'identity_31',
    'conv_35',
    'bn_35',
    'logistic_36',
    'permute_37',
    'yolo_37',
  ];
  t.deepEqual(darknetHeadNames(names, ['yolo_30', 'yolo_37']), ['conv_29', 'logistic_36']);
  const e = t.throws(() => darknetHeadNames(names, ['yolo_44'], 'my.cfg'));
  t.regex(
    e!.message,
    /^my\.cfg: OpenCV's darknet importer has no input layer for the head yolo_44 \(no permute_44 among its 12 layers\)/,
  );
});

requires(
  existsSync(VTEST),
  'videos/vtest.avi is missing: bash scripts/fetch-sample-video.sh',
  true,
)(
  'infer --backend opencv --cfg --weights runs the darknet importer end to end and agrees with ONNX Runtime (jetprof agree --min-match 0.99)',
  async (t) => {
    const m = makeModel('dk-cli', YOLOV4_TINY_CFG, 15, undefined, 0);
    const dir = scratchDir();
    const runs: string[] = [];
    for (const backend of ['onnx', 'opencv']) {
      const json = join(dir, `dk-cli-${backend}.json`);
      const r = await runCli('infer', [
        '--backend',
        backend,
        VTEST,
        '--cfg',
        m.cfgPath,
        '--weights',
        m.weightsPath,
        '--max-frames',
        '8',
        '--warmup',
        '1',
        '--no-write',
        '-q',
        '--detections',
        join(dir, `dk-cli-${backend}-dets.json`),
        '--json',
        json,
      ]);
      t.is(r.code, 0, r.stderr);
      runs.push(json);
    }
    t.regex(JSON.parse(readFileSync(runs[1], 'utf8')).backendDetail, /darknet importer$/);
    const r = await runCli('jetprof', ['agree', ...runs, '--min-match', '0.99']);
    t.is(r.code, 0, r.stdout + r.stderr);
    t.regex(r.stdout, /: (99\.\d\d|100\.00)% of boxes matched/);
  },
);
