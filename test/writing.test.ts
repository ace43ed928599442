/**
 * What writing the annotated video costs the sequential loop, and where its time goes (#44.9): each frame is handed
 * to the encoder after the model's next run and the encoder is waited for before the run after it, so encoding runs
 * beside the CPU stages and never beside the model; the hand-off and the wait are the frame's write stage, so the
 * stages still add up. Real video, real writers (FFmpeg's libx264, GStreamer's x264enc), a real model on ONNX
 * Runtime; the order is read from the NVTX ranges the loop opens.
 */
import test from 'ava';
import { join } from 'node:path';
import { createOnnxSession } from '../src/backends/onnx.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { type LoopIo, openStreams } from '../src/pipeline/loop-shared.ts';
import { type LoopOptions } from '../src/pipeline/loop-options.ts';
import type { FrameRow, LoopTally } from '../src/pipeline/loop-tally.ts';
import type { Nvtx } from '../src/pipeline/nvtx.ts';
import { runSequentialLoop } from '../src/pipeline/sequential-loop.ts';
import { runPipelinedLoop } from '../src/pipeline/pipelined-loop.ts';
import { STAGES } from '../src/pipeline/stages.ts';
import { type FrameOut, WriteBehind, WriteNow } from '../src/pipeline/frame-writes.ts';
import { videoBackends, loadOpenCv, type Mat } from '../src/video/opencv.ts';
import { classifySource } from '../src/video/sources.ts';
import { sumOf } from '../src/util/stats.ts';
import { makeModel, makeVideo, PERSON_VEHICLE_CFG, scratchDir } from './helpers/fixtures.ts';

/** An NVTX stand-in that keeps the names of the ranges pushed, in order. */
/** An Nvtx that records the names of the ranges opened (`pushed`) and of the start/end ranges ended (`ended`). */
function recordingNvtx(): Nvtx & { pushed: string[]; ended: string[] } {
  const pushed: string[] = [];
  const ended: string[] = [];
  return {
    enabled: true,
    detail: 'test',
    pushed,
    ended,
    push: (n) => void pushed.push(n),
    pop() {},
    // a start range's handle is its place in `pushed`, plus one
    start: (n) => pushed.push(n),
    end: (r) => void ended.push(pushed[Number(r) - 1]),
  };
}

async function sequentialRun(name: string, o: { frames: number; videoIo: 'ffmpeg' | 'gstreamer'; stopAfter?: number }) {
  const m = makeModel('writing', PERSON_VEHICLE_CFG, 5);
  const video = makeVideo(`${name}-in.mp4`, o.frames, 320, 240);
  const out = join(scratchDir(), `${name}.mp4`);
  const nvtx = recordingNvtx();
  const session = await createOnnxSession(m.onnxPath, { threads: 2 });
  let done = 0;
  try {
    const model = readModelInfo(m.onnxPath);
    const options = {
      streams: [{ source: video, arg: classifySource(video), outputPath: out }],
      letterbox: false,
      postprocess: { conf: 0.3, nms: 0.5, nmsKind: 'iou', classMode: 'multi', maxCandidates: 30000, maxDet: 300 },
      warmup: 2,
      batch: 1,
      inFlight: 1,
      nvtx,
      shouldStop: () => o.stopAfter !== undefined && done >= o.stopAfter,
      onFrame: () => void done++,
      videoIo: o.videoIo,
    } as LoopOptions;
    const r = await runSequentialLoop(session, model, options, openStreams(model, options));
    // the loop leaves its video under its temporary name; the job renames it with the run's other files
    for (const s of r.streams) s.output?.commit();
    const cv = loadOpenCv();
    const cap = new cv.VideoCapture(out);
    let written = 0;
    for (let f = cap.read(); !f.empty; f = cap.read()) {
      written++;
      f.release();
    }
    cap.release();
    // every Mat released here: one left to V8 may be finalized while the process exits, after the isolate it reports
    // its memory to is gone (opencv4nodejs's allocator then dies of SIGSEGV)
    r.lastInput?.blob?.release();
    return { r, nvtx, written };
  } finally {
    await session.dispose();
  }
}

const writers = (['ffmpeg', 'gstreamer'] as const).filter(
  (w) => w === 'ffmpeg' || videoBackends(loadOpenCv()).gstreamer,
);

