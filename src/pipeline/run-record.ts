/**
 * The run's record: its setup and environment, tegrastats over its frames, the run JSON built once
 * (run-result.ts buildRunResult), and its files written (detections and the run JSON).
 */
import { createHash } from 'node:crypto';
import { dirname, relative, resolve } from 'node:path';
import { COCO80_TO_COCO91 } from '../accuracy/coco.ts';
import { addLine, emptySeries, summarizeSeries } from '../platform/tegrastats.ts';
import { startTegrastats } from '../platform/tegrastats-runner.ts';
import { cocoResultsJson } from '../accuracy/detections-file.ts';
import { deviceLabel, type DetectorSession } from '../backends/types.ts';
import { baseEnv, type EnvInfo } from '../platform/env.ts';
import { type StagedOutput, stageOutput } from '../output/output.ts';
import { sha256File } from '../util/files.ts';
import { loadOpenCv } from '../video/opencv.ts';
import type { FrameBoxes } from '../detect/types.ts';
import { batchFigures, type LoopResult } from './loop-result.ts';
import { buildRunResult, defaultLabel, type RunFacts, type RunResult } from './run-result.ts';
import type { InferOptions } from './infer-settings.ts';
import { engineOnnxSha, type ResolvedModel } from './model-resolution.ts';
/** The run's setup: what ran the model, in which precision and loop, under which profiler; its label. */
function runSetup(o: InferOptions, session: DetectorSession, env: EnvInfo, m: ResolvedModel): RunFacts['setup'] {
  const precision = session.precision;
  const pipelined = o.plan.loop.pipelined;
  const setupBase = {
    executionProvider: session.executionProvider,
    precision,
    loop: pipelined ? ('pipelined' as const) : ('sequential' as const),
    ...(pipelined ? { inFlight: o.plan.inFlight } : {}),
    profiler: o.profilerAttached ?? 'none',
    ...(o.realtime
      ? {
          realtime: {
            ...(o.realtime.fps !== undefined ? { sourceFps: o.realtime.fps } : {}),
            ...(o.realtime.staggered && o.streams.length > 1 ? { staggered: true } : {}),
          },
        }
      : {}),
    preprocessing: m.model.frameInput ? ('graph' as const) : ('cpu' as const),
  };
  const batch = o.plan.batch;
  return {
    label: o.label ?? defaultLabel(o.backend, setupBase, { count: o.streams.length, interval: o.interval ?? 0, batch }),
    ...setupBase,
    write: o.streams.some((s) => s.outputPath !== undefined),
    draw: o.draw !== false,
    device: deviceLabel(o.backend, session.executionProvider, env),
  };
}

/** The machine and library versions the run records. */
function runEnv(o: InferOptions, session: DetectorSession): EnvInfo {
  const cv = loadOpenCv();
  const env: EnvInfo = { ...baseEnv(), opencv: `${cv.version.major}.${cv.version.minor}.${cv.version.revision}` };
  Object.assign(env, session.runtime);
  return env;
}

/** tegrastats' samples on the run's clock and their summary over the measured frames. */
export async function tegrastatsRecord(
  o: InferOptions,
  runner: ReturnType<typeof startTegrastats> | undefined,
  loop: LoopResult,
): Promise<RunFacts['tegrastats']> {
  if (!runner || !o.tegrastats) return undefined;
  const lines = await runner.stop();
  const origin = loop.tally.originNs ?? process.hrtime.bigint();
  const series = emptySeries(o.tegrastats.intervalMs);
  for (const l of lines) addLine(series, Number(l.tNs - origin) / 1e6, l.line);
  const pf = loop.tally.measured;
  const summary = summarizeSeries(series, {
    startMs: pf.startMs[0] ?? 0,
    endMs: pf.endMs[pf.endMs.length - 1] ?? 0,
    frames: pf.index.length,
  });
  if (series.diagnostics.length)
    o.onWarning(
      `tegrastats printed ${series.diagnostics.length} line(s) that are not its statistics (kept in the run JSON), e.g. ${series.diagnostics[0].line.slice(0, 80)}`,
    );
  return { command: runner.command, series, summary };
}

