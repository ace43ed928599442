/**
 * The lines about one run that infer's console summary and the reports share: the lab table's words and row, the
 * model type, latency, --interval, the per-stream table and its verdict, notes on caps and on stretched videos.
 */
import { type Align, right } from './blocks.ts';
import { BACKENDS } from '../backends/types.ts';
import type { StreamRecord } from '../pipeline/frame-tail.ts';
import type { RunResult, RunSetup } from '../pipeline/run-result.ts';
import { sumOf } from '../util/stats.ts';

/** "latency, read to boxes: p50 41.20, p90 44.02, p99 51.93 ms a frame" for a run of one free-running stream. */
export function latencyLine(r: Pick<RunResult, 'latencyMs' | 'frames'>): string | undefined {
  const l = r.latencyMs;
  if (!l) return undefined;
  return `Latency, a frame's read to its boxes: p50 ${l.p50.toFixed(2)}, p90 ${l.p90.toFixed(2)}, p99 ${l.p99.toFixed(2)} ms (${r.frames} frames).`;
}

/** The lab's table, as the lab's handout names its columns: the one owner of these words (console and reports). */
export const LAB_HEADERS = ['Model Type', 'Model Input Size', 'Inference Speed (FPS)', 'End-to-end speed (FPS)'];

/** The lab table's "Model Input Size" cell, as the lab writes it: the frame size as (W,H,3). */
export const labInputSize = (size: readonly [number, number]) => `(${size[0]},${size[1]},3)`;

/**
 * The lab table's "Model Type" of a run, the same on the console and in reports: `ONNX Runtime (CPU, FP32)`,
 * `TensorRT (FP16)` (TensorRT always runs on the GPU, so no provider), `OpenCV DNN (CUDA, FP16)`.
 */
export function modelTypeName(r: Pick<RunResult, 'backend' | 'setup'>): string {
  const s = r.setup;
  const where = r.backend === 'tensorrt' ? '' : `${s.executionProvider.toUpperCase()}, `;
  return `${BACKENDS[r.backend].title} (${where}${s.precision === 'unknown' ? 'precision unknown' : s.precision.toUpperCase()})`;
}

/** A run's row of the lab table, its cells as LAB_HEADERS names them. */
export function labTableRow(r: RunResult): string[] {
  return [modelTypeName(r), labInputSize(r.frameSize), r.inferenceFps.toFixed(2), r.endToEndFps.toFixed(2)];
}

/**
 * --interval K: on which frames the model ran, what inference FPS counts, and the latency of inferred and tracked
 * frames apart (the same sentence on the console and in the reports).
 */
export function intervalLine(
  r: Pick<RunResult, 'interval' | 'intervalFrames' | 'frames'> & { setup?: Pick<RunSetup, 'realtime'> },
): string | undefined {
  const f = r.intervalFrames;
  if (!r.interval || !f) return undefined;
  const l = (x: { p50: number; p90: number; p99: number }) => `p50 ${fixed(x.p50, 1)}, p99 ${fixed(x.p99, 1)} ms`;
  // under --realtime the count runs over the frames a source delivered, dropped ones included (stream-reads.ts): the
  // model runs on a delivered frame whose number is a multiple of K+1 when that frame was kept, so the share of kept
  // frames it ran on follows the drops
  const which = r.setup?.realtime
    ? `every ${ordinal(r.interval + 1)} frame each source delivered, when that frame was not dropped: dropped frames count, so the share of processed frames the model ran on follows the drops`
    : `every ${ordinal(r.interval + 1)} frame of each stream`;
  return `--interval ${r.interval}: the model ran on ${f.inferred} of the ${r.frames} measured frames (${which}); the tracker carried the boxes on the other ${f.tracked}. Inference FPS is the model's rate over the ${f.inferred} frames it ran on; end-to-end FPS is over all ${r.frames}, so it can be the higher of the two. Latency, read to boxes: inferred frames ${l(f.latencyMs.inferred)}; tracked frames ${l(f.latencyMs.tracked)}.`;
}

