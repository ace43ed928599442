/** Parsed profiles to report sections: the critical path and waiting rows, top kernels and API calls, NVTX and OS runtime, and the notes drawn from them. Pure. */
import type { NsysRow } from '../parsers/nsys.ts';
import type { DependencyRow } from '../parsers/nvprof.ts';
import { notInferenceShare } from '../pipeline/figures.ts';
import { type RunResult } from '../pipeline/run-result.ts';
import { formatNs, formatPct, formatDependencyNs } from './tables.ts';

import type { LabeledProfile, TimedRow, ProfileSection } from './report-types.ts';
import { gpuKind, separateActivations, START_UP_ROW, steadyState } from './steady-state.ts';

function nsysTimed(rows: NsysRow[] | undefined, nameKeys: string[]): TimedRow[] {
  return (rows ?? []).map((r) => ({
    name: String(nameKeys.map((k) => r[k]).find((v) => v !== undefined && v !== null) ?? ''),
    calls: Number(r.instances ?? r.calls ?? r.count ?? 0),
    totalNs: Number(r.totalNs ?? 0),
    ...(typeof r.timePct === 'number' ? { pct: r.timePct } : {}),
  }));
}

const byTotal = (a: TimedRow, b: TimedRow) => b.totalNs - a.totalNs;

