/** The report's file edge: load runs and profiles, build the LabReport, write Markdown, HTML and CSV atomically. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from '../pipeline/run-result.ts';
import { JetprofError } from '../util/errors.ts';
import { writeFileAtomic } from '../util/files.ts';
import { reportHtml } from './html.ts';
import { buildLabReport, type LabeledProfile, type SkippedBackend } from './lab-report.ts';
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
}

/** Builds the report and writes what was asked; returns the Markdown. */
export async function writeReport(o: ReportFiles): Promise<string> {
  const runFiles = o.runs.flatMap(loadRunFiles);
  const runs: RunResult[] = runFiles.map((f) => f.run);
  const profiles: LabeledProfile[] = [];
  for (const p of o.profiles) {
    const loaded = await loadProfile(p);
    profiles.push(loaded.profile);
    if (o.runs.length === 0 && loaded.run) runs.push(loaded.run);
  }
  if (runs.length === 0 && profiles.length === 0) {
    throw new JetprofError('BAD_OPTION', 'nothing to report', { suggestion: 'pass --run R.json (from infer --json) and/or --profile LOG' });
  }
  const accuracy = reportAccuracy(runFiles, { ref: o.ref, gt: o.gt });
  const report = buildLabReport(runs, profiles, o.top, { skipped: o.skipped, accuracy });
  const md = reportMarkdown(report, o.title);
  if (o.out) writeFileAtomic(o.out, md);
  if (o.html) writeFileAtomic(o.html, reportHtml(report, o.title));
  if (o.csv) {
    mkdirSync(o.csv, { recursive: true });
    for (const [name, text] of Object.entries(reportCsv(report))) writeFileAtomic(join(o.csv, name), text);
  }
  return md;
}
