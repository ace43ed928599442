/**
 * Sweeps: report rows that differ only in how many streams, at which batch and --interval (the same machine, model,
 * videos, decoder, frame size, loop, profiler, pacing, output and backend). A sweep is the question an engineer asks
 * of them ("what does batch 4 buy over batch 1?"), so they get one table instead of a refusal per pair. Pure.
 */
import type { RunResult } from '../pipeline/run-result.ts';
import { meanOf } from '../util/stats.ts';
import type { ComparisonBasis, FpsRow, Sweep, SweepFigures } from './report-types.ts';

export function sweepFigures(runs: RunResult[]): SweepFigures {
  const minFps = (r: RunResult) =>
    r.streams?.length ? Math.min(...r.streams.map((s) => s.endToEndFps)) : r.endToEndFps;
  const p99 = (r: RunResult) =>
    r.streams?.length ? Math.max(...r.streams.map((s) => s.latencyMs?.p99 ?? NaN)) : (r.latencyMs?.p99 ?? NaN);
  const p99s = runs.map(p99);
  const cpu = runs.map((r) => (r.machineLoad ? r.machineLoad.cpuMs / Math.max(1, r.frames + r.warmupFrames) : NaN));
  return {
    aggregateFps: meanOf(runs.map((r) => r.aggregateFps ?? r.endToEndFps)),
    minStreamFps: Math.min(...runs.map(minFps)),
    ...(p99s.every(Number.isFinite) ? { worstP99Ms: Math.max(...p99s) } : {}),
    ...(cpu.every(Number.isFinite) ? { cpuMsPerFrame: meanOf(cpu) } : {}),
  };
}

/** The basis without what a sweep varies: stream count, batch and interval (and the count of each video). */
function sweepKey(x: FpsRow): string {
  const b = x.basis!;
  const rest: Omit<ComparisonBasis, 'streams'> = { ...b };
  delete (rest as Partial<ComparisonBasis>).streams;
  return JSON.stringify([x.backendDetail, x.setup.device, { ...rest, video: b.video.replace(/\b\d+x /g, '') }]);
}

/** Rows measured alike but for streams, batch and interval, two or more to a sweep, in first-seen order. */
export function sweeps(rows: FpsRow[]): Sweep[] {
  const groups = new Map<string, FpsRow[]>();
  for (const x of rows) {
    if (x.typedIn || !x.basis || !x.streamSetup || !x.sweep) continue;
    const key = sweepKey(x);
    groups.set(key, [...(groups.get(key) ?? []), x]);
  }
  return (
    [...groups.values()]
      // two or more setups of streams, batch and interval (rows that differ only in their label are compared as usual)
      .filter((g) => new Set(g.map((x) => JSON.stringify(x.streamSetup))).size > 1)
      .map((g) => {
        const sorted = [...g].sort(
          (a, b) =>
            a.streamSetup!.streams - b.streamSetup!.streams ||
            a.streamSetup!.batch - b.streamSetup!.batch ||
            a.streamSetup!.interval - b.streamSetup!.interval,
        );
        const b = sorted[0].basis!;
        const video = b.video.replace(/\b\d+x /g, '');
        return {
          // the model type without its row label: "ONNX Runtime (CPU, FP32)"
          setup: `${sorted[0].modelType.replace(/ \[[^\]]*\]$/, '')}, ${video} at ${b.frameSize}, ${b.loop}, ${b.pacing}, ${b.output}`,
          rows: sorted.map((x) => x.modelType),
        };
      })
  );
}

/** Whether two rows sit in one sweep: their pair is the sweep's table, not a "not compared" line. */
export function inOneSweep(all: Sweep[], a: string, b: string): boolean {
  return all.some((s) => s.rows.includes(a) && s.rows.includes(b));
}
