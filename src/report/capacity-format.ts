/**
 * The capacity result (jetprof.capacity/1) as data and as text: its types, the one-sentence answer and the table
 * that `jetprof capacity` prints and `jetprof report --capacity` puts in the report. Pure, apart from reading a file.
 */
import { basename } from 'node:path';
import type { CpuBound } from '../pipeline/figures.ts';
import { JetprofError } from '../util/errors.ts';
import { escapeControls, readJsonFile } from '../util/text-input.ts';
import { validateSchemaFile } from '../schemas/validate.ts';

export interface CapacityPoint {
  streams: number;
  minStreamFps: number;
  meanStreamFps: number;
  /** The worst stream's p99 latency (ms). */
  p99Ms: number;
  dropped: number;
  /** Frames the cameras delivered over its runs (processed and dropped; absent in files from before it was recorded). */
  delivered?: number;
  /** The fewest frames one stream processed in one run: what its p99 rests on. */
  minStreamFrames?: number;
  /** Held, but close to the line (p99 near the limit, frames dropped within the tolerance): in words. */
  near?: string;
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
  /**
   * How the streams' frames arrived: one file replayed in lock-step (every stream's frame at the same instant),
   * staggered over a frame time (--stagger), or from a live source. Absent in files from before it was recorded.
   */
  arrivals?: 'lock-step' | 'staggered' | 'live';
}

export interface CapacityResult {
  schema: 'jetprof.capacity/1';
  source: string;
  sourceFps: number;
  p99LimitMs: number;
  /** The share of delivered frames a run may drop and still hold (absent in files from before it: none). */
  dropTolerance?: number;
  /** Seconds each run of a count measured. */
  pointSeconds?: number;
  maxStreams: number;
  /** Absent in files from before the setup was recorded. */
  setup?: CapacitySetup;
  points: CapacityPoint[];
  /** The search stopped at the budget (or Ctrl-C) before it was settled. */
  cutShort?: string;
  seconds: number;
  /** How busy the machine was over the search's runs (each run's machineLoad): the busiest figures, and how many runs were busy. */
  machine?: CapacityMachine;
}

/** The machine over a search's runs: the busiest figures, what the runs cost, and on a board its power mode and clocks. */
interface CapacityMachine {
  cores: number;
  maxLoadAvg: number;
  maxOtherCores?: number;
  /** The largest share of CPU time the hypervisor stole in a run, 0..1. */
  maxStealShare?: number;
  busyRuns: number;
  runs: number;
  /** infer's CPU time over all runs, s; its largest peak resident memory, MB. */
  cpuSeconds?: number;
  peakRssMb?: number;
  /** nvpmodel's power modes seen (one, unless it changed during the search). */
  powerModes?: string[];
  /** tegrastats: the lowest and highest of the runs' mean GPU clocks (MHz), and the hottest reading (C). */
  gpuMhz?: [number, number];
  peakTempC?: number;
}

/** A p99 from fewer frames a stream than this is close to the maximum of a handful: the answer says so. */
export const MIN_P99_FRAMES = 100;

/**
 * The seconds a count runs by default: at least 8, and long enough for MIN_P99_FRAMES frames a stream at the source's
 * rate (with a tenth more for the frames a run may drop).
 */
