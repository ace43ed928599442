/**
 * The capacity result (jetprof.capacity/1) as data and as text: its types, the one-sentence answer and the table
 * that `jetprof capacity` prints and `jetprof report --capacity` puts in the report. Pure, apart from reading a file.
 */
import { basename } from 'node:path';
import type { CpuBound } from '../pipeline/figures.ts';
import { JetprofError } from '../util/errors.ts';
import { readJsonFile } from '../util/text-input.ts';

export interface CapacityPoint {
  streams: number;
  minStreamFps: number;
  meanStreamFps: number;
  /** The worst stream's p99 latency (ms). */
  p99Ms: number;
  dropped: number;
  /** Frames per run of the model at this count (infer's default: one from every stream). */
  batch?: number;
  held: boolean;
  /** Why it did not hold, in words. */
  why?: string;
  /** Runs of this count, and how many of them held (absent in files from before repeats were recorded). */
  runs?: number;
  heldRuns?: number;
  /** Frames processed over frames the sources delivered, over its runs. */
  keptShare?: number;
  /**
   * Close to the line: held in some runs but not all, or not held while keeping at least 90% of the frames. The search
   * ran it again before deciding, and the answer says so.
   */
  borderline?: boolean;
  /** When a CPU stage, not the model, sets the rate at this count: that stage and its ms a frame against inference's. */
  cpuBound?: CpuBound;
}

/** What was measured: the same for every count (from the first run's JSON), so two results can be told apart. */
export interface CapacitySetup {
  backend: string;
  /** The run label (backend, precision, provider, loop, ...), as the report's rows name it. */
  label: string;
  device: string;
  machine: string;
  model: string;
  frameSize: string;
  interval: number;
  /** --batch given for infer (default: every stream in one batch). */
  batch?: number;
  /** infer's own arguments, as given after --. */
  inferArgs: string[];
  /** Whether each stream's annotated video was written (--write); absent in files from before it was recorded. */
  write?: boolean;
}

export interface CapacityResult {
  schema: 'jetprof.capacity/1';
  source: string;
  sourceFps: number;
  p99LimitMs: number;
  maxStreams: number;
  /** Absent in files from before the setup was recorded. */
  setup?: CapacitySetup;
  points: CapacityPoint[];
  /** The search stopped at the budget (or Ctrl-C) before it was settled. */
  cutShort?: string;
  seconds: number;
  /** How busy the machine was over the search's runs (each run's machineLoad): the busiest figures, and how many runs were busy. */
  machine?: { cores: number; maxLoadAvg: number; maxOtherCores?: number; busyRuns: number; runs: number };
}

/** The answer in one sentence: the count, the measured p99 behind it, the runs that held, and a borderline count. */
export function capacitySentence(r: CapacityResult, sourceName = basename(r.source)): string {
  const streams = `${r.maxStreams} stream${r.maxStreams === 1 ? '' : 's'}`;
  const base = `this machine holds ${streams} of ${sourceName} at ${r.sourceFps} FPS with p99 latency under ${r.p99LimitMs} ms`;
  const at = r.points.find((p) => p.streams === r.maxStreams && p.held);
  const measured =
    r.maxStreams === 0
      ? 'no count held'
      : at
        ? `measured p99 ${at.p99Ms.toFixed(0)} ms${at.runs ? `, held in ${at.heldRuns} of ${at.runs} run${at.runs === 1 ? '' : 's'}` : ''}`
        : '';
  const borderline = r.points
    .filter((p) => p.borderline)
    .sort((a, b) => a.streams - b.streams)
    .map(
      (p) =>
        `${p.streams} stream${p.streams === 1 ? '' : 's'} ${p.held ? 'counted as held' : 'did not hold'} (held in ${p.heldRuns ?? 0} of ${p.runs ?? 1} runs, kept ${((p.keptShare ?? 0) * 100).toFixed(0)}% of the frames)`,
    );
  const setup = r.setup ? `; ${setupLine(r.setup)}` : '';
  const m = r.machine;
  const busy =
    m && m.busyRuns > 0
      ? `the machine was busy in ${m.busyRuns} of ${m.runs} runs (load average up to ${m.maxLoadAvg.toFixed(1)} on ${m.cores} cores${m.maxOtherCores !== undefined ? `, other processes up to ${m.maxOtherCores.toFixed(1)} cores` : ''}): on a quiet machine the answer may be higher`
      : '';
  // the first count that failed, when a CPU stage rather than the model stopped it
  const failed = [...r.points].sort((a, b) => a.streams - b.streams).find((p) => !p.held && p.cpuBound);
  const bound = failed?.cpuBound
    ? `CPU-bound at ${failed.streams} stream${failed.streams === 1 ? '' : 's'}: ${failed.cpuBound.stage} ${failed.cpuBound.ms.toFixed(1)} ms a frame, more than inference's ${failed.cpuBound.inferenceMs.toFixed(1)} ms`
    : '';
  const notes = [measured, ...(borderline.length ? [`borderline: ${borderline.join('; ')}`] : []), bound, busy].filter(
    Boolean,
  );
  return `${base}${r.cutShort ? ` (at least; ${r.cutShort})` : ''} (${notes.join('; ')}${setup})`;
}

