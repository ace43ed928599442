/** Reading the report's run JSONs (jetprof.run/2, and /1 upgraded); its profiles: load-profile.ts. */
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { readJsonFile } from '../util/text-input.ts';
import { BACKENDS, deviceLabel } from '../backends/types.ts';
import { defaultLabel, type ProfilerName, type RunResult } from '../pipeline/run-result.ts';
import { validateSchemaFile } from '../schemas/validate.ts';
import { JetprofError } from '../util/errors.ts';

export function readJson(path: string, what: string): unknown {
  return readJsonFile(path, what, 'pass the file written by infer --json');
}

/** A jetprof.run/1 result in the /2 shape: its setup is inferred from what /1 recorded; it has no per-frame arrays. */
function upgradeRunV1(v: Record<string, unknown>, profiler: ProfilerName = 'none'): RunResult {
  const r = v as unknown as RunResult & {
    schema: string;
    device?: RunResult['gpuTimings'];
    pipeline?: { mode: 'on' | 'off'; inFlight?: number };
  };
  const backendDetail =
    typeof r.backendDetail === 'string' ? r.backendDetail : (BACKENDS[r.backend].title ?? String(r.backend));
  const executionProvider = r.backend === 'tensorrt' ? 'tensorrt' : (/\((\w+)\)/.exec(backendDetail)?.[1] ?? 'cpu');
  const pipelined = r.pipeline?.mode === 'on';
  const base = {
    executionProvider,
    precision: r.backend === 'onnx' ? ('fp32' as const) : ('unknown' as const),
    loop: pipelined ? ('pipelined' as const) : ('sequential' as const),
    ...(pipelined ? { inFlight: r.pipeline?.inFlight ?? 3 } : {}),
    profiler,
  };
  const { device, pipeline: _pipeline, ...rest } = r;
  return {
    ...rest,
    schema: 'jetprof.run/2',
    backendDetail,
    setup: {
      label: defaultLabel(r.backend, base),
      ...base,
      device: deviceLabel(r.backend, executionProvider, r.env),
    },
    ...(device ? { gpuTimings: device } : {}),
  };
}

/** A run result from a file, checked against its schema: /2 as written, /1 upgraded; anything else is one line naming the file. */
export function runFromJson(v: unknown, path: string, profiler: ProfilerName = 'none'): RunResult {
  const schema = (v as { schema?: unknown } | null)?.schema;
  const isRun = typeof schema === 'string' && /^jetprof\.run\/\d+$/.test(schema);
  if (!isRun) {
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: not a jetprof run result (schema jetprof.run/2): its schema field is ${JSON.stringify(schema ?? null)}`,
      { suggestion: 'pass the file written by `infer --json R.json`' },
    );
  }
  // before the schema: a run that measured nothing is the thing to say, even when it lacks fields because of it
  if ((v as { frames?: unknown }).frames === 0) {
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: this run measured no frame (all were warm-up, or none decoded): there is nothing to report`,
      { suggestion: 'run infer again on a longer video or with a smaller --warmup' },
    );
  }
  validateSchemaFile(v, path);
  requirePlausibleFigures(v as Record<string, unknown>, path);
  return schema === 'jetprof.run/1' ? upgradeRunV1(v as Record<string, unknown>, profiler) : (v as RunResult);
}

/**
 * A run file comes from other people and may be hand-edited: every figure a report divides and prints is checked on
 * load. FPS and the wall time are positive finite numbers (1e999 parses as Infinity; null would print as 0.00), stage
 * times are numbers not below zero, and the inference FPS is at least the end-to-end one (1% for rounding) unless the
 * model skipped frames (--interval), where end-to-end counts frames the model never saw.
 */
