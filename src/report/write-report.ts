/** The report's file edge: load runs and profiles, build the LabReport, write Markdown, HTML and CSV atomically. */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { RunResult } from '../pipeline/run-result.ts';
import { JetprofError } from '../util/errors.ts';
import { claimOutputs, writeOutput } from '../output/output.ts';
import { reportHtml } from './html.ts';
import type { FailedBackend, LabeledProfile, SkippedBackend, TypedFps } from './report-types.ts';
import { buildLabReport } from './lab-report.ts';
import { readCapacityFile } from './capacity-format.ts';
import { loadRunFiles } from './load.ts';
import { loadProfile } from './load-profile.ts';
import { reportAccuracy } from './report-accuracy.ts';
import { reportCsv, reportMarkdown } from './markdown.ts';
import { turnEventLoop } from '../util/process.ts';
import { makeDirs, requireWritableDir } from '../util/files.ts';

interface ReportFiles {
  runs: string[];
  profiles: string[];
  out?: string;
  html?: string;
  csv?: string;
  top: number;
  title?: string;
  /** Backends that did not run, shown as rows with their reason (compare). */
  skipped?: SkippedBackend[];
  /** COCO ground truth: mAP per run that kept its detections. */
  gt?: string;
  /** The label whose detections the others are checked against (default: the first ONNX Runtime FP32 run, else the first). */
  ref?: string;
  /** Typed-in lab figures (`--fps`), for runs without a run JSON. */
  typedFps?: TypedFps[];
  /** report --reconcile ROW. */
  reconcileRow?: string;
  /** Backends that were asked for and failed (compare). */
  failed?: FailedBackend[];
  /** Matched share two rows' boxes need before their speeds are compared (default 0.99). */
  minMatch?: number;
  /** `jetprof capacity --json` results to show. */
  capacity?: string[];
  /** Things the user should know that are not errors (a run file given twice). */
  onWarning?: (message: string) => void;
  /** Lines the report says beside its speed table (compare: the loop every backend ran in, and why). */
  notes?: string[];
}

/** Each run file once: the same file given twice (or through a runset and by name) would count as two runs. */
function uniqueRunFiles(files: { path: string; run: RunResult }[]): {
  files: { path: string; run: RunResult }[];
  notes: string[];
} {
  const seen = new Map<string, { first: string; also: Set<string>; times: number }>();
  const out = files.filter((f) => {
    let key = f.path;
    try {
      key = realpathSync(f.path);
    } catch {
      // a path that cannot be resolved was read already; keep its name as the key
    }
    const given = seen.get(key);
    if (given !== undefined) {
      given.times++;
      if (f.path !== given.first) given.also.add(f.path);
      return false;
    }
    seen.set(key, { first: f.path, also: new Set(), times: 1 });
    return true;
  });
  // one line per file, however many times it was given (a runset can list one file thousands of times)
  const notes = [...seen.values()]
    .filter((g) => g.times > 1)
    .map(
      (g) =>
        `${g.first} was given ${g.times === 2 ? 'twice' : `${g.times} times`}${g.also.size ? ` (also as ${[...g.also].slice(0, 2).join(', ')}${g.also.size > 2 ? ', ...' : ''})` : ''}: it counts as one run`,
    );
  return { files: out, notes };
}

/** Builds the report and writes what was asked; returns the Markdown. */
export async function writeReport(o: ReportFiles): Promise<string> {
  // every run file is an input, those a runset names too (report --out R-1.json would overwrite one of them)
  const listed = o.runs.flatMap(loadRunFiles);
  const inputs = {
    ...Object.fromEntries(o.runs.map((r, i) => [`run ${i + 1}`, r])),
    ...Object.fromEntries(listed.map((f, i) => [`run file ${i + 1}`, f.path])),
    ...Object.fromEntries(o.profiles.map((p, i) => [`profile ${i + 1}`, p])),
    'ground truth': o.gt,
    ...Object.fromEntries((o.capacity ?? []).map((c, i) => [`capacity ${i + 1}`, c])),
  };
  claimOutputs(inputs, { Markdown: o.out, HTML: o.html });
  if (o.csv && existsSync(o.csv) && !statSync(o.csv).isDirectory()) {
    throw new JetprofError(
      'BAD_OUTPUT',
      `${o.csv}: --csv takes a folder (one CSV file per table), and this is a file`,
      { suggestion: 'give a folder name, e.g. --csv report-csv' },
    );
  }
  const unique = uniqueRunFiles(listed);
  const runFiles = unique.files;
  for (const n of unique.notes) o.onWarning?.(n);
  const runs: RunResult[] = runFiles.map((f) => f.run);
  const profiles: LabeledProfile[] = [];
  for (const p of o.profiles) {
    const loaded = await loadProfile(p);
    profiles.push(loaded.profile);
    if (o.runs.length === 0 && loaded.run) runs.push(loaded.run);
  }
  const capacity = (o.capacity ?? []).map(readCapacityFile);
  // the work below runs without a pause: a turn of the event loop between its parts lets Ctrl-C end the report
  await turnEventLoop();
  // compare's failed and skipped backends are rows too: a report that says why nothing ran is still a report
  const said = (o.failed?.length ?? 0) + (o.skipped?.length ?? 0);
  if (runs.length === 0 && profiles.length === 0 && !o.typedFps?.length && capacity.length === 0 && said === 0) {
    throw new JetprofError('BAD_OPTION', 'nothing to report', {
      suggestion: 'pass --run R.json (from infer --json), --profile LOG and/or --capacity C.json',
    });
  }
  const accuracy = reportAccuracy(runFiles, { ref: o.ref, gt: o.gt });
  const report = buildLabReport(runs, profiles, o.top, {
    skipped: o.skipped,
    failed: o.failed,
    accuracy,
    typedFps: o.typedFps,
    reconcileRow: o.reconcileRow,
    minMatch: o.minMatch,
    runNotes: [...unique.notes, ...(o.notes ?? [])],
    capacity,
  });
  for (const n of report.runNotes.slice(unique.notes.length + (o.notes?.length ?? 0))) o.onWarning?.(n);
  await turnEventLoop();
  const md = reportMarkdown(report, o.title);
  const html = o.html ? reportHtml(report, o.title) : undefined;
  const csvFiles = o.csv ? reportCsv(report) : undefined;
  // the CSV files' names come with the tables: claimed once they are known, before anything is written
  if (o.csv && csvFiles)
    claimOutputs(inputs, {
      Markdown: o.out,
      HTML: o.html,
      ...Object.fromEntries(Object.keys(csvFiles).map((name) => [`CSV file ${name}`, join(o.csv!, name)])),
    });
  // everything is built: a signal that came meanwhile ends the run here, before any output is replaced
  await turnEventLoop();
  // a folder that does not exist yet is made, as compare --out-dir makes its own (only once the report is built)
  for (const file of [o.out, o.html]) {
    if (!file || file === '-') continue;
    try {
      makeDirs(dirname(resolve(file)));
    } catch (e) {
      throw new JetprofError('BAD_OUTPUT', `${file}: cannot make its folder (${(e as NodeJS.ErrnoException).code})`, {
        suggestion: 'choose a writable output path',
      });
    }
  }
  if (o.out) writeOutput(o.out, md);
  if (o.html && html !== undefined) writeOutput(o.html, html);
  if (o.csv && csvFiles) {
    requireWritableDir(join(o.csv, 'fps.csv'), '--csv');
    for (const [name, text] of Object.entries(csvFiles)) writeOutput(join(o.csv, name), text);
  }
  return md;
}
