/**
 * Batched inference across streams (#26): one frame from each of several streams through the model in one run.
 * The proof that batching changes nothing but the speed: the batched blob is the per-frame blobs one after the
 * other, and each backend's batched outputs give, image by image, the boxes a batch of one gives, on real vtest.avi
 * frames (ONNX Runtime on jetprof's export; OpenCV DNN on the export and through its own darknet importer). Then
 * the same through `infer`: every stream's detections at the default batch equal those at --batch 1.
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOnnxSession } from '../src/backends/onnx.ts';
import { createOpenCvSession } from '../src/backends/opencv.ts';
import { type DetectorSession, imageOutputs } from '../src/backends/types.ts';
import { stretchGeometry } from '../src/detect/geometry.ts';
import { Postprocessor } from '../src/detect/postprocess.ts';
import type { Detection } from '../src/detect/types.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { readOnnxSignature, withFixedBatch } from '../src/model/onnx-export.ts';
import { openStreams } from '../src/pipeline/loop-shared.ts';
import { type LoopOptions } from '../src/pipeline/loop-options.ts';
import { batchBlob, cvCalls, InputBuffers, letterboxFrame, preprocessFrame } from '../src/pipeline/preprocess.ts';
import { disabledNvtx } from '../src/pipeline/nvtx.ts';
import { runPipelinedLoop } from '../src/pipeline/pipelined-loop.ts';
import { runSequentialLoop } from '../src/pipeline/sequential-loop.ts';
import { classifySource } from '../src/video/sources.ts';
import { type Cv, loadOpenCv, type Mat } from '../src/video/opencv.ts';
import {
  makeModel,
  makeVideo,
  LAB_CFG_160,
  SMALL_LAB_CFG,
  requires,
  ROOT,
  errorLines,
  runCli,
  scratchDir,
  inferRun,
} from './helpers/fixtures.ts';

const VTEST = join(ROOT, 'videos', 'vtest.avi');
const withVtest = requires(existsSync(VTEST), 'videos/vtest.avi is missing: bash scripts/fetch-sample-video.sh', true);

/** Three frames a second apart (people move), each at its own size: one resized, so the batch mixes sizes. */
function framesOfVtest(): Mat[] {
  const cv = loadOpenCv();
  const cap = new cv.VideoCapture(VTEST);
  const frames: Mat[] = [];
  for (let i = 0; i < 30 && frames.length < 3; i++) {
    const f = cap.read();
    if (i % 10 === 0) frames.push(frames.length === 1 ? f.resize(300, 400) : f);
  }
  cap.release();
  return frames;
}

const POST = {
  conf: 0.3,
  nms: 0.5,
  nmsKind: 'iou' as const,
  classMode: 'multi' as const,
  maxCandidates: 30000,
  maxDet: 300,
};

/** Each frame's boxes from a batch of one, and from one batch of all frames. */
async function alone_and_batched(
  session: DetectorSession,
  onnxPath: string,
  frames: Mat[],
): Promise<{ alone: Detection[][]; batched: Detection[][] }> {
  const calls = cvCalls(loadOpenCv());
  const info = readModelInfo(onnxPath);
  const gs = frames.map((f) => stretchGeometry(f.cols, f.rows, info.inputWidth, info.inputHeight));
  const posts = gs.map((g) => new Postprocessor(info, g, POST));
  const alone: Detection[][] = [];
  for (const [i, f] of frames.entries()) {
    const { input, blob } = await preprocessFrame(calls, f, gs[i]);
    alone.push(posts[i].run((await session.run(input, blob)).outputs).detections);
  }
  const boxed = await Promise.all(frames.map((f, i) => letterboxFrame(calls, f, gs[i])));
  const { input, blob } = await batchBlob(calls, boxed, info.inputWidth, info.inputHeight);
  const { outputs } = await session.run(input, blob);
  const batched = frames.map((_, i) => posts[i].run(imageOutputs(outputs, i, frames.length)).detections);
  return { alone, batched };
}

