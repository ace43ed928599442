/**
 * Live sources: what a source argument names, an RTSP stream served on 127.0.0.1 by GStreamer's RTSP server
 * (test/helpers/rtsp_server.py, Debian's packages) read for a few seconds with --duration, a refused port, a missing
 * camera, a GStreamer pipeline, and a folder of images in with annotated images out.
 */
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { classifySource, csiPipeline, sourceStem } from '../src/video/sources.ts';
import {
  inferRun,
  makeModel,
  makeVideo,
  SMALL_LAB_CFG,
  probeVideo,
  ROOT,
  runCli,
  scratchDir,
  startCli,
} from './helpers/fixtures.ts';

const model = makeModel('sources', SMALL_LAB_CFG, 6);
const dir = join(scratchDir(), 'sources');
mkdirSync(dir, { recursive: true });

test('a source argument names a file, a stream, a camera, a CSI camera, a pipeline or a folder', (t) => {
  t.deepEqual(classifySource('rtsp://127.0.0.1:8554/live'), { kind: 'stream', target: 'rtsp://127.0.0.1:8554/live' });
  t.deepEqual(classifySource('/dev/video0'), { kind: 'device', target: '/dev/video0' });
  t.deepEqual(classifySource('csi://1'), { kind: 'csi', target: '1' });
  t.deepEqual(classifySource('gst:videotestsrc ! appsink'), { kind: 'gstreamer', target: 'videotestsrc ! appsink' });
  t.deepEqual(classifySource(dir), { kind: 'images', target: dir });
  t.deepEqual(classifySource('videos/vtest.avi'), { kind: 'file', target: 'videos/vtest.avi' });
  t.is(sourceStem('rtsp://127.0.0.1:8554/live'), 'live');
  t.is(sourceStem('csi://0'), 'csi0');
  t.is(sourceStem('/dev/video2'), 'video2');
  t.regex(
    csiPipeline(1),
    /^nvarguscamerasrc sensor-id=1 ! video\/x-raw\(memory:NVMM\), width=\(int\)1280, height=\(int\)720, format=\(string\)NV12, framerate=\(fraction\)30\/1 ! nvvidconv ! .* ! appsink/,
  );
  // --frame-size: nvvidconv resizes (the VIC), not the CPU
  t.regex(
    csiPipeline(0, [960, 540]),
    / ! nvvidconv ! video\/x-raw, format=\(string\)BGRx, width=\(int\)960, height=\(int\)540 ! /,
  );
});

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * GStreamer's RTSP server (test/helpers/rtsp_server.py) on 127.0.0.1 serving 12 s of vtest.avi as MJPEG (RTP/JPEG
 * needs no encoder in the server), ready to be read; `log` holds what it printed.
 */
async function startRtspServer(name: string) {
  const vtest = join(ROOT, 'videos/vtest.avi');
  const mjpeg = join(dir, `${name}.avi`);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', vtest, '-t', '12', '-c:v', 'mjpeg', '-q:v', '5', '-an', mjpeg]);
  const port = await freePort();
  const server = spawn('/usr/bin/python3', [join(ROOT, 'test/helpers/rtsp_server.py'), mjpeg, String(port)]);
  const state = { log: '' };
  server.stdout.on('data', (d) => (state.log += d));
  server.stderr.on('data', (d) => (state.log += d));
  const started = Date.now();
  while (!state.log.includes('ready') && Date.now() - started < 20_000 && server.exitCode === null)
    await new Promise((r) => setTimeout(r, 100));
  return {
    server,
    port,
    url: `rtsp://127.0.0.1:${port}/live`,
    ready: state.log.includes('ready'),
    log: () => state.log,
  };
}

