/** `jetprof compare <video>`: every available backend on one video, optionally profiled, then the report. */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import { asCommand, collect, parseIntInRange, type Program } from './options.ts';
import { backendByAlias, type BackendName } from '../backends/types.ts';
import { resolve } from 'node:path';
import { JetprofError } from '../util/errors.ts';
import { handleError } from './handle-error.ts';
import { forwardSignalsToChild } from './child-signals.ts';
import { helpAfter } from './help-text.ts';
import { say } from './terminal.ts';
import { INFER_FLAGS as F } from '../pipeline/infer-args.ts';

function parseBackends(value: string): BackendName[] {
  const names = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  const bad = names.find((n) => !backendByAlias(n));
  if (bad || names.length === 0)
    throw new InvalidArgumentError(`--backends takes a comma-separated list of onnx, trt, opencv; got '${value}'`);
  return [...new Set(names.map((n) => backendByAlias(n)!))];
}

/** The Speed section of REPORT.md (the lab table, accuracy, speed-ups and what was not compared), without the rest. */
function speedSection(md: string): string {
  const lines = md.split('\n');
  const start = lines.findIndex((l) => l === '## Speed');
  if (start < 0) return md.trim();
  const rest = lines.slice(start + 2);
  const end = rest.findIndex((l) => l.startsWith('## ') || l === '**What each row measured**');
  return (end < 0 ? rest : rest.slice(0, end)).join('\n').trim();
}

function compareDeclaration() {
  return new Command('compare')
    .summary(
      'the whole lab in one command: ONNX Runtime, TensorRT and OpenCV DNN on one video, profiled if asked, then the report',
    )
    .description(
      "Runs infer with each backend on the same video (TensorRT is skipped, with the reason, where it cannot run), under nvprof or nsys with --profile, and writes D/REPORT.md, D/report.html and D/csv/ from the results. Every backend keeps its boxes (D/detections_<backend>.json); the report says how many agree with the first backend's, and gives mAP per backend with --gt.\n" +
        "Every backend runs in one loop, so their figures compare: the sequential loop, as the lab's scripts (read, infer and write one frame at a time); -- --pipeline on compares the pipelined loop instead. The report says where a backend alone (--pipeline auto) would have picked the other.\n" +
        'Arguments after -- go to infer for every backend (model, frame size, frame count ...).\n' +
        'Exit codes: 0 every backend ran; 1 a backend failed (its row and last line are in the report, which is written anyway); 2 bad input; 3 --profile nvprof on a machine without a GPU nvprof can use (said before any backend runs); 130 interrupted.',
    )
    .argument('<video>', 'input video')
    .argument('[infer-args...]', 'infer arguments for every backend, after --')
    .showHelpAfterError(
      "(infer's options go after --, e.g. jetprof compare videos/vtest.avi -- --model weights/yolov4-tiny.onnx)",
    )
    .addOption(new Option('--profile <tool>', 'run each backend under this profiler').choices(['nvprof', 'nsys']))
    .option('-d, --out-dir <dir>', 'where runs, profiles and the report go', 'compare')
    .option('--engine <file.trt>', 'TensorRT engine (without it TensorRT is skipped)')
    .option('--plugin <lib.so>', 'TensorRT plugin library (repeatable)', collect, [] as string[])
    .option('--top <n>', 'rows per profile table in the report', parseIntInRange('--top', 1, 1000), 10)
    .option(
      '--backends <list>',
      'backends to run, in order; the first is the reference the others are checked against',
      (v: string) => parseBackends(v),
      ['onnx', 'tensorrt', 'opencv'] as BackendName[],
    )
    .option('--gt <annotations.json>', "COCO ground truth for the video's frames: the report adds mAP per backend")
    .option(
      '--label <prefix>',
      'name the rows <prefix>-onnx and <prefix>-trt (default: backend-precision-provider-loop)',
    )
    .option(
      '--repeat <n>',
      'run each backend n times; the report shows mean ± std of each row',
      parseIntInRange('--repeat', 1, 1000),
      1,
    )
    .addHelpText(
      'after',
      helpAfter([
        {
          cmd: 'jetprof compare videos/vtest.avi --engine engines/yolov4-tiny.trt -- --model weights/yolov4-tiny.onnx --frame-size 960x540',
        },
        {
          cmd: 'jetprof compare videos/vtest.avi --repeat 5 -- --model weights/yolov4-tiny.onnx --max-frames 200',
          note: 'mean ± std over 5 runs of each backend',
        },
        {
          cmd: 'jetprof compare videos/vtest.avi --profile nsys --out-dir lab -- --cfg weights/yolov4-tiny.cfg --weights weights/yolov4-tiny.weights --max-frames 100',
        },
      ]),
    );
}