const rounded = (ds: Detection[]) =>
  ds.map((d) => [d.classId, ...[d.x1, d.y1, d.x2, d.y2].map((v) => v.toFixed(2)), d.score.toFixed(5)].join(' '));

/** Three 160x120 frames of other colours, and the geometry that stretches them to 64x48. */
function threeFrames(cv: Cv) {
  const frames = [0, 1, 2].map((k) => new cv.Mat(120, 160, cv.CV_8UC3, [40 * k, 90, 200 - 30 * k]));
  return { frames, g: stretchGeometry(160, 120, 64, 48) };
}

for (const pooled of [false, true]) {
  const where = pooled ? "on libuv's pool" : 'inline';
  test(`the batched blob is the frames' blobs one after the other (cv.blobFromImages of several and of one), ${where}`, async (t) => {
    const calls = cvCalls(loadOpenCv(), pooled);
    const { frames, g } = threeFrames(calls.cv);
    const per = await Promise.all(frames.map(async (f) => (await preprocessFrame(calls, f, g)).input));
    const boxed = await Promise.all(frames.map((f) => letterboxFrame(calls, f, g)));
    const { input } = await batchBlob(calls, boxed, 64, 48);
    t.is(input.length, 3 * 3 * 64 * 48);
    for (const [k, one] of per.entries())
      t.deepEqual(Array.from(input.subarray(k * one.length, (k + 1) * one.length)), Array.from(one), `image ${k}`);
  });

  test(`InputBuffers: the blob lands in the same arrays, used in turn; another length gets its own, ${where}`, async (t) => {
    const calls = cvCalls(loadOpenCv(), pooled);
    const { frames, g } = threeFrames(calls.cv);
    // what the calls on this thread make, fresh arrays each: the pooled calls make the same values
    const inline = cvCalls(calls.cv);
    const fresh = await Promise.all(frames.map(async (f) => Array.from((await preprocessFrame(inline, f, g)).input)));
    const two = new InputBuffers(2);
    const a = (await preprocessFrame(calls, frames[0], g, two)).input;
    const b = (await preprocessFrame(calls, frames[1], g, two)).input;
    t.not(a, b);
    t.deepEqual(Array.from(a), fresh[0], 'the first array keeps its values while the second is filled');
    t.deepEqual(Array.from(b), fresh[1]);
    const c = (await preprocessFrame(calls, frames[2], g, two)).input;
    t.is(c, a, 'the third fill reuses the first array');
    t.deepEqual(Array.from(c), fresh[2]);
    const one = new InputBuffers(1);
    const single = (await preprocessFrame(calls, frames[0], g, one)).input;
    const boxed = await Promise.all(frames.map((f) => letterboxFrame(calls, f, g)));
    const batch = (await batchBlob(calls, boxed, 64, 48, one)).input;
    t.not(batch, single);
    t.is(batch.length, 3 * single.length);
    t.deepEqual(Array.from(batch), fresh.flat());
  });
}

/**
 * OpenCV's Mats alive (allocations less deallocations, counted by @u4/opencv4nodejs's allocator) once a loop of
 * `frames` frames has returned: each frame's Mats are released when it is done, so they do not pile up until V8's
 * next collection. A run keeps the blob of its last input (for the model-alone runs) and the input buffers' Mats.
 */
async function matsLeftBy(loop: 'sequential' | 'pipelined', video: string, onnxPath: string, frames: number) {
  const cv = loadOpenCv();
  const session = await createOnnxSession(onnxPath, { threads: 2 });
  const alive = () => {
    const m = cv.getMemMetrics();
    return m.NumAllocations - m.NumDeAllocations;
  };
  try {
    const o = {
      streams: [{ source: video, arg: classifySource(video), outputPath: join(scratchDir(), `mats-${loop}.mp4`) }],
      frameSize: [480, 360],
      letterbox: true,
      postprocess: POST,
      maxFrames: frames,
      warmup: 2,
      batch: 1,
      inFlight: 3,
      nvtx: disabledNvtx('test'),
      shouldStop: () => false,
      videoIo: 'ffmpeg',
    } as LoopOptions;
    const before = alive();
    const model = readModelInfo(onnxPath);
    const r = await (loop === 'sequential' ? runSequentialLoop : runPipelinedLoop)(
      session,
      model,
      o,
      openStreams(model, o),
    );
    for (const s of r.streams) s.output?.abort(); // the video, finished under its temporary name, is not wanted here
    return { frames: r.framesRead, left: alive() - before };
  } finally {
    await session.dispose();
  }
}