export const defaultPointSeconds = (sourceFps: number) =>
  Math.max(8, Math.ceil(Math.round(MIN_P99_FRAMES * 1.1) / sourceFps));

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
/** A share as capacity prints it: one decimal, two under 0.1% ("0.7%", "0.05%"). */
export const sharePct = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.001 ? 2 : 1)}%`;

/** A point's dropped frames as a share of what its cameras delivered ("0.2%"), or the bare count from older files. */
export function droppedShare(p: CapacityPoint): string {
  return p.delivered ? sharePct(p.dropped / p.delivered) : `${p.dropped} frames`;
}

/**
 * The margin of the answer: how the count it names held and how the next one up failed ("4 held: p99 226 ms of 800,
 * 0.0% dropped (1.0% allowed), in 2 of 2 runs; 5 failed: a stream at 4.06 FPS").
 */
function capacityMargin(r: CapacityResult): string {
  const sorted = [...r.points].sort((a, b) => a.streams - b.streams);
  const at = sorted.find((p) => p.streams === r.maxStreams && p.held);
  const next = sorted.find((p) => p.streams > r.maxStreams && !p.held);
  const allowed = r.dropTolerance !== undefined ? ` (${sharePct(r.dropTolerance)} allowed)` : '';
  const runs = (p: CapacityPoint) =>
    p.runs ? `, in ${p.heldRuns ?? 0} of ${p.runs} run${p.runs === 1 ? '' : 's'}` : '';
  const held = at
    ? `${at.streams} held: p99 ${at.p99Ms.toFixed(0)} ms of ${r.p99LimitMs}, ${droppedShare(at)} dropped${allowed}${runs(at)}`
    : 'no count held';
  return next ? `${held}; ${next.streams} failed: ${next.why ?? 'not held'}${runs(next)}` : held;
}

/** The answer in one sentence: the count, its margin, borderline counts, what bounds it, and how busy the machine was. */
export function capacitySentence(r: CapacityResult, sourceName = basename(r.source)): string {
  const base = `this machine holds ${plural(r.maxStreams, 'stream')} of ${sourceName} at ${r.sourceFps} FPS with p99 latency within ${r.p99LimitMs} ms`;
  const borderline = r.points
    .filter((p) => p.borderline)
    .sort((a, b) => a.streams - b.streams)
    .map(
      (p) =>
        `${plural(p.streams, 'stream')} ${p.held ? 'counted as held' : 'did not hold'} (held in ${p.heldRuns ?? 0} of ${p.runs ?? 1} runs, kept ${((p.keptShare ?? 0) * 100).toFixed(0)}% of the frames${p.near ? `; near the line: ${p.near}` : ''})`,
    );
  // the p99 of a deciding count rests on its fewest frames a stream: under MIN_P99_FRAMES it is nearly their maximum.
  // Deciding: the count the answer names, and the next one up when its p99 is what failed it
  const deciding = r.points.filter(
    (p) => (p.streams === r.maxStreams && p.held) || (p.streams === r.maxStreams + 1 && /p99/.test(p.why ?? '')),
  );
  const fewest = Math.min(...deciding.map((p) => p.minStreamFrames ?? Infinity));
  const thin =
    fewest < MIN_P99_FRAMES
      ? `the p99 rests on as few as ${plural(fewest, 'frame')} a stream, close to their maximum: give --point-seconds ${defaultPointSeconds(r.sourceFps)} or more for ${MIN_P99_FRAMES}`
      : '';
  const setup = r.setup ? `; ${setupLine(r.setup)}` : '';
  const m = r.machine;
  const busy =
    m && m.busyRuns > 0
      ? `the machine was busy in ${m.busyRuns} of ${m.runs} runs (load average up to ${m.maxLoadAvg.toFixed(1)} on ${m.cores} cores${m.maxOtherCores !== undefined ? `, other processes up to ${m.maxOtherCores.toFixed(1)} cores` : ''}): on a quiet machine the answer may be higher`
      : '';
  const clocks =
    m?.gpuMhz && m.gpuMhz[0] < m.gpuMhz[1] * 0.9
      ? `the GPU clock moved between runs (${m.gpuMhz[0]}-${m.gpuMhz[1]} MHz: throttling or a changed power mode)`
      : '';
  // the first count that failed, when a CPU stage rather than the model stopped it
  const failed = [...r.points].sort((a, b) => a.streams - b.streams).find((p) => !p.held && p.cpuBound);
  const bound = failed?.cpuBound
    ? `CPU-bound at ${plural(failed.streams, 'stream')}: ${failed.cpuBound.stage} ${failed.cpuBound.ms.toFixed(1)} ms a frame, more than inference's ${failed.cpuBound.inferenceMs.toFixed(1)} ms`
    : '';
  const notes = [
    capacityMargin(r),
    ...(borderline.length ? [`borderline: ${borderline.join('; ')}`] : []),
    thin,
    bound,
    busy,
    clocks,
  ].filter(Boolean);
  // file names and labels come from outside: shown, never obeyed, on a terminal (escape codes, bidi controls)
  return escapeControls(`${base}${r.cutShort ? ` (at least; ${r.cutShort})` : ''} (${notes.join('; ')}${setup})`, true);
}

