/**
 * `jetprof selftest`'s backends: ONNX Runtime on the CPU first (the reference), then OpenCV DNN on the CPU and with
 * CUDA, and TensorRT, each running the same clip through infer; a row holds its FPS and, against the reference, the
 * difference of its raw head outputs on the same inputs and the share of boxes it matches.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { agree } from '../accuracy/agree.ts';
import { loadDetections } from '../accuracy/detections-file.ts';
import { openCvHasCuda } from '../backends/opencv.ts';
import type { BackendName } from '../backends/types.ts';
import { parseHeadsFile } from '../pipeline/heads-file.ts';
import { inferArgv } from '../pipeline/infer-args.ts';
import type { RunResult } from '../pipeline/run-result.ts';
import { entryCommand } from '../profilers/profile-run.ts';
import { cliCommand } from '../util/process.ts';
import type { SelftestEntry } from './selftest-format.ts';
import { findExecutable } from '../util/executables.ts';
import { loadOpenCv } from '../video/opencv.ts';
import { inferArgs, Selftest } from './selftest-runner.ts';

/** How far a backend's raw head outputs may be from ONNX Runtime's (FP32 on the CPU), by the precision it ran in. */
const TOLERANCE: Record<string, { meanAbs: number; maxAbs: number }> = {
  fp32: { meanAbs: 1e-3, maxAbs: 0.1 },
  fp16: { meanAbs: 0.05, maxAbs: 2 },
  int8: { meanAbs: 0.25, maxAbs: 8 },
  unknown: { meanAbs: 0.05, maxAbs: 2 },
};
/** The share of ONNX Runtime's boxes another backend must find (IoU 0.5). */
const MIN_MATCH = 0.9;

/** A backend row's reference: ONNX Runtime's heads and boxes on the same frames. */
interface Reference {
  heads: ReturnType<typeof parseHeadsFile>;
  detections: string;
}

/** Max and mean absolute difference of two backends' heads over the frames both recorded. */
export function headDifference(
  ref: ReturnType<typeof parseHeadsFile>,
  other: ReturnType<typeof parseHeadsFile>,
): { maxAbs: number; meanAbs: number; values: number } | undefined {
  let max = 0;
  let sum = 0;
  let n = 0;
  for (const f of other) {
    const r = ref.find((x) => x.index === f.index);
    if (!r) continue;
    for (const [name, data] of f.heads) {
      const want = r.heads.get(name);
      if (!want || want.length !== data.length) return undefined;
      for (let i = 0; i < data.length; i++) {
        const d = Math.abs(data[i] - want[i]);
        if (!(d <= max)) max = Number.isNaN(d) ? Infinity : d;
        sum += Number.isFinite(d) ? d : 0;
      }
      n += data.length;
    }
  }
  return n === 0 ? undefined : { maxAbs: max, meanAbs: sum / n, values: n };
}