for (const loop of ['sequential', 'pipelined'] as const) {
  test.serial(
    `the ${loop} loop releases each frame's Mats when the frame is done: a few are left after 40 frames, not 4 a frame`,
    async (t) => {
      const m = makeModel(`mats-${loop}`, SMALL_LAB_CFG, 5);
      const video = makeVideo(`mats-${loop}.mp4`, 40, 320, 240);
      const { frames, left } = await matsLeftBy(loop, video, m.onnxPath, 40);
      t.is(frames, 40);
      const counted = loadOpenCv().getMemMetrics().NumAllocations;
      t.true(
        counted >= 4 * 40,
        `this opencv4nodejs counts its Mats (${counted} allocations): external memory tracking on`,
      );
      // the last blob, the input buffers' wrapping Mats (one, or in flight + 1), a frame the capture holds
      t.true(left <= 8, `${left} Mats left alive after ${frames} frames`);
    },
  );
}

test("jetprof's export has a symbolic batch dimension on its input and outputs; withFixedBatch fixes it", (t) => {
  const m = makeModel('batch-sig', SMALL_LAB_CFG, 3);
  const bytes = readFileSync(m.onnxPath);
  t.deepEqual(readOnnxSignature(bytes).inputs[0].dims, ['batch', 3, 128, 160]);
  t.is(readModelInfo(m.onnxPath).inputBatch, 'dynamic');
  const fixed = join(scratchDir(), 'batch-sig-4.onnx');
  writeFileSync(fixed, withFixedBatch(bytes, 4));
  t.deepEqual(readOnnxSignature(readFileSync(fixed)).inputs[0].dims, [4, 3, 128, 160]);
  t.is(readModelInfo(fixed).inputBatch, 4);
});

withVtest(
  'ONNX Runtime: a batch of three vtest.avi frames gives, image by image, the boxes of three batch-1 runs',
  async (t) => {
    const m = makeModel('batch-ort', LAB_CFG_160, 21, undefined, -0.4);
    const session = await createOnnxSession(m.onnxPath, { threads: 2 });
    t.is(session.batchSize, 'dynamic');
    try {
      const { alone, batched } = await alone_and_batched(session, m.onnxPath, framesOfVtest());
      t.true(
        alone.every((d) => d.length >= 3),
        `boxes to compare: ${alone.map((d) => d.length).join(', ')}`,
      );
      for (const i of [0, 1, 2]) t.deepEqual(rounded(batched[i]), rounded(alone[i]), `frame ${i}`);
    } finally {
      await session.dispose();
    }
  },
);

for (const importer of ['ONNX importer', 'darknet importer'] as const) {
  withVtest(
    `OpenCV DNN (${importer}): a batch of three vtest.avi frames gives, image by image, the boxes of three batch-1 runs`,
    async (t) => {
      const m = makeModel(`batch-cv-${importer.split(' ')[0]}`, LAB_CFG_160, 22, undefined, -0.4);
      const info = readModelInfo(m.onnxPath);
      const session = createOpenCvSession(
        importer === 'ONNX importer' ? { onnx: m.onnxPath } : { cfg: m.cfgPath, weights: m.weightsPath },
        { outputNames: info.heads.map((h) => h.output), threads: 2 },
      );
      t.is(session.batchSize, 'dynamic');
      const { alone, batched } = await alone_and_batched(session, m.onnxPath, framesOfVtest());
      t.true(
        alone.every((d) => d.length >= 3),
        `boxes to compare: ${alone.map((d) => d.length).join(', ')}`,
      );
      for (const i of [0, 1, 2]) t.deepEqual(rounded(batched[i]), rounded(alone[i]), `frame ${i}`);
    },
  );
}