test.serial(
  'RTSP end to end: a server on 127.0.0.1 streaming vtest.avi, infer for 4 s with --duration, a playable video and a run JSON',
  async (t) => {
    const vtest = join(ROOT, 'videos/vtest.avi');
    if (!existsSync(vtest)) return t.fail('videos/vtest.avi is missing: run scripts/setup.sh --test');
    // RTP/JPEG needs no decoder in the server: the clip re-encoded as MJPEG first
    const mjpeg = join(dir, 'vtest-mjpeg.avi');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', vtest, '-t', '12', '-c:v', 'mjpeg', '-q:v', '5', '-an', mjpeg]);
    const port = await freePort();
    const server = spawn('/usr/bin/python3', [join(ROOT, 'test/helpers/rtsp_server.py'), mjpeg, String(port)]);
    let serverLog = '';
    server.stdout.on('data', (d) => (serverLog += d));
    server.stderr.on('data', (d) => (serverLog += d));
    try {
      const started = Date.now();
      while (!serverLog.includes('ready') && Date.now() - started < 20_000 && server.exitCode === null)
        await new Promise((r) => setTimeout(r, 100));
      t.true(
        serverLog.includes('ready'),
        `RTSP server (gir1.2-gst-rtsp-server-1.0, from scripts/setup.sh --test): ${serverLog}`,
      );
      const out = join(dir, 'rtsp.mp4');
      const json = join(dir, 'rtsp.json');
      const r = await runCli(
        'infer',
        [
          `rtsp://127.0.0.1:${port}/live`,
          '--model',
          model.onnxPath,
          '--duration',
          '4',
          '--warmup',
          '2',
          '-o',
          out,
          '--json',
          json,
          '-q',
        ],
        { timeout: 120_000 },
      );
      t.is(r.code, 0, r.stderr);
      const run = JSON.parse(readFileSync(json, 'utf8'));
      t.false(!!run.interrupted, '--duration ends a live run normally');
      t.is(run.video.frameCount, 0, 'a stream declares no length');
      // how many frames 4 s hold depends on this machine's speed and load (9 with two busy processes beside): some
      t.true(run.frames >= 1, `${run.frames} frames measured in 4 s`);
      t.like(run.video, { width: 768, height: 576 });
      const probe = probeVideo(out);
      t.is(probe.frames, run.frames + run.warmupFrames, 'every frame read was written, and the file plays');
      const ownTmp = join(dir, 'tmp');
      mkdirSync(ownTmp, { recursive: true });
      // jetprof profile opens the source as infer does: an RTSP URL passes its check and the profiler starts (a stand-in
      // nsys that writes nothing, so the run ends at the profiler, past the source check)
      const p = await runCli(
        'jetprof',
        [
          'profile',
          '--tool',
          'nsys',
          '--out-dir',
          join(dir, 'prof-rtsp'),
          '--',
          '--duration',
          '2',
          `rtsp://127.0.0.1:${port}/live`,
          '--model',
          model.onnxPath,
          '--no-write',
        ],
        // its own TMPDIR: the stand-in takes jetprof's nsys lock there, not the one real nsys runs of other tests hold
        { env: { JETPROF_NSYS: '/bin/false', TMPDIR: ownTmp }, timeout: 120_000 },
      );
      t.notRegex(p.stderr, /not found|no frame could be decoded|could not be opened/, p.stderr);
      t.regex(p.stderr, /nsys produced no report/, 'the profiler was started: the source check passed');
    } finally {
      server.kill();
    }
  },
);

