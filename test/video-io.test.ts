/**
 * Video in and out (--video-io). The writer: GStreamer's x264enc pipeline or OpenCV's FFmpeg writer, every frame in a
 * playable H.264 MP4, and a synchronous write that waits for the encoder's threads, so the write stage holds what
 * writing costs and the inference stage does not. The reader: GStreamer's decoders give the frames FFmpeg gives. The
 * board's path: the Jetson's elements (nvv4l2decoder, nvvidconv, nvv4l2h264enc) stood in for by software ones
 * (test/native/gst_board_elements.c), so the pipelines jetprof writes for a board parse, link and run here.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { evenFrameSize } from '../src/video/frame-size.ts';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Mat } from '../src/video/opencv.ts';
import { EncoderThreads } from '../src/video/encoder-threads.ts';
import { gstWriterPipeline, readerPlan } from '../src/video/gstreamer.ts';
import {
  errorLines,
  gstBoardEnv,
  inferRun,
  makeModel,
  makeVideo,
  SMALL_LAB_CFG,
  probeVideo,
  ROOT,
  runCli,
  scratchDir,
} from './helpers/fixtures.ts';

const model = makeModel('writer', SMALL_LAB_CFG, 3);

for (const videoIo of ['gstreamer', 'ffmpeg'] as const) {
  test(`--video-io ${videoIo}: every frame in a playable H.264 MP4, the encoder and decoder named in the run`, async (t) => {
    const video = makeVideo(`writer-${videoIo}.mp4`, 14, 320, 240);
    const out = join(scratchDir(), `out-${videoIo}.mp4`);
    const { run } = await inferRun([
      video,
      '--model',
      model.onnxPath,
      '--warmup',
      '2',
      '--pipeline',
      'off',
      '--video-io',
      videoIo,
      '--output',
      out,
    ]);
    const probe = probeVideo(out);
    t.like(probe, { codec: 'h264', width: 320, height: 240, frames: 14 }, 'every frame, warm-up included');
    t.is(run.output!.encoder, videoIo === 'gstreamer' ? 'GStreamer x264enc' : 'FFmpeg libx264');
    t.is(run.output!.encoderNote, undefined);
    t.is(run.video.decoder, videoIo === 'gstreamer' ? 'GStreamer avdec_h264' : 'FFmpeg');
  });
}

test('--video-io auto on an odd frame size: FFmpeg writes it (one pixel smaller) and the run says why not GStreamer; --video-io gstreamer refuses it in one line', async (t) => {
  const video = makeVideo('writer-odd.mp4', 4, 160, 120);
  const json = join(scratchDir(), 'run-odd.json');
  const args = [video, '--model', model.onnxPath, '--warmup', '0', '--frame-size', '161x121', '-q'];
  await inferRun([...args, '--output', join(scratchDir(), 'odd-auto.mp4'), '--json', json]);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.output.encoder, 'FFmpeg libx264');
  t.regex(run.output.encoderNote, /not GStreamer \(x264enc encodes even frame sizes only, and the frames are 161x121/);
  const strict = await runCli('infer', [
    ...args,
    '--output',
    join(scratchDir(), 'odd-gst.mp4'),
    '--video-io',
    'gstreamer',
  ]);
  t.is(strict.code, 2, strict.stderr);
  t.deepEqual(errorLines(strict.stderr).length, 1, strict.stderr);
  t.regex(strict.stderr, /x264enc encodes even frame sizes only.*--frame-size 160x120/);
  // the size a fix names is one --frame-size takes (33x17 would be 32x16, below its 32), and it works
  t.is(evenFrameSize(33, 17), '32x32');
  const small = [video, '--model', model.onnxPath, '--warmup', '0', '-q', '--video-io', 'gstreamer'];
  const refused = await runCli('infer', [
    ...small,
    '--frame-size',
    '33x33',
    '--output',
    join(scratchDir(), 'gst-33.mp4'),
  ]);
  t.is(refused.code, 2, refused.stderr);
  const fix = /--frame-size (\d+x\d+)/.exec(refused.stderr)?.[1];
  t.is(fix, '32x32', refused.stderr);
  const fixed = await inferRun([...small, '--frame-size', fix!, '--output', join(scratchDir(), 'gst-32.mp4')]);
  t.is(probeVideo(join(scratchDir(), 'gst-32.mp4')).frames, fixed.run.frames + fixed.run.warmupFrames);
});

/** GStreamer's environment with every plugin of this machine but `libs` (a plugin folder and a registry of its own). */
function pluginsWithout(
  ...libs: string[]
): { GST_PLUGIN_SYSTEM_PATH_1_0: string; GST_REGISTRY_1_0: string } | undefined {
  const system = ['/usr/lib/x86_64-linux-gnu/gstreamer-1.0', '/usr/lib/aarch64-linux-gnu/gstreamer-1.0'].find((d) => {
    try {
      const here = readdirSync(d);
      return libs.every((l) => here.includes(l));
    } catch {
      return false;
    }
  });
  if (!system) return undefined;
  const name = libs.join('-');
  const plugins = join(scratchDir(), `gst-plugins-no-${name}`);
  if (!existsSync(plugins)) {
    mkdirSync(plugins, { recursive: true });
    for (const f of readdirSync(system)) if (!libs.includes(f)) symlinkSync(join(system, f), join(plugins, f));
  }
  return { GST_PLUGIN_SYSTEM_PATH_1_0: plugins, GST_REGISTRY_1_0: join(scratchDir(), `registry-no-${name}.bin`) };
}

