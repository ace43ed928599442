/**
 * Repeated runs of one job (`--repeat N`): the aggregate `jetprof.runset/1` with the spread of both FPS figures and
 * of each stage's p50 (mean, standard deviation, min, max, 95% confidence interval of the mean). Pure.
 */
import { spread, type Spread } from '../util/stats.ts';
import { isCompleteRun, type RunResult } from './run-result.ts';
import { STAGES, type Stage } from './stages.ts';

interface RunSet {
  schema: 'jetprof.runset/1';
  label: string;
  /** The run files, relative to this file's folder (absent when the runs were not written). */
  files?: string[];
  runs: number;
  inferenceFps: Spread;
  endToEndFps: Spread;
  stageP50Ms: Record<Stage, Spread>;
  /** Runs cut short by Ctrl-C are in the files but not in the statistics. */
  interruptedRuns?: number;
}

export function buildRunSet(runs: RunResult[], files?: string[]): RunSet {
  const complete = runs.filter(isCompleteRun);
  if (complete.length === 0) throw new RangeError('no complete run to aggregate');
  const set: RunSet = {
    schema: 'jetprof.runset/1',
    label: complete[0].setup.label,
    ...(files ? { files } : {}),
    runs: complete.length,
    inferenceFps: spread(complete.map((r) => r.inferenceFps)),
    endToEndFps: spread(complete.map((r) => r.endToEndFps)),
    stageP50Ms: Object.fromEntries(STAGES.map((s) => [s, spread(complete.map((r) => r.stages[s].p50Ms))])) as Record<
      Stage,
      Spread
    >,
  };
  if (complete.length < runs.length) set.interruptedRuns = runs.length - complete.length;
  return set;
}

/** `runs/onnx.json` -> `runs/onnx-2.json`, `out.mp4` -> `out-2.mp4`: where run k of a repeated job writes a file. */
export function repeatPath(path: string, k: number): string {
  const m = /(\.[A-Za-z0-9]{1,5})$/.exec(path.split('/').pop() ?? path);
  return m ? `${path.slice(0, -m[1].length)}-${k}${m[1]}` : `${path}-${k}`;
}

const fmt = (s: Spread, digits = 2) =>
  `${s.mean.toFixed(digits)} ± ${s.std.toFixed(digits)} (95% CI ${s.ci95[0].toFixed(digits)}-${s.ci95[1].toFixed(digits)}, min ${s.min.toFixed(digits)}, max ${s.max.toFixed(digits)})`;

/** The console lines for a runset. */
export function formatRunSet(s: RunSet): string {
  return [
    `${s.runs} runs of ${s.label}${s.interruptedRuns ? ` (${s.interruptedRuns} interrupted, left out)` : ''}:`,
    // one column for the labels: the longest is 'postprocess p50 ms'
    `  ${'inference FPS'.padEnd(20)}${fmt(s.inferenceFps)}`,
    `  ${'end-to-end FPS'.padEnd(20)}${fmt(s.endToEndFps)}`,
    ...STAGES.map((st) => `  ${`${st} p50 ms`.padEnd(20)}${fmt(s.stageP50Ms[st])}`),
  ].join('\n');
}