/** Notes a reader would otherwise have to work out from the tables. Each is tied to a number in them. */
function profileNotes(p: Omit<ProfileSection, 'notes'>, run?: RunResult): string[] {
  const notes: string[] = [];
  const cp = p.criticalPath;
  const setup = cp.filter((d) => START_UP_ROW.test(d.name) && d.criticalPathPct >= 1);
  for (const d of setup.slice(0, 3)) {
    const name = d.name.replace(/_v\d+$/, '');
    notes.push(
      `${name} is ${formatPct(d.criticalPathPct)} of the critical path (${formatDependencyNs(d.criticalPathNs)}): start-up and tear-down (allocation, context), outside the frame loop; the per-frame cost is in the NVTX ranges and the FPS table.`,
    );
  }
  const other = cp.find((d) => d.name === '<Other>');
  if (other && other.criticalPathPct >= 1) {
    notes.push(
      `<Other> is ${formatPct(other.criticalPathPct)} of the critical path: the host's time outside CUDA calls over the whole process, start-up and tear-down included (the script's imports and set-up as well as decoding, resizing, drawing and encoding in the frame loop).`,
    );
  }
  const waits = [...p.waiting].sort((a, b) => b.waitingNs - a.waitingNs);
  if (waits[0]) {
    notes.push(
      `${waits[0].name} waits ${formatDependencyNs(waits[0].waitingNs)} in all: the host blocks there until the GPU is done; overlapping the next frame's read and preprocess with it hides that time (jetprof's pipelined loop).`,
    );
  }
  // every GPU row of the log, not only the top ones listed: a copy below the cut still counts
  const gpuTotal = p.gpu?.totalNs ?? p.kernels.reduce((s, k) => s + k.totalNs, 0);
  // fusion, from TensorRT's layer ranges where the log has them (a layer with a kernel of its own is not fused); a
  // kernel's name alone (cuDNN's `..._relu_...`) says only what that kernel can do
  const act = p.activations;
  if (act && act.layers > 0) {
    const share = gpuTotal > 0 ? `, ${((act.gpuNs / gpuTotal) * 100).toFixed(1)}% of the GPU time` : '';
    const perFrame = act.frames ? `, ${(act.gpuNs / act.frames / 1e6).toFixed(1)} ms a frame` : '';
    notes.push(
      `activations not fused: ${act.kind} runs as ${act.layers} layers with kernels of their own (${act.kernels.join(', ')}): ${act.calls.toLocaleString('en-US')} calls, ${formatNs(act.gpuNs)}${perFrame}${share}. Each layer range launched its own kernel, as trtexec --dumpProfile would list it; fused, they would cost no separate pass over the feature maps.`,
    );
  } else if (act) {
    notes.push(
      'conv and activation fused in TensorRT: no activation layer range launched a kernel of its own (TensorRT folded them into the convolutions).',
    );
  } else {
    const convLike = p.kernels.filter((k) => /conv|cudnn|winograd|gemm|implicit/i.test(k.name));
    const fused = convLike.filter((k) => /relu|leaky|swish|mish/i.test(k.name));
    const separate = p.kernels.filter((k) => !convLike.includes(k) && /leaky|relu|activation|sigmoid/i.test(k.name));
    if (fused.length > 0 && separate.length === 0)
      notes.push(
        `activation kernels: none among the top kernels, and ${fused.length} of the top convolution kernels are built with one (e.g. ${fused[0].name}); without TensorRT's layer ranges (NVTX) the log does not say whether each layer's activation was fused.`,
      );
  }
  const copies =
    p.gpu?.copies ??
    p.kernels
      .filter((k) => /\[CUDA mem(cpy|set)/.test(k.name))
      .map((k) => ({ kind: gpuKind(k.name), totalNs: k.totalNs }));
  if (copies.length && gpuTotal > 0) {
    const c = copies.reduce((s, k) => s + k.totalNs, 0);
    notes.push(
      `memory copies and sets are ${((c / gpuTotal) * 100).toFixed(1)}% of the GPU time (${formatNs(c)} of ${formatNs(gpuTotal)}: ${copies.map((k) => `${k.kind} ${formatNs(k.totalNs)}`).join(', ')}).`,
    );
  }
  if (p.tool === 'nsys' && p.kernels.length === 0 && p.apiCalls.length === 0) {
    notes.push(
      'no CUDA activity in this profile (ONNX Runtime on the CPU, or no GPU): the NVTX and OS runtime tables carry the timing.',
    );
  }
  const frame = p.nvtx.find((r) => r.name === 'frame');
  const inference = p.nvtx.find((r) => r.name === 'inference');
  const runNote = run
    ? ` The run's figure: the model was not running ${(notInferenceShare(run.stages.inference.totalMs, run.wallMs) * 100).toFixed(1)}% of the wall time.`
    : '';
  if (frame && inference && frame.totalNs > 0 && frame.calls > 0) {
    if ((run?.batch ?? 1) > 1) {
      notes.push(
        `frame ranges overlap in batches (a frame's range spans its read to its write, and the frames of a batch are read one after the other, inferred together, then written): ${inference.calls} inference ranges are ${inference.calls} runs of the model over batches of up to ${run!.batch} frames, so shares of the summed frame ranges mean nothing here; the run's stage table gives each frame its share of its batch.${runNote}`,
      );
    } else if (run?.setup.loop === 'pipelined') {
      notes.push(
        `frame ranges overlap in the pipelined loop (a frame's range spans its read to its write while the next frames are read): the mean frame range is ${formatNs(Math.round(frame.totalNs / frame.calls))} against ${formatNs(Math.round((run.wallMs / Math.max(1, run.frames)) * 1e6))} of wall time per frame, so shares of the summed frame ranges mean nothing here.${runNote}`,
      );
    } else {
      notes.push(
        `inference is ${((inference.totalNs / frame.totalNs) * 100).toFixed(1)}% of the time inside frame ranges (${formatNs(inference.totalNs)} of ${formatNs(frame.totalNs)}); the rest is read, preprocess, postprocess, write and the wait for the encoder.${p.tool === 'nsys' ? " (The table's Time (%) divides each range by all ranges together, the frame ranges that contain the stages included, so its shares are about half of these.)" : ''}${runNote}`,
      );
    }
  }
  const osrt = p.osRuntime.reduce((s, r) => s + r.totalNs, 0);
  if (osrt > 0) {
    const top = [...p.osRuntime].sort(byTotal)[0];
    const wall = run ? ` against ${formatNs(Math.round(run.wallMs * 1e6))} of measured wall time` : '';
    notes.push(
      `OS runtime times are summed over every thread: ${top.name} ${formatNs(top.totalNs)}${wall} is many threads waiting at once (ONNX Runtime's, OpenCV's and the encoder's worker pools sleep between frames), not time the frame loop lost.`,
    );
  }
  if (frame && run && frame.calls !== run.frames) {
    notes.push(
      `the profile has ${frame.calls} frame ranges where the run measured ${run.frames} frames (runs before this version counted warm-up frames as frame ranges).`,
    );
  }
  return notes;
}

/** The lab's picks from a dependency table: the top `top` rows, then every other row that waits. */
export function pickCriticalPath(
  dependency: DependencyRow[],
  top: number,
): { criticalPath: DependencyRow[]; waiting: DependencyRow[] } {
  return { criticalPath: dependency.slice(0, top), waiting: dependency.slice(top).filter((d) => d.waitingNs > 0) };
}

/** Every GPU activities row: the total, and the memory copies and sets by kind. */
function gpuOf(summary: { type: string; name: string; totalNs: number }[]): ProfileSection['gpu'] {
  const rows = summary.filter((r) => r.type === 'GPU activities');
  if (!rows.length) return undefined;
  return {
    totalNs: rows.reduce((s, r) => s + r.totalNs, 0),
    copies: rows
      .filter((r) => /\[CUDA mem(cpy|set)/.test(r.name))
      .map((r) => ({ kind: gpuKind(r.name), totalNs: r.totalNs })),
  };
}

export function profileSection(p: LabeledProfile, top: number): ProfileSection[] {
  const out: Omit<ProfileSection, 'notes'>[] = [];
  if (p.nvprof) {
    const procs = p.nvprof.processes.filter((x) => x.summary.length || x.dependency.length || x.nvtx.domains.length);
    for (const proc of procs) {
      const label = procs.length > 1 ? `${p.label} (process ${proc.pid ?? '?'})` : p.label;
      const timed = (type: string) =>
        proc.summary
          .filter((r) => r.type === type)
          .map((r) => ({ name: r.name, calls: r.calls, totalNs: r.totalNs, pct: r.timePct }))
          .sort(byTotal)
          .slice(0, top);
      const nvtx = proc.nvtx.domains.flatMap((d) =>
        d.ranges.flatMap((rg) =>
          rg.rows
            .filter((r) => r.type === 'Range')
            .map((r) => ({
              name: d.name && d.name !== '<unnamed>' ? `${d.name}: ${rg.name}` : rg.name,
              calls: r.calls,
              totalNs: r.totalNs,
            })),
        ),
      );
      out.push({
        label,
        tool: 'nvprof',
        ...pickCriticalPath(proc.dependency, top),
        kernels: timed('GPU activities'),
        apiCalls: timed('API calls'),
        nvtx: nvtx.sort(byTotal).slice(0, top),
        osRuntime: [],
        ...(proc.dependency.length ? { steadyState: steadyState(proc, top) } : {}),
        activations: separateActivations(proc),
        gpu: gpuOf(proc.summary),
      });
    }
  }
  if (p.nsys) {
    const r = p.nsys.reports;
    out.push({
      label: p.label,
      tool: 'nsys',
      criticalPath: [],
      waiting: [],
      kernels: nsysTimed(r.cuda_gpu_kern_sum?.rows, ['name'])
        .concat(nsysTimed(r.cuda_gpu_mem_time_sum?.rows, ['operation', 'name']))
        .sort(byTotal)
        .slice(0, top),
      apiCalls: nsysTimed(r.cuda_api_sum?.rows, ['name']).sort(byTotal).slice(0, top),
      nvtx: nsysTimed(r.nvtx_sum?.rows, ['range', 'name'])
        .map((x) => ({ ...x, name: x.name.replace(/^:/, '') }))
        .sort(byTotal)
        .slice(0, top),
      osRuntime: nsysTimed(r.osrt_sum?.rows, ['name']).sort(byTotal).slice(0, top),
    });
  }
  const own = p.notes ?? [];
  // a profile whose tool collected nothing still says so in the report (its notes), under its own heading
  if (out.length === 0 && own.length)
    out.push({
      label: p.label,
      tool: p.tool ?? (p.nsys ? 'nsys' : 'nvprof'),
      criticalPath: [],
      waiting: [],
      kernels: [],
      apiCalls: [],
      nvtx: [],
      osRuntime: [],
    });
  return out.map((s) => ({ ...s, notes: [...own, ...profileNotes(s, p.run)] }));
}