test('--video-io gstreamer without x264enc: one line naming the element and its package; auto falls back to FFmpeg and says so', async (t) => {
  const env = pluginsWithout('libgstx264.so');
  if (!env) return t.fail('no libgstx264.so here: bash scripts/setup.sh installs gstreamer1.0-plugins-ugly');
  const video = makeVideo('writer-nox264.mp4', 4, 160, 120);
  const base = [video, '--model', model.onnxPath, '--warmup', '0', '-q'];
  const strict = await runCli(
    'infer',
    [...base, '--output', join(scratchDir(), 'nox264.mp4'), '--video-io', 'gstreamer'],
    {
      env,
    },
  );
  t.is(strict.code, 2, strict.stderr);
  t.is(errorLines(strict.stderr).length, 1, strict.stderr);
  t.regex(strict.stderr, /GStreamer has no x264enc here.*sudo apt install gstreamer1\.0-plugins-ugly/);
  const json = join(scratchDir(), 'run-nox264.json');
  const auto = await runCli('infer', [...base, '--output', join(scratchDir(), 'nox264-auto.mp4'), '--json', json], {
    env,
  });
  t.is(auto.code, 0, auto.stderr);
  t.regex(auto.stderr, /note: the video is encoded by FFmpeg, not GStreamer \(GStreamer has no x264enc here/);
  t.is(JSON.parse(readFileSync(json, 'utf8')).output.encoder, 'FFmpeg libx264');
  // doctor says the same, with the fix
  const doc = await runCli('jetprof', ['doctor'], { env });
  t.regex(
    doc.stdout,
    /\| Video writer \| WARN \| FFmpeg libx264 \(--video-io auto\): not GStreamer, GStreamer has no x264enc here.*\| sudo apt install gstreamer1\.0-plugins-ugly/,
  );
  t.regex(
    (await runCli('jetprof', ['doctor'])).stdout,
    /\| Video writer \| ok \| GStreamer x264enc \(--video-io auto\) \|/,
  );
});

test("the writer's pipeline quotes its file name (spaces, quotes, backslashes)", (t) => {
  t.is(
    gstWriterPipeline('/tmp/a b/"x"\\y.mp4'),
    'appsrc name=opencvsrc ! videoconvert ! x264enc tune=zerolatency speed-preset=superfast threads=1 ! mp4mux ! filesink location="/tmp/a b/\\"x\\"\\\\y.mp4" sync=false',
  );
});

/** A worker thread that spins (state R) until told to stop, or for `spins` rounds, then sleeps. */
function spinner(spins: number) {
  const flags = new Int32Array(new SharedArrayBuffer(8)); // [0]: 1 spinning, 2 done (the thread ends); [1]: 1 stop now
  const worker = new Worker(
    `const { workerData: f } = require('node:worker_threads');
     Atomics.store(f, 0, 1); Atomics.notify(f, 0);
     // small-integer arithmetic only: the loop allocates nothing, so no garbage collection ever puts this thread to
     // sleep while it spins (a collection waits for its helper threads, which a loaded machine runs late: the thread
     // would read as not running between two polls, and the test would blame the wait for it)
     let x = 0;
     for (let i = 0; i < ${spins} && Atomics.load(f, 1) === 0; i++) x = (x + i) | 0;
     Atomics.store(f, 0, 2);`,
    { eval: true, workerData: flags },
  );
  // done spinning, the thread ends on its own; and it never keeps the test process alive
  worker.unref();
  const started = () => {
    while (Atomics.load(flags, 0) === 0) Atomics.wait(flags, 0, 0, 50);
  };
  const stop = async () => {
    Atomics.store(flags, 1, 1);
    Atomics.notify(flags, 1);
    await worker.terminate();
  };
  return { flags, started, stop };
}

test.serial(
  'a synchronous write waits for the threads the writer started, and not for threads started after it opened (the model runtime spinning)',
  async (t) => {
    // the encoder: a thread started while the "writer" opened, busy for a while after the write
    const threads = new EncoderThreads();
    t.true(threads.available, '/proc/self/task is readable here');
    const encoder = spinner(20_000_000);
    threads.opened();
    encoder.started();
    threads.waitIdle();
    // the wait ends when the encoder thread stops running, or at its 2 s limit (a machine so loaded that 20 million
    // additions take longer): never before, whatever the load
    const done = Atomics.load(encoder.flags, 0) === 2;
    t.true(done || threads.timedOut === 1, 'the wait ended only once the encoder thread stopped running');
    if (!done) t.log('the encoder thread outlasted the 2 s limit on this loaded machine: the wait said so (timedOut)');
    // a thread started later (as ONNX Runtime starts its pool at the first run) that spins without end
    const runtime = spinner(Number.MAX_SAFE_INTEGER);
    runtime.started();
    const timedOutBefore = threads.timedOut;
    await encoder.stop(); // the encoder done: only the later thread spins now
    threads.waitIdle();
    t.is(Atomics.load(runtime.flags, 0), 1, 'returned while the later thread still spins');
    t.is(threads.timedOut, timedOutBefore, 'not by the limit: the later thread is not waited for');
    threads.close();
    await runtime.stop();
  },
);

test.serial(
  "the wait for the encoder (settle, before the sequential loop's next model run) finds GStreamer's encoder in every writer of a process (GStreamer reuses its streaming threads from a pool)",
  async (t) => {
    const { createVideoSink } = await import('../src/video/writer.ts');
    const { loadOpenCv, fileCaptureApi } = await import('../src/video/opencv.ts');
    const cv = loadOpenCv();
    const cap = new cv.VideoCapture(makeVideo('writer-pool.mp4', 20, 640, 480), fileCaptureApi(cv));
    const before = statFiles();
    for (const k of [1, 2]) {
      const sink = createVideoSink(join(scratchDir(), `pool-${k}.mp4`), 30, 640, 480, cv, 'gstreamer');
      for (let i = 0; i < 10; i++) {
        sink.write(cap.read());
        sink.settle();
      }
      const w = sink.encoderWaits!();
      await sink.finish();
      sink.commit();
      t.is(w.waits, 10);
      // a 640x480 frame keeps x264 busy for milliseconds after the push; the first poll comes microseconds after it
      t.true(w.busyWaits >= 5, `writer ${k}: ${w.busyWaits} of 10 waits found the encoder at work`);
      t.is(w.timedOut, 0);
      t.is(probeVideo(join(scratchDir(), `pool-${k}.mp4`)).frames, 10);
      // and what its threads cost the CPU, read before they ended with the writer
      t.true(sink.encoderCpuMs! > 0, `writer ${k}: the encoder's threads used ${sink.encoderCpuMs} ms of CPU`);
    }
    // the wait keeps the writer's threads' stat files open while it writes, and closes them with the writer (another
    // test of this file may hold some of its own meanwhile: only this one's count)
    t.deepEqual(
      statFiles().filter((fd) => !before.includes(fd)),
      [],
      'no stat file left open',
    );
  },
);

/** This process's open files that are a thread's /proc stat file (what EncoderThreads keeps open). */
function statFiles(): string[] {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return /\/task\/\d+\/stat$/.test(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      return false;
    }
  });
}

