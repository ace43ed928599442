/**
 * Several sources in one run (#26, the first part): streams that take turns through one session, each with its own
 * video and figures; the run's figures over all of them; the report's per-stream table.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { droppedVerdict, intervalLine, realTimeNotes } from '../src/report/run-lines.ts';
import { formatSummary } from '../src/report/run-summary.ts';
import { BASE_BYTES, estimateBytes, memoryShortage, streamBytes } from '../src/pipeline/memory-estimate.ts';
import {
  errorLines,
  freshDir,
  inferRun,
  makeModel,
  makeVideo,
  probeVideo,
  runCli,
  scratchDir,
  PERSON_VEHICLE_CFG,
  SMALL_LAB_CFG,
} from './helpers/fixtures.ts';

const model = makeModel('streams', SMALL_LAB_CFG, 8);
// the lab's size where a stream must fall behind its source (200 FPS) for what the test checks
const labModel = makeModel('streams-lab', PERSON_VEHICLE_CFG, 8);

test('two files of different sizes in one run: a record and a playable video per stream, at its own size; figures over both', async (t) => {
  const dir = freshDir('streams-two');
  const a = makeVideo('streams-a.mp4', 12, 320, 240);
  const b = makeVideo('streams-b.mp4', 8, 160, 120);
  const json = join(dir, 'run.json');
  const { run: returned } = await inferRun([
    a,
    b,
    '--model',
    model.onnxPath,
    '--warmup',
    '2',
    '--output-dir',
    dir,
    '--json',
    json,
  ]);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.deepEqual(run, JSON.parse(JSON.stringify(returned)), 'the file holds the run returned');
  t.is(run.streams.length, 2);
  t.like(run.streams[0], { index: 0, width: 320, height: 240, frames: 10, droppedFrames: 0 });
  t.like(run.streams[1], { index: 1, width: 160, height: 120, frames: 6 });
  t.is(run.frames, 16, 'the run counts every measured frame of every stream');
  t.is(run.inferredFrames, 20);
  t.is(run.aggregateFps, run.endToEndFps);
  t.true(
    run.streams.every(
      (s: { latencyMs: { p50: number; p99: number } }) => s.latencyMs.p50 > 0 && s.latencyMs.p99 >= s.latencyMs.p50,
    ),
  );
  t.like(run.streams[1].endedEarly, { framesRead: 8 }, 'the shorter stream ended while the other went on');
  t.is(run.setup.loop, 'sequential');
  for (const [i, [w, h, n]] of [
    [320, 240, 12],
    [160, 120, 8],
  ].entries()) {
    const out = join(dir, `streams-${i === 0 ? 'a' : 'b'}-${i}-onnx-detected.mp4`);
    t.like(probeVideo(out), { width: w, height: h, frames: n }, `stream ${i}'s video plays, every frame written`);
  }
  // by default a batch holds one frame from every stream: inference per batch and per frame are said
  t.is(run.batch, 2);
  const summary = formatSummary(returned); // what the console prints, before it wraps it at 80 columns
  const said = summary.replace(/\s+/g, ' ');
  t.regex(said, /2 streams in batches of 2 \(a frame from each of up to 2 streams per run\): aggregate [\d.]+ FPS/);
  t.regex(
    said,
    /Inference [\d.]+ ms per batch \(p50 [\d.]+, p99 [\d.]+; \d+ batches of [\d.]+ frames on average\), [\d.]+ ms per frame/,
  );
  // a free run: no delivered rate, no drops (nothing was paced, so nothing could be dropped), and it says so
  t.regex(summary, /\| 1 \| .*streams-b\.mp4 \| 6 \| [\d.]+ \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \| after 8 frames: /);
  t.regex(said, /Free-running: each source was read as fast as the loop took its frames, so none could be dropped/);
  const rep = await runCli('jetprof', ['report', '--run', json]);
  t.is(rep.code, 0, rep.stderr);
  t.regex(
    rep.stdout,
    /ONNX Runtime \(CPU, FP32\): 2 streams in batches of 2 \(inference [\d.]+ ms per batch of [\d.]+ frames on average, [\d.]+ ms per frame\): aggregate [\d.]+ FPS/,
  );
  t.regex(
    rep.stdout,
    /\| Stream \| Source \| Frames processed \| Processed FPS \| Latency p50 \/ p90 \/ p99 \(ms\) \| Ended early \|/,
  );
  t.notRegex(rep.stdout, /Delivered FPS|Dropped \(kept up\?\)|0% \(yes\)/, 'a free run keeps no drop columns');
});

test('--streams 3 runs one source as three streams; runs of 1 and 3 streams at batch 1 and 3 read side by side in one sweep table, not as pairs refused', async (t) => {
  const dir = freshDir('streams-three');
  const v = makeVideo('streams-c.mp4', 6, 160, 120);
  const json = join(dir, 'three.json');
  const common = ['--model', model.onnxPath, '--warmup', '1', '--no-write', '-q'];
  // in this process: only what the runs wrote is read
  const { run } = await inferRun([v, '--streams', '3', ...common, '--json', json]);
  t.deepEqual(
    run.streams!.map((s) => [s.index, s.frames]),
    [
      [0, 5],
      [1, 5],
      [2, 5],
    ],
  );
  const one = join(dir, 'one.json');
  await inferRun([v, ...common, '--json', one, '--label', 'one-stream']);
  const turns = join(dir, 'turns.json');
  await inferRun([v, '--streams', '3', '--batch', '1', ...common, '--json', turns]);
  // rows that differ only in streams and batch are one sweep table, not a "not compared" line per pair
  const rep = await runCli('jetprof', ['report', '--run', one, '--run', json, '--run', turns]);
  t.is(rep.code, 0, rep.stderr);
  t.notRegex(rep.stdout, /not compared: /);
  t.regex(
    rep.stdout,
    /\*\*Sweep: 3 rows that differ only in streams, batch and interval \(ONNX Runtime .*, streams-c\.mp4 at 160x120, sequential loop, free-running, not writing\)/,
  );
  // fewest streams first, then batch: every column filled (aggregate and slowest stream FPS, p99, CPU time a frame)
  const rows = [
    ...rep.stdout.matchAll(
      /\n\| ([^|]+) \| (\d) \| (\d) \| 0 \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| [^|]* \| ([\d.]+) \|/g,
    ),
  ];
  t.deepEqual(
    rows.map((m) => [m[2], m[3]]),
    [
      ['1', '1'],
      ['3', '1'],
      ['3', '3'],
    ],
    rep.stdout,
  );
  const three = JSON.parse(readFileSync(json, 'utf8'));
  t.is(Number(rows[2][4]), Number(three.aggregateFps.toFixed(2)), 'aggregate FPS is the run JSON figure');
  // under the table, each row against the first: the change, and that one run a row cannot tell it from noise
  const base = Number(rows[0][4]);
  t.regex(
    rep.stdout,
    new RegExp(
      `- 3 streams, batch 3 against 1 stream, batch 1: aggregate ${rows[2][4].replace('.', '\\.')} against ${rows[0][4].replace('.', '\\.')} FPS \\(${Number(rows[2][4]) >= base ? '\\+' : ''}${(((Number(rows[2][4]) - base) / base) * 100).toFixed(1).replace('.', '\\.')}%\\), worst p99 \\d+ against \\d+ ms; one run a row, so nothing tells it from noise \\(--repeat 3 gives each row a spread\\)\\.`,
    ),
  );
  // and the sweep as CSV, streams, batch and interval as columns
  const csvDir = join(dir, 'csv');
  t.is((await runCli('jetprof', ['report', '--run', one, '--run', json, '--run', turns, '--csv', csvDir])).code, 0);
  const sweepCsv = readFileSync(join(csvDir, 'sweep.csv'), 'utf8').split('\n');
  t.is(
    sweepCsv[0],
    'sweep,row,streams,batch,interval,aggregate_fps,slowest_stream_fps,worst_p99_ms,dropped,delivered,cpu_ms_per_frame',
  );
  t.deepEqual(
    sweepCsv.slice(1, 4).map((l) => l.split(',').slice(2, 5)),
    [
      ['1', '1', '0'],
      ['3', '1', '0'],
      ['3', '3', '0'],
    ],
  );
  t.regex(rows[2][1], /3streams-batch3/, 'the batch is in the label even at its default');
  t.regex(
    rep.stdout,
    /\| Label \|[^\n]*\n[^\n]*\n(?:[^\n]*\n)*?\| [^|]*3streams-batch3 \|[^\n]*\| 3x streams-c\.mp4 \(/,
  );
  // the page draws each stream's latency over the run: a line per stream, in colours of their own
  const html = join(dir, 'three.html');
  t.is((await runCli('jetprof', ['report', '--run', json, '--html', html])).code, 0);
  const page = readFileSync(html, 'utf8');
  const chart = page.slice(page.indexOf('aria-label="Latency per stream over the run'));
  t.regex(
    chart,
    /^aria-label="Latency per stream over the run \(a frame's read to its boxes, ms\): onnx-fp32-cpu-sequential-3streams-batch3"/,
  );
  const lines = [
    ...chart
      .slice(0, chart.indexOf('</svg>'))
      .matchAll(/<polyline [^>]*stroke="([^"]+)"[^>]*points="([^"]+)"><title>stream (\d)<\/title>/g),
  ];
  t.deepEqual(
    lines.map((m) => m[3]),
    ['0', '1', '2'],
  );
  t.is(new Set(lines.map((m) => m[1])).size, 3, 'a colour per stream');
  for (const m of lines) t.is(m[2].trim().split(' ').length, 5, `stream ${m[3]}: a point per measured frame`);
});

test('bad input, one line each: --streams 0, more than 64 streams, --output or --repeat with several streams', async (t) => {
  const v = makeVideo('streams-d.mp4', 4, 160, 120);
  const cases: [string[], RegExp][] = [
    [['--streams', '0'], /--streams must be/],
    [['--streams', '65'], /--streams must be/],
    [['--streams', '33', v], /66 streams \(2 source\(s\) x --streams 33\): at most 64/],
    [['--streams', '2', '--output', 'x.mp4'], /--output takes one stream; with 2 streams it is not available yet/],
    [['--streams', '2', '--repeat', '2'], /--repeat takes one stream/],
  ];
  for (const [args, expected] of cases) {
    const r = await runCli('infer', [v, '--model', model.onnxPath, ...args]);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, expected, args.join(' '));
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

// serial: its paced runs are in this process, and another test's child process would hold up its event loop
test.serial(
  '--realtime paces a file at its frame rate and counts what arrives while the loop is busy as dropped',
  async (t) => {
    const dir = join(scratchDir(), 'streams-rt');
    mkdirSync(dir, { recursive: true });
    const v = makeVideo('streams-rt.mp4', 60, 160, 120, 30);
    const slow = join(dir, 'slow.json');
    // 5 FPS: every frame has long been processed when the next arrives, so nothing drops
    await inferRun([
      v,
      '--realtime',
      '--source-fps',
      '5',
      '--max-frames',
      '12',
      '--model',
      model.onnxPath,
      '--warmup',
      '2',
      '--no-write',
      '--json',
      slow,
    ]);
    const run = JSON.parse(readFileSync(slow, 'utf8'));
    // every measured frame of the source is processed or counted as dropped (on a quiet machine none drops: a frame
    // takes far less than the 200 ms between arrivals; a loaded one may fall behind by one)
    const s0 = run.streams[0];
    t.is(s0.frames + s0.droppedFrames, 10);
    t.is(run.perFrame.captureMs.length, s0.frames, 'each frame has its arrival time');
    // paced at 5 FPS: frames arrive on a 200 ms schedule (whatever this machine's load: a frame dropped is a step of
    // 400 ms), and none is processed before it arrives, so the stream cannot run faster than its source
    const arrivals = run.perFrame.captureMs as number[];
    for (let k = 1; k < arrivals.length; k++) {
      const step = arrivals[k] - arrivals[k - 1];
      t.true(step > 0 && Math.abs(step / 200 - Math.round(step / 200)) < 0.01, `arrivals ${arrivals.join(', ')}`);
    }
    // n frames span at least n - 1 intervals of 200 ms from first arrival to last; the first measured frame may be
    // taken up to an interval after it arrived (a loaded machine's slow warm-up), so the wall holds at least n - 2
    const n = run.perFrame.index.length as number;
    t.true(s0.endToEndFps <= n / ((n - 2) * 0.2), `at most the source's pace: ${s0.endToEndFps} FPS over ${n} frames`);
    // 200 FPS: more arrive than one stream can take: the ones that arrived while it was busy are dropped and counted.
    // 600 frames (3 s at 200 FPS): however slow a loaded machine makes the warm-up, frames still arrive after it
    const long = makeVideo('streams-rt-long.mp4', 600, 160, 120, 30);
    const fast = join(dir, 'fast.json');
    const fastVideo = join(dir, 'fast.mp4');
    const fr = await inferRun([
      long,
      '--realtime',
      '--source-fps',
      '200',
      '--model',
      labModel.onnxPath,
      '--warmup',
      '2',
      '--output',
      fastVideo,
      '--json',
      fast,
    ]);
    const f = JSON.parse(readFileSync(fast, 'utf8')).streams[0];
    t.true(f.droppedFrames > 0, `dropped ${f.droppedFrames}`);
    // the video keeps the camera's time: stretched by the camera's span (first to last measured arrival) over the
    // video's (its frames at the writer's rate), so it lasts as long as the camera ran, not written frames / rate
    const arrived = JSON.parse(readFileSync(fast, 'utf8')).perFrame.captureMs as number[];
    const span = (arrived[arrived.length - 1] - arrived[0]) / 1000;
    const written = probeVideo(fastVideo).frames;
    t.like(f.output.realTime, { stretched: true });
    t.true(f.output.realTime.scale > 1, JSON.stringify(f.output));
    const seconds = Number(
      spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', fastVideo], {
        encoding: 'utf8',
      }).stdout,
    );
    // first to last frame is the span; the last frame's own time comes on top (one stretched frame interval)
    const frameS = span / Math.max(1, written - 1);
    t.true(Math.abs(seconds - span) <= frameS + 0.05, `the video lasts ${seconds} s, the camera's span ${span} s`);
    t.true(written >= f.frames, `${written} frames written, ${f.frames} measured: none added by the stretch`);
    // the note infer prints after the run
    t.regex(
      realTimeNotes(fr.run).join('\n'),
      /stream 0 dropped \d+ of the frames its camera delivered: its video \(.*fast\.mp4\) is stretched [\d.]+x \(the camera's time over the video's at its frame rate\) to the camera's time/,
    );
    // not stretched: the note says which way the video's pace is off (a factor under 1 plays slower, not "faster")
    const unstretched = (scale: number) =>
      realTimeNotes({
        streams: [
          { ...f, output: { path: 'cam.mp4', codec: 'h264', realTime: { scale, stretched: false, why: 'no ffmpeg' } } },
        ],
      }).join('');
    t.regex(unstretched(0.44), /plays 2\.27x slower than the camera ran/);
    t.regex(unstretched(2.5), /plays 2\.50x faster than the camera ran/);
    t.true(f.frames > 0, `${f.frames} frames measured`);
    t.true(f.frames + f.droppedFrames <= 598, 'measured and dropped frames are frames of the file after the warm-up');
    t.true(f.endToEndFps < 200, `${f.endToEndFps} FPS: the stream could not keep 200`);
    t.is(
      (await runCli('infer', [v, '--source-fps', '5', '--model', model.onnxPath])).code,
      2,
      '--source-fps needs --realtime',
    );
  },
);

test("--perf-interval prints each stream's FPS as deepstream-app's **PERF lines; --no-draw writes frames without boxes (no draw time)", async (t) => {
  const dir = join(scratchDir(), 'streams-perf');
  mkdirSync(dir, { recursive: true });
  const v = makeVideo('streams-perf.mp4', 90, 160, 120, 30);
  const json = join(dir, 'perf.json');
  const r = await runCli('infer', [
    v,
    '--streams',
    '2',
    '--realtime',
    '--source-fps',
    '4',
    '--duration',
    '4',
    '--perf-interval',
    '1',
    '--model',
    model.onnxPath,
    '--warmup',
    '1',
    '--no-draw',
    '--output-dir',
    dir,
    '--json',
    json,
    '-q',
  ]);
  t.is(r.code, 0, r.stderr);
  const perf = r.stderr.split('\n').filter((l) => l.startsWith('**PERF:  '));
  t.true(perf.length >= 3, `PERF lines: ${perf.length}`);
  // as deepstream-app prints them: a header once, then one column per stream, last interval (since the start)
  t.is(perf[0], '**PERF:  FPS 0 (Avg)\tFPS 1 (Avg)');
  t.is(perf.filter((l) => l.includes('(Avg)')).length, 1, 'the header once');
  t.regex(perf[perf.length - 1], /^\*\*PERF:  [\d.]+ \([\d.]+\)\t[\d.]+ \([\d.]+\)$/);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.postprocess.draw.meanMs, 0, 'nothing drawn');
  t.like(probeVideo(join(dir, 'streams-perf-0-onnx-detected.mp4')), { width: 160, height: 120 });
});

test('--interval 2 runs the model on every third frame, the tracker carries the boxes between, and every box has a track_id', async (t) => {
  const dir = join(scratchDir(), 'streams-interval');
  mkdirSync(dir, { recursive: true });
  const firing = makeModel('streams-firing', SMALL_LAB_CFG, 9, undefined, 0);
  const v = makeVideo('streams-interval.mp4', 30, 160, 120);
  const json = join(dir, 'interval.json');
  const dets = join(dir, 'dets.json');
  const r = await runCli('infer', [
    v,
    '--interval',
    '2',
    '--model',
    firing.onnxPath,
    '--warmup',
    '0',
    '--max-det',
    '20',
    '--no-write',
    '--json',
    json,
    '--detections',
    dets,
  ]);
  t.is(r.code, 0, r.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.interval, 2);
  t.is(run.inferredFrames, 10, 'frames 0, 3, 6, ... 27');
  // where the model ran, what inference FPS counts, latency of inferred and tracked frames apart
  t.is(run.intervalFrames.inferred, 10);
  t.is(run.intervalFrames.tracked, 20);
  const inferenceS = (run.perFrame.inferenceMs as number[]).reduce((a, b) => a + b, 0) / 1000;
  t.true(Math.abs(run.inferenceFps - 10 / inferenceS) < 1e-9, 'inference FPS: the inferred frames over their time');
  t.true(run.intervalFrames.latencyMs.inferred.p50 > 0 && run.intervalFrames.latencyMs.tracked.p50 > 0);
  t.regex(
    r.stdout.replace(/\s+/g, ' '), // the console wraps at 80 columns
    /--interval 2: the model ran on 10 of the 30 measured frames \(every 3rd frame of each stream\); the tracker carried the boxes on the other 20\. Inference FPS is the model's rate over the 10 frames it ran on; end-to-end FPS is over all 30, so it can be the higher of the two\. Latency, read to boxes: inferred frames p50 [\d.]+, p99 [\d.]+ ms; tracked frames p50 [\d.]+, p99 [\d.]+ ms\./,
  );
  const rep = await runCli('jetprof', ['report', '--run', json]);
  t.is(rep.code, 0, rep.stderr);
  t.regex(rep.stdout.replace(/\s+/g, ' '), /--interval 2: the model ran on 10 of the 30 measured frames/);
  // no sentence that assumes end-to-end <= inference: the not-inference note and the gap say what each FPS counts
  t.notRegex(r.stdout.replace(/\s+/g, ' '), /why end-to-end FPS is below inference FPS/);
  t.regex(
    rep.stdout.replace(/\s+/g, ' '),
    /Its inference FPS is the model's rate over the frames it ran on \(--interval 2\), its end-to-end FPS over every frame\./,
  );
  t.deepEqual(run.perFrame.inferred.slice(0, 6), [1, 0, 0, 1, 0, 0]);
  t.is(run.perFrame.inferenceMs[1], 0, 'no inference on a carried frame');
  const boxes = JSON.parse(readFileSync(dets, 'utf8')) as { image_id: number; track_id?: number; bbox: number[] }[];
  t.true(boxes.length > 0);
  t.true(
    boxes.every((b) => typeof b.track_id === 'number'),
    'every box carries its track',
  );
  // a carried frame shows the boxes of the inferred frame before it, with the same tracks
  const at = (f: number) =>
    boxes
      .filter((b) => b.image_id === f)
      .map((b) => `${b.track_id}:${b.bbox.join(',')}`)
      .sort();
  t.deepEqual(at(1), at(0));
  t.deepEqual(at(2), at(0));
  t.is((await runCli('infer', [v, '--interval', '-1', '--model', firing.onnxPath])).code, 2);
});

test('the IoU tracker: tracks keep their ids across inferences, new objects get new ids, lost ones end at the third miss', async (t) => {
  const { IouTracker } = await import('../src/detect/tracker.ts');
  const box = (x: number, classId = 0) => ({ x1: x, y1: 0, x2: x + 10, y2: 10, score: 0.9, classId });
  const tr = new IouTracker();
  const a = tr.update([box(0), box(100)]);
  t.deepEqual(
    a.map((d) => d.trackId),
    [1, 2],
  );
  const b = tr.update([box(102), box(2), box(300)]);
  t.deepEqual(
    b.map((d) => d.trackId),
    [2, 1, 3],
    'matched by IoU, whatever the order; a new object is a new track',
  );
  t.deepEqual(
    tr
      .carried()
      .map((d) => d.trackId)
      .sort(),
    [1, 2, 3],
  );
  t.deepEqual(
    tr.update([box(2, 1)]).map((d) => d.trackId),
    [4],
    'another class is another track',
  );
  tr.update([]);
  tr.update([]);
  t.deepEqual(
    tr.update([box(2)]).map((d) => d.trackId),
    [5],
    'track 1 ended at its third miss in a row',
  );
});

test('--detections with several streams: stream i writes dets-i.json in its own frame numbers; each is what a one-stream run finds', async (t) => {
  const dir = freshDir('streams-detections');
  const firing = makeModel('streams-firing', SMALL_LAB_CFG, 9, undefined, 0);
  const a = makeVideo('streams-det-a.mp4', 6, 160, 120);
  const b = makeVideo('streams-det-b.mp4', 4, 160, 120, 7);
  const json = join(dir, 'run.json');
  const dets = join(dir, 'dets.json');
  const common = ['--model', firing.onnxPath, '--warmup', '1', '--max-det', '20', '--no-write', '-q'];
  await inferRun([a, b, ...common, '--json', json, '--detections', dets]);
  t.false(existsSync(dets), 'no file of all streams mixed');
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.deepEqual(
    run.streams.map((s: { detectionsFile: string }) => s.detectionsFile),
    ['dets-0.json', 'dets-1.json'],
  );
  type Box = { image_id: number; bbox: number[]; score: number; warmup?: true };
  const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Box[];
  const key = (boxes: Box[]) => boxes.map((x) => `${x.image_id}:${x.bbox.join(',')}:${x.score}:${!!x.warmup}`).sort();
  const s0 = read(join(dir, 'dets-0.json'));
  const s1 = read(join(dir, 'dets-1.json'));
  t.true(s0.length > 0 && s1.length > 0, 'the firing model finds boxes in both streams');
  t.deepEqual([...new Set(s0.map((x) => x.image_id))].sort(), [0, 1, 2, 3, 4, 5], 'stream 0: its 6 frames');
  t.deepEqual([...new Set(s1.map((x) => x.image_id))].sort(), [0, 1, 2, 3], 'stream 1: its own 4 frames, from 0');
  t.true(s0.some((x) => x.image_id === 0 && x.warmup) && !s0.some((x) => x.image_id > 0 && x.warmup));
  // each stream's file equals what the source alone gives
  for (const [i, [src, got]] of [
    [a, s0],
    [b, s1],
  ].entries()) {
    const alone = join(dir, `alone-${i}.json`);
    await inferRun([src as string, ...common, '--detections', alone]);
    t.deepEqual(key(got as Box[]), key(read(alone)), `stream ${i}`);
    // and jetprof agree takes a stream's file as it takes a run's
    const ag = await runCli('jetprof', ['agree', join(dir, `dets-${i}.json`), alone, '--min-match', '1']);
    t.is(ag.code, 0, ag.stderr + ag.stdout);
  }
});

test('the report says what --interval buys (end-to-end FPS against interval 0) and what it costs (boxes matched); default labels keep the two rows apart', async (t) => {
  const dir = freshDir('streams-interval-trade');
  const firing = makeModel('streams-firing', SMALL_LAB_CFG, 9, undefined, 0);
  const v = makeVideo('streams-trade.mp4', 24, 160, 120);
  const common = [v, '--model', firing.onnxPath, '--warmup', '3', '--max-det', '20', '--no-write', '-q'];
  const every = ['--pipeline', 'off', '--json', join(dir, 'every.json'), '--detections', join(dir, 'every-dets.json')];
  const third = ['--interval', '2', '--json', join(dir, 'third.json'), '--detections', join(dir, 'third-dets.json')];
  for (const args of [every, third]) await inferRun([...common, ...args]);
  const labels = ['every', 'third'].map((n) => JSON.parse(readFileSync(join(dir, `${n}.json`), 'utf8')).setup.label);
  t.deepEqual(labels, ['onnx-fp32-cpu-sequential', 'onnx-fp32-cpu-sequential-interval2']);
  const rep = await runCli('jetprof', ['report', '--run', join(dir, 'every.json'), '--run', join(dir, 'third.json')]);
  t.is(rep.code, 0, rep.stderr);
  const m =
    /- what --interval 2 buys: ONNX Runtime \(CPU, FP32\) \[onnx-fp32-cpu-sequential-interval2\] at ([\d.]+) end-to-end FPS against ONNX Runtime \(CPU, FP32\) \[onnx-fp32-cpu-sequential\] at interval 0 at ([\d.]+) \(([\d.]+)x\); what it costs: ([\d.]+)% of the boxes match on the same frames/.exec(
      rep.stdout,
    );
  t.truthy(m, rep.stdout);
  const [fpsInterval, fpsEvery, ratio, matched] = m!.slice(1).map(Number);
  // the ratio is computed before rounding: from the FPS as printed (2 decimals) it is known to within their rounding
  const shown = fpsInterval / fpsEvery;
  const slack = 0.005 + shown * (0.005 / fpsInterval + 0.005 / fpsEvery) + 1e-9;
  t.true(Math.abs(shown - ratio) <= slack, `the ratio is of the two FPS shown: ${m![0]}`);
  t.true(matched > 0 && matched <= 100, `${matched}%`);
  // no speed-up between them (they differ in interval): they read side by side in one sweep table instead
  t.notRegex(rep.stdout, /not compared: /);
  t.regex(
    rep.stdout,
    /\*\*Sweep: 2 rows that differ only in streams, batch and interval \(ONNX Runtime \(CPU, FP32\), streams-trade\.mp4 at 160x120, sequential loop, free-running, not writing\)/,
  );
  t.regex(rep.stdout, /\n\| [^|]*interval2\] \| 1 \| 1 \| 2 \| [\d.]+ \| [\d.]+ \|/);
  // a run without --detections: the cost is not known, and the report says how to learn it
  const bare = join(dir, 'bare.json');
  await inferRun([...common, '--interval', '2', '--json', bare, '--label', 'bare-interval']);
  const rep2 = await runCli('jetprof', ['report', '--run', join(dir, 'every.json'), '--run', bare]);
  t.regex(
    rep2.stdout,
    /what it costs: not known \(run both with --detections on the same frames to see what it costs\)/,
  );
});

test('memory: streams that cannot fit are refused in one line before any writer opens, with the estimate and the fixes', async (t) => {
  // per stream and pixel, as measured: 27 B reading, +44 B GStreamer's x264enc, +198 B FFmpeg's libx264
  t.is(streamBytes(1920 * 1080, 'none'), 1920 * 1080 * 27);
  t.is(estimateBytes(64, 1920 * 1080, 'ffmpeg'), BASE_BYTES + 64 * 1920 * 1080 * (27 + 198));
  t.is(
    memoryShortage(4, 1920, 1080, 'gstreamer', { memoryBytes: 8 * 2 ** 30 }),
    undefined,
    '4 streams of 1080p fit in 8 GB',
  );
  const nano = memoryShortage(64, 1920, 1080, 'ffmpeg', { memoryBytes: 4 * 2 ** 30 })!;
  t.regex(
    nano.message,
    /^64 streams at 1920x1080 written by FFmpeg's libx264 need about 28\.2 GB of memory \(445 MB a stream, measured\), and this machine has 4\.0 GB available$/,
  );
  t.regex(
    nano.suggestion!,
    /--no-write \(about 3\.7 GB\), or --video-io gstreamer \(about 9\.1 GB\), or at most 8 streams at this size/,
  );
  // the CLI: 64 streams of 8192x8192 fit in no machine this runs on; nothing is written
  const out = join(scratchDir(), 'too-many');
  mkdirSync(out);
  const r = await runCli('infer', [
    makeVideo('mem.mp4', 3, 160, 120),
    '--streams',
    '64',
    '--frame-size',
    '8192x8192',
    '--model',
    model.onnxPath,
    '--output-dir',
    out,
    '--json',
    join(out, 'run.json'),
  ]);
  t.is(r.code, 2, r.stderr);
  t.is(errorLines(r.stderr).length, 1, r.stderr);
  t.regex(
    r.stderr,
    /64 streams at 8192x8192 written by .* need about \d+\.\d GB of memory .* available \(fix: --no-write/,
  );
  t.false(existsSync(join(out, 'run.json')));
  t.deepEqual(readdirSync(out), [], 'no video or partial file left');
});

test('memory under ulimit -v: address space is what runs out (thread stacks and malloc arenas count in full), said with the limit and its fix', (t) => {
  const e = memoryShortage(16, 1920, 1080, 'gstreamer', { memoryBytes: 64 * 2 ** 30, addressRoomBytes: 2 * 2 ** 30 })!;
  t.regex(
    e.message,
    /^16 streams at 1920x1080 written by GStreamer's x264enc need about 3\.8 GB more address space \(243 MB a stream, measured\), and ulimit -v leaves this process 2\.0 GB$/,
  );
  t.regex(e.suggestion!, /at most 8 streams at this size.*a higher ulimit -v/);
  t.is(
    memoryShortage(4, 1920, 1080, 'gstreamer', { memoryBytes: 64 * 2 ** 30, addressRoomBytes: 2 * 2 ** 30 }),
    undefined,
  );
});

test('the drop verdict names the stream that dropped the most only when one did: all alike say so, one stream names none', (t) => {
  const stream = (index: number, droppedFrames: number) => ({ index, frames: 14, droppedFrames }) as never;
  const rt = { sourceFps: 10 };
  t.regex(droppedVerdict([stream(0, 57), stream(1, 57)], rt)!, /; every stream dropped 57 of 71\.$/);
  t.regex(droppedVerdict([stream(0, 57), stream(1, 20)], rt)!, /; stream 0 dropped the most \(57 of 71\)\.$/);
  t.regex(droppedVerdict([stream(0, 57)], rt)!, /when the pipeline is busy\.$/);
});

test('--interval under --realtime says the count runs over the frames a source delivered, dropped ones included, so the drops decide the share the model ran on', (t) => {
  const r = {
    interval: 2,
    frames: 128,
    intervalFrames: {
      inferred: 64,
      tracked: 64,
      latencyMs: { inferred: { p50: 1, p90: 1, p99: 1 }, tracked: { p50: 1, p90: 1, p99: 1 } },
    },
  } as never;
  t.regex(intervalLine(r)!, /\(every 3rd frame of each stream\)/);
  t.regex(
    intervalLine({ ...(r as object), setup: { realtime: { sourceFps: 10 } } } as never)!,
    /the model ran on 64 of the 128 measured frames \(every 3rd frame each source delivered, when that frame was not dropped: dropped frames count, so the share of processed frames the model ran on follows the drops\)/,
  );
});

test("each stream's video shows its own FPS in the overlay, the figures over all streams beside it (stream 0 at 4 FPS, stream 1 at 2 FPS, 6 frames a second in all)", async (t) => {
  const { LoopTally } = await import('../src/pipeline/loop-tally.ts');
  const tally = new LoopTally(0, []);
  const ms = (x: number) => BigInt(Math.round(x * 1e6));
  const post = { detections: [], candidates: 0, candidatesCapped: false, detectionsCapped: false };
  // 2 s: stream 0 gives a frame every 250 ms, stream 1 every 500 ms; each takes 10 ms, 5 of them in the model
  const frames = [
    ...Array.from({ length: 9 }, (_, k) => [0, k * 250] as const),
    ...Array.from({ length: 5 }, (_, k) => [1, k * 500 + 100] as const),
  ].sort((a, b) => a[1] - b[1]);
  frames.forEach(([stream, at], index) =>
    tally.record({
      clock: {
        index,
        t0: ms(at),
        tInference: ms(at + 2),
        tPostprocess: ms(at + 7),
        tEnd: ms(at + 10),
        readMs: 1,
        preprocessMs: 1,
        inferenceMs: 5,
        postprocessMs: 1,
        drawMs: 0,
        writeMs: 2,
      },
      result: { outputs: new Map() },
      post,
      stream,
    }),
  );
  // stream 0: 9 frames from 0 to 2010 ms = 4.48 FPS; stream 1: 5 frames from 100 to 2110 ms = 2.49 FPS;
  // all: 14 frames over 2110 ms = 6.64 FPS; inference 14 x 5 ms = 200 FPS
  t.is(
    tally.overlayText('onnx', false, 0)[0],
    'onnx  stream 0 so far: 4.5 FPS  (all 2 streams: 6.6 FPS, inference 200.0 FPS)',
  );
  t.is(
    tally.overlayText('onnx', false, 1)[0],
    'onnx  stream 1 so far: 2.5 FPS  (all 2 streams: 6.6 FPS, inference 200.0 FPS)',
  );
  // one stream: the figures as they were
  t.regex(new LoopTally(0, []).overlayText('onnx', false, 0)[0], /^onnx {2}so far: inference/);
});

test('what --interval costs with several streams: the boxes of each stream (dets-<i>.json) held against the same stream at interval 0', async (t) => {
  const dir = freshDir('streams-interval-cost');
  const firing = makeModel('streams-cost', SMALL_LAB_CFG, 9, undefined, 0);
  const v = makeVideo('streams-cost.mp4', 12, 160, 120);
  const common = [
    v,
    '--streams',
    '2',
    '--model',
    firing.onnxPath,
    '--warmup',
    '2',
    '--max-det',
    '20',
    '--no-write',
    '-q',
  ];
  const run = (name: string, extra: string[]) =>
    inferRun([
      ...common,
      ...extra,
      '--json',
      join(dir, `${name}.json`),
      '--detections',
      join(dir, `${name}-dets.json`),
    ]);
  await run('every', []);
  await run('third', ['--interval', '2']);
  for (const name of ['every', 'third'])
    for (const i of [0, 1]) t.true(existsSync(join(dir, `${name}-dets-${i}.json`)), `${name}: stream ${i}'s boxes`);
  const rep = await runCli('jetprof', ['report', '--run', join(dir, 'every.json'), '--run', join(dir, 'third.json')]);
  t.is(rep.code, 0, rep.stderr);
  t.notRegex(rep.stdout, /run both with --detections/);
  const m = /- what --interval 2 buys: .* what it costs: ([\d.]+)% of the boxes match on the same frames/.exec(
    rep.stdout,
  );
  t.truthy(m, rep.stdout);
  // the frames the model ran on find the same boxes; carried ones match where nothing moved (a still test video)
  t.true(Number(m![1]) > 0 && Number(m![1]) <= 100, m![0]);
});
