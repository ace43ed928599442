/**
 * `jetprof capacity`: how many streams of a source, each paced at F FPS as a camera delivers it, this machine holds:
 * every stream at F FPS with nothing dropped and p99 latency (arrival to boxes) within D ms. It runs infer with
 * `--streams N --realtime` for 1, 2, 4, ... streams until a count fails, then bisects between the last that held and
 * the first that failed, each point long enough to settle and repeated, and stops by itself within its time budget.
 * Each point is its own infer process, as a user would run it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BackendName } from '../backends/types.ts';
import type { RunResult } from '../pipeline/run-result.ts';
import { entryCommand } from '../profilers/run.ts';
import { JetprofError } from '../util/errors.ts';
import { runCommand } from '../util/process.ts';
import { maxOf, minOf } from '../util/stats.ts';
import type { CapacityPoint, CapacityResult } from '../report/capacity-format.ts';

export interface CapacityOptions {
  source: string;
  backend: BackendName;
  sourceFps: number;
  p99Ms: number;
  /** The whole search stops within this many seconds. */
  budgetS: number;
  /** Seconds each point runs (after its warm-up frames). */
  pointS: number;
  /** Runs of each point: it holds only when every run held. */
  repeat: number;
  /** infer's own arguments (model, frame size, ...). */
  inferArgs: string[];
  onStep: (line: string) => void;
  shouldStop?: () => boolean;
  onChild?: (pid: number) => () => void;
}

/**
 * infer's arguments for a count of streams: a `--batch B` given (a TensorRT engine's batch, or 1 for streams that
 * take turns) becomes `--batch min(B, streams)`, since a batch takes one frame from each stream; without one, infer
 * batches every stream (its default).
 */
export function batchAt(inferArgs: readonly string[], streams: number): string[] {
  const fit = (v: string) => (Number.isInteger(Number(v)) ? String(Math.min(Number(v), streams)) : v);
  return inferArgs.map((a, k) =>
    a.startsWith('--batch=') ? `--batch=${fit(a.slice(8))}` : inferArgs[k - 1] === '--batch' ? fit(a) : a,
  );
}

/** Whether a run of `streams` streams held F FPS with nothing dropped and p99 within the limit. Pure. */
export function judgePoint(run: RunResult, streams: number, sourceFps: number, p99Limit: number): CapacityPoint {
  const s = run.streams ?? [];
  const fps = s.map((x) => x.endToEndFps);
  const point: CapacityPoint = {
    streams,
    minStreamFps: fps.length ? minOf(fps) : 0,
    meanStreamFps: fps.length ? fps.reduce((a, b) => a + b, 0) / fps.length : 0,
    p99Ms: s.length ? maxOf(s.map((x) => x.latencyMs.p99)) : Infinity,
    dropped: s.reduce((a, x) => a + x.droppedFrames, 0),
    batch: run.batch ?? 1,
    held: false,
  };
  const why = [
    s.length !== streams ? `${s.length} of ${streams} streams reported` : '',
    point.dropped > 0 ? `${point.dropped} frames dropped` : '',
    point.minStreamFps < sourceFps * 0.95 ? `a stream at ${point.minStreamFps.toFixed(2)} FPS` : '',
    point.p99Ms > p99Limit ? `p99 ${point.p99Ms.toFixed(0)} ms` : '',
  ].filter(Boolean);
  point.held = why.length === 0;
  if (!point.held) point.why = why.join(', ');
  return point;
}

/** The worse of two runs of one point (it holds only when both held). */
function worse(a: CapacityPoint, b: CapacityPoint): CapacityPoint {
  if (a.held !== b.held) return a.held ? b : a;
  return a.minStreamFps <= b.minStreamFps ? a : b;
}

export async function runCapacity(o: CapacityOptions): Promise<CapacityResult> {
  const t0 = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'jetprof-capacity-'));
  const result: CapacityResult = {
    schema: 'jetprof.capacity/1',
    source: o.source,
    sourceFps: o.sourceFps,
    p99LimitMs: o.p99Ms,
    maxStreams: 0,
    points: [],
    seconds: 0,
  };
  const elapsed = () => (Date.now() - t0) / 1000;
  let lastPointS = o.pointS + 5;
  const measure = async (streams: number): Promise<CapacityPoint | undefined> => {
    let point: CapacityPoint | undefined;
    for (let k = 0; k < o.repeat; k++) {
      if (o.shouldStop?.()) return undefined;
      if (elapsed() + lastPointS > o.budgetS) return undefined;
      const json = join(dir, `point-${streams}-${k}.json`);
      const [cmd, ...pre] = entryCommand(o.backend);
      const started = Date.now();
      const warmup = String(Math.max(2, Math.round(o.sourceFps / 2)));
      const args = [
        ...pre,
        o.source,
        ...batchAt(o.inferArgs, streams),
        '--streams',
        String(streams),
        '--realtime',
        '--source-fps',
        String(o.sourceFps),
        '--duration',
        String(o.pointS),
        '--warmup',
        warmup,
        '--no-write',
        '-q',
        '--json',
        json,
      ];
      const r = await runCommand(cmd, args, { onSpawn: o.onChild });
      lastPointS = (Date.now() - started) / 1000;
      if (r.code !== 0) {
        if (o.shouldStop?.()) return undefined;
        throw new JetprofError(
          'TOOL_FAILED',
          `infer with ${streams} stream(s) failed (exit ${r.code}): ${r.output.toString().trim().split('\n').pop()}`,
          {
            suggestion: 'run that infer command by hand to see why: ' + [o.source, ...o.inferArgs].join(' '),
          },
        );
      }
      const p = judgePoint(JSON.parse(readFileSync(json, 'utf8')) as RunResult, streams, o.sourceFps, o.p99Ms);
      point = point ? worse(point, p) : p;
      if (!p.held) break; // one failed run settles it
    }
    if (point) {
      result.points.push(point);
      o.onStep(
        `${point.streams} stream(s), batch ${point.batch ?? 1}: min ${point.minStreamFps.toFixed(2)} FPS, p99 ${point.p99Ms.toFixed(0)} ms, dropped ${point.dropped}: ${point.held ? 'held' : `not held (${point.why})`}`,
      );
    }
    return point;
  };
  try {
    let lastHeld = 0;
    let firstFailed: number | undefined;
    for (let n = 1; n <= 64; n *= 2) {
      const p = await measure(n);
      if (!p) break;
      if (!p.held) {
        firstFailed = n;
        break;
      }
      lastHeld = n;
    }
    // between the last count that held and the first that did not
    while (firstFailed !== undefined && firstFailed - lastHeld > 1) {
      const mid = Math.floor((lastHeld + firstFailed) / 2);
      const p = await measure(mid);
      if (!p) break;
      if (p.held) lastHeld = mid;
      else firstFailed = mid;
    }
    result.maxStreams = lastHeld;
    const settled = firstFailed !== undefined ? firstFailed - lastHeld === 1 : lastHeld === 64;
    if (!settled)
      result.cutShort = o.shouldStop?.()
        ? 'interrupted'
        : `the ${o.budgetS} s budget ran out before the search settled`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  result.seconds = elapsed();
  return result;
}