/** Every frame of `path` as OpenCV reads it with `videoIo`, and the decoder it names. */
async function decodeAll(path: string, videoIo: 'ffmpeg' | 'gstreamer', max = 1000) {
  const { openVideo } = await import('../src/video/reader.ts');
  const { loadOpenCv } = await import('../src/video/opencv.ts');
  const source = openVideo(path, loadOpenCv(), videoIo);
  const frames = [];
  for (let m = source.read(); m && frames.length < max; m = source.read()) frames.push(m);
  source.close();
  return { frames, decoder: source.info.decoder, frameCount: source.info.frameCount };
}

/** Mean absolute difference of two BGR frames, over every pixel and channel (0-255). */
function meanDiff(a: Mat, b: Mat): number {
  const m = a.absdiff(b).mean();
  return (m.x + m.y + m.z) / 3;
}

const mjpegAvi = () => {
  const out = join(scratchDir(), 'reader-mjpeg.avi');
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', makeVideo('reader-src.mp4', 18, 320, 240), '-c:v', 'mjpeg', out]);
  return out;
};
const VTEST = join(ROOT, 'videos', 'vtest.avi');

test('--video-io gstreamer decodes the frames FFmpeg decodes: H.264 in MP4, MJPEG in AVI, and the real vtest.avi (MPEG-4 v3), every frame within codec noise', async (t) => {
  const files: [string, string, number][] = [
    [makeVideo('reader-h264.mp4', 24, 320, 240), 'GStreamer avdec_h264', 1000],
    [mjpegAvi(), 'GStreamer jpegdec', 1000],
  ];
  if (existsSync(VTEST)) files.push([VTEST, 'GStreamer avdec_msmpeg4', 60]);
  else t.log('videos/vtest.avi is missing (bash scripts/fetch-sample-video.sh): checked on the generated files only');
  for (const [file, decoder, max] of files) {
    const ffmpeg = await decodeAll(file, 'ffmpeg', max);
    const gst = await decodeAll(file, 'gstreamer', max);
    t.is(ffmpeg.decoder, 'FFmpeg');
    t.is(gst.decoder, decoder, file);
    t.is(gst.frames.length, ffmpeg.frames.length, `${file}: the same number of frames`);
    t.true(gst.frames.length >= Math.min(max, 18));
    t.is(gst.frameCount, ffmpeg.frameCount, 'the frame count comes from the same probe');
    const diffs = gst.frames.map((f, i) => meanDiff(f, ffmpeg.frames[i]));
    // the same bitstream decoded twice: only the YUV to BGR conversion differs (a frame out of order would differ by tens)
    t.true(Math.max(...diffs) < 2, `${file}: largest mean difference ${Math.max(...diffs).toFixed(2)} of 255`);
  }
});