/** The setup in a few words: what a second result with other settings would differ in. */
export function setupLine(s: CapacitySetup): string {
  const writing = s.write === undefined ? '' : s.write ? ", writing every stream's video" : ', not writing the videos';
  return `${s.label}, ${s.model}, ${s.frameSize}, batch ${s.batch ?? 'all streams'}${s.interval ? `, interval ${s.interval}` : ''}${writing}, on ${s.machine}`;
}

export const CAPACITY_HEADERS = [
  'Streams',
  'Batch',
  'Min stream FPS',
  'Mean stream FPS',
  'p99 latency (ms)',
  'Dropped frames',
  'Runs held',
  'Held',
];
export const CAPACITY_ALIGN: ('l' | 'r')[] = ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'];

/** One row per count of streams tried, fewest first. */
export function capacityRows(r: CapacityResult): string[][] {
  return [...r.points]
    .sort((a, b) => a.streams - b.streams)
    .map((p) => [
      String(p.streams),
      // files written before batches ran their streams in turns: batch 1
      String(p.batch ?? 1),
      p.minStreamFps.toFixed(2),
      p.meanStreamFps.toFixed(2),
      typeof p.p99Ms === 'number' && Number.isFinite(p.p99Ms) ? p.p99Ms.toFixed(0) : '-',
      String(p.dropped),
      p.runs ? `${p.heldRuns ?? 0} of ${p.runs}` : '',
      `${p.held ? 'held' : `no: ${p.why}`}${p.borderline ? ' (borderline)' : ''}`,
    ]);
}

/** Reads a `jetprof capacity --json` file; anything else is one line naming the file. */
export function readCapacityFile(path: string): CapacityResult {
  const fix = 'give the file `jetprof capacity ... --json FILE` wrote';
  const v = readJsonFile(path, 'capacity result', fix) as Partial<CapacityResult> | null;
  if (!v || typeof v !== 'object' || v.schema !== 'jetprof.capacity/1') {
    throw new JetprofError('BAD_INPUT', `${path}: not a capacity result (schema jetprof.capacity/1)`, {
      suggestion: fix,
    });
  }
  if (
    !Array.isArray(v.points) ||
    typeof v.maxStreams !== 'number' ||
    typeof v.sourceFps !== 'number' ||
    typeof v.p99LimitMs !== 'number' ||
    typeof v.source !== 'string' ||
    v.points.some((p) => typeof p?.streams !== 'number' || typeof p?.minStreamFps !== 'number')
  ) {
    throw new JetprofError('BAD_INPUT', `${path}: a capacity result with fields missing or of the wrong type`, {
      suggestion: fix,
    });
  }
  // hand-edited figures: finite, not negative, and an answer that one of its counts measured
  const figure = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  const implausible =
    !(figure(v.sourceFps) && v.sourceFps! > 0) ||
    !figure(v.p99LimitMs) ||
    v.points.some(
      (p) => !figure(p.streams) || !figure(p.minStreamFps) || !figure(p.meanStreamFps) || !figure(p.dropped),
    ) ||
    (v.maxStreams !== 0 && !v.points.some((p) => p.held && p.streams === v.maxStreams));
  if (implausible)
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: figures no capacity search gives (infinite or negative, or an answer of ${v.maxStreams} streams that none of its counts held)`,
      { suggestion: fix },
    );
  return v as CapacityResult;
}
