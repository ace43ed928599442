/**
 * The frame loop's view of an nvprof log with `--dependency-analysis`: the critical path without what runs outside the
 * loop, what the log gives per frame (TensorRT's enqueue, the GPU's time split by kind, the host's wait), the GPU time
 * inside each TensorRT layer's NVTX range, and the lab's typed-in FPS held against it. nvprof's summary has no
 * timestamps, so the loop cannot be cut out by time: a row is outside it by its name (allocation, context, streams) or
 * because it was called fewer times than there are frames, and what `<Other>` still holds is said, not guessed. Pure.
 */
import type { NvprofProcess, SummaryRow } from '../parsers/nvprof-types.ts';
import { formatDependencyNs, formatNs } from './tables.ts';
import type { ProfileSection, SteadyState } from './report-types.ts';

/** Rows of the critical path that are start-up and tear-down (allocation, context, streams): outside the frame loop. */
export const START_UP_ROW =
  /^(cudaMalloc|cudaFree|cuCtx(Create|Detach|Destroy)|cudaStreamCreate|cudaHostAlloc|cudaMallocHost)/;

/** TensorRT's NVTX range around one inference (one frame at batch 1). */
const ENQUEUE = 'ExecutionContext::enqueue';

/** A dependency row's name as the summary tables print it: without the API version (`cuCtxCreate_v2` -> `cuCtxCreate`). */
const summaryName = (name: string) => name.replace(/_v\d+$/, '');

/** "[CUDA memcpy HtoD]" -> "HtoD", "[CUDA memset]" -> "memset"; any other GPU row is a kernel. */
export const gpuKind = (name: string) =>
  /\[CUDA mem(?:cpy ([^\]]+)|(set))\]/.exec(name)?.slice(1).find(Boolean)?.replace(/^set$/, 'memset') ?? 'kernels';

/** The GPU's time a frame by kind (kernels, HtoD, DtoH, DtoD, memset), largest first. */
function gpuByKind(gpu: SummaryRow[], frames: number): { kind: string; perFrameNs: number }[] {
  const by = new Map<string, number>();
  for (const r of gpu) by.set(gpuKind(r.name), (by.get(gpuKind(r.name)) ?? 0) + r.totalNs);
  return [...by].map(([kind, ns]) => ({ kind, perFrameNs: ns / frames })).sort((a, b) => b.perFrameNs - a.perFrameNs);
}

/** Each NVTX range but the enqueue: the GPU time of the work launched inside it and the host's time in it. */
function layersOf(proc: NvprofProcess): NonNullable<SteadyState['layers']> {
  return proc.nvtx.domains
    .flatMap((d) => d.ranges)
    .filter((rg) => rg.name !== ENQUEUE)
    .map((rg) => {
      const range = rg.rows.find((r) => r.type === 'Range');
      const gpu = rg.rows.filter((r) => r.type === 'GPU activities');
      return {
        name: rg.name,
        gpuNs: gpu.reduce((a, r) => a + r.totalNs, 0),
        hostNs: range?.totalNs ?? 0,
        calls: range?.calls ?? 0,
      };
    })
    .filter((l) => l.calls > 0)
    .sort((a, b) => b.gpuNs - a.gpuNs || a.name.localeCompare(b.name));
}

/** A layer range named for an activation (leaky ReLU is darknet's `_lrelu`), not the copy TensorRT adds beside it. */
const ACTIVATION_LAYER = /(^|_)(lrelu|leaky|relu\d*|mish|swish|silu|sigmoid|logistic)$/i;

/**
 * Activation layers with kernels of their own: a layer range of an activation whose GPU work is a kernel (not a copy)
 * ran separately from its convolution, as `trtexec --dumpProfile` would list it. Undefined when the log has no layer
 * ranges (no NVTX from TensorRT: nothing says either way).
 */