/** compare's options, typed from its declaration. */
type CompareCliOptions = ReturnType<ReturnType<typeof compareDeclaration>['opts']>;

export function compareCommand(): Program {
  return asCommand(compareDeclaration().action(compareAction));
}

/** The compare command's run: its checks, the backends one after the other with signals forwarded, the speed table. */
async function compareAction(video: string, inferArgs: string[], o: CompareCliOptions): Promise<void> {
  try {
    const { runCompare } = await import('../jobs/compare.ts');
    if (inferArgs.some((a) => a === '--backend' || a === '-b' || a.startsWith('--backend='))) {
      throw new JetprofError('BAD_OPTION', 'compare runs every backend itself; do not pass --backend', {
        suggestion: 'remove --backend from the arguments after --',
      });
    }
    if (o.repeat > 1 && o.profile) {
      throw new JetprofError(
        'BAD_OPTION',
        '--repeat with --profile: FPS measured under a profiler are not for comparing speeds',
        {
          suggestion: 'profile once (--profile), and repeat without the profiler (--repeat)',
        },
      );
    }
    // infer's own parser reads its arguments: a bad one is refused now, before any backend runs
    const { inferArgFacts } = await import('./infer-command.ts');
    const infer = await inferArgFacts([video, ...inferArgs]);
    for (const own of [F.repeat, F.label]) {
      if (infer.given.includes(own)) {
        throw new JetprofError(
          'BAD_OPTION',
          `pass ${own} to compare itself, before -- (each backend gets its own row)`,
          { suggestion: `jetprof compare ${video} ${own} ... -- <infer arguments>` },
        );
      }
    }
    // Ctrl-C / SIGTERM / SIGHUP: forwarded to the infer process running now, which finishes its frame and
    // finalizes its files; compare then runs no further backend, writes the report of what ran and exits 130.
    const signals = forwardSignalsToChild((signal) =>
      process.stderr.write(
        `\njetprof compare: ${signal}: stopping after the backend that is running (it finalizes its files)\n`,
      ),
    );
    const r = await runCompare({
      shouldStop: signals.stopped,
      onChild: signals.onChild,
      video,
      outDir: resolve(o.outDir),
      profile: o.profile,
      inferArgs,
      infer,
      engine: o.engine,
      plugins: o.plugin,
      top: o.top,
      repeat: o.repeat,
      label: o.label,
      backends: o.backends,
      gt: o.gt,
      onStep: (line) => say('jetprof compare', line),
    });
    // the speed table and what it says, as in REPORT.md, then where the whole report is
    process.stdout.write(`${speedSection(readFileSync(r.report, 'utf8'))}\n\nreport: ${r.report} (HTML: ${r.html})\n`);
    // every backend asked for must have run: a crash or a failure under a profiler is exit 1, with its row in the report
    if (r.failed.length)
      process.stderr.write(
        `jetprof compare: ${r.failed.map((f) => `${f.backend} failed (exit code ${f.exitCode})`).join(', ')}; the report shows it\n`,
      );
    process.exitCode = signals.stopped() ? 130 : r.ran.length === 0 || r.failed.length > 0 ? 1 : 0;
    signals.dispose();
  } catch (e) {
    process.exitCode = handleError(e);
  }
}
