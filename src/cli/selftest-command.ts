/** `jetprof selftest`: what works on this machine, proven by running it; the table, DIR/selftest.json and SELFTEST.md. */
import { Command } from '@commander-js/extra-typings';
import { asCommand, parseIntInRange, type Program } from './options.ts';
import { join, resolve } from 'node:path';
import { writeOutput } from '../output/output.ts';
import { selftestAnswer, selftestDocument } from '../jobs/selftest-format.ts';
import { markdownOf } from '../report/markdown.ts';
import { requireWritableDir } from '../util/files.ts';
import { JetprofError } from '../util/errors.ts';
import type { SelftestGroup } from '../jobs/selftest.ts';
import { doctor } from '../platform/doctor.ts';
import { readBoard } from '../platform/board.ts';
import { forwardSignalsToChild } from './child-signals.ts';
import { liveProbes } from './doctor-command.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';
import { say } from './terminal.ts';

export function selftestCommand(): Program {
  const command = new Command('selftest')
    .summary('what works on this machine, proven by running it (the first command on a new board)')
    .description(
      'Runs every component present, each as its own process, ended if it takes longer than --timeout:\n' +
        '  backends: ONNX Runtime on the CPU (the reference), OpenCV DNN on the CPU and with CUDA, TensorRT (--engine, or an FP16 engine trtexec builds): each runs the same clip through infer; its inference and end-to-end FPS, its raw head outputs against ONNX Runtime on the same inputs (max and mean absolute difference) and its boxes matched at IoU 0.5;\n' +
        "  video: OpenCV's FFmpeg reader and writer, GStreamer's (software, or the board's nvv4l2decoder and nvv4l2h264enc): the clip decoded and encoded again, and the written file counted frame by frame;\n" +
        '  profilers: nsys and nvprof profile a few frames and their output is parsed;\n' +
        '  board: a tegrastats sample (load, clocks, power) and the power mode.\n' +
        'Writes DIR/selftest.json (jetprof.selftest/1: one entry per component, status ok | fail | absent, its figure, the fix) and DIR/SELFTEST.md; prints the table. Exit 0 when every component present works (absent is not a failure), 1 when one fails, 2 for bad input, 130 after Ctrl-C. jetprof doctor is the quick look that runs nothing.',
    )
    .option('--out-dir <dir>', 'where the results and every run of the test go', 'selftest')
    .option(
      '--engine <file.trt>',
      'a TensorRT engine for the TensorRT row (built for --model; else trtexec builds one)',
    )
    .option(
      '--model <file.onnx>',
      'the model every backend runs (default: weights/yolov4-tiny.onnx, else seeded weights that fire on every frame)',
    )
    .option('--video <file>', 'the clip (default: videos/vtest.avi, else one made with ffmpeg)')
    .option('--frames <n>', 'frames each run reads, 2 of them warm-up', parseIntInRange('--frames', 4, 10_000), 24)
    .option(
      '--timeout <s>',
      'seconds a component may take before it is ended (an engine build: six times as long)',
      parseIntInRange('--timeout', 5, 86_400),
      600,
    )
    .option('--only <groups>', 'only these, comma-separated: backends, video, profilers, board')
    .addHelpText(
      'after',
      helpAfter([
        { cmd: 'jetprof selftest --out-dir runs/selftest', note: 'on any machine' },
        {
          cmd: 'bash board/jetpack4/run.sh jetprof selftest --engine engines/yolov4-tiny.trt --out-dir runs/selftest',
          note: "a Jetson Nano, in jetprof's JetPack 4 container: attach runs/selftest/selftest.json to a bug report",
        },
      ]),
    )
    .action(async (o) => {
      const signals = forwardSignalsToChild((signal) =>
        process.stderr.write(`\njetprof selftest: ${signal}: stopping after the component that is running\n`),
      );
      try {
        const outDir = resolve(o.outDir);
        const { checkSelftestInputs, runSelftest, SELFTEST_GROUPS } = await import('../jobs/selftest.ts');
        const only = o.only?.split(',').map((g) => g.trim());
        const bad = only?.find((g) => !(SELFTEST_GROUPS as readonly string[]).includes(g));
        if (bad !== undefined)
          throw new JetprofError('BAD_OPTION', `--only ${o.only}: '${bad}' is not a group`, {
            suggestion: `use one or more of ${SELFTEST_GROUPS.join(', ')}`,
          });
        checkSelftestInputs(o, outDir);
        requireWritableDir(join(outDir, 'selftest.json'), '--out-dir');
        const r = await runSelftest({
          outDir,
          engine: o.engine,
          model: o.model,
          video: o.video,
          frames: o.frames,
          timeoutS: o.timeout,
          only: only as SelftestGroup[] | undefined,
          onStep: (line) => say('jetprof selftest', line),
          shouldStop: signals.stopped,
          onChild: signals.onChild,
        });
        process.stdout.write(markdownOf(selftestAnswer(r)));
        if (r.interrupted) {
          // a partial run is not a result: the previous one, if any, stays the one to attach
          say('jetprof selftest', `interrupted: nothing written; ${join(outDir, 'selftest.json')} is as it was`);
        } else {
          // doctor's table beside what ran: what is installed, and the fix for each gap
          r.doctor = doctor(readBoard(), await liveProbes()).rows;
          writeOutput(join(outDir, 'selftest.json'), `${JSON.stringify(r, null, 2)}\n`);
          writeOutput(join(outDir, 'SELFTEST.md'), markdownOf(selftestDocument(r)));
          process.stdout.write(`${join(outDir, 'SELFTEST.md')}\n`);
        }
        process.exitCode = r.interrupted ? 130 : r.ok ? 0 : 1;
      } catch (e) {
        process.exitCode = handleError(e);
      } finally {
        signals.dispose();
      }
    });
  return asCommand(command);
}