/** Every fact of the run JSON, gathered in one place and built once (run-result.ts buildRunResult). */
export function assembleRun(
  o: InferOptions,
  m: ResolvedModel,
  session: DetectorSession,
  loop: LoopResult,
  extra: {
    startedAt: string;
    modelLoadMs: number;
    tegrastats: RunFacts['tegrastats'];
    modelAlone: RunFacts['modelAlone'];
    machineLoad?: RunFacts['machineLoad'];
  },
): RunResult {
  const env = runEnv(o, session);
  const { tally } = loop;
  const [first] = loop.streams;
  const multi = o.plan.multiStream !== undefined;
  const batches = batchFigures(loop.batches);
  const sourceEnd = first.record.endedEarly;
  // a file hashed once (23 MB for YOLOv4-Tiny: read and hashed twice it cost 0.3 s of CPU a run here)
  const sha256 = sha256File(o.engine ?? m.modelPath);
  return buildRunResult(tally.measured, tally.warmup, {
    backend: o.backend,
    backendDetail: session.description,
    setup: runSetup(o, session, env, m),
    model: {
      path: o.engine ?? m.modelPath,
      inputWidth: m.model.inputWidth,
      inputHeight: m.model.inputHeight,
      classes: m.model.classes,
      labels: m.model.labels,
      sha256,
      onnxSha256: o.engine ? engineOnnxSha(m.sidecar, m.modelPath) : sha256,
      ...(m.model.source?.generatedWeights ? { generatedWeights: true } : {}),
    },
    video: {
      path: o.streams[0].source,
      width: first.video.width,
      height: first.video.height,
      fps: first.video.fps,
      frameCount: first.video.frameCount,
      ...(first.video.rotation ? { rotation: first.video.rotation } : {}),
      ...(first.video.variableFps !== undefined ? { variableFps: first.video.variableFps } : {}),
      ...(first.video.decoder ? { decoder: first.video.decoder } : {}),
      ...(first.video.decoderNote ? { decoderNote: first.video.decoderNote } : {}),
    },
    // one stream: its output is the run's; several: each stream's is in its record
    output: multi ? undefined : first.record.output,
    frameSize: first.frameSize,
    letterbox: o.letterbox,
    modelLoadMs: extra.modelLoadMs,
    ...(extra.modelAlone ? { modelAlone: extra.modelAlone } : {}),
    firstFrameMs: tally.firstFrameMs,
    postprocess: {
      ...o.postprocess,
      framesCandidatesCapped: tally.framesCandidatesCapped,
      framesDetectionsCapped: tally.framesDetectionsCapped,
      maxCandidatesSeen: tally.maxCandidates,
    },
    detections: { total: tally.total, perClass: tally.perClass },
    nvtx: o.nvtx.enabled,
    env,
    startedAt: extra.startedAt,
    interrupted: loop.interrupted,
    // one stream that ended early says when, at the top: a live source that stopped sending
    ...(o.streams.length === 1 && sourceEnd
      ? {
          endedEarly: {
            afterS: Number((first.lastEndMs / 1000).toFixed(3)),
            framesRead: sourceEnd.framesRead,
            reason: sourceEnd.reason,
          },
        }
      : {}),
    ...(multi
      ? {
          streams: loop.streams.map((s) => s.record),
          batch: o.plan.batch,
          ...(batches ? { batches } : {}),
          interval: o.interval ?? 0,
          inferredFrames: loop.inferredFrames,
        }
      : {}),
    ...(extra.tegrastats ? { tegrastats: extra.tegrastats } : {}),
    ...(extra.machineLoad ? { machineLoad: extra.machineLoad } : {}),
  });
}

/**
 * The run's files, written by this one writer: each stream's detections (COCO results; their paths recorded relative
 * to the run JSON), then the run JSON itself (a path, or `-` for stdout).
 */
export function writeRunFiles(
  o: Pick<InferOptions, 'json' | 'streams' | 'cocoCategoryIds'>,
  result: RunResult,
  boxes: FrameBoxes[][],
  /** The run's other files, finished under temporary names (its videos, its heads file): renamed with these. */
  others: StagedOutput[] = [],
): void {
  const categoryIds = o.cocoCategoryIds ? COCO80_TO_COCO91 : undefined;
  const base = o.json && o.json !== '-' ? dirname(resolve(o.json)) : process.cwd();
  // every file written in full before any is renamed: a disk that fills on the JSON leaves the previous video and
  // JSON as they were, never a new video beside an old JSON
  const staged: StagedOutput[] = [];
  try {
    for (const [i, spec] of o.streams.entries()) {
      if (!spec.detectionsPath) continue;
      const text = cocoResultsJson(boxes[i] ?? [], categoryIds);
      staged.push(stageOutput(spec.detectionsPath, text));
      const file = relative(base, resolve(spec.detectionsPath));
      // its hash too: a file another run wrote over since (two compares into one --out-dir) is then not taken for it
      const sha256 = createHash('sha256').update(text).digest('hex');
      // one stream: the run's file; several: each stream's, in its record
      if (o.streams.length > 1 && result.streams)
        Object.assign(result.streams[i], { detectionsFile: file, detectionsSha256: sha256 });
      else Object.assign(result, { detectionsFile: file, detectionsSha256: sha256 });
    }
    if (o.json && o.json !== '-') staged.push(stageOutput(o.json, `${JSON.stringify(result, null, 2)}\n`));
  } catch (e) {
    for (const f of [...staged, ...others]) f.abort();
    throw e;
  }
  for (const f of [...others, ...staged]) f.commit();
  if (o.json === '-') process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