for (const videoIo of writers) {
  test.serial(
    `sequential loop, ${videoIo} writer: each frame goes to the encoder after the next model run, and the encoder is waited for before the run after that`,
    async (t) => {
      const n = 12;
      const { r, nvtx, written } = await sequentialRun(`behind-${videoIo}`, { frames: n, videoIo });
      t.is(r.framesRead, n);
      t.is(written, n, 'the video holds every frame');
      // ranges pushed, without the warm-up prefix: frame k's read ... then the wait for frame k-2's encoding, its
      // inference, frame k-1 handed to the encoder (write), its postprocess
      const names = nvtx.pushed.map((x) => x.replace(/^warmup-/, ''));
      const runs = names.flatMap((x, i) => (x === 'inference' ? [i] : []));
      t.is(runs.length, n);
      runs.forEach((i, k) => {
        if (k >= 1) t.is(names[i + 1], 'write', `frame ${k - 1} handed over just after frame ${k}'s model run`);
        if (k >= 2) t.is(names[i - 1], 'encoder-wait', `the encoder waited for just before frame ${k}'s model run`);
        if (k < 2) t.not(names[i - 1], 'encoder-wait', `nothing to wait for before frame ${k}'s run`);
      });
      // a write range a frame; a wait before each run from the third on and one at the end
      t.is(names.filter((x) => x === 'write').length, n);
      t.is(names.filter((x) => x === 'encoder-wait').length, n - 1);
      // each measured frame's write stage holds its hand-off and its wait; it ends after the next frame's model began
      const p = r.tally.measured;
      t.is(p.index.length, n - 2);
      for (let k = 0; k < p.index.length; k++) {
        t.true(p.writeMs[k] > 0, `frame ${p.index[k]}: write ${p.writeMs[k]} ms`);
        if (k + 1 < p.index.length) t.true(p.endMs[k] >= p.inferenceStartMs[k + 1], `frame ${p.index[k]} ends late`);
      }
      // no moment is counted twice: the stages of the measured frames fit in their wall time (the rest is the loop's
      // own overhead, and the last warm-up frame's wait, which ran after the first measured frame's read)
      const stages = sumOf(STAGES.map((s) => sumOf(p[`${s}Ms`])));
      t.true(stages <= r.tally.wallMs + 0.001 * 5 * p.index.length, `stages ${stages} ms, wall ${r.tally.wallMs} ms`);
    },
  );
}

test.serial(
  'a sequential run stopped (Ctrl-C) writes every frame it did, the ones held for the next run included',
  async (t) => {
    const { r, written } = await sequentialRun('behind-stopped', { frames: 30, videoIo: 'ffmpeg', stopAfter: 7 });
    t.true(r.interrupted);
    t.is(r.framesRead, 7);
    t.is(written, 7);
  },
);

test.serial(
  "pipelined loop: when a frame's model run is done, the next frame's run is issued before the frame's postprocess and draw take the main thread",
  async (t) => {
    const n = 8;
    const m = makeModel('writing', PERSON_VEHICLE_CFG, 5);
    const video = makeVideo('pipelined-order-in.mp4', n, 320, 240);
    const nvtx = recordingNvtx();
    const onnx = await createOnnxSession(m.onnxPath, { threads: 2 });
    const count = (name: string) => nvtx.ended.filter((x) => x.replace(/^warmup-/, '') === name).length;
    let runs = 0;
    // each run waits until the next frame is preprocessed (its range ended: a condition, not a time), so that its run
    // can follow at once
    const session = Object.assign(Object.create(onnx) as typeof onnx, {
      run: async (...a: Parameters<typeof onnx.run>) => {
        const k = runs++;
        while (k + 1 < n && count('preprocess') < k + 2) await new Promise(setImmediate);
        return onnx.run(...a);
      },
    });
    try {
      const model = readModelInfo(m.onnxPath);
      const options = {
        streams: [{ source: video, arg: classifySource(video), outputPath: join(scratchDir(), 'pipelined-order.mp4') }],
        letterbox: false,
        postprocess: { conf: 0.3, nms: 0.5, nmsKind: 'iou', classMode: 'multi', maxCandidates: 30000, maxDet: 300 },
        warmup: 2,
        batch: 1,
        inFlight: 3,
        nvtx,
        shouldStop: () => false,
        videoIo: 'ffmpeg',
      } as LoopOptions;
      const r = await runPipelinedLoop(session, model, options, openStreams(model, options));
      for (const s of r.streams) s.output?.commit();
      r.lastInput?.blob?.release();
      t.is(r.framesRead, n);
      // frames go through each stage in order: the k-th range of a stage is frame k's
      const names = nvtx.pushed.map((x) => x.replace(/^warmup-/, ''));
      const starts = (stage: string) => names.flatMap((x, i) => (x === stage ? [i] : []));
      const [inference, postprocess] = [starts('inference'), starts('postprocess')];
      t.is(inference.length, n);
      t.is(postprocess.length, n);
      for (let k = 0; k + 1 < n; k++)
        t.true(inference[k + 1] < postprocess[k], `frame ${k + 1}'s run issued before frame ${k}'s postprocess`);
    } finally {
      await onnx.dispose();
    }
  },
);

