/** `jetprof report`: run JSONs and profiles -> the lab report (Markdown, CSV, HTML). Loads no native module. */
import { Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { asCommand, collect, parseFraction, parseIntInRange, type Program } from './options.ts';
import type { TypedFps } from '../report/report-types.ts';
import { writeReport } from '../report/write-report.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';
import { say } from './terminal.ts';

/** "TensorRT@960x540@Jetson Nano=10.45/4.99" -> a typed-in row; one line naming the option otherwise. */
function parseTypedFps(value: string): TypedFps {
  const m = /^(.+?)(?:@(\d+)x(\d+))?(?:@([^=@]+))?=(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(value.trim());
  if (!m || Number(m[5]) <= 0 || Number(m[6]) <= 0) {
    throw new InvalidArgumentError(
      `--fps takes NAME[@WxH][@DEVICE]=INFERENCE/END_TO_END with positive FPS, e.g. "TensorRT@960x540@Jetson Nano=10.45/4.99"; got '${value}'`,
    );
  }
  const [inference, e2e] = [Number(m[5]), Number(m[6])];
  if (e2e > inference) {
    throw new InvalidArgumentError(
      `--fps '${value}': end-to-end ${e2e} is above inference ${inference}, and end to end includes the inference (swapped? INFERENCE comes first)`,
    );
  }
  return {
    name: m[1].trim(),
    ...(m[2] ? { inputSize: [Number(m[2]), Number(m[3])] as [number, number] } : {}),
    ...(m[4]?.trim() ? { device: m[4].trim() } : {}),
    inferenceFps: inference,
    endToEndFps: e2e,
  };
}

function reportDeclaration() {
  return new Command('report')
    .summary(
      'the lab report: FPS table, speed-ups, stages, critical path, waiting time, top kernels (Markdown, CSV, HTML)',
    )
    .description(
      'Builds the report from run results (infer --json) and profiles (nvprof logs, nsys stats output, or the JSON of\n' +
        '`jetprof parse` / `jetprof profile`). A `jetprof profile` JSON brings its run along when no --run is given.\n' +
        'Prints the Markdown on stdout unless --out is given.',
    )
    .option('-r, --run <run.json>', 'a run result; repeat for each backend', collect, [] as string[])
    .option(
      '--fps <NAME[@WxH][@DEVICE]=INF/E2E>',
      'a row from figures typed in (e.g. the lab\'s own scripts on a JetPack 4 board): "TensorRT@960x540@Jetson Nano=10.45/4.99"; the device tells it apart from rows measured here; repeatable',
      (v: string, prev: TypedFps[]) => [...prev, parseTypedFps(v)],
      [] as TypedFps[],
    )
    .option('-p, --profile <file>', 'a profile; repeat for each', collect, [] as string[])
    .option(
      '--reconcile <row>',
      'the typed-in row (--fps NAME) an nvprof log was measured with, for the per-frame split (default: the row named TensorRT or TRT, or the only one)',
    )
    .option(
      '--capacity <capacity.json>',
      'a `jetprof capacity --json` result: its table, answer and chart; repeatable',
      collect,
      [] as string[],
    )
    .option('-o, --out <REPORT.md>', 'write the Markdown here')
    .option('--html <report.html>', 'also write a self-contained HTML page with charts')
    .option('--csv <dir>', 'also write the tables as CSV files into this folder')
    .option('--top <n>', 'rows per critical-path / kernel / API table', parseIntInRange('--top', 1, 1000), 10)
    .option('--title <text>', 'report title')
    .option('--ref <label>', 'the row whose boxes the others are checked against (default: ONNX Runtime FP32)')
    .option('--gt <annotations.json>', 'COCO ground truth: mAP per run that kept its detections (infer --detections)')
    .option(
      '--min-match <share>',
      'a speed-up between two rows that kept boxes needs this matched share (0..1)',
      parseFraction('--min-match'),
      0.99,
    )
    .addHelpText(
      'after',
      helpAfter([
        {
          cmd: 'jetprof report --run runs/onnx.json --run runs/trt.json --profile profiles/profiling_trt_log.txt --out REPORT.md --html report.html',
        },
        {
          cmd: 'jetprof report --profile profiling_trt_log.txt --fps "TensorRT@960x540=10.45/4.99" --fps "PyTorch@960x540=1.09/0.92"',
          note: "the off-board route: the lab's own figures typed in, beside the parsed nvprof log",
        },
        { cmd: 'jetprof report --profile profiles/profile_onnx_nsys.json --csv report-csv' },
        {
          cmd: 'jetprof report --run runs/streams.json --capacity runs/capacity.json --html report.html',
          note: 'a run of several streams beside how many streams the board holds',
        },
      ]),
    );
}

/** report's options, typed from its declaration. */
type ReportFlags = ReturnType<ReturnType<typeof reportDeclaration>['opts']>;

export function reportCommand(): Program {
  return asCommand(reportDeclaration().action(reportAction));
}

async function reportAction(o: ReportFlags): Promise<void> {
  try {
    const md = await writeReport({
      runs: o.run,
      typedFps: o.fps,
      reconcileRow: o.reconcile,
      profiles: o.profile,
      capacity: o.capacity,
      out: o.out,
      html: o.html,
      csv: o.csv,
      top: o.top,
      title: o.title,
      ref: o.ref,
      gt: o.gt,
      minMatch: o.minMatch,
      onWarning: (m) => say('jetprof report', `warning: ${m}`),
    });
    if (!o.out) process.stdout.write(md);
    for (const [what, path] of [
      ['Markdown', o.out],
      ['HTML', o.html],
      ['CSV', o.csv],
    ])
      if (path) process.stderr.write(`jetprof report: wrote ${what} ${path}\n`);
  } catch (e) {
    process.exitCode = handleError(e);
  }
}
