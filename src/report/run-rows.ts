/**
 * Run files to report rows: one row per label (mean and spread over its runs), what each row measured, the stage
 * tables, per-frame series and the environment (which rows compare: comparability.ts). Pure.
 */
import { jetpackOf } from '../platform/board.ts';
import { modelAloneLine, notInferenceShare, type ShareName, shareLabel, wallShares } from '../pipeline/figures.ts';
import { busyMachineSentence } from '../platform/machine-load.ts';
import { loopInferenceMs, type RunResult, stageTotalsOf, videoNames } from '../pipeline/run-result.ts';
import { labInputSize, latencyLine, modelTypeName } from './run-lines.ts';
import { STAGES, type Stage } from '../pipeline/stages.ts';
import { meanOf, spread } from '../util/stats.ts';
import { sweepFigures } from './sweep.ts';
import { keptDetections } from '../accuracy/detections-file.ts';

import type { RowSetup, FpsRow, TypedFps, StageRow, StageTable, EnvBlock, FrameSeries } from './report-types.ts';
import { comparisonBasis, decodedBy, setupRecord } from './comparability.ts';

export function typedFpsRow(x: TypedFps): FpsRow {
  const one = (v: number) => spread([v]);
  return {
    label: x.name,
    machine: x.device ?? 'not given (typed in)',
    modelType: x.name,
    backendDetail: 'typed in',
    inputSize: x.inputSize ? labInputSize(x.inputSize) : '',
    inferenceFps: one(x.inferenceFps),
    endToEndFps: one(x.endToEndFps),
    runs: 1,
    frames: 0,
    setup: {
      loop: 'unknown',
      profiler: 'unknown',
      executionProvider: '',
      precision: '',
      device: x.device ? `${x.device} (typed in)` : 'unknown (typed in)',
      model: '',
      video: '',
      frameSize: x.inputSize ? `${x.inputSize[0]}x${x.inputSize[1]}` : '',
      pacing: '',
      frames: '',
    },
    profiled: false,
    pipelined: false,
    notInference: notInferenceShare(1000 / x.inferenceFps, 1000 / x.endToEndFps),
    wallShares: [],
    wallMsPerFrame: 1000 / x.endToEndFps,
    typedIn: true,
  };
}

/**
 * Runs by label and setup record, in first-seen order: two runs share a row only when their labels and every setting
 * that changes the figures are equal. Rows whose labels would read the same get the settings that tell them apart
 * (`onnx-fp32-cpu-sequential-4streams (realtime at 10 FPS)`), so a label never names two setups.
 */
export function groupBySetup(runs: RunResult[]): RunResult[][] {
  const groups = new Map<string, { record: [string, string][]; runs: RunResult[] }>();
  for (const r of runs) {
    const record = setupRecord(r);
    const key = JSON.stringify([r.setup.label, record]);
    const g = groups.get(key);
    if (g) g.runs.push(r);
    else groups.set(key, { record, runs: [r] });
  }
  const all = [...groups.values()];
  return all.map((g) => {
    const label = g.runs[0].setup.label;
    const others = all.filter((x) => x !== g && x.runs[0].setup.label === label);
    if (others.length === 0) return g.runs;
    const differs = g.record
      .filter(([k, v], i) => others.some((o) => o.record[i][0] === k && o.record[i][1] !== v))
      .map(([, v]) => v);
    const named = `${label} (${differs.join(', ')})`;
    return g.runs.map((r) => ({ ...r, setup: { ...r.setup, label: named } }));
  });
}

/**
 * Sequential loop: the mean over runs of each part's share of wall time (stages and loop overhead). Each run's shares
 * add up to 1, so their means do too, and the parts still add up to the mean not-inference share.
 */
function meanWallShares(runs: RunResult[]): { name: ShareName; share: number }[] {
  const shares = runs.map((x) => wallShares(stageTotalsOf(x), x.wallMs));
  return shares[0].map((x) => ({
    name: x.name,
    share: meanOf(shares.map((sh) => sh.find((y) => y.name === x.name)?.share ?? 0)),
  }));
}

const meanWallMsPerFrame = (runs: RunResult[]) => meanOf(runs.map((x) => (x.frames > 0 ? x.wallMs / x.frames : 0)));

