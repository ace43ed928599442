/**
 * Which report rows may be compared, and what the comparison says: the one setup record both the row grouping and
 * the comparability rule read (machine, model, videos and decoder, frame size, loop, profiler, streams, pacing, output,
 * and what ran the model), why two rows may not be compared, the speed-ups between those that may (and whose boxes
 * agree), and what --interval buys and costs against the same setup at interval 0. Pure.
 */
import { type RunResult, videoNames } from '../pipeline/run-result.ts';
import { inOneSweep } from './sweep.ts';

import type {
  FpsRow,
  ComparisonBasis,
  NotCompared,
  PairAgreement,
  Speedup,
  IntervalTrade,
  Sweep,
} from './report-types.ts';

/** What decoded a run's frames, in words: every stream's decoder where streams were recorded. */
export function decodedBy(r: RunResult): string {
  const decoders = [...new Set((r.streams?.length ? r.streams : [r.video]).map((s) => s.decoder))];
  if (decoders.some((d) => d === undefined)) return 'decoder not recorded';
  return `decoded by ${decoders.join(' and ')}`;
}

export function comparisonBasis(r: RunResult): ComparisonBasis {
  const e = r.env;
  const machine = e.host
    ? `host ${e.host}`
    : [e.jetson?.model, e.cpu, e.gpu && e.gpu !== e.jetson?.model ? e.gpu : undefined].filter(Boolean).join(', ');
  const onnx = r.model.onnxSha256 ?? (r.backend === 'tensorrt' ? undefined : r.model.sha256);
  return {
    machine,
    model: onnx
      ? `model ${onnx.slice(0, 12)}`
      : `engine ${r.model.sha256.slice(0, 12)} (built from an unrecorded ONNX)`,
    video: videoNames(r),
    decoder: decodedBy(r),
    frameSize: `${r.frameSize[0]}x${r.frameSize[1]}`,
    loop: r.setup.loop === 'pipelined' ? `pipelined loop, ${r.setup.inFlight ?? '?'} in flight` : 'sequential loop',
    profiler: r.setup.profiler === 'none' ? 'no profiler' : `under ${r.setup.profiler}`,
    streams:
      r.streams?.length || r.interval || (r.batch ?? 1) !== 1
        ? `${r.streams?.length ?? 1} stream${(r.streams?.length ?? 1) === 1 ? '' : 's'}, batch ${r.batch ?? 1}, interval ${r.interval ?? 0}`
        : 'one stream',
    pacing: r.setup.realtime
      ? `realtime at ${r.setup.realtime.sourceFps !== undefined ? `${r.setup.realtime.sourceFps} FPS` : "the source's rate"}${r.setup.realtime.staggered ? ', arrivals staggered' : ''}`
      : 'free-running',
    output:
      (r.setup.write ?? !!r.output)
        ? `${r.setup.draw === false ? 'writing undrawn frames' : 'writing the drawn video'}${r.output?.encoder ? ` (${r.output.encoder})` : ''}`
        : 'not writing',
  };
}

/**
 * Every setting that changes a run's figures, as words: the comparison basis (machine, model, video and its decoder, frame size,
 * loop, profiler, streams/batch/interval, pacing, output) and what ran the model (backend, precision, provider,
 * device). Runs share a report row only when all are equal; rows are compared only when the basis is.
 */
export function setupRecord(r: RunResult): [string, string][] {
  const s = r.setup;
  return [
    ['backend', `${r.backend} ${s.precision} ${s.executionProvider}`],
    ['device', s.device],
    ...(Object.entries(comparisonBasis(r)) as [string, string][]),
  ];
}

const BASIS_WORDS: [keyof ComparisonBasis, string][] = [
  ['machine', 'different machine'],
  ['model', 'different model'],
  ['video', 'different video'],
  ['decoder', 'different decoder'],
  ['frameSize', 'different frame size'],
  ['loop', 'different loop'],
  ['profiler', 'different profiler'],
  ['streams', 'different streams'],
  ['pacing', 'different pacing'],
  ['output', 'different output'],
];

/**
 * Why rows `a` and `b` may not be compared, or undefined when they may: both measured by jetprof on the same
 * machine, model, video and frame size, loop and profiler, and where both kept boxes, the boxes agree (matched share
 * at least `minMatch`). Typed-in rows compare only with each other (the user typed them from one board).
 */