test("--frame-size through GStreamer: the reader's pipeline resizes the frames on its own thread, stretched as OpenCV's resize stretches them, and the run names it", async (t) => {
  const { openVideo } = await import('../src/video/reader.ts');
  const { loadOpenCv } = await import('../src/video/opencv.ts');
  const cv = loadOpenCv();
  const files: [string, [number, number], number][] = [[makeVideo('scaled-src.mp4', 12, 320, 240), [200, 100], 6]];
  if (existsSync(VTEST)) files.push([VTEST, [960, 540], 3]);
  for (const [file, size, bound] of files) {
    const gst = openVideo(file, cv, 'gstreamer', size);
    const ffmpeg = openVideo(file, cv, 'ffmpeg', size);
    t.deepEqual(gst.info.resizedTo, size, `${file}: comes at ${size.join('x')}`);
    t.is(ffmpeg.info.resizedTo, undefined, "FFmpeg's frames come at the video's size: the loop resizes them");
    t.regex(gst.info.decoder!, /^GStreamer avdec_\w+, resized by videoscale$/);
    for (let k = 0; k < 6; k++) {
      const a = gst.read()!;
      const decoded = ffmpeg.read()!;
      const b = decoded.resize(size[1], size[0]);
      t.deepEqual([a.cols, a.rows], size);
      // borders kept for the aspect ratio, or a frame out of step, would differ by tens of levels
      const d = meanDiff(a, b);
      t.true(d < bound, `${file} frame ${k}: mean difference ${d.toFixed(2)} of 255 from OpenCV's resize`);
      for (const m of [a, b, decoded]) m.release();
    }
    gst.close();
    ffmpeg.close();
  }
  // the run: its decoder says where the frames were resized, and the video is written at --frame-size, every frame
  const json = join(scratchDir(), 'run-scaled.json');
  const out = join(scratchDir(), 'run-scaled.mp4');
  const r = await runCli('infer', [
    files[0][0],
    ...['--model', model.onnxPath, '--video-io', 'gstreamer', '--frame-size', '200x100', '--warmup', '2', '-q'],
    ...['--output', out, '--json', json],
  ]);
  t.is(r.code, 0, r.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.video.decoder, 'GStreamer avdec_h264, resized by videoscale');
  t.deepEqual([run.video.width, run.video.height, run.frameSize], [320, 240, [200, 100]]);
  t.like(probeVideo(out), { width: 200, height: 100, frames: 12 });
});

