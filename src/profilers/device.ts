/** Which profiler fits this machine: nvprof works up to compute capability 7.x (JetPack 4); nsys everywhere. */
import { spawnSync } from 'node:child_process';
import { jetsonComputeCapability } from '../platform/board.ts';
import { jetsonInfo } from '../platform/env.ts';
import type { ProfilerTool } from './tools.ts';

/** Compute capability of GPU 0, from the Jetson board name or nvidia-smi; undefined when unknown (no GPU). */
export function detectComputeCapability(): number | undefined {
  const jetson = jetsonComputeCapability(jetsonInfo()?.model);
  if (jetson !== undefined) return jetson;
  const r = spawnSync('nvidia-smi', ['--query-gpu=compute_cap', '--format=csv,noheader'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  const cc = r.status === 0 ? Number(r.stdout.trim().split('\n')[0]) : NaN;
  return Number.isFinite(cc) && cc > 0 ? cc : undefined;
}

/**
 * Why nvprof could collect nothing on this machine, or undefined when it has a GPU nvprof can use: a Jetson of
 * compute capability up to 7.x, or a desktop GPU that nvidia-smi lists. Said before a job runs its backends.
 */
export function nvprofGpuProblem(): string | undefined {
  const cc = detectComputeCapability();
  if (cc !== undefined && cc >= 8)
    return `nvprof does not support this GPU (compute capability ${cc}; nvprof stops at 7.x, Orin is 8.7)`;
  if (cc !== undefined) return undefined;
  return 'no NVIDIA GPU or driver here (not a Jetson, and nvidia-smi lists no GPU), so nvprof would collect nothing';
}

/** nvprof on JetPack 4.x (L4T R32: Nano, TX2, Xavier), nsys elsewhere. */
export function defaultProfiler(l4t: string | undefined): ProfilerTool {
  return l4t && /^32\./.test(l4t) ? 'nvprof' : 'nsys';
}