const ordinal = (n: number) =>
  `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;

/** A figure that may be missing (a stream that processed no frame has no latency; JSON keeps NaN as null). */
const fixed = (v: number | null | undefined, digits: number) =>
  typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '-';

/** The per-stream table, the same on the console and in the reports. */
const STREAM_HEADERS = [
  'Stream',
  'Source',
  'Frames processed',
  'Delivered FPS',
  'Processed FPS',
  'Dropped',
  'Latency p50 / p90 / p99 (ms)',
  'Ended early',
];

/** Columns that only a paced run (--realtime) has: a free run reads as fast as it processes, so nothing is dropped. */
const PACED_ONLY = new Set(['Delivered FPS', 'Dropped']);

/** The per-stream table's headers: delivered rate and drops for a paced run only. */
export function streamHeaders(paced: boolean): string[] {
  return STREAM_HEADERS.filter((h) => paced || !PACED_ONLY.has(h));
}

/** The per-stream table's alignment: the source and the last column (why a stream ended early) on the left. */
export function streamAlign(paced: boolean): Align[] {
  const n = streamHeaders(paced).length;
  return right(n, [1, n - 1]);
}

/**
 * Delivered FPS: the frames its source gave over the stream's wall time (processed and dropped); processed FPS: the
 * frames that went through the pipeline over the same time; dropped: count and share of what was delivered.
 */
export function streamTableRows(streams: readonly StreamRecord[], paced: boolean): string[][] {
  const keep = STREAM_HEADERS.map((h) => paced || !PACED_ONLY.has(h));
  return streams.map((s) => {
    const delivered = s.frames + (s.droppedFrames ?? 0);
    const deliveredFps = s.frames > 0 ? (s.endToEndFps * delivered) / s.frames : NaN;
    const l = s.latencyMs ?? {};
    return [
      String(s.index),
      s.source,
      String(s.frames),
      fixed(deliveredFps, 2),
      fixed(s.endToEndFps, 2),
      delivered > 0 ? `${s.droppedFrames ?? 0} (${(((s.droppedFrames ?? 0) / delivered) * 100).toFixed(0)}%)` : '0',
      [l.p50, l.p90, l.p99].map((v) => fixed(v, 1)).join(' / '),
      s.endedEarly ? `after ${s.endedEarly.framesRead} frames: ${s.endedEarly.reason}` : '',
    ].filter((_, i) => keep[i]);
  });
}

/**
 * One line above the per-stream table: for a --realtime run whether the machine kept up with what the sources
 * delivered, and how much it dropped; for a free-running run that it was one (nothing paced, so nothing dropped).
 */
export function droppedVerdict(
  streams: readonly StreamRecord[],
  realtime: RunSetup['realtime'] | undefined,
): string | undefined {
  if (!realtime)
    return 'Free-running: each source was read as fast as the loop took its frames, so none could be dropped (--realtime paces them as cameras deliver).';
  const rate = realtime.sourceFps !== undefined ? `${realtime.sourceFps} FPS` : "each source's own rate";
  const dropped = sumOf(streams.map((s) => s.droppedFrames ?? 0));
  const delivered = sumOf(streams.map((s) => s.frames + (s.droppedFrames ?? 0)));
  if (dropped === 0)
    return `Kept up: every frame the ${streams.length === 1 ? 'source' : `${streams.length} sources`} delivered at ${rate} was processed, none dropped (the time spent waiting for frames is headroom, not a cost).`;
  const worst = streams.reduce((a, s) => ((s.droppedFrames ?? 0) > (a.droppedFrames ?? 0) ? s : a));
  const same = streams.every((s) => (s.droppedFrames ?? 0) === (worst.droppedFrames ?? 0));
  // one stream, or streams that all dropped as many: no stream "dropped the most"
  const most =
    streams.length === 1
      ? ''
      : same
        ? `; every stream dropped ${worst.droppedFrames} of ${worst.frames + (worst.droppedFrames ?? 0)}`
        : `; stream ${worst.index} dropped the most (${worst.droppedFrames} of ${worst.frames + (worst.droppedFrames ?? 0)})`;
  return `Did not keep up: ${dropped} of the ${delivered} frames delivered at ${rate} were dropped (${((dropped / delivered) * 100).toFixed(0)}%), as a camera's frames are when the pipeline is busy${most}.`;
}

/** The caps that bound, in one line each (the console says it once per run). */
/** A note per paced stream whose video was written with frames dropped: stretched to the camera's time, or why not. */
export function realTimeNotes(r: Pick<RunResult, 'streams'>): string[] {
  return (r.streams ?? []).flatMap((s) => {
    const t = s.output?.realTime;
    if (!t) return [];
    const of = `stream ${s.index} dropped ${s.droppedFrames} of the frames its camera delivered`;
    // scale: the camera's time over the video's at its written frame rate (above 1 the unstretched video is shorter)
    const pace = t.scale >= 1 ? `${t.scale.toFixed(2)}x faster than` : `${(1 / t.scale).toFixed(2)}x slower than`;
    return [
      t.stretched
        ? `${of}: its video (${s.output!.path}) is stretched ${t.scale.toFixed(2)}x (the camera's time over the video's at its frame rate) to the camera's time, each written frame standing for the frames dropped after it`
        : `${of}: its video (${s.output!.path}) plays ${pace} the camera ran (the camera's time over the video's at its frame rate; not stretched: ${t.why})`,
    ];
  });
}

export function capNotes(r: RunResult): string[] {
  const pp = r.postprocess;
  const notes: string[] = [];
  if (!pp) return notes;
  if (pp.framesCandidatesCapped > 0) {
    notes.push(
      `${pp.framesCandidatesCapped} of ${r.frames} frames had more than --max-candidates ${pp.maxCandidates} candidates (up to ${pp.maxCandidatesSeen}): only the top ${pp.maxCandidates} by score entered NMS`,
    );
  }
  if (pp.framesDetectionsCapped > 0) {
    notes.push(
      `${pp.framesDetectionsCapped} of ${r.frames} frames kept more than --max-det ${pp.maxDet} boxes after NMS: the lowest-scoring ones were dropped`,
    );
  }
  return notes;
}