for (const backend of ['onnx', 'opencv'] as const) {
  test(`infer --backend ${backend} with three streams: each stream's boxes at the default batch (3) equal those at --batch 1`, async (t) => {
    const dir = join(scratchDir(), `batch-cli-${backend}`);
    mkdirSync(dir, { recursive: true });
    const firing = makeModel('batch-firing', SMALL_LAB_CFG, 9, undefined, 0);
    const a = makeVideo('batch-a.mp4', 5, 320, 240);
    const b = makeVideo('batch-b.mp4', 4, 160, 120, 7);
    const common = [a, b, a, '--backend', backend, '--model', firing.onnxPath, '--warmup', '1', '--max-det', '20'];
    const runs = [];
    for (const batch of ['default', '1']) {
      const json = join(dir, `run-${batch}.json`);
      await inferRun([
        ...common,
        ...(batch === 'default' ? [] : ['--batch', batch]),
        '--no-write',
        '-q',
        '--json',
        json,
        '--detections',
        join(dir, `dets-b${batch}.json`),
      ]);
      runs.push(JSON.parse(readFileSync(json, 'utf8')));
    }
    t.is(runs[0].batch, 3);
    t.is(runs[1].batch, 1);
    t.is(runs[0].setup.label, `${backend}-fp32-cpu-sequential-3streams-batch3`);
    t.is(runs[1].setup.label, `${backend}-fp32-cpu-sequential-3streams-batch1`);
    // stream 1 ends after 4 frames: the last batch holds two frames
    t.is(runs[0].batches.count, 4, '3 batches of 3, then one of 2 (the warm-up batch is not counted)');
    t.is(runs[0].batches.meanImages, 2.75);
    t.is(runs[0].inferredFrames, 14);
    type Box = { image_id: number; bbox: number[]; score: number };
    const key = (f: string) =>
      (JSON.parse(readFileSync(f, 'utf8')) as Box[])
        .map((x) => `${x.image_id}:${x.bbox.map((v) => v.toFixed(1)).join(',')}:${x.score.toFixed(4)}`)
        .sort();
    for (const i of [0, 1, 2]) {
      const batched = key(join(dir, `dets-bdefault-${i}.json`));
      t.true(batched.length > 0, `stream ${i} has boxes`);
      t.deepEqual(batched, key(join(dir, `dets-b1-${i}.json`)), `stream ${i}`);
    }
    // the report keeps a batched run and a batch-1 run apart, side by side in a sweep: batch 1 first
    const rep = await runCli('jetprof', [
      'report',
      '--run',
      join(dir, 'run-default.json'),
      '--run',
      join(dir, 'run-1.json'),
    ]);
    t.is(rep.code, 0, rep.stderr);
    t.notRegex(rep.stdout, /not compared: /);
    t.regex(rep.stdout, /\*\*Sweep: 2 rows that differ only in streams, batch and interval /);
    t.regex(
      rep.stdout,
      /\n\| [^|]*3streams-batch1\] \| 3 \| 1 \| 0 \| [^\n]*\n\| [^|]*3streams-batch3\] \| 3 \| 3 \| 0 \|/,
    );
    t.regex(
      rep.stdout,
      /ms per frame, sequential loop \(the shares add up to 100%; in batches of 3, a frame's preprocess and inference are its share of its batch's\)/,
    );
  });
}