function whyNotComparable(
  a: FpsRow,
  b: FpsRow,
  agreement: PairAgreement | undefined,
  minMatch: number,
): string | undefined {
  if (a.typedIn && b.typedIn) return undefined;
  if (a.typedIn || b.typedIn) {
    const [typed, measured] = a.typedIn ? [a, b] : [b, a];
    return `${typed.modelType} was typed in (device and loop unknown), ${measured.modelType} was measured by jetprof`;
  }
  const diffs = BASIS_WORDS.filter(([k]) => a.basis![k] !== b.basis![k]).map(
    ([k, words]) => `${words} (${a.basis![k]} / ${b.basis![k]})`,
  );
  if (diffs.length) return diffs.join('; ');
  if (a.keptBoxes && b.keptBoxes) {
    if (!agreement || agreement.matchedShare === undefined)
      return `boxes not checked (${agreement?.note ?? 'no agreement computed'})`;
    if (!agreement.boxes)
      return 'boxes not checked: neither found a box (random weights or a high --conf?), so nothing says they compute the same thing';
    if (agreement.matchedShare < minMatch)
      return `boxes disagree, ${(agreement.matchedShare * 100).toFixed(agreement.matchedShare > 0.99 ? 2 : 0)}% matched (at least ${(minMatch * 100).toFixed(0)}% needed)`;
  }
  return undefined;
}

const pairKey = (a: string, b: string) => (a < b ? `${a}\n${b}` : `${b}\n${a}`);

/**
 * Every faster row against every slower one (by inference FPS) that may be compared; every other pair goes to
 * `notCompared` with its reason, except pairs of one sweep (their table is the comparison).
 */
export function speedups(
  rows: FpsRow[],
  agreements: PairAgreement[] = [],
  minMatch = DEFAULT_MIN_MATCH,
  sweepsOf: Sweep[] = [],
): { speedups: Speedup[]; notCompared: NotCompared[] } {
  const byPair = new Map(agreements.map((x) => [pairKey(x.a, x.b), x]));
  const out: Speedup[] = [];
  const notCompared: NotCompared[] = [];
  rows.forEach((x, i) => {
    for (const y of rows.slice(i + 1)) {
      const reason = whyNotComparable(x, y, byPair.get(pairKey(x.label, y.label)), minMatch);
      if (reason) {
        // rows that differ only in streams, batch or interval are read side by side in their sweep table
        if (!inOneSweep(sweepsOf, x.modelType, y.modelType))
          notCompared.push({ a: x.modelType, b: y.modelType, reason });
        continue;
      }
      const [a, b] = x.inferenceFps.mean >= y.inferenceFps.mean ? [x, y] : [y, x];
      if (b.inferenceFps.mean <= 0 || b.endToEndFps.mean <= 0) continue;
      out.push({
        faster: a.modelType,
        baseline: b.modelType,
        inference: a.inferenceFps.mean / b.inferenceFps.mean,
        endToEnd: a.endToEndFps.mean / b.endToEndFps.mean,
      });
    }
  });
  return { speedups: out, notCompared };
}

/**
 * What --interval K buys and costs: each row run at interval K > 0 against a row that is the same in everything
 * (machine, model, video, frame size, loop, profiler, streams and batch) but ran the model on every frame. The FPS
 * ratio is end to end (the interval skips inference, so that is where it shows); the cost is how many of the
 * interval-0 row's boxes it still finds on the same frames (its carried boxes included).
 */
export function intervalTrades(rows: FpsRow[], agreements: PairAgreement[] = []): IntervalTrade[] {
  const byPair = new Map(agreements.map((x) => [pairKey(x.a, x.b), x]));
  const out: IntervalTrade[] = [];
  for (const x of rows) {
    if (!x.basis || !x.streamSetup || x.streamSetup.interval === 0) continue;
    for (const base of rows) {
      if (!base.basis || !base.streamSetup || base.streamSetup.interval !== 0) continue;
      const same =
        BASIS_WORDS.every(([k]) => k === 'streams' || x.basis![k] === base.basis![k]) &&
        x.streamSetup.streams === base.streamSetup.streams &&
        x.streamSetup.batch === base.streamSetup.batch;
      if (!same || base.endToEndFps.mean <= 0) continue;
      const a = byPair.get(pairKey(x.label, base.label));
      out.push({
        withInterval: x.modelType,
        base: base.modelType,
        interval: x.streamSetup.interval,
        endToEndFps: [x.endToEndFps.mean, base.endToEndFps.mean],
        ratio: x.endToEndFps.mean / base.endToEndFps.mean,
        ...(a?.matchedShare !== undefined && a.boxes
          ? { matchedShare: a.matchedShare }
          : {
              note:
                x.keptBoxes && base.keptBoxes
                  ? (a?.note ?? 'neither found a box')
                  : 'run both with --detections on the same frames to see what it costs',
            }),
      });
    }
  }
  return out;
}

/** The matched share two rows' boxes need before their speeds are compared (`report --min-match`). */
export const DEFAULT_MIN_MATCH = 0.99;
