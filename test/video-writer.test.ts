/**
 * The annotated video's writer: GStreamer's x264enc pipeline or OpenCV's FFmpeg writer (--video-io), every frame in a
 * playable H.264 MP4, and a synchronous write that waits for the encoder's threads, so the write stage holds what
 * writing costs and the inference stage does not.
 */
import test from 'ava';
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { EncoderThreads } from '../src/video/encoder-threads.ts';
import { gstWriterPipeline } from '../src/video/io.ts';
import {
  errorLines,
  makeModel,
  makeVideo,
  PERSON_VEHICLE_CFG,
  probeVideo,
  runCli,
  scratchDir,
} from './helpers/fixtures.ts';

const model = makeModel('writer', PERSON_VEHICLE_CFG, 3);

for (const videoIo of ['gstreamer', 'ffmpeg'] as const) {
  test(`--video-io ${videoIo}: every frame in a playable H.264 MP4, the encoder named in the run JSON and on stderr`, (t) => {
    const video = makeVideo(`writer-${videoIo}.mp4`, 14, 320, 240);
    const out = join(scratchDir(), `out-${videoIo}.mp4`);
    const json = join(scratchDir(), `run-${videoIo}.json`);
    const r = runCli('infer', [
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
      '--json',
      json,
      '-q',
    ]);
    t.is(r.code, 0, r.stderr);
    const probe = probeVideo(out);
    t.like(probe, { codec: 'h264', width: 320, height: 240, frames: 14 }, 'every frame, warm-up included');
    const run = JSON.parse(readFileSync(json, 'utf8'));
    t.is(run.output.encoder, videoIo === 'gstreamer' ? 'GStreamer x264enc' : 'FFmpeg libx264');
    t.is(run.output.encoderNote, undefined);
  });
}

