/** bench section 9: see bench/run.ts for what each section measures. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FRAMES,
  ROOT,
  THREADS,
  TSX,
  VIDEO,
  WORK,
  log,
  median,
  onnx,
  results,
  row,
  state,
  capacityArgs,
} from '../common.ts';

/**
 * 9. Many streams: aggregate FPS of 1, 2 and 4 streams of vtest.avi, streams taking turns (--batch 1) and in batches
 * of all streams (the default), alternating over 3 rounds (medians); inference per frame at batch 1, 2 and 4; and
 * `jetprof capacity` on vtest.avi at 10 FPS with its answer and how long the search took.
 */
export function benchStreams() {
  state.section = 9;
  log('9. streams: aggregate FPS of 1, 2, 4 streams at batch 1 and batch N; jetprof capacity on vtest.avi at 10 FPS');
  const cli = (script: string) =>
    existsSync(join(ROOT, `dist/src/cli/${script}.js`))
      ? [join(ROOT, `dist/src/cli/${script}.js`)]
      : [TSX, join(ROOT, `src/cli/${script}.ts`)];
  const frames = FRAMES ?? 100;
  const setups: { n: number; batch: number }[] = [
    { n: 1, batch: 1 },
    { n: 2, batch: 1 },
    { n: 2, batch: 2 },
    { n: 4, batch: 1 },
    { n: 4, batch: 4 },
  ];
  const fps: Record<string, number[]> = {};
  const perFrame: Record<string, number[]> = {};
  for (let round = 0; round < 3; round++) {
    for (const { n, batch } of setups) {
      const key = `${n}x${batch}`;
      const json = join(WORK, `streams-${key}.json`);
      const r = spawnSync(
        process.execPath,
        [
          ...cli('infer'),
          VIDEO,
          '--model',
          onnx,
          '--frame-size',
          '960x540',
          '--threads',
          String(THREADS),
          '--streams',
          String(n),
          ...(n > 1 ? ['--batch', String(batch)] : []),
          '--max-frames',
          String(Math.ceil(frames / n) + 5),
          '--no-write',
          '-q',
          '--json',
          json,
        ],
        { encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(`streams ${key} failed: ${r.stderr}`);
      const run = JSON.parse(readFileSync(json, 'utf8'));
      (fps[key] ??= []).push(run.aggregateFps ?? run.endToEndFps);
      (perFrame[key] ??= []).push(run.batches?.perFrameMs ?? run.stages.inference.meanMs);
    }
  }
  const m = (k: string) => median(fps[k]);
  const mf = (k: string) => median(perFrame[k]);
  row(
    'aggregate FPS, 1 / 2 / 4 streams taking turns (--batch 1), median of 3',
    `${m('1x1').toFixed(2)} / ${m('2x1').toFixed(2)} / ${m('4x1').toFixed(2)}`,
    '',
    undefined,
  );
  row(
    'aggregate FPS, 2 / 4 streams in batches of 2 / 4 (the default), median of 3',
    `${m('2x2').toFixed(2)} / ${m('4x4').toFixed(2)}`,
    '',
    undefined,
  );
  row(
    'inference ms per frame at batch 1 / 2 / 4 (batch time / frames)',
    `${mf('1x1').toFixed(2)} / ${mf('2x2').toFixed(2)} / ${mf('4x4').toFixed(2)}`,
    '',
    undefined,
  );
  row(
    '4 streams / 1 stream aggregate FPS at batch 1 (bookkeeping of many streams)',
    (m('4x1') / m('1x1')).toFixed(3),
    '>= 0.95',
    m('4x1') / m('1x1') >= 0.95,
  );
  row(
    '4 streams: batch 4 / batch 1 aggregate FPS (what batching buys here)',
    (m('4x4') / m('4x1')).toFixed(3),
    '',
    undefined,
  );
  const capJson = join(WORK, 'capacity.json');
  const t0 = performance.now();
  const c = spawnSync(process.execPath, [...cli('jetprof'), ...capacityArgs(capJson)], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  const seconds = (performance.now() - t0) / 1000;
  if (c.status !== 0) throw new Error(`capacity failed: ${c.stderr}`);
  const cap = JSON.parse(readFileSync(capJson, 'utf8'));
  results.streams = {
    aggregateFps: Object.fromEntries(Object.entries(fps).map(([k, v]) => [k, { median: median(v), runs: v }])),
    inferenceMsPerFrame: Object.fromEntries(Object.entries(perFrame).map(([k, v]) => [k, median(v)])),
    capacity: { ...cap, wallSeconds: seconds, answer: c.stdout.trim().split('\n').pop() },
  };
  row(
    'jetprof capacity vtest.avi at 10 FPS, p99 <= 400 ms: streams held; search time (s)',
    `${cap.maxStreams}; ${seconds.toFixed(0)}`,
    '<= 240 s',
    seconds <= 240,
  );
}