function rowSetup(runs: RunResult[]): RowSetup {
  const r = runs[0];
  const s = r.setup;
  const frames = [...new Set(runs.map((x) => x.frames))].join('/');
  return {
    loop: s.loop === 'pipelined' ? `pipelined (${s.inFlight ?? '?'} in flight)` : 'sequential',
    profiler: s.profiler,
    executionProvider: s.executionProvider,
    precision: s.precision,
    device: s.device,
    model: `${r.model.path.split('/').pop()} ${r.model.sha256.slice(0, 8)}, network input ${r.model.inputWidth}x${r.model.inputHeight}${s.preprocessing === 'graph' ? ', preprocessing in the graph' : ''}${r.model.generatedWeights ? ' (random weights)' : ''}`,
    video: `${videoNames(r)} (${decodedBy(r).replace(/^decoded by /, '')})`,
    frameSize: `${r.frameSize[0]}x${r.frameSize[1]}`,
    pacing: `${comparisonBasis(r).pacing}; ${comparisonBasis(r).output}`,
    frames: `${frames} measured + ${r.warmupFrames} warm-up`,
  };
}

const baseModelType = modelTypeName;

/** The frames every run of a row dropped (paced or live sources), and of how many delivered. */
function dropsOf(runs: RunResult[]): { dropped: number; delivered: number } {
  const streams = runs.flatMap((r) => r.streams ?? []);
  const dropped = streams.reduce((a, s) => a + (s.droppedFrames ?? 0), 0);
  return { dropped, delivered: streams.reduce((a, s) => a + s.frames + (s.droppedFrames ?? 0), 0) };
}

export function fpsRow(runs: RunResult[]): Omit<FpsRow, 'modelType'> & { baseModelType: string } {
  const r = runs[0];
  const pipelined = r.setup.loop === 'pipelined';
  const notInference = meanOf(runs.map((x) => notInferenceShare(x.stages.inference.totalMs, x.wallMs)));
  return {
    label: r.setup.label,
    machine: r.env.jetson?.model ?? r.env.cpu,
    ...(r.modelAlone
      ? {
          modelAlone: modelAloneLine(r.modelAlone, loopInferenceMs(r), {
            wroteVideo: r.setup.write !== false,
            busyMachine: !!(r.machineLoad && busyMachineSentence(r.machineLoad)),
            ofRuns: runs.length,
          }),
        }
      : {}),
    ...(latencyLine(r) ? { latency: latencyLine(r) } : {}),
    baseModelType: baseModelType(r),
    backendDetail: r.backendDetail,
    inputSize: labInputSize(r.frameSize),
    inferenceFps: spread(runs.map((x) => x.inferenceFps)),
    endToEndFps: spread(runs.map((x) => x.endToEndFps)),
    runs: runs.length,
    frames: runs.reduce((t, x) => t + x.frames, 0),
    setup: rowSetup(runs),
    profiled: r.setup.profiler !== 'none',
    pipelined,
    notInference,
    wallShares: pipelined ? [] : meanWallShares(runs),
    ...(pipelined
      ? {
          busyMs: Object.fromEntries(STAGES.map((st) => [st, meanOf(runs.map((x) => x.stages[st].meanMs))])) as Record<
            Stage,
            number
          >,
        }
      : {}),
    wallMsPerFrame: meanWallMsPerFrame(runs),
    basis: comparisonBasis(r),
    keptBoxes: runs.every((x) => keptDetections(x)),
    streamSetup: { streams: r.streams?.length ?? 1, batch: r.batch ?? 1, interval: r.interval ?? 0 },
    // drops are a paced run's (--realtime) or a source's that dropped: a free run reads as fast as it processes
    ...(r.setup.realtime || r.streams?.some((s) => (s.droppedFrames ?? 0) > 0) ? { drops: dropsOf(runs) } : {}),
    sweep: sweepFigures(runs),
  };
}