/** A frame's way out with stand-ins: its Mat's release and its write are logged in `log`. */
function frameOut(log: string[], id: number, io: { sink?: Record<string, unknown> }): FrameOut {
  return {
    io: io as unknown as LoopIo,
    frame: { release: () => void log.push(`release ${id}`) } as unknown as Mat,
    row: { clock: { index: id, writeMs: 0, tEnd: 0n } } as unknown as FrameRow,
    warmup: false,
    closeFrame: () => void log.push(`close ${id}`),
  };
}

test('a write that throws (a full disk) leaves drop() only the frames not yet handed over: each frame released once', async (t) => {
  const log: string[] = [];
  let writes = 0;
  const sink = {
    write() {
      if (++writes === 2) throw new Error('ENOSPC: no space left on device');
    },
  };
  const tally = { record() {} } as unknown as LoopTally;
  const w = new WriteBehind(tally, { open: () => undefined, close() {} });
  const io = { sink };
  for (const id of [1, 2, 3]) await w.put(frameOut(log, id, io));
  t.throws(() => w.handOff(), { message: /ENOSPC/ });
  const released = () => log.filter((x) => x.startsWith('release'));
  t.deepEqual(released(), ['release 1', 'release 2'], 'the first written, the second released as its write failed');
  w.drop();
  t.deepEqual(released(), ['release 1', 'release 2', 'release 3'], 'drop releases the third only');
});

test("a frame's row is recorded once, when its write is done: written behind, after the wait for its encoder; written now, after its write; the Mat released as its write returns", async (t) => {
  const log: string[] = [];
  const tally = { record: (r: FrameRow) => void log.push(`record ${r.clock.index} write ${r.clock.writeMs > 0}`) };
  const ranges = { open: (n: string) => void log.push(`range ${n}`), close() {} };
  const sink = {
    write: () => void log.push('write'),
    settle() {
      log.push('settle');
      // the wait takes time, which goes to the last frame handed over
      for (const end = process.hrtime.bigint() + 1_000_000n; process.hrtime.bigint() < end;);
    },
    writeAsync: async () => void log.push('writeAsync'),
  };
  const behind = new WriteBehind(tally as unknown as LoopTally, ranges);
  const io = { sink };
  const rows = [frameOut(log, 1, io), frameOut(log, 2, io)];
  for (const f of rows) await behind.put(f);
  t.deepEqual(log, ['close 1', 'close 2'], 'held: their frame ranges closed, nothing written or recorded');
  behind.handOff();
  t.deepEqual(
    log.slice(2),
    ['range write', 'write', 'release 1', 'range write', 'write', 'release 2'],
    'handed over, not recorded',
  );
  log.length = 0;
  behind.settle();
  t.deepEqual(log, ['range encoder-wait', 'settle', 'record 1 write true', 'record 2 write true']);
  t.true(rows[1].row.clock.writeMs >= 1, "the wait is in the last frame's write stage");
  t.true(rows[1].row.clock.tEnd > 0n, "and its end moved to the wait's end");
  // a frame with no output has nothing to wait for: written (nothing) and recorded at once
  log.length = 0;
  await behind.put(frameOut(log, 3, {}));
  t.deepEqual(log, ['range write', 'release 3', 'close 3', 'record 3 write true']);
  // written now (the pipelined loop): the write, the release, its frame range closed, then its record
  log.length = 0;
  await new WriteNow(tally as unknown as LoopTally, ranges).put(frameOut(log, 4, io));
  t.deepEqual(log, ['range write', 'writeAsync', 'release 4', 'close 4', 'record 4 write true']);
});
