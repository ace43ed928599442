/**
 * Several sources in one run (#26, the first part): streams that take turns through one session, each with its own
 * video and figures; the run's figures over all of them; the report's per-stream table.
 */
import test from 'ava';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeModel, makeVideo, PERSON_VEHICLE_CFG, probeVideo, runCli, scratchDir } from './helpers/fixtures.ts';

const model = makeModel('streams', PERSON_VEHICLE_CFG, 8);

test('two files of different sizes in one run: a record and a playable video per stream, at its own size; figures over both', (t) => {
  const dir = join(scratchDir(), 'streams-two');
  mkdirSync(dir, { recursive: true });
  const a = makeVideo('streams-a.mp4', 12, 320, 240);
  const b = makeVideo('streams-b.mp4', 8, 160, 120);
  const json = join(dir, 'run.json');
  const r = runCli('infer', [a, b, '--model', model.onnxPath, '--warmup', '2', '--output-dir', dir, '--json', json]);
  t.is(r.code, 0, r.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.streams.length, 2);
  t.like(run.streams[0], { index: 0, width: 320, height: 240, frames: 10, droppedFrames: 0 });
  t.like(run.streams[1], { index: 1, width: 160, height: 120, frames: 6 });
  t.is(run.frames, 16, 'the run counts every measured frame of every stream');
  t.is(run.inferredFrames, 20);
  t.is(run.batch, 1);
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
  t.regex(r.stdout, /2 streams taking turns \(batch 1\): aggregate [\d.]+ FPS/);
  t.regex(r.stdout, /\| 1 \| .*streams-b\.mp4 \| 6 \| [\d.]+ \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \| after 8 frames \|/);
  const rep = runCli('jetprof', ['report', '--run', json]);
  t.is(rep.code, 0, rep.stderr);
  t.regex(rep.stdout, /ONNX Runtime \(CPU, FP32\): 2 streams taking turns, batch 1: aggregate [\d.]+ FPS/);
  t.regex(rep.stdout, /\| Stream \| Source \| Frames \| End-to-end FPS \|/);
});

test('--streams 3 runs one source as three streams; a run of one stream and a run of three are not compared', (t) => {
  const dir = join(scratchDir(), 'streams-three');
  mkdirSync(dir, { recursive: true });
  const v = makeVideo('streams-c.mp4', 6, 160, 120);
  const json = join(dir, 'three.json');
  const r = runCli('infer', [
    v,
    '--streams',
    '3',
    '--model',
    model.onnxPath,
    '--warmup',
    '1',
    '--no-write',
    '--json',
    json,
    '-q',
  ]);
  t.is(r.code, 0, r.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.deepEqual(
    run.streams.map((s: { index: number; frames: number }) => [s.index, s.frames]),
    [
      [0, 5],
      [1, 5],
      [2, 5],
    ],
  );
  const one = join(dir, 'one.json');
  t.is(
    runCli('infer', [
      v,
      '--model',
      model.onnxPath,
      '--warmup',
      '1',
      '--no-write',
      '--json',
      one,
      '-q',
      '--label',
      'one-stream',
    ]).code,
    0,
  );
  const rep = runCli('jetprof', ['report', '--run', one, '--run', json]);
  t.regex(rep.stdout, /not compared: .*: different streams \(one stream \/ 3 streams, batch 1, interval 0\)/);
});

test('bad input, one line each: --streams 0, more than 64 streams, --output or --detections with several streams', (t) => {
  const v = makeVideo('streams-d.mp4', 4, 160, 120);
  const cases: [string[], RegExp][] = [
    [['--streams', '0'], /--streams must be/],
    [['--streams', '65'], /--streams must be/],
    [['--streams', '33', v], /66 streams \(2 source\(s\) x --streams 33\): at most 64/],
    [['--streams', '2', '--output', 'x.mp4'], /--output takes one stream; with 2 streams it is not available yet/],
    [['--streams', '2', '--detections', 'd.json'], /--detections takes one stream/],
  ];
  for (const [args, expected] of cases) {
    const r = runCli('infer', [v, '--model', model.onnxPath, ...args]);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, expected, args.join(' '));
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