test('--video-io gstreamer without avdec_h264: one line naming the element and its package; auto stays with FFmpeg without a word', async (t) => {
  const env = pluginsWithout('libgstlibav.so');
  if (!env) return t.fail('no libgstlibav.so here: bash scripts/setup.sh installs gstreamer1.0-libav');
  const video = makeVideo('reader-nolibav.mp4', 6, 160, 120);
  const base = [video, '--model', model.onnxPath, '--warmup', '0', '--no-write', '-q'];
  const strict = await runCli('infer', [...base, '--video-io', 'gstreamer'], { env });
  t.is(strict.code, 2, strict.stderr);
  t.is(errorLines(strict.stderr).length, 1, strict.stderr);
  t.regex(
    strict.stderr,
    /reader-nolibav\.mp4: GStreamer has no avdec_h264 here: the video reader's pipeline needs it.*sudo apt install gstreamer1\.0-libav, or use --video-io ffmpeg/,
  );
  const json = join(scratchDir(), 'run-nolibav.json');
  const auto = await runCli('infer', [...base, '--json', json], { env });
  t.is(auto.code, 0, auto.stderr);
  t.is(JSON.parse(readFileSync(json, 'utf8')).video.decoder, 'FFmpeg');
  t.notRegex(auto.stderr, /note: decoded/);
});

test('on a Jetson (its elements stood in for): auto decodes H.264 with nvv4l2decoder and encodes with nvv4l2h264enc, every frame written; other codecs stay with FFmpeg; doctor says which and why', async (t) => {
  const env = gstBoardEnv();
  const video = makeVideo('board-io.mp4', 12, 320, 240);
  const out = join(scratchDir(), 'board-io-out.mp4');
  const json = join(scratchDir(), 'run-board-io.json');
  const args = ['--model', model.onnxPath, '--warmup', '2', '--pipeline', 'off', '-q'];
  const r = await runCli('infer', [video, ...args, '--output', out, '--json', json], { env });
  t.is(r.code, 0, r.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.video.decoder, 'GStreamer nvv4l2decoder');
  t.is(run.video.decoderNote, undefined);
  t.is(run.output.encoder, 'GStreamer nvv4l2h264enc');
  t.like(probeVideo(out), { codec: 'h264', width: 320, height: 240, frames: 12 });
  t.is(run.frames + run.warmupFrames, 12, 'every frame decoded');
  // --frame-size: nvvidconv (the VIC) resizes the frames, not the CPU
  const sized = join(scratchDir(), 'run-board-sized.json');
  const r4 = await runCli('infer', [video, ...args, '--frame-size', '480x270', '--no-write', '--json', sized], { env });
  t.is(r4.code, 0, r4.stderr);
  const s4 = JSON.parse(readFileSync(sized, 'utf8'));
  t.like(s4, { video: { decoder: 'GStreamer nvv4l2decoder, resized by nvvidconv' }, frameSize: [480, 270] });
  t.is(s4.frames + s4.warmupFrames, 12);
  // two sources, two decoders: each stream's record names its own
  const mixed = join(scratchDir(), 'run-board-mixed.json');
  const r3 = await runCli('infer', [video, mjpegAvi(), ...args, '--no-write', '--json', mixed], { env });
  t.is(r3.code, 0, r3.stderr);
  t.deepEqual(
    JSON.parse(readFileSync(mixed, 'utf8')).streams.map((s: { decoder: string }) => s.decoder),
    ['GStreamer nvv4l2decoder', 'FFmpeg'],
  );
  // MJPEG is not what jetprof hands NVDEC: FFmpeg decodes it, as expected, so no note
  const json2 = join(scratchDir(), 'run-board-mjpeg.json');
  const r2 = await runCli('infer', [mjpegAvi(), ...args, '--no-write', '--json', json2], { env });
  t.is(r2.code, 0, r2.stderr);
  t.is(JSON.parse(readFileSync(json2, 'utf8')).video.decoder, 'FFmpeg');
  t.notRegex(r2.stderr, /note: decoded/);
  const doc = await runCli('jetprof', ['doctor'], { env });
  t.regex(
    doc.stdout,
    /\| Video reader \| ok \| GStreamer nvv4l2decoder \(--video-io auto\): the board's NVDEC for H\.264 and H\.265/,
  );
  t.regex(doc.stdout, /\| Video writer \| ok \| GStreamer nvv4l2h264enc \(--video-io auto\) \|/);
  t.regex(
    (await runCli('jetprof', ['doctor'])).stdout,
    /\| Video reader \| ok \| FFmpeg \(--video-io auto\): no nvv4l2decoder here/,
  );
});

