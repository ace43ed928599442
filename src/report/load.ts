/**
 * Reading the report's inputs: run JSONs (jetprof.run/1) and profiles in any form jetprof knows (a raw nvprof log
 * or nsys stats output, `jetprof parse` JSON, or a `jetprof profile` result, which may carry its run too).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { NsysStats } from '../parsers/nsys.ts';
import type { NvprofLog } from '../parsers/nvprof.ts';
import { parseProfileFile, readProfileHead } from '../parsers/parse-file.ts';
import { MODEL_TYPE_NAMES, type RunResult } from '../pipeline/run-result.ts';
import { JetprofError } from '../util/errors.ts';
import type { LabeledProfile } from './lab-report.ts';

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new JetprofError('FILE_NOT_FOUND', `${path}: ${what} not found`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new JetprofError('BAD_INPUT', `${path}: not valid JSON (${(e as Error).message.split('\n')[0]})`, { suggestion: 'pass the file written by infer --json' });
  }
}

export function loadRun(path: string): RunResult {
  const v = readJson(path, 'run JSON') as { schema?: string; run?: RunResult };
  const run = v.schema === 'jetprof.profile/1' ? v.run : (v as RunResult);
  if (!run || run.schema !== 'jetprof.run/1' || typeof run.inferenceFps !== 'number' || !run.stages) {
    throw new JetprofError('BAD_INPUT', `${path}: not a jetprof run result (schema jetprof.run/1)`, { suggestion: 'pass the file written by `infer --json R.json`' });
  }
  return run;
}

export async function loadProfile(path: string): Promise<{ profile: LabeledProfile; run?: RunResult }> {
  // The head only: a raw log can be hundreds of megabytes, and parseProfileFile streams it.
  if (readProfileHead(path).trimStart().startsWith('{')) {
    const v = readJson(path, 'profile') as { schema?: string; backend?: RunResult['backend']; tool?: string; nvprof?: NvprofLog; nsys?: NsysStats; run?: RunResult };
    if (v.schema === 'jetprof.profile/1') {
      const label = `${v.backend ? MODEL_TYPE_NAMES[v.backend] : basename(path)} (${basename(path)})`;
      return { profile: { label, nvprof: v.nvprof, nsys: v.nsys }, run: v.run };
    }
    if (v.schema === 'jetprof.nvprof/1') return { profile: { label: basename(path), nvprof: v as unknown as NvprofLog } };
    if (v.schema === 'jetprof.nsys/1') return { profile: { label: basename(path), nsys: v as unknown as NsysStats } };
    throw new JetprofError('BAD_INPUT', `${path}: JSON with schema ${JSON.stringify(v.schema)}, not a profile`, { suggestion: 'pass a raw profiler log, `jetprof parse` JSON or `jetprof profile` JSON' });
  }
  const parsed = await parseProfileFile(path);
  return parsed.kind === 'nvprof' ? { profile: { label: basename(path), nvprof: parsed.result.value } } : { profile: { label: basename(path), nsys: parsed.result.value } };
}