export function stageTable(runs: RunResult[], modelType: string): StageTable {
  const r = runs[0];
  const pipelined = r.setup.loop === 'pipelined';
  const avg = (f: (x: RunResult) => number) => meanOf(runs.map(f));
  // percentiles are the runs' mean; min and max the extremes over every run (absent when a run did not record them)
  const extreme = (values: (number | undefined)[], f: (...v: number[]) => number) =>
    values.every((v) => v !== undefined && Number.isFinite(v)) ? f(...(values as number[])) : undefined;
  const stat = (pick: (x: RunResult) => RunResult['stages'][Stage] | undefined) => ({
    meanMs: avg((x) => pick(x)?.meanMs ?? 0),
    minMs: extreme(
      runs.map((x) => pick(x)?.minMs),
      Math.min,
    ),
    p50Ms: avg((x) => pick(x)?.p50Ms ?? 0),
    p90Ms: avg((x) => pick(x)?.p90Ms ?? 0),
    p99Ms: avg((x) => pick(x)?.p99Ms ?? 0),
    maxMs: extreme(
      runs.map((x) => pick(x)?.maxMs),
      Math.max,
    ),
  });
  const shares = pipelined ? [] : meanWallShares(runs);
  const shareOf = (name: ShareName) => (pipelined ? undefined : (shares.find((y) => y.name === name)?.share ?? 0));
  const rows: StageRow[] = STAGES.map((stage) => ({ stage, ...stat((x) => x.stages[stage]), share: shareOf(stage) }));
  if (!pipelined) {
    const perFrame = avg((x) =>
      x.frames > 0 ? (x.wallMs - Object.values(stageTotalsOf(x)).reduce((a, b) => a + b, 0)) / x.frames : 0,
    );
    rows.push({
      stage: shareLabel(
        'loop overhead',
        !!r.setup.realtime,
        runs.some((x) => (x.streams ?? []).some((s) => (s.droppedFrames ?? 0) > 0)),
      ),
      meanMs: Math.max(0, perFrame),
      p50Ms: NaN,
      p90Ms: NaN,
      p99Ms: NaN,
      share: shareOf('loop overhead'),
    });
  }
  if (r.postprocess) rows.push({ stage: 'draw', ...stat((x) => x.postprocess?.draw), partOf: 'postprocess' });
  if (r.gpuTimings) {
    rows.push(
      { stage: 'h2d copy', ...stat((x) => x.gpuTimings?.h2dMs), partOf: 'inference' },
      { stage: 'gpu compute', ...stat((x) => x.gpuTimings?.gpuComputeMs), partOf: 'inference' },
      { stage: 'd2h copy', ...stat((x) => x.gpuTimings?.d2hMs), partOf: 'inference' },
    );
  }
  return {
    label: r.setup.label,
    modelType,
    pipelined,
    batch: r.batch ?? 1,
    runs: runs.length,
    rows,
    wallMsPerFrame: meanWallMsPerFrame(runs),
  };
}

export function frameSeries(r: RunResult): FrameSeries | undefined {
  const p = r.perFrame;
  if (!p || p.index.length === 0) return undefined;
  return {
    label: r.setup.label,
    pipelined: r.setup.loop === 'pipelined',
    index: p.index,
    startMs: p.startMs,
    stages: {
      read: p.readMs,
      preprocess: p.preprocessMs,
      inference: p.inferenceMs,
      postprocess: p.postprocessMs,
      write: p.writeMs,
    },
    inferenceStartMs: p.inferenceStartMs,
    postprocessStartMs: p.postprocessStartMs,
    endMs: p.endMs,
  };
}

export function envBlock(r: RunResult): EnvBlock {
  const e = r.env;
  const rows: [string, string][] = [];
  if (e.jetson?.model) rows.push(['Device', e.jetson.model]);
  if (e.jetson?.l4t) rows.push(['L4T (JetPack)', `${e.jetson.l4t} (JetPack ${jetpackOf(e.jetson.l4t) ?? '?'})`]);
  if (e.powerMode) rows.push(['Power mode', e.powerMode]);
  rows.push(['CPU', e.cpu]);
  if (e.gpu && e.gpu !== e.jetson?.model) rows.push(['GPU', e.gpu]);
  if (e.tensorrt) rows.push(['TensorRT', e.tensorrt]);
  if (e.onnxruntime) rows.push(['ONNX Runtime', `${e.onnxruntime} (${r.setup.executionProvider})`]);
  if (e.opencv) rows.push(['OpenCV', e.opencv]);
  rows.push(['Node.js', e.node]);
  rows.push([
    'Model',
    `${r.model.path} (${r.model.inputWidth}x${r.model.inputHeight}, ${r.model.classes} classes${r.model.generatedWeights ? ', RANDOM weights' : ''})`,
  ]);
  rows.push([
    'Video',
    `${r.video.path} (${r.video.width}x${r.video.height}, ${r.frames} frames measured after ${r.warmupFrames} warm-up)`,
  ]);
  return { label: r.setup.label, rows };
}