test('on a Jetson whose pipelines cannot start, auto decodes and encodes with FFmpeg and the run says why', async (t) => {
  // the stand-ins hold avdec_h264 and x264enc: without them they cannot link, as with a broken JetPack install
  const without = pluginsWithout('libgstlibav.so', 'libgstx264.so');
  if (!without) return t.fail('no libgstlibav.so or libgstx264.so here: bash scripts/setup.sh installs them');
  const env = {
    ...without,
    GST_PLUGIN_PATH_1_0: gstBoardEnv().GST_PLUGIN_PATH_1_0,
    GST_REGISTRY_1_0: join(scratchDir(), 'registry-board-broken.bin'),
  };
  const json = join(scratchDir(), 'run-board-broken.json');
  const out = join(scratchDir(), 'board-broken-out.mp4');
  const video = makeVideo('board-broken.mp4', 6, 160, 120);
  const r = await runCli(
    'infer',
    [video, '--model', model.onnxPath, '--warmup', '0', '-q', '--output', out, '--json', json],
    {
      env,
    },
  );
  t.is(r.code, 0, r.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.video.decoder, 'FFmpeg');
  t.regex(
    run.video.decoderNote,
    /^decoded by FFmpeg: GStreamer's pipeline did not start \(filesrc location=.* ! qtdemux ! h264parse ! nvv4l2decoder ! nvvidconv/,
  );
  t.is(run.output.encoder, 'FFmpeg libx264');
  t.regex(
    run.output.encoderNote,
    /^the video is encoded by FFmpeg, not GStreamer \(its pipeline did not start: .*nvv4l2h264enc/,
  );
  t.regex(r.stderr, /infer: note: decoded by FFmpeg: GStreamer's pipeline did not start/);
  t.regex(r.stderr, /infer: note: the video is encoded by FFmpeg, not GStreamer/);
  t.is(probeVideo(out).frames, 6);
});

test('the reader names its demuxer, parser and decoder where the format is known, and decodebin where not', (t) => {
  t.is(
    readerPlan('/v/a b.mp4', { container: 'mov,mp4,m4a,3gp,3g2,mj2', codec: 'h264' }).pipeline,
    'filesrc location="/v/a b.mp4" ! qtdemux ! h264parse ! avdec_h264 ! videoconvert ! video/x-raw,format=BGR ! appsink sync=false',
  );
  t.is(readerPlan('/v/x.mkv', { container: 'matroska,webm', codec: 'hevc' }).name, 'GStreamer avdec_h265');
  // --frame-size: resized in the pipeline, before the conversion to BGR, stretched (no borders) as OpenCV's resize
  const scaled = readerPlan('/v/a.mp4', { container: 'mov,mp4,m4a,3gp,3g2,mj2', codec: 'h264' }, [960, 540]);
  t.is(
    scaled.pipeline,
    'filesrc location="/v/a.mp4" ! qtdemux ! h264parse ! avdec_h264 ! videoscale add-borders=false ! video/x-raw,width=960,height=540 ! videoconvert ! video/x-raw,format=BGR ! appsink sync=false',
  );
  t.is(scaled.name, 'GStreamer avdec_h264, resized by videoscale');
  t.true(scaled.elements.includes('videoscale'), 'a missing videoscale is named like any missing element');
  t.is(readerPlan('/v/x.ogv', { container: 'ogg', codec: 'theora' }).name, 'GStreamer decodebin');
  t.is(
    gstWriterPipeline('/o.mp4', true),
    'appsrc name=opencvsrc ! videoconvert ! video/x-raw,format=BGRx ! nvvidconv ! nvv4l2h264enc ! h264parse ! qtmux ! filesink location="/o.mp4" sync=false',
  );
});