export function separateActivations(proc: NvprofProcess): ProfileSection['activations'] {
  // TensorRT's own NVTX: its enqueue range beside one range per layer (jetprof's stage ranges are not layers)
  const enqueue = proc.nvtx.domains.flatMap((d) => d.ranges).find((r) => r.name === ENQUEUE);
  const ranges = proc.nvtx.domains.flatMap((d) => d.ranges).filter((rg) => rg.name !== ENQUEUE);
  if (!enqueue || ranges.length === 0) return undefined;
  const layers = ranges
    .filter((rg) => ACTIVATION_LAYER.test(rg.name))
    .map((rg) => ({
      name: rg.name,
      kernels: rg.rows.filter((r) => r.type === 'GPU activities' && !/^\[CUDA mem(cpy|set)/.test(r.name)),
    }))
    .filter((l) => l.kernels.length > 0);
  const kernels = layers.flatMap((l) => l.kernels);
  const frames = enqueue?.rows.find((r) => r.type === 'Range')?.calls;
  return {
    kind: layers.length && layers.every((l) => /lrelu|leaky/i.test(l.name)) ? 'leaky ReLU' : 'activation',
    layers: layers.length,
    kernels: [...new Set(kernels.map((k) => k.name))],
    calls: kernels.reduce((a, k) => a + k.calls, 0),
    gpuNs: kernels.reduce((a, k) => a + k.totalNs, 0),
    ...(frames ? { frames } : {}),
  };
}

/**
 * The steady state of one process: the dependency table without start-up and tear-down and without rows called fewer
 * times than there are frames, re-normalised; per frame what the log says. Undefined without a dependency table.
 */
export function steadyState(proc: NvprofProcess, top: number): SteadyState | undefined {
  if (proc.dependency.length === 0) return undefined;
  const enqueue = proc.nvtx.domains
    .flatMap((d) => d.ranges)
    .find((r) => r.name === ENQUEUE)
    ?.rows.find((r) => r.type === 'Range');
  const frames = enqueue?.calls;
  const calls = new Map<string, number>();
  for (const r of proc.summary) if (r.type !== 'Range') calls.set(r.name, (calls.get(r.name) ?? 0) + r.calls);
  const occasional = (name: string) => {
    const n = calls.get(summaryName(name));
    return frames !== undefined && n !== undefined && n < frames;
  };
  const removed = proc.dependency.filter((d) => START_UP_ROW.test(d.name));
  const rare = proc.dependency.filter((d) => !START_UP_ROW.test(d.name) && occasional(d.name));
  const rest = proc.dependency.filter((d) => !START_UP_ROW.test(d.name) && !occasional(d.name));
  const remainingNs = rest.reduce((s, d) => s + d.criticalPathNs, 0);
  const gpu = proc.summary.filter((r) => r.type === 'GPU activities');
  const gpuNs = gpu.length ? gpu.reduce((s, r) => s + r.totalNs, 0) : undefined;
  const sync =
    proc.summary.find((r) => r.type === 'API calls' && /^cuStreamSynchronize$/.test(r.name)) ??
    proc.summary.find((r) => r.type === 'API calls' && /^cudaStreamSynchronize$/.test(r.name));
  const other = rest.find((d) => d.name === '<Other>');
  const layers = layersOf(proc);
  return {
    removed: removed.map((d) => d.name),
    removedNs: removed.reduce((s, d) => s + d.criticalPathNs, 0),
    ...(rare.length
      ? {
          occasional: rare.map((d) => ({ name: d.name, calls: calls.get(summaryName(d.name))! })),
          occasionalNs: rare.reduce((s, d) => s + d.criticalPathNs, 0),
        }
      : {}),
    rows: rest.slice(0, top).map((d) => ({
      name: d.name,
      criticalPathNs: d.criticalPathNs,
      pct: remainingNs > 0 ? (d.criticalPathNs / remainingNs) * 100 : 0,
      waitingNs: d.waitingNs,
    })),
    remainingNs,
    ...(other ? { otherNs: other.criticalPathNs } : {}),
    ...(frames ? { frames } : {}),
    ...(enqueue && frames
      ? { enqueuePerFrameNs: enqueue.totalNs / frames, enqueueMaxNs: enqueue.maxNs, enqueueMinNs: enqueue.minNs }
      : {}),
    ...(gpuNs !== undefined ? { gpuNs } : {}),
    ...(frames && gpuNs !== undefined ? { gpuPerFrameNs: gpuNs / frames, gpuByKind: gpuByKind(gpu, frames) } : {}),
    ...(sync ? { sync: { name: sync.name, avgNs: sync.avgNs, calls: sync.calls } } : {}),
    ...(layers.some((l) => l.gpuNs > 0)
      ? { layers: layers.slice(0, top), layersGpuNs: layers.reduce((a, l) => a + l.gpuNs, 0) }
      : {}),
  };
}

/**
 * The lab's typed-in figures held against the log, per frame, so the parts add up: inference (1000 / inference FPS) =
 * the host's own work + the GPU's time a frame (from the log), the host's wait in the stream synchronisation being part
 * of the GPU's time, not added to it; then the time outside inference (1000 / end-to-end FPS - 1000 / inference FPS);
 * then what `<Other>` is against the frame loop's length. The typed-in FPS and the log come from two runs (one profiled,
 * one not): the sentence says so.
 */
export function reconcile(
  s: SteadyState,
  typed: { modelType: string; inferenceFps: number; endToEndFps: number },
): string | undefined {
  if (s.gpuPerFrameNs === undefined || !s.frames || !(typed.inferenceFps > 0) || !(typed.endToEndFps > 0))
    return undefined;
  const inferenceMs = 1000 / typed.inferenceFps;
  const e2eMs = 1000 / typed.endToEndFps;
  const gpuMs = s.gpuPerFrameNs / 1e6;
  const f1 = (x: number) => x.toFixed(1);
  const waitMs = s.sync ? (s.sync.avgNs * s.sync.calls) / s.frames / 1e6 : undefined;
  const wait =
    waitMs === undefined
      ? ''
      : waitMs <= gpuMs
        ? `; of the GPU's ${f1(gpuMs)} ms the host waits ${f1(waitMs)} ms in ${s.sync!.name} (${s.sync!.calls} calls over ${s.frames} frames), and the GPU's other ${f1(gpuMs - waitMs)} ms run while the host is still launching the frame's work: the wait overlaps the GPU's time, it is not added to it`
        : `; the host waits ${f1(waitMs)} ms a frame in ${s.sync!.name}, longer than the GPU's ${f1(gpuMs)} ms: in the profiled run the host also waited for work the log does not count as GPU activity`;
  const host = inferenceMs - gpuMs;
  const split =
    host >= 0
      ? `= host work ${f1(host)} ms (launching, copying in and out, the script's own work: the difference) + the GPU's ${f1(gpuMs)} ms`
      : `is less than the GPU's ${f1(gpuMs)} ms a frame in the log: the profiled run was slower than the one whose FPS were typed in`;
  // the frame loop of the typed-in run lasted about frames / end-to-end FPS: <Other> against it
  const loopS = s.frames / typed.endToEndFps;
  const other =
    s.otherNs !== undefined
      ? s.otherNs / 1e9 > loopS
        ? ` <Other> (${formatDependencyNs(s.otherNs)}) is longer than the whole frame loop (${s.frames} frames at ${typed.endToEndFps} FPS: ${loopS.toFixed(1)} s), so most of it is host work before the first frame or after the last (imports, reading and deserialising the engine, opening the video), which the log's summary has no timestamps to separate.`
        : ` <Other> (${formatDependencyNs(s.otherNs)}) fits inside the frame loop (${s.frames} frames at ${typed.endToEndFps} FPS: ${loopS.toFixed(1)} s), but the log's summary has no timestamps to say how much of it falls there.`
      : '';
  // the bottom line: how much of each frame the GPU is busy, at the typed-in end-to-end rate
  const busy = gpuMs / e2eMs;
  const verdict = `the GPU is busy ${f1(gpuMs)} ms of each ${f1(e2eMs)} ms frame (${(busy * 100).toFixed(0)}%; 1000 / ${typed.endToEndFps} FPS end to end); ${busy < 0.5 ? 'the rest is host work: this pipeline is host-bound, and a faster engine alone would not make it much faster' : 'the GPU sets the pace: this pipeline is GPU-bound'}. `;
  return `per frame, ${typed.modelType}: ${verdict}Inference ${f1(inferenceMs)} ms (1000 / ${typed.inferenceFps} FPS, typed in) ${split} (the log's GPU activities, ${formatNs(s.gpuNs!)}, over its ${s.frames} ${ENQUEUE} ranges)${wait}; ${f1(e2eMs - inferenceMs)} ms a frame outside inference (1000 / ${typed.endToEndFps} - 1000 / ${typed.inferenceFps}: read, preprocess, postprocess, draw, write).${other} The FPS were typed in from a run without the profiler and the log is another, profiled run, so the split is an estimate.`;
}
