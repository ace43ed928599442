/**
 * The rule `jetprof capacity` judges a count of streams by, one run and then all its runs: every stream keeps 95% of
 * the camera's frame rate, the run drops at most a stated share of the frames the cameras delivered, and the worst
 * stream's p99 latency (arrival to boxes) is within the limit, in every run. A count close to the line (held in some
 * runs only, or held with its p99 or its drops near the limit, or missed while keeping 90% of the frames) is
 * borderline, and the answer says how close it was; one that held near the line is measured again before it counts.
 * Pure.
 */
import type { RunResult } from '../pipeline/run-result.ts';
import { cpuBound } from '../pipeline/figures.ts';
import { maxOf, meanOf, minOf } from '../util/stats.ts';
import { type CapacityPoint, sharePct } from '../report/capacity-format.ts';

export interface CapacityRule {
  sourceFps: number;
  p99LimitMs: number;
  /** The share of delivered frames a run may drop and still hold (0..1). */
  dropTolerance: number;
}

/** A held run is near the line when its p99 is above this share of the limit. */
const NEAR_P99 = 0.8;

/** Whether one run of `streams` streams held, with the figures behind it and, when held, how close it came. */
export function judgePoint(run: RunResult, streams: number, rule: CapacityRule): CapacityPoint {
  const s = run.streams ?? [];
  const fps = s.map((x) => x.endToEndFps);
  const processed = s.reduce((a, x) => a + (x.frames ?? 0), 0);
  const dropped = s.reduce((a, x) => a + (x.droppedFrames ?? 0), 0);
  const delivered = processed + dropped;
  const point: CapacityPoint = {
    streams,
    minStreamFps: fps.length ? minOf(fps) : 0,
    meanStreamFps: meanOf(fps),
    // a stream that processed no frame has no latency (null in JSON): the point cannot have met the limit
    p99Ms: s.length ? maxOf(s.map((x) => (Number.isFinite(x.latencyMs.p99) ? x.latencyMs.p99 : Infinity))) : Infinity,
    minStreamFrames: s.length ? minOf(s.map((x) => x.frames ?? 0)) : 0,
    dropped,
    delivered,
    batch: run.batch ?? 1,
    held: false,
    runs: 1,
    keptShare: delivered > 0 ? processed / delivered : 0,
  };
  const droppedShare = delivered > 0 ? dropped / delivered : 0;
  const why = [
    s.length !== streams ? `${s.length} of ${streams} streams reported` : '',
    droppedShare > rule.dropTolerance
      ? `${dropped} of ${delivered} frames dropped (${sharePct(droppedShare)}, over ${sharePct(rule.dropTolerance)})`
      : '',
    point.minStreamFps < rule.sourceFps * 0.95 ? `a stream at ${point.minStreamFps.toFixed(2)} FPS` : '',
    // over the limit, said with the digits that show it (500.4 is not "500 ms" against a 500 ms limit)
    point.p99Ms > rule.p99LimitMs
      ? `p99 ${point.p99Ms.toFixed(Math.round(point.p99Ms) > rule.p99LimitMs ? 0 : 1)} ms, over ${rule.p99LimitMs}`
      : '',
  ].filter(Boolean);
  point.held = why.length === 0;
  point.heldRuns = point.held ? 1 : 0;
  // the stages' means a frame (a run file from before stages were recorded has none)
  const bound = run.stages && cpuBound(Object.fromEntries(Object.entries(run.stages).map(([k, v]) => [k, v.meanMs])));
  if (bound) point.cpuBound = bound;
  if (!point.held) point.why = why.join(', ');
  else {
    const near = [
      point.p99Ms > rule.p99LimitMs * NEAR_P99 ? `p99 ${point.p99Ms.toFixed(0)} of ${rule.p99LimitMs} ms` : '',
      dropped > 0 ? `${dropped} frame${dropped === 1 ? '' : 's'} dropped (${sharePct(droppedShare)})` : '',
    ].filter(Boolean);
    if (near.length) point.near = near.join(', ');
  }
  return point;
}

/** A point clearly past the line: not held, and under 90% of the frames kept (another run would not change it). */
export const clearlyFailed = (p: CapacityPoint) => !p.held && (p.keptShare ?? 0) < 0.9;

/**
 * One count's runs as one point: the worst figures over its runs, how many held, and whether it is borderline (held
 * in some runs but not all, held with a run near the line, or not held while keeping at least 90% of the frames). It
 * holds only when every run held: an answer that decides what hardware is bought must hold each time it is measured,
 * and a count that held in 3 of 4 runs is reported as at the line, not as held (a majority would flip between two
 * searches of a count that holds half the time). The drop tolerance and the p99 (not the maximum) keep a single
 * hiccup from failing a run.
 */
export function combineRuns(runs: readonly CapacityPoint[]): CapacityPoint {
  const held = runs.filter((r) => r.held).length;
  const worst = runs.reduce((a, b) =>
    a.held !== b.held ? (a.held ? b : a) : a.minStreamFps <= b.minStreamFps ? a : b,
  );
  const kept = runs.reduce((a, r) => a + (r.keptShare ?? 0), 0) / runs.length;
  const mixed = held > 0 && held < runs.length;
  const near = held === runs.length ? runs.find((r) => r.near)?.near : undefined;
  const borderline = mixed || (held === 0 && kept >= 0.9) || near !== undefined;
  const sum = (f: (r: CapacityPoint) => number | undefined) =>
    runs.every((r) => f(r) !== undefined) ? runs.reduce((a, r) => a + f(r)!, 0) : undefined;
  const delivered = sum((r) => r.delivered);
  const point: CapacityPoint = {
    ...worst,
    p99Ms: maxOf(runs.map((r) => r.p99Ms)),
    dropped: runs.reduce((a, r) => a + r.dropped, 0),
    ...(delivered !== undefined ? { delivered } : {}),
    runs: runs.length,
    heldRuns: held,
    keptShare: kept,
    held: held === runs.length,
    ...(borderline ? { borderline: true } : {}),
  };
  const fewest = runs.map((r) => r.minStreamFrames).filter((x): x is number => x !== undefined);
  if (fewest.length) point.minStreamFrames = minOf(fewest);
  delete point.near;
  if (near) point.near = near;
  if (point.held) delete point.why;
  else point.why ??= `held in ${held} of ${runs.length} runs`;
  return point;
}