test('bad input, one line each: --batch above the number of streams; --batch-timeout without --realtime; a fixed-batch model with a batch it cannot take', async (t) => {
  const m = makeModel('batch-bad', SMALL_LAB_CFG, 4);
  const v = makeVideo('batch-bad.mp4', 3, 160, 120);
  const oneLine = (r: { code: number | null; stderr: string }, re: RegExp) => {
    t.is(r.code, 2, r.stderr);
    t.is(errorLines(r.stderr).length, 1, r.stderr);
    t.regex(r.stderr, re);
  };
  oneLine(
    await runCli('infer', [v, v, '--model', m.onnxPath, '--batch', '3', '--no-write']),
    /--batch 3 is more than the 2 streams of this run: a batch takes one frame from each stream \(fix: pass --batch 2 or less/,
  );
  oneLine(
    await runCli('infer', [v, '--model', m.onnxPath, '--batch', '2', '--no-write']),
    /--batch 2 is more than the 1 stream of this run/,
  );
  oneLine(
    await runCli('infer', [v, v, '--model', m.onnxPath, '--batch-timeout', '50', '--no-write']),
    /--batch-timeout paces batches of live sources and of --realtime files \(fix: add --realtime/,
  );
  const fixed = join(scratchDir(), 'batch-fixed-1.onnx');
  writeFileSync(fixed, withFixedBatch(readFileSync(m.onnxPath), 1));
  oneLine(
    await runCli('infer', [v, v, '--model', fixed, '--no-write']),
    /batch-fixed-1\.onnx: the model's input has a fixed batch of 1; this run batches 2 frames \(2 streams\) \(fix: export it with `jetprof export`.*or run with --batch 1/,
  );
  // the fix it names works
  const ok = await inferRun([v, v, '--model', fixed, '--no-write', '--batch', '1', '--warmup', '1']);
  t.is(ok.run.batch, 1);
});

/** A paced infer run with no warm-up and no video: its run JSON, read back. */
async function pacedRun(t: ExecutionContext, json: string, args: string[]) {
  const r = await runCli('infer', [...args, '--warmup', '0', '--no-write', '-q', '--json', json]);
  t.is(r.code, 0, r.stderr);
  return JSON.parse(readFileSync(json, 'utf8'));
}

test('--realtime with --batch-timeout: a short timeout lets a fast source go on without the slow one; a long one holds it to the slow pace', async (t) => {
  const dir = join(scratchDir(), 'batch-timeout');
  mkdirSync(dir, { recursive: true });
  const m = makeModel('batch-timeout', SMALL_LAB_CFG, 5);
  // one second of each: a camera at 20 FPS beside one at 4 FPS
  const fast = makeVideo('batch-fast.mp4', 20, 160, 120, 20);
  const slow = makeVideo('batch-slow.mp4', 4, 160, 120, 4);
  // its own process: a paced run in the test's process would share its event loop with the file's other tests
  const run = (timeoutMs: number) =>
    pacedRun(t, join(dir, `t${timeoutMs}.json`), [
      fast,
      slow,
      '--model',
      m.onnxPath,
      '--realtime',
      '--batch-timeout',
      String(timeoutMs),
    ]);
  const short = await run(5);
  const long = await run(600);
  const said = (x: typeof short) =>
    `${x.batches.meanImages} frames per batch, fast stream ${x.streams[0].frames} frames (${x.streams[0].droppedFrames} dropped)`;
  t.log(`5 ms: ${said(short)}; 600 ms: ${said(long)}`);
  // 5 ms: the fast stream's frames go alone when the slow one has nothing; 600 ms: each waits for a slow frame
  t.true(short.streams[0].droppedFrames < long.streams[0].droppedFrames, `${said(short)} / ${said(long)}`);
  t.true(short.streams[0].frames > long.streams[0].frames, `${said(short)} / ${said(long)}`);
  t.true(long.batches.meanImages > short.batches.meanImages, `${said(short)} / ${said(long)}`);
  t.true(short.streams[0].droppedFrames <= 5, `5 ms: the fast stream keeps its pace (${said(short)})`);
});

test('--stagger: one file replayed as 2 streams at 20 FPS arrives in lock-step without it (the same instant for both) and half a frame apart with it; the run says so in its setup and label', async (t) => {
  const m = makeModel('stagger', SMALL_LAB_CFG, 7);
  const v = makeVideo('stagger.mp4', 12, 160, 120, 20);
  const run = (stagger: boolean) =>
    pacedRun(t, join(scratchDir(), `stagger-${stagger}.json`), [
      v,
      '--model',
      m.onnxPath,
      '--streams',
      '2',
      '--realtime',
      '--source-fps',
      '20',
      ...(stagger ? ['--stagger'] : []),
    ]);
  // arrival times are the pace's own (frame k of stream i at its zero + k x 50 ms), not when a read happened: exact
  // on any machine, whatever was dropped
  const gaps = (x: { perFrame: { index: number[]; stream: number[]; captureMs: number[] } }) => {
    const at = new Map<string, number>();
    x.perFrame.index.forEach((k, j) => at.set(`${x.perFrame.stream[j]}:${k}`, x.perFrame.captureMs[j]));
    return [...at]
      .filter(([key]) => key.startsWith('1:') && at.has(`0:${key.slice(2)}`))
      .map(([key, ms]) => Math.round((ms - at.get(`0:${key.slice(2)}`)!) * 1000) / 1000);
  };
  const lockStep = await run(false);
  const staggered = await run(true);
  t.true(gaps(lockStep).length > 0 && gaps(staggered).length > 0, 'some frame index was kept in both streams');
  t.true(
    gaps(lockStep).every((g) => g === 0),
    JSON.stringify(gaps(lockStep)),
  );
  t.true(
    gaps(staggered).every((g) => g === 25),
    JSON.stringify(gaps(staggered)),
  );
  t.like(staggered.setup, { realtime: { sourceFps: 20, staggered: true } });
  t.regex(staggered.setup.label, /-2streams-batch2-realtime20fps-staggered$/);
  t.is(lockStep.setup.realtime.staggered, undefined);
  const bad = await runCli('infer', [v, '--model', m.onnxPath, '--stagger', '--no-write']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--stagger spreads the arrivals of --realtime streams over a frame time \(fix: add --realtime/);
});

test('a slow live camera (GStreamer, 2 FPS) batched with a file paced at 20 FPS: the batch waits for the camera no longer than --batch-timeout, so the file keeps its pace', async (t) => {
  const m = makeModel('batch-live', SMALL_LAB_CFG, 6);
  const file = makeVideo('batch-beside-camera.mp4', 200, 160, 120, 20);
  const camera =
    'gst:videotestsrc is-live=true ! video/x-raw,framerate=2/1,width=160,height=120 ! videoconvert ! video/x-raw,format=BGR ! appsink';
  const json = join(scratchDir(), 'batch-live.json');
  const r = await runCli(
    'infer',
    [camera, file, '--model', m.onnxPath, '--realtime', '--batch-timeout', '20', '--duration', '4'].concat([
      '--warmup',
      '2',
      '--no-write',
      '--json',
      json,
      '-q',
    ]),
    { timeout: 120_000 },
  );
  t.is(r.code, 0, r.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.batch, 2);
  const [cam, paced] = run.streams as { frames: number; endToEndFps: number; droppedFrames: number }[];
  const said = `camera ${cam.frames} frames (${cam.endToEndFps.toFixed(1)} FPS), file ${paced.frames} frames (${paced.endToEndFps.toFixed(1)} FPS, ${paced.droppedFrames} dropped), ${run.batches.meanImages} frames per batch`;
  t.log(said);
  t.true(cam.frames >= 4 && cam.frames <= 10, `the camera gives 2 frames a second: ${said}`);
  // held to the camera's pace, the file would give about 2 FPS and drop nine frames in ten
  t.true(paced.frames >= 5 * cam.frames, `the file goes on between the camera's frames: ${said}`);
  t.true(paced.droppedFrames < paced.frames / 4, said);
  t.true(run.batches.meanImages < 1.5, `most batches go without a camera frame: ${said}`);
});