function requirePlausibleFigures(v: Record<string, unknown>, path: string): void {
  const bad: string[] = [];
  const positive = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
  for (const k of ['inferenceFps', 'endToEndFps', 'wallMs']) if (!positive(v[k])) bad.push(`${k} ${String(v[k])}`);
  if (!(typeof v.frames === 'number' && v.frames >= 0)) bad.push(`frames ${String(v.frames)}`);
  const stages = (v.stages ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const [stage, s] of Object.entries(stages)) {
    for (const k of ['meanMs', 'p50Ms', 'p90Ms', 'p99Ms', 'totalMs']) {
      const x = s?.[k];
      if (!(typeof x === 'number' && Number.isFinite(x) && x >= 0)) bad.push(`stages.${stage}.${k} ${String(x)}`);
    }
  }
  if (bad.length)
    throw new JetprofError('BAD_INPUT', `${path}: ${bad.slice(0, 3).join(', ')}: not a figure a run can measure`, {
      suggestion: 'pass the file infer --json wrote, unedited',
    });
  const skipped = typeof v.interval === 'number' && v.interval > 1;
  if (!skipped && (v.endToEndFps as number) > (v.inferenceFps as number) * 1.01)
    throw new JetprofError(
      'BAD_INPUT',
      `${path}: end-to-end ${String(v.endToEndFps)} FPS above inference ${String(v.inferenceFps)} FPS, which a run that infers every frame cannot measure (the two swapped?)`,
      { suggestion: 'pass the file infer --json wrote, unedited' },
    );
}

/** A run file's parsed content: a run, or the run a `jetprof profile` result carries. */
function runOfFile(v: unknown, path: string): RunResult {
  const p = v as { schema?: string; run?: unknown; tool?: ProfilerName } | null;
  if (p?.schema === 'jetprof.profile/1' && !p.run) {
    throw new JetprofError('BAD_INPUT', `${path}: a profile whose run did not finish (no run result in it)`, {
      suggestion: `pass it with --profile ${path} for its tables, and run the job again for its figures`,
    });
  }
  if (p?.schema === 'jetprof.nvprof/1' || p?.schema === 'jetprof.nsys/1') {
    throw new JetprofError('BAD_INPUT', `${path}: a parsed profile (${p.schema}), not a run result`, {
      suggestion: `pass it with --profile ${path}`,
    });
  }
  return p?.schema === 'jetprof.profile/1' ? runFromJson(p.run, path, p.tool) : runFromJson(v, path);
}

function loadRun(path: string): RunResult {
  return runOfFile(readJson(path, 'run JSON'), path);
}

/** A run file, or a runset (`--repeat`: jetprof.runset/1) and the run files it lists (relative to it), with their paths. */
export function loadRunFiles(path: string): { path: string; run: RunResult }[] {
  const v = readJson(path, 'run JSON') as { schema?: string; files?: unknown };
  if (typeof v?.schema !== 'string' || !/^jetprof\.runset\/\d+$/.test(v.schema))
    return [{ path, run: runOfFile(v, path) }];
  validateSchemaFile(v, path); // a runset of another version is said as such
  if (!Array.isArray(v.files) || v.files.length === 0) {
    throw new JetprofError('BAD_INPUT', `${path}: a runset without its run files (it was written with --json -)`, {
      suggestion: 'pass the run files themselves with --run',
    });
  }
  // --repeat writes the runs beside their runset: an entry elsewhere (`../../etc/passwd`) is not one of them
  const folder = dirname(resolve(path));
  const loaded = new Map<string, RunResult>();
  return v.files.map((f) => {
    const entry = String(f);
    const file = resolve(folder, entry);
    const inside = relative(folder, file);
    if (isAbsolute(entry) || inside === '' || inside.startsWith('..') || isAbsolute(inside))
      throw new JetprofError(
        'BAD_INPUT',
        `${path}: lists ${JSON.stringify(entry.slice(0, 80))}, outside the runset's folder`,
        {
          suggestion:
            'a runset lists the run files beside it (infer --repeat writes them so); pass other runs with --run',
        },
      );
    // a file listed many times is read once
    let run = loaded.get(file);
    if (!run) loaded.set(file, (run = loadRun(file)));
    return { path: file, run };
  });
}
