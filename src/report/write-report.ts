/** The report's file edge: load runs and profiles, build the LabReport, write Markdown, HTML and CSV atomically. */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from '../pipeline/run-result.ts';
import { JetprofError } from '../util/errors.ts';
import { claimOutputs, writeOutput } from '../output/output.ts';
import { reportHtml } from './html.ts';
import { buildLabReport, type LabeledProfile, type SkippedBackend, type TypedFps } from './lab-report.ts';
import { loadProfile, loadRunFiles } from './load.ts';
import { reportAccuracy } from '../accuracy/report-accuracy.ts';
import { reportCsv, reportMarkdown } from './markdown.ts';

export interface ReportFiles {
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
}

/** Builds the report and writes what was asked; returns the Markdown. */
export async function writeReport(o: ReportFiles): Promise<string> {
  claimOutputs(
    { ...Object.fromEntries(o.runs.map((r, i) => [`run ${i + 1}`, r])), ...Object.fromEntries(o.profiles.map((p, i) => [`profile ${i + 1}`, p])), 'ground truth': o.gt },
    { Markdown: o.out, HTML: o.html },
  );
  if (o.csv && existsSync(o.csv) && !statSync(o.csv).isDirectory()) {
    throw new JetprofError('BAD_OUTPUT', `${o.csv}: --csv takes a folder (one CSV file per table), and this is a file`, { suggestion: 'give a folder name, e.g. --csv report-csv' });
  }
  const runFiles = o.runs.flatMap(loadRunFiles);
  const runs: RunResult[] = runFiles.map((f) => f.run);
  const profiles: LabeledProfile[] = [];
  for (const p of o.profiles) {
    const loaded = await loadProfile(p);
    profiles.push(loaded.profile);
    if (o.runs.length === 0 && loaded.run) runs.push(loaded.run);
  }
  if (runs.length === 0 && profiles.length === 0 && !o.typedFps?.length) {
    throw new JetprofError('BAD_OPTION', 'nothing to report', { suggestion: 'pass --run R.json (from infer --json) and/or --profile LOG' });
  }
  const accuracy = reportAccuracy(runFiles, { ref: o.ref, gt: o.gt });
  const report = buildLabReport(runs, profiles, o.top, { skipped: o.skipped, accuracy, typedFps: o.typedFps });
  const md = reportMarkdown(report, o.title);
  if (o.out) writeOutput(o.out, md);
  if (o.html) writeOutput(o.html, reportHtml(report, o.title));
  if (o.csv) {
    mkdirSync(o.csv, { recursive: true });
    for (const [name, text] of Object.entries(reportCsv(report))) writeOutput(join(o.csv, name), text);
  }
  return md;
}