/** The machine over the search, in one line: load, steal, what the runs cost, and on a board its power mode and clocks. */
export function capacityMachineLine(r: CapacityResult): string | undefined {
  const m = r.machine;
  if (!m) return undefined;
  const parts = [
    `load average up to ${m.maxLoadAvg.toFixed(1)} on ${m.cores} cores`,
    ...(m.maxOtherCores !== undefined ? [`other processes up to ${m.maxOtherCores.toFixed(1)} cores`] : []),
    ...(m.maxStealShare !== undefined ? [`CPU steal up to ${sharePct(m.maxStealShare)}`] : []),
    ...(m.cpuSeconds !== undefined
      ? [`infer's CPU time ${m.cpuSeconds.toFixed(0)} s over ${plural(m.runs, 'run')}`]
      : []),
    ...(m.peakRssMb !== undefined ? [`peak memory ${m.peakRssMb} MB`] : []),
    ...(m.powerModes?.length ? [`power mode ${m.powerModes.join(', then ')}`] : []),
    ...(m.gpuMhz
      ? [`GPU clock ${m.gpuMhz[0] === m.gpuMhz[1] ? m.gpuMhz[0] : `${m.gpuMhz[0]}-${m.gpuMhz[1]}`} MHz`]
      : []),
    ...(m.peakTempC !== undefined ? [`up to ${m.peakTempC.toFixed(1)} C`] : []),
  ];
  return `The machine over the search: ${parts.join(', ')}; ${m.busyRuns ? `busy in ${m.busyRuns} of ${m.runs} runs` : 'no run was measured on a busy machine'}.`;
}

/** How the streams' frames arrived, as the answer says it. */
const ARRIVALS: Record<NonNullable<CapacitySetup['arrivals']>, string> = {
  'lock-step':
    ", one file replayed in lock-step (every stream's frame arrives at the same instant: batching's best case, so real cameras may hold fewer; --stagger spreads them)",
  staggered: ', arrivals staggered over a frame time (--stagger)',
  live: '',
};

/** The setup in a few words: what a second result with other settings would differ in. */
export function setupLine(s: CapacitySetup): string {
  const writing = s.write === undefined ? '' : s.write ? ", writing every stream's video" : ', not writing the videos';
  return `${s.label}, ${s.model}, ${s.frameSize}, batch ${s.batch ?? 'all streams'}${s.interval ? `, interval ${s.interval}` : ''}${writing}${s.arrivals ? ARRIVALS[s.arrivals] : ''}, on ${s.machine}`;
}

export const CAPACITY_HEADERS = [
  'Streams',
  'Batch',
  'Min stream FPS',
  'Mean stream FPS',
  'p99 latency (ms)',
  'p99 over (fewest frames a stream)',
  'Dropped, all runs',
  'Runs held',
  'Held',
];
export const CAPACITY_ALIGN: ('l' | 'r')[] = ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'];

/** One row per count of streams tried, fewest first; the figures are the worst of its runs, drops their sum. */
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
      p.minStreamFrames !== undefined ? String(p.minStreamFrames) : '',
      p.delivered ? `${p.dropped} of ${p.delivered} (${droppedShare(p)})` : String(p.dropped),
      p.runs ? `${p.heldRuns ?? 0} of ${p.runs}` : '',
      `${p.held ? 'held' : `no: ${p.why}`}${p.borderline ? ` (borderline${p.near ? `: ${p.near}` : ''})` : ''}`,
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
  // every field the report reads, typed and bounded (a search holds tens of counts): one line naming the field
  validateSchemaFile(v, path, fix);
  const r = v as CapacityResult;
  // hand-edited figures: finite (JSON's 1e999 is Infinity), and an answer that one of its counts measured
  const figure = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  const implausible =
    !(figure(r.sourceFps) && r.sourceFps > 0) ||
    !figure(r.p99LimitMs) ||
    r.points.some(
      (p) => !figure(p.streams) || !figure(p.minStreamFps) || !figure(p.meanStreamFps) || !figure(p.dropped),
    ) ||
    (r.maxStreams !== 0 && !r.points.some((p) => p.held && p.streams === r.maxStreams));
  if (implausible)
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: figures no capacity search gives (infinite or negative, or an answer of ${r.maxStreams} streams that none of its counts held)`,
      { suggestion: fix },
    );
  return r;
}
