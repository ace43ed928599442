/**
 * The capacity result (jetprof.capacity/1) as data and as text: its types, the one-sentence answer and the table
 * that `jetprof capacity` prints and `jetprof report --capacity` puts in the report. Pure, apart from reading a file.
 */
import { basename } from 'node:path';
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
}

export interface CapacityResult {
  schema: 'jetprof.capacity/1';
  source: string;
  sourceFps: number;
  p99LimitMs: number;
  maxStreams: number;
  points: CapacityPoint[];
  /** The search stopped at the budget (or Ctrl-C) before it was settled. */
  cutShort?: string;
  seconds: number;
}

/** The answer in one sentence. */
export function capacitySentence(r: CapacityResult, sourceName = basename(r.source)): string {
  const streams = `${r.maxStreams} stream${r.maxStreams === 1 ? '' : 's'}`;
  const base = `this machine holds ${streams} of ${sourceName} at ${r.sourceFps} FPS with p99 latency under ${r.p99LimitMs} ms`;
  return r.cutShort ? `${base} (at least; ${r.cutShort})` : base;
}

export const CAPACITY_HEADERS = [
  'Streams',
  'Batch',
  'Min stream FPS',
  'Mean stream FPS',
  'p99 latency (ms)',
  'Dropped frames',
  'Held',
];
export const CAPACITY_ALIGN: ('l' | 'r')[] = ['r', 'r', 'r', 'r', 'r', 'r', 'l'];

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
      p.p99Ms.toFixed(0),
      String(p.dropped),
      p.held ? 'held' : `no: ${p.why}`,
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
  return v as CapacityResult;
}
