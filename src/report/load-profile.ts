/**
 * Reading the report's profiles in any form jetprof knows: a raw nvprof log or nsys stats output, `jetprof parse`
 * JSON, or a `jetprof profile` result, which may carry its run too.
 */
import { basename } from 'node:path';
import type { NsysStats } from '../parsers/nsys.ts';
import type { NvprofLog } from '../parsers/nvprof.ts';
import { parseProfileFile, readProfileHead, requireTables } from '../parsers/parse-file.ts';
import type { Diagnostic } from '../parsers/diagnostics.ts';
import { BACKENDS } from '../backends/types.ts';
import type { ProfilerName, RunResult } from '../pipeline/run-result.ts';
import { JetprofError } from '../util/errors.ts';
import { readJson, runFromJson } from './load.ts';
import type { LabeledProfile } from './report-types.ts';

/**
 * A profile for the report: a `jetprof profile` or `jetprof parse` JSON, or a raw log parsed here. The file's head is
 * read once; a log that yields no table is refused by the rule `jetprof parse` uses (requireTables), and what the
 * parser and the profiler said about the log (lines not understood, nvprof's warnings) stays with it as notes.
 */
export async function loadProfile(path: string): Promise<{ profile: LabeledProfile; run?: RunResult }> {
  // The head only: a raw log can be hundreds of megabytes, and parseProfileFile streams it.
  const head = readProfileHead(path);
  if (head.text.trimStart().startsWith('{')) {
    const v = readJson(path, 'profile') as {
      schema?: string;
      backend?: RunResult['backend'];
      tool?: ProfilerName;
      nvprof?: NvprofLog;
      nsys?: NsysStats;
      run?: unknown;
      notes?: unknown;
    };
    if (v.schema === 'jetprof.profile/1') {
      const run = v.run ? runFromJson(v.run, path, v.tool) : undefined;
      const label = `${run?.setup.label ?? (v.backend ? BACKENDS[v.backend].title : basename(path))} (${basename(path)})`;
      // what `jetprof profile` said about its own run (nvprof collected nothing, the run did not finish, ...)
      const notes = Array.isArray(v.notes) ? v.notes.filter((n): n is string => typeof n === 'string') : [];
      const tool = v.tool === 'nvprof' || v.tool === 'nsys' ? v.tool : undefined;
      return { profile: { label, nvprof: v.nvprof, nsys: v.nsys, run, tool, notes }, run };
    }
    if (v.schema === 'jetprof.nvprof/1') {
      const log = v as unknown as NvprofLog;
      requireTables(path, { kind: 'nvprof', result: { value: log, diagnostics: [] } });
      return { profile: { label: basename(path), nvprof: log, notes: profilerNotes({ nvprof: log }, []) } };
    }
    if (v.schema === 'jetprof.nsys/1') {
      const stats = v as unknown as NsysStats;
      requireTables(path, { kind: 'nsys', result: { value: stats, diagnostics: [] } });
      return { profile: { label: basename(path), nsys: stats } };
    }
    throw new JetprofError('BAD_INPUT', `${path}: JSON with schema ${JSON.stringify(v.schema)}, not a profile`, {
      suggestion: 'pass a raw profiler log, `jetprof parse` JSON or `jetprof profile` JSON',
    });
  }
  const parsed = await parseProfileFile(path, undefined, { head });
  requireTables(path, parsed);
  const notes = profilerNotes(
    parsed.kind === 'nvprof' ? { nvprof: parsed.result.value } : {},
    parsed.result.diagnostics,
  );
  return parsed.kind === 'nvprof'
    ? { profile: { label: basename(path), nvprof: parsed.result.value, notes } }
    : { profile: { label: basename(path), nsys: parsed.result.value, notes } };
}

/** What the profiler printed as warnings, and what the parser could not read, as the report's notes (few lines). */
function profilerNotes(p: { nvprof?: NvprofLog }, diagnostics: Diagnostic[]): string[] {
  const notes: string[] = [];
  const warnings = [...new Set((p.nvprof?.processes ?? []).flatMap((x) => x.warnings))];
  for (const w of warnings.slice(0, 3)) notes.push(`nvprof warned: ${w}`);
  if (warnings.length > 3) notes.push(`nvprof warned ${warnings.length - 3} more time(s) (jetprof parse shows all)`);
  // how the log was read (its encoding, a Markdown file's fences) is a note of its own, not a line left unread
  const informative = (d: Diagnostic) => d.severity === 'note' || d.code === 'ENCODING_ASSUMED';
  const said = diagnostics.filter((d) => !informative(d));
  for (const d of diagnostics.filter(informative)) notes.push(`the log: ${d.message}`);
  if (said.length)
    notes.push(
      `${said.length} line(s) of the log were not read as table rows (first, line ${said[0].line}: ${said[0].message}); jetprof parse lists them`,
    );
  return notes;
}
