/** The run JSON (schema jetprof.run/1) and the lab's table row, built from recorded stage times. Pure. */
import type { BackendName } from '../backends/types.ts';
import type { EnvInfo } from '../util/env.ts';
import { type StageStats, summarize } from '../util/stats.ts';
import { STAGES, type Stage, type StageRecorder } from './stages.ts';

export type StageSummary = Pick<StageStats, 'meanMs' | 'p50Ms' | 'p90Ms' | 'p99Ms' | 'totalMs' | 'covPct'>;

export interface RunResult {
  schema: 'jetprof.run/1';
  backend: BackendName;
  backendDetail: string;
  model: { path: string; inputWidth: number; inputHeight: number; classes: number; sha256: string; generatedWeights?: boolean };
  video: { path: string; width: number; height: number; fps: number; frameCount: number };
  output?: { path: string; codec: string };
  frameSize: [number, number];
  letterbox: boolean;
  /** Frames measured (warm-up excluded). */
  frames: number;
  warmupFrames: number;
  /** frames / sum of inference time. */
  inferenceFps: number;
  /** frames / wall time from the first measured read to the last measured write. */
  endToEndFps: number;
  wallMs: number;
  modelLoadMs: number;
  firstFrameMs: number;
  stages: Record<Stage, StageSummary>;
  device?: { h2dMs: StageSummary; gpuComputeMs: StageSummary; d2hMs: StageSummary };
  detections: { total: number; perClass: Record<string, number> };
  nvtx: boolean;
  env: EnvInfo;
  startedAt: string;
  interrupted?: boolean;
  /** Which frame loop ran: the pipelined one (stages overlap) or the sequential one (--pipeline off). */
  pipeline?: { mode: 'on' | 'off'; inFlight?: number };
}

function stageSummary(values: number[]): StageSummary {
  const s = summarize(values);
  return { meanMs: s.meanMs, p50Ms: s.p50Ms, p90Ms: s.p90Ms, p99Ms: s.p99Ms, totalMs: s.totalMs, covPct: s.covPct };
}

export interface RunFacts {
  backend: BackendName;
  backendDetail: string;
  model: RunResult['model'];
  video: RunResult['video'];
  output?: RunResult['output'];
  frameSize: [number, number];
  letterbox: boolean;
  warmupFrames: number;
  wallMs: number;
  modelLoadMs: number;
  firstFrameMs: number;
  detections: RunResult['detections'];
  nvtx: boolean;
  env: EnvInfo;
  startedAt: string;
  interrupted: boolean;
  pipeline?: RunResult['pipeline'];
}

export function buildRunResult(rec: StageRecorder, facts: RunFacts): RunResult {
  const stages = Object.fromEntries(STAGES.map((s) => [s, stageSummary(rec.samples[s])])) as Record<Stage, StageSummary>;
  const frames = rec.frames;
  const inferenceMs = stages.inference.totalMs;
  const { interrupted, ...rest } = facts;
  const result: RunResult = {
    schema: 'jetprof.run/1',
    ...rest,
    frames,
    inferenceFps: frames > 0 && inferenceMs > 0 ? frames / (inferenceMs / 1000) : 0,
    endToEndFps: frames > 0 && facts.wallMs > 0 ? frames / (facts.wallMs / 1000) : 0,
    stages,
  };
  if (rec.device.gpuComputeMs.length > 0) {
    result.device = {
      h2dMs: stageSummary(rec.device.h2dMs),
      gpuComputeMs: stageSummary(rec.device.gpuComputeMs),
      d2hMs: stageSummary(rec.device.d2hMs),
    };
  }
  if (interrupted) result.interrupted = true;
  return result;
}

export const MODEL_TYPE_NAMES: Record<BackendName, string> = { onnx: 'ONNX Runtime', tensorrt: 'TensorRT' };

/** The lab's table header and one row: Model Type | Model Input Size | Inference Speed (FPS) | End-to-end speed (FPS). */
export const LAB_TABLE_HEADER = '| Model Type | Model Input Size | Inference Speed (FPS) | End-to-end speed (FPS) |\n| --- | --- | --- | --- |';

export function labTableRow(r: RunResult): string {
  return `| ${MODEL_TYPE_NAMES[r.backend]} | (${r.frameSize[0]},${r.frameSize[1]},3) | ${r.inferenceFps.toFixed(2)} | ${r.endToEndFps.toFixed(2)} |`;
}

/** A short human summary for stderr: the lab row, the per-stage table, and where the gap between the two FPS goes. */
export function formatSummary(r: RunResult): string {
  const lines: string[] = [];
  const loop = r.pipeline?.mode === 'on' ? `pipelined loop, ${r.pipeline.inFlight} frames in flight` : 'sequential loop';
  lines.push(`${MODEL_TYPE_NAMES[r.backend]} (${r.backendDetail}, ${loop}), ${r.frames} frames measured after ${r.warmupFrames} warm-up${r.interrupted ? ' (interrupted)' : ''}`);
  lines.push('');
  lines.push(LAB_TABLE_HEADER);
  lines.push(labTableRow(r));
  lines.push('');
  lines.push('| Stage | mean ms | p50 ms | p90 ms | p99 ms | share of wall |');
  lines.push('| --- | --- | --- | --- | --- | --- |');
  for (const s of STAGES) {
    const st = r.stages[s];
    const share = r.wallMs > 0 ? `${((st.totalMs / r.wallMs) * 100).toFixed(1)}%` : '-';
    lines.push(`| ${s} | ${st.meanMs.toFixed(2)} | ${st.p50Ms.toFixed(2)} | ${st.p90Ms.toFixed(2)} | ${st.p99Ms.toFixed(2)} | ${share} |`);
  }
  const nonInference = r.wallMs > 0 ? 1 - r.stages.inference.totalMs / r.wallMs : 0;
  lines.push('');
  if (r.pipeline?.mode === 'on') {
    lines.push(
      `Stages overlap in the pipelined loop, so their shares add up to more than 100%; end-to-end FPS is ${((r.endToEndFps / (r.inferenceFps || 1)) * 100).toFixed(1)}% of inference FPS (compare with --pipeline off).`,
    );
  } else {
    lines.push(
      `Inference is ${(100 - nonInference * 100).toFixed(1)}% of the wall time; the other ${(nonInference * 100).toFixed(1)}% (read, preprocess, postprocess, write) is why end-to-end FPS is lower than inference FPS.`,
    );
  }
  lines.push(`Model load ${r.modelLoadMs.toFixed(0)} ms, first frame ${r.firstFrameMs.toFixed(1)} ms (both excluded). Detections: ${r.detections.total}.`);
  return lines.join('\n');
}
