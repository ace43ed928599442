/** `jetprof report`: run JSONs and profiles -> the lab report (Markdown, CSV, HTML). Loads no native module. */
import { Command } from 'commander';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from '../pipeline/run-result.ts';
import { reportHtml } from '../report/html.ts';
import { buildLabReport, type LabeledProfile } from '../report/lab-report.ts';
import { loadProfile, loadRun } from '../report/load.ts';
import { reportCsv, reportMarkdown } from '../report/markdown.ts';
import { JetprofError } from '../util/errors.ts';
import { writeFileAtomic } from '../util/files.ts';
import { handleError } from './handle-error.ts';
import { parseIntInRange } from './options.ts';

export interface ReportFiles {
  runs: string[];
  profiles: string[];
  out?: string;
  html?: string;
  csv?: string;
  top: number;
  title?: string;
}

/** Builds the report and writes what was asked; returns the Markdown. */
export async function writeReport(o: ReportFiles): Promise<string> {
  const runs: RunResult[] = o.runs.map(loadRun);
  const profiles: LabeledProfile[] = [];
  for (const p of o.profiles) {
    const loaded = await loadProfile(p);
    profiles.push(loaded.profile);
    if (o.runs.length === 0 && loaded.run) runs.push(loaded.run);
  }
  if (runs.length === 0 && profiles.length === 0) {
    throw new JetprofError('BAD_OPTION', 'nothing to report', { suggestion: 'pass --run R.json (from infer --json) and/or --profile LOG' });
  }
  const report = buildLabReport(runs, profiles, o.top);
  const md = reportMarkdown(report, o.title);
  if (o.out) writeFileAtomic(o.out, md);
  if (o.html) writeFileAtomic(o.html, reportHtml(report, o.title));
  if (o.csv) {
    mkdirSync(o.csv, { recursive: true });
    for (const [name, text] of Object.entries(reportCsv(report))) writeFileAtomic(join(o.csv, name), text);
  }
  return md;
}

const collect = (v: string, prev: string[]) => [...prev, v];

export function reportCommand(): Command {
  return new Command('report')
    .summary('the lab report: FPS table, speed-ups, stages, critical path, waiting time, top kernels (Markdown, CSV, HTML)')
    .description(
      'Builds the report from run results (infer --json) and profiles (nvprof logs, nsys stats output, or the JSON of\n' +
        '`jetprof parse` / `jetprof profile`). A `jetprof profile` JSON brings its run along when no --run is given.\n' +
        'Prints the Markdown on stdout unless --out is given.',
    )
    .option('-r, --run <run.json>', 'a run result; repeat for each backend', collect, [] as string[])
    .option('-p, --profile <file>', 'a profile; repeat for each', collect, [] as string[])
    .option('-o, --out <REPORT.md>', 'write the Markdown here')
    .option('--html <report.html>', 'also write a self-contained HTML page with charts')
    .option('--csv <dir>', 'also write the tables as CSV files into this folder')
    .option('--top <n>', 'rows per critical-path / kernel / API table', parseIntInRange('--top', 1, 1000), 10)
    .option('--title <text>', 'report title')
    .addHelpText(
      'after',
      '\nExamples:\n  jetprof report --run runs/onnx.json --run runs/trt.json --profile profiles/profiling_trt_log.txt --out REPORT.md --html report.html\n  jetprof report --profile profiles/profile_onnx.json --csv report-csv',
    )
    .action(async (o: { run: string[]; profile: string[]; out?: string; html?: string; csv?: string; top: number; title?: string }) => {
      try {
        const md = await writeReport({ runs: o.run, profiles: o.profile, out: o.out, html: o.html, csv: o.csv, top: o.top, title: o.title });
        if (!o.out) process.stdout.write(md);
        for (const [what, path] of [['Markdown', o.out], ['HTML', o.html], ['CSV', o.csv]]) if (path) process.stderr.write(`jetprof report: wrote ${what} ${path}\n`);
      } catch (e) {
        process.exitCode = handleError(e);
      }
    });
}