test('--video-io auto on an odd frame size: FFmpeg writes it (one pixel smaller) and the run says why not GStreamer; --video-io gstreamer refuses it in one line', (t) => {
  const video = makeVideo('writer-odd.mp4', 4, 160, 120);
  const json = join(scratchDir(), 'run-odd.json');
  const args = [video, '--model', model.onnxPath, '--warmup', '0', '--frame-size', '161x121', '-q'];
  const auto = runCli('infer', [...args, '--output', join(scratchDir(), 'odd-auto.mp4'), '--json', json]);
  t.is(auto.code, 0, auto.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.output.encoder, 'FFmpeg libx264');
  t.regex(run.output.encoderNote, /not GStreamer \(x264enc encodes even frame sizes only, and the frames are 161x121/);
  const strict = runCli('infer', [...args, '--output', join(scratchDir(), 'odd-gst.mp4'), '--video-io', 'gstreamer']);
  t.is(strict.code, 2, strict.stderr);
  t.deepEqual(errorLines(strict.stderr).length, 1, strict.stderr);
  t.regex(strict.stderr, /x264enc encodes even frame sizes only.*--frame-size 160x120/);
});

test('--video-io gstreamer without x264enc: one line naming the element and its package; auto falls back to FFmpeg and says so', (t) => {
  // a plugin folder holding every GStreamer plugin of this machine but x264's, and a registry of its own
  const system = ['/usr/lib/x86_64-linux-gnu/gstreamer-1.0', '/usr/lib/aarch64-linux-gnu/gstreamer-1.0'].find((d) => {
    try {
      return readdirSync(d).includes('libgstx264.so');
    } catch {
      return false;
    }
  });
  if (!system) return t.fail('no libgstx264.so here: bash scripts/setup.sh installs gstreamer1.0-plugins-ugly');
  const plugins = join(scratchDir(), 'gst-plugins-no-x264');
  mkdirSync(plugins, { recursive: true });
  for (const f of readdirSync(system)) if (f !== 'libgstx264.so') symlinkSync(join(system, f), join(plugins, f));
  const env = { GST_PLUGIN_SYSTEM_PATH_1_0: plugins, GST_REGISTRY_1_0: join(scratchDir(), 'registry-no-x264.bin') };
  const video = makeVideo('writer-nox264.mp4', 4, 160, 120);
  const base = [video, '--model', model.onnxPath, '--warmup', '0', '-q'];
  const strict = runCli('infer', [...base, '--output', join(scratchDir(), 'nox264.mp4'), '--video-io', 'gstreamer'], {
    env,
  });
  t.is(strict.code, 2, strict.stderr);
  t.is(errorLines(strict.stderr).length, 1, strict.stderr);
  t.regex(strict.stderr, /GStreamer has no x264enc here.*sudo apt install gstreamer1\.0-plugins-ugly/);
  const json = join(scratchDir(), 'run-nox264.json');
  const auto = runCli('infer', [...base, '--output', join(scratchDir(), 'nox264-auto.mp4'), '--json', json], { env });
  t.is(auto.code, 0, auto.stderr);
  t.regex(auto.stderr, /note: the video is encoded by FFmpeg, not GStreamer \(GStreamer has no x264enc here/);
  t.is(JSON.parse(readFileSync(json, 'utf8')).output.encoder, 'FFmpeg libx264');
  // doctor says the same, with the fix
  const doc = runCli('jetprof', ['doctor'], { env });
  t.regex(
    doc.stdout,
    /\| Video writer \| WARN \| FFmpeg libx264 \(--video-io auto\): not GStreamer, GStreamer has no x264enc here.*\| sudo apt install gstreamer1\.0-plugins-ugly/,
  );
  t.regex(runCli('jetprof', ['doctor']).stdout, /\| Video writer \| ok \| GStreamer x264enc \(--video-io auto\) \|/);
});

test("the writer's pipeline quotes its file name (spaces, quotes, backslashes)", (t) => {
  t.is(
    gstWriterPipeline('/tmp/a b/"x"\\y.mp4'),
    'appsrc name=opencvsrc ! videoconvert ! x264enc tune=zerolatency speed-preset=superfast ! mp4mux ! filesink location="/tmp/a b/\\"x\\"\\\\y.mp4" sync=false',
  );
});

/** A worker thread that spins (state R) until told to stop, or for `spins` rounds, then sleeps. */
function spinner(spins: number) {
  const flags = new Int32Array(new SharedArrayBuffer(8)); // [0]: 1 spinning, 2 done spinning; [1]: 1 stop now
  const worker = new Worker(
    `const { workerData: f } = require('node:worker_threads');
     Atomics.store(f, 0, 1); Atomics.notify(f, 0);
     let x = 0;
     for (let i = 0; i < ${spins} && Atomics.load(f, 1) === 0; i++) x += Math.sqrt(i);
     Atomics.store(f, 0, 2);
     Atomics.wait(f, 1, 0);`,
    { eval: true, workerData: flags },
  );
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

test('a synchronous write waits for the threads the writer started, and not for threads started after it opened (the model runtime spinning)', async (t) => {
  // the encoder: a thread started while the "writer" opened, busy for a while after the write
  const threads = new EncoderThreads();
  t.true(threads.available, '/proc/self/task is readable here');
  const encoder = spinner(30_000_000);
  threads.opened();
  encoder.started();
  threads.waitIdle();
  t.is(Atomics.load(encoder.flags, 0), 2, 'the wait ended only once the encoder thread stopped running');
  // a thread started later (as ONNX Runtime starts its pool at the first run) that spins without end
  const runtime = spinner(Number.MAX_SAFE_INTEGER);
  runtime.started();
  threads.waitIdle();
  t.is(Atomics.load(runtime.flags, 0), 1, 'returned while the later thread still spins');
  t.is(threads.timedOut, 0);
  await runtime.stop();
  await encoder.stop();
});

test("the sequential write waits for GStreamer's encoder in every writer of a process (GStreamer reuses its streaming threads from a pool)", async (t) => {
  const { createVideoSink } = await import('../src/video/io.ts');
  const { loadOpenCv, fileCaptureApi } = await import('../src/video/opencv.ts');
  const cv = loadOpenCv();
  const cap = new cv.VideoCapture(makeVideo('writer-pool.mp4', 20, 640, 480), fileCaptureApi(cv));
  for (const k of [1, 2]) {
    const sink = createVideoSink(join(scratchDir(), `pool-${k}.mp4`), 30, 640, 480, cv, 'gstreamer');
    for (let i = 0; i < 10; i++) sink.write(cap.read());
    const w = sink.encoderWaits!();
    await sink.finish();
    t.is(w.waits, 10);
    // a 640x480 frame keeps x264 busy for milliseconds after the push; the first poll comes microseconds after it
    t.true(w.busyWaits >= 5, `writer ${k}: ${w.busyWaits} of 10 writes found the encoder at work`);
    t.is(w.timedOut, 0);
    t.is(probeVideo(join(scratchDir(), `pool-${k}.mp4`)).frames, 10);
  }
});