test('a refused RTSP port, a camera that does not exist: one line each, exit 2', async (t) => {
  const port = await freePort();
  const t0 = Date.now();
  const r = await runCli('infer', [
    `rtsp://127.0.0.1:${port}/live`,
    '--model',
    model.onnxPath,
    '--duration',
    '2',
    '-q',
  ]);
  t.is(r.code, 2);
  t.regex(
    r.stderr,
    new RegExp(
      `rtsp://127\\.0\\.0\\.1:${port}/live: the stream could not be opened \\(refused, timed out or no such path`,
    ),
  );
  t.is(r.stderr.trim().split('\n').length, 1);
  t.true(Date.now() - t0 < 30_000, 'refused at once');
  const cam = await runCli('infer', ['/dev/video99', '--model', model.onnxPath, '-q']);
  t.is(cam.code, 2);
  t.regex(cam.stderr, /\/dev\/video99: no such device \(fix: list the cameras with `v4l2-ctl --list-devices`/);
});

test('a GStreamer pipeline as the source (gst:...)', async (t) => {
  const { run } = await inferRun([
    'gst:videotestsrc num-buffers=12 ! video/x-raw,width=160,height=120 ! videoconvert ! video/x-raw,format=BGR ! appsink',
    '--model',
    model.onnxPath,
    '--warmup',
    '2',
    '--no-write',
  ]);
  t.is(run.frames + run.warmupFrames, 12, 'the pipeline ends after its 12 buffers');
  t.like(run.video, { width: 160, height: 120 });
});

test('a live source that stops is an early end in every loop: the plain loop and --interval 1 (the multi-stream settings) both warn and record endedEarly', async (t) => {
  const pipeline =
    'gst:videotestsrc num-buffers=12 ! video/x-raw,width=160,height=120 ! videoconvert ! video/x-raw,format=BGR ! appsink';
  for (const extra of [[], ['--interval', '1']]) {
    const { run, warnings } = await inferRun([
      pipeline,
      '--model',
      model.onnxPath,
      '--warmup',
      '2',
      '--no-write',
      ...extra,
    ]);
    t.true(
      warnings.some((w) =>
        /the source stopped sending frames \(it closed, or the connection dropped\) after [\d.]+ s and 12 frames/.test(
          w,
        ),
      ),
      `${extra.join(' ')}: ${warnings.join(' | ')}`,
    );
    t.like(run.endedEarly, { framesRead: 12 }, extra.join(' '));
    if (extra.length) t.like(run.streams![0].endedEarly, { framesRead: 12 });
  }
});

test('a folder of images in, a folder of annotated images out (same names); an output folder that is the input is refused', async (t) => {
  const images = join(dir, 'images');
  mkdirSync(images, { recursive: true });
  const clip = makeVideo('for-images.mp4', 6, 160, 120);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', clip, join(images, 'img-%02d.jpg')]);
  const names = readdirSync(images).sort();
  t.is(names.length, 6);
  const json = join(dir, 'images.json');
  const r = await runCli('infer', [images, '--model', model.onnxPath, '--warmup', '1', '--json', json, '-q'], {
    cwd: dir,
  });
  t.is(r.code, 0, r.stderr);
  const out = join(dir, 'images-onnx-detected');
  t.deepEqual(readdirSync(out).sort(), names, 'one annotated image per input, same names, no partial file');
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.like(run, { frames: 5, warmupFrames: 1 });
  t.like(run.output, { path: out, codec: 'images' });
  // --output-dir names where the default output folder goes
  const elsewhere = join(dir, 'elsewhere');
  mkdirSync(elsewhere, { recursive: true });
  await inferRun([images, '--model', model.onnxPath, '--warmup', '1', '--output-dir', elsewhere, '-q']);
  t.deepEqual(readdirSync(join(elsewhere, 'images-onnx-detected')).sort(), names);
  const same = await runCli('infer', [images, '--model', model.onnxPath, '-o', images, '-q'], { cwd: dir });
  t.is(same.code, 2);
  t.regex(same.stderr, /the annotated images would overwrite the input images/);
});

test('an image folder holding a folder named x.jpg or a FIFO is refused before the first frame; a late image that fails leaves the previous annotated images as they were; a FIFO given to report, agree or parse is refused, never opened', async (t) => {
  const images = join(dir, 'images-late');
  mkdirSync(images, { recursive: true });
  const clip = makeVideo('for-images-late.mp4', 4, 160, 120);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', clip, join(images, 'img-%02d.jpg')]);
  const out = join(dir, 'images-late-out');
  const first = await runCli('infer', [images, '--model', model.onnxPath, '--warmup', '1', '-o', out, '-q'], {
    cwd: dir,
  });
  t.is(first.code, 0, first.stderr);
  const before = Object.fromEntries(readdirSync(out).map((f) => [f, readFileSync(join(out, f))]));
  t.is(Object.keys(before).length, 4);
  // a folder named like an image, last in order
  mkdirSync(join(dir, 'not-an-image'), { recursive: true });
  symlinkSync(join(dir, 'not-an-image'), join(images, 'zz-last.jpg'));
  const folder = await runCli('infer', [images, '--model', model.onnxPath, '--warmup', '1', '-o', out, '-q'], {
    cwd: dir,
  });
  t.is(folder.code, 2);
  t.regex(folder.stderr, /zz-last\.jpg: a folder, not an image file \(fix: remove it from the folder/);
  unlinkSync(join(images, 'zz-last.jpg'));
  execFileSync('mkfifo', [join(images, 'zz-fifo.jpg')]);
  const fifo = await runCli('infer', [images, '--model', model.onnxPath, '-o', out, '-q'], {
    cwd: dir,
    timeout: 60_000,
  });
  t.is(fifo.code, 2, fifo.stderr);
  t.regex(fifo.stderr, /zz-fifo\.jpg: a FIFO \(named pipe\), not an image file/);
  unlinkSync(join(images, 'zz-fifo.jpg'));
  // a late image that OpenCV cannot decode: the run fails after writing the earlier ones, which stay staged
  writeFileSync(join(images, 'zz-broken.jpg'), 'not a jpeg');
  const late = await runCli('infer', [images, '--model', model.onnxPath, '--warmup', '1', '-o', out, '-q'], {
    cwd: dir,
  });
  t.is(late.code, 2, late.stderr);
  t.regex(late.stderr, /zz-broken\.jpg: not an image OpenCV can decode/);
  t.deepEqual(readdirSync(out).sort(), Object.keys(before).sort(), 'no new file, no staging folder left');
  for (const [f, bytes] of Object.entries(before)) t.true(readFileSync(join(out, f)).equals(bytes), `${f} as it was`);
  // FIFOs where a run file, detections or a log is expected
  const pipe = join(dir, 'a-fifo.json');
  execFileSync('mkfifo', [pipe]);
  for (const args of [
    ['report', '--run', pipe],
    ['agree', pipe, pipe],
    ['parse', pipe],
  ]) {
    const r = await runCli('jetprof', args, { timeout: 60_000 });
    t.is(r.code, 2, `${args[0]}: ${r.stderr}`);
    t.regex(r.stderr, /a-fifo\.json: a FIFO \(named pipe\), not a /, args[0]);
  }
});

test.serial(
  'a live stream that dies mid-run: the run ends with exit 0, and says when and why (console and endedEarly in the JSON)',
  async (t) => {
    const vtest = join(ROOT, 'videos/vtest.avi');
    if (!existsSync(vtest)) return t.fail('videos/vtest.avi is missing: run scripts/setup.sh --test');
    const { server, port } = await startRtspServer('vtest-mjpeg-die');
    try {
      const json = join(dir, 'rtsp-die.json');
      const infer = startCli('infer', [
        `rtsp://127.0.0.1:${port}/live`,
        '--model',
        model.onnxPath,
        '--duration',
        '60',
        '--warmup',
        '2',
        '--no-write',
        '--json',
        json,
      ]);
      // once 30 frames went through, the server dies
      await infer.framesDone(30);
      server.kill('SIGKILL');
      const code = await infer.exit;
      const stderr = infer.stderr();
      t.is(code, 0, stderr);
      t.regex(
        stderr,
        /the source stopped sending frames \(it closed, or the connection dropped\) after [\d.]+ s and \d+ frames \(of --duration 60 s\)/,
      );
      const run = JSON.parse(readFileSync(json, 'utf8'));
      t.truthy(run.endedEarly, 'endedEarly in the run JSON');
      // after the 30 frames, well before --duration (the server's first frames come faster than 10 FPS: a model of
      // 0.4 ms a frame saw them in 0.9 s)
      t.true(run.endedEarly.afterS > 0 && run.endedEarly.afterS < 60, `ended after ${run.endedEarly.afterS} s`);
      t.is(run.endedEarly.framesRead, run.frames + run.warmupFrames);
    } finally {
      server.kill('SIGKILL');
    }
  },
);

test('--duration counts from the first frame, not from connecting', async (t) => {
  const { durationClock } = await import('../src/pipeline/infer.ts');
  let now = 1000;
  const ended = durationClock(2000, () => now);
  now = 5000; // connecting took 4 s: the clock starts at the first frame
  t.false(ended());
  now = 6999;
  t.false(ended());
  now = 7000;
  t.true(ended());
});

test.serial('a live RTSP stream beside a file in one run: two streams, each with its record and video', async (t) => {
  const vtest = join(ROOT, 'videos/vtest.avi');
  if (!existsSync(vtest)) return t.fail('videos/vtest.avi is missing: run scripts/setup.sh --test');
  const { server, port } = await startRtspServer('vtest-mjpeg-two');
  try {
    const file = makeVideo('beside-rtsp.mp4', 300, 160, 120);
    const out = join(dir, 'two');
    mkdirSync(out, { recursive: true });
    const json = join(out, 'run.json');
    const r = await runCli(
      'infer',
      [
        `rtsp://127.0.0.1:${port}/live`,
        file,
        '--model',
        model.onnxPath,
        '--duration',
        '4',
        '--warmup',
        '2',
        '--output-dir',
        out,
        '--json',
        json,
        '-q',
      ],
      { timeout: 120_000 },
    );
    t.is(r.code, 0, r.stderr);
    const run = JSON.parse(readFileSync(json, 'utf8'));
    t.is(run.streams.length, 2);
    t.like(run.streams[0], { source: `rtsp://127.0.0.1:${port}/live`, width: 768, height: 576 });
    t.like(run.streams[1], { width: 160, height: 120 });
    t.true(
      run.streams.every((s: { frames: number }) => s.frames >= 3),
      JSON.stringify(run.streams.map((s: { frames: number }) => s.frames)),
    );
    t.true(readdirSync(out).filter((f) => f.endsWith('-onnx-detected.mp4')).length === 2, readdirSync(out).join(', '));
  } finally {
    server.kill('SIGKILL');
  }
});

test('a variable-frame-rate file: said in one warning with its highest and average rate and the ffmpeg line, recorded in the run JSON; a constant-rate file says nothing', async (t) => {
  // one second at 30 FPS, then one at 10: 40 frames over 2 s
  const vfr = join(scratchDir(), 'vfr.mp4');
  execFileSync('ffmpeg', [
    ...[
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x120:rate=30',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x120:rate=10',
    ],
    ...[
      '-filter_complex',
      '[0:v]trim=duration=1[a];[1:v]trim=duration=1,setpts=PTS-STARTPTS[b];[a][b]concat=n=2:v=1[v]',
    ],
    ...['-map', '[v]', '-fps_mode', 'vfr', '-c:v', 'libx264', vfr],
  ]);
  const { run, warnings } = await inferRun([vfr, '--model', model.onnxPath, '--warmup', '2', '--no-write']);
  const said = warnings.filter((w) => /variable frame rate/.test(w));
  t.is(said.length, 1, warnings.join(' | '));
  t.regex(
    said[0],
    /vfr\.mp4: variable frame rate \(up to 30 FPS, 22\.6\d on average\): --realtime paces its frames evenly at the average .* ffmpeg -i \S+vfr\.mp4 -vf fps=23 -c:v libx264 constant\.mp4/,
  );
  t.is(run.video.variableFps, 30);
  t.true(Math.abs(run.video.fps - 22.64) < 0.01, `fps ${run.video.fps}`);
  const steady = await inferRun([
    makeVideo('steady.mp4', 8, 160, 120),
    '--model',
    model.onnxPath,
    '--warmup',
    '2',
    '--no-write',
  ]);
  t.false(
    steady.warnings.some((w) => /variable frame rate/.test(w)),
    steady.warnings.join(' | '),
  );
});