interface BackendCase {
  component: string;
  backend: BackendName;
  extra: string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * A backend's heads and boxes held against ONNX Runtime's: the figure's words, the differences added to `figures`,
 * and what is wrong (heads beyond the precision's tolerance, boxes matched below MIN_MATCH).
 */
function againstReference(
  ref: Reference,
  heads: ReturnType<typeof parseHeadsFile>,
  dets: string,
  precision: string,
  figures: Record<string, number | string>,
): { text: string; problems: string[] } {
  const diff = headDifference(ref.heads, heads);
  const match = agree(loadDetections(ref.detections).detections, loadDetections(dets).detections, {
    iouThreshold: 0.5,
  });
  const boxes =
    match.refBoxes + match.otherBoxes === 0
      ? 'no boxes in either'
      : `${(match.matchedShare * 100).toFixed(1)}% of boxes matched (${match.refBoxes} / ${match.otherBoxes})`;
  const tol = TOLERANCE[precision] ?? TOLERANCE.unknown;
  const headsText = diff
    ? `heads vs ONNX Runtime: max |d| ${diff.maxAbs.toPrecision(3)}, mean |d| ${diff.meanAbs.toPrecision(3)}`
    : 'heads not comparable with ONNX Runtime (other shapes or frames)';
  Object.assign(figures, diff ? { maxAbsDiff: diff.maxAbs, meanAbsDiff: diff.meanAbs } : {}, {
    matchedShare: match.matchedShare,
  });
  const problems = [
    ...(!diff ? ['its heads could not be compared'] : []),
    ...(diff && (diff.meanAbs > tol.meanAbs || diff.maxAbs > tol.maxAbs)
      ? [`its heads differ beyond ${precision}'s tolerance (mean ${tol.meanAbs}, max ${tol.maxAbs})`]
      : []),
    ...(match.refBoxes + match.otherBoxes > 0 && match.matchedShare < MIN_MATCH
      ? [
          `it finds other boxes (${(match.matchedShare * 100).toFixed(1)}% matched, at least ${MIN_MATCH * 100}% needed)`,
        ]
      : []),
  ];
  return { text: `${headsText}; ${boxes}`, problems };
}

/** One backend on the clip: its FPS, and against the reference its head differences and boxes. */
async function runBackend(
  t: Selftest,
  c: BackendCase,
  clip: string,
  model: string,
  io: string,
  ref?: Reference,
): Promise<{ entry: SelftestEntry; reference?: Reference }> {
  const tag = c.component.replace(/\W+/g, '-').replace(/^-|-$/g, '').toLowerCase();
  const files = {
    json: join(t.o.outDir, `${tag}.json`),
    heads: join(t.o.outDir, `${tag}.heads`),
    dets: join(t.o.outDir, `${tag}-detections.json`),
  };
  const argv = [
    ...entryCommand(c.backend),
    ...inferArgs(t, clip, model),
    ...inferArgv({ videoIo: io, write: false, heads: files.heads, detections: files.dets, json: files.json }),
    ...c.extra,
  ];
  const r = await t.run(argv, t.o.timeoutS, c.env);
  if (r.code !== 0 || !existsSync(files.json))
    return {
      entry: t.failed(c.component, r),
    };
  const run = JSON.parse(readFileSync(files.json, 'utf8')) as RunResult;
  const heads = parseHeadsFile(readFileSync(files.heads));
  const fps = `inference ${run.inferenceFps.toFixed(2)} FPS, end-to-end ${run.endToEndFps.toFixed(2)} FPS (${run.frames} frames, ${run.setup.precision}, ${run.setup.device})`;
  const figures: Record<string, number | string> = {
    inferenceFps: run.inferenceFps,
    endToEndFps: run.endToEndFps,
    frames: run.frames,
    precision: run.setup.precision,
  };
  const short = t.readShort(run.frames + run.warmupFrames);
  if (short)
    return {
      entry: t.add(
        { component: c.component, status: 'fail', figure: fps, figures, command: r.command, ...short },
        r.seconds,
      ),
    };
  if (!ref)
    return {
      entry: t.add(
        {
          component: c.component,
          status: 'ok',
          figure: fps,
          figures,
          command: r.command,
          ...(c.backend === 'onnx' ? {} : { detail: 'not held against ONNX Runtime: its row failed' }),
        },
        r.seconds,
      ),
      reference: { heads, detections: files.dets },
    };
  const { text, problems } = againstReference(ref, heads, files.dets, run.setup.precision, figures);
  return {
    entry: t.add(
      {
        component: c.component,
        status: problems.length ? 'fail' : 'ok',
        figure: `${fps}; ${text}`,
        figures,
        command: r.command,
        ...(problems.length
          ? { detail: problems.join('; '), fix: `compare its boxes: jetprof agree ${ref.detections} ${files.dets}` }
          : {}),
      },
      r.seconds,
    ),
  };
}

/** The backends: ONNX Runtime first (the reference), OpenCV DNN on the CPU and on CUDA, TensorRT. */
export async function backendRows(t: Selftest, clip: string, model: string, io: string): Promise<void> {
  if (!t.going('backend: ONNX Runtime (CPU)')) return;
  const onnx = await runBackend(
    t,
    { component: 'backend: ONNX Runtime (CPU)', backend: 'onnx', extra: inferArgv({ ep: 'cpu' }) },
    clip,
    model,
    io,
  );
  const ref = onnx.reference;
  const cv = loadOpenCv();
  const cases: (BackendCase & { absent?: { detail: string; fix: string } })[] = [
    { component: 'backend: OpenCV DNN (CPU)', backend: 'opencv', extra: inferArgv({ ep: 'cpu' }) },
    {
      component: 'backend: OpenCV DNN (CUDA)',
      backend: 'opencv',
      extra: inferArgv({ ep: 'cuda' }),
      ...(openCvHasCuda(cv.getBuildInformation())
        ? {}
        : {
            absent: {
              detail: 'this OpenCV was built without CUDA and cuDNN',
              fix: "an OpenCV built with CUDA and cuDNN (JetPack's is not); the CPU row covers OpenCV DNN",
            },
          }),
    },
  ];
  for (const c of cases) {
    if (!t.going(c.component)) return;
    if (c.absent) t.add({ component: c.component, status: 'absent', ...c.absent });
    else await runBackend(t, c, clip, model, io, ref);
  }
  if (!t.going('backend: TensorRT')) return;
  const engine = await tensorRtEngine(t, model);
  if ('absent' in engine) t.add({ component: 'backend: TensorRT', status: 'absent', ...engine.absent });
  else if ('fail' in engine) t.add({ component: 'backend: TensorRT', status: 'fail', ...engine.fail });
  else
    await runBackend(
      t,
      { component: 'backend: TensorRT', backend: 'tensorrt', extra: inferArgv({ engine: engine.path }) },
      clip,
      model,
      io,
      ref,
    );
}

/** The engine for the TensorRT row: the one given, or one trtexec builds here (FP16), or why there is none. */
async function tensorRtEngine(
  t: Selftest,
  model: string,
): Promise<
  | { path: string }
  | { absent: { detail: string; fix: string } }
  | { fail: Omit<SelftestEntry, 'component' | 'status' | 'seconds'> }
> {
  if (t.o.engine) return { path: resolve(t.o.engine) };
  const trtexec = findExecutable('trtexec', ['/usr/src/tensorrt/bin/trtexec']);
  if (!trtexec)
    return {
      absent: {
        detail: 'no --engine given and no trtexec to build one',
        fix: 'on a board with TensorRT: jetprof selftest --engine E.trt, or put trtexec on PATH (JetPack: /usr/src/tensorrt/bin)',
      },
    };
  const path = join(t.o.outDir, 'selftest-fp16.trt');
  t.o.onStep(`backend: TensorRT: building an FP16 engine with ${trtexec} (minutes on a Nano)`);
  const r = await t.run(
    [...cliCommand('jetprof'), 'build-engine', '--onnx', model, '--out', path, '--fp16'],
    t.o.timeoutS * 6,
  );
  if (r.code !== 0)
    return {
      fail: {
        detail: `build-engine: ${Selftest.failure(r, t.o.timeoutS * 6)}`,
        fix: `run it by hand to see why: ${r.command}`,
        command: r.command,
        log: r.tail,
      },
    };
  return { path };
}
