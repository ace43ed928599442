/** `jetprof capacity <source> --source-fps F --p99-ms D -- <infer args>`: how many camera streams this machine holds. */
import { basename } from 'node:path';
import {
  CAPACITY_ALIGN,
  CAPACITY_HEADERS,
  MIN_P99_FRAMES,
  capacityMachineLine,
  type CapacityResult,
  capacityRows,
  capacitySentence,
  defaultPointSeconds,
} from '../report/capacity-format.ts';
import { Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { asCommand, parseIntInRange, parsePercent, parseSourceFps, type Program } from './options.ts';
import { backendByAlias, type BackendName } from '../backends/types.ts';
import { writeOutput } from '../output/output.ts';
import { classifySource } from '../video/sources.ts';
import type { Block } from '../report/blocks.ts';
import { markdownOf } from '../report/markdown.ts';
import { JetprofError } from '../util/errors.ts';
import { handleError } from './handle-error.ts';
import { forwardSignalsToChild } from './child-signals.ts';
import { helpAfter } from './help-text.ts';
import { claimOutputs } from '../output/output.ts';
import { requireWritableDir } from '../util/files.ts';
import { say } from './terminal.ts';
import { INFER_FLAGS as F } from '../pipeline/infer-args.ts';

/** What one count costs beyond its --point-seconds: infer's start-up (model load, warm-up) and its end. */
const POINT_STARTUP_S = 5;

const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!(n > 0 && Number.isFinite(n))) throw new InvalidArgumentError(`${name} must be a number above 0, got '${v}'`);
  return n;
};

function capacityDeclaration() {
  return new Command('capacity')
    .summary('how many camera streams of a source this machine holds at a frame rate and a p99 latency')
    .description(
      "Runs infer with --streams N --realtime for 1, 2, 4, ... streams of SOURCE, each paced at --source-fps as a camera delivers frames, until a count does not hold, then bisects: a count holds when every stream keeps 95% of the frame rate, the run drops at most --max-dropped of the frames the cameras delivered, and the worst stream's p99 latency from a frame's arrival to its boxes is within --p99-ms. Each count runs --point-seconds and is repeated (--repeat); a count holds only when every run held, and one that held near the line is run again before it counts. The search stops by itself within --budget seconds and prints a table, the answer with its margin (how the count held, how the next one up failed) and the machine's state over the search (load, CPU steal, CPU time, memory; on a Jetson power mode, GPU clocks and temperature).\n" +
        "Counts run without writing the streams' videos (infer --no-write) unless --write says so; the answer says which. Arguments after -- go to infer (model, frame size, ...). Each count runs in batches of all its streams (infer's default); --batch B after -- runs batches of at most B (min(B, streams)): --batch 1 for a TensorRT engine built for batch 1.",
    )
    .argument('<source>', 'a video file (or a stream) to replicate as cameras')
    .argument('[infer-args...]', 'infer arguments, after --')
    .requiredOption(
      '--source-fps <fps>',
      'the frame rate each camera delivers (0.1 to 1000)',
      parseSourceFps('--source-fps'),
    )
    .requiredOption('--p99-ms <ms>', 'the p99 latency (arrival to boxes) a stream may have', positive('--p99-ms'))
    .option('-b, --backend <name>', 'onnx, trt or opencv', 'onnx')
    .option(
      '--budget <s>',
      'the whole search stops within this many seconds',
      parseIntInRange('--budget', 10, 86_400),
      240,
    )
    .option(
      '--point-seconds <s>',
      `how long each run of a count measures (default: enough for ${MIN_P99_FRAMES} frames a stream at --source-fps, so that its p99 is not just the maximum; at least 8)`,
      parseIntInRange('--point-seconds', 1, 3600),
    )
    .option(
      '--max-dropped <percent>',
      'the share of the frames the cameras delivered that a run may drop and still hold (a frame lost now and then to a busy moment is not a lost camera)',
      parsePercent('--max-dropped'),
      1,
    )
    .option(
      '--repeat <n>',
      'runs of each count; it holds only when every run held, and one that held near the line (p99 above 80% of the limit, any frame dropped) is run as many times again before it counts',
      parseIntInRange('--repeat', 1, 10),
      2,
    )
    .option(
      '--stagger',
      "spread the streams' frames over a frame time (infer --stagger), as cameras that are not synchronised deliver them; without it a file replayed as n streams delivers every stream's frame at the same instant (lock-step: the best case for batching, so the answer may be higher than for real cameras)",
      false,
    )
    .option('--json <file>', 'write the result (jetprof.capacity/1)')
    .option(
      '--write',
      "write every stream's annotated video, as infer does by default; without it the search runs infer --no-write (faster: cameras whose video is recorded hold fewer streams)",
      false,
    )
    .showHelpAfterError(
      "(infer's options go after --, e.g. jetprof capacity videos/vtest.avi --source-fps 10 --p99-ms 400 -- --model weights/yolov4-tiny.onnx)",
    )
    .addHelpText(
      'after',
      helpAfter([
        {
          cmd: 'jetprof capacity videos/vtest.avi --source-fps 10 --p99-ms 400 --stagger -- --model weights/yolov4-tiny.onnx --frame-size 960x540',
          note: "how many 10 FPS cameras, with boxes within 400 ms at p99 (vtest.avi is MPEG-4 part 2, msmpeg4v3: a Jetson decodes it in software, on the CPU, where a camera's H.264 or H.265 goes through the board's decoder; --stagger: the replayed streams do not arrive in lock-step)",
        },
        {
          cmd: 'jetprof capacity rtsp://cam/stream --source-fps 30 --p99-ms 200 --budget 600 -b trt -- --engine engines/yolov4-tiny.trt --batch 1',
        },
      ]),
    );
}

/** capacity's options, typed from its declaration. */
type CapacityCliOptions = ReturnType<ReturnType<typeof capacityDeclaration>['opts']>;

export function capacityCommand(): Program {
  return asCommand(capacityDeclaration().action(capacityAction));
}

/** Everything that would make the search answer nothing or lose a file, said before it starts; what it reads of the options. */
async function refuseBadCapacity(source: string, inferArgs: string[], o: CapacityCliOptions) {
  const backend = backendByAlias(o.backend) as BackendName | undefined;
  if (!backend) throw new JetprofError('BAD_OPTION', `--backend must be onnx, trt or opencv, got '${o.backend}'`);
  // infer's own parser reads its arguments: a bad one is refused now, not at the first count
  const { inferArgFacts } = await import('./infer-command.ts');
  const infer = await inferArgFacts([source, ...inferArgs], backend);
  if ([F.streams, F.realtime, F.sourceFps, F.duration].some((a) => infer.given.includes(a))) {
    throw new JetprofError('BAD_OPTION', 'capacity sets --streams, --realtime, --source-fps and --duration itself', {
      suggestion: 'remove them from the arguments after --',
    });
  }
  // capacity runs the source as N streams; a folder of images is one stream only (infer refuses more)
  if (classifySource(source).kind === 'images')
    throw new JetprofError(
      'BAD_OPTION',
      `${source}: a folder of images is one stream only, and capacity runs its source as 1, 2, 4, ... streams`,
      {
        suggestion: `make a video of it first: ffmpeg -framerate ${o.sourceFps} -pattern_type glob -i '${source.replace(/\/$/, '')}/*.jpg' -c:v libx264 -pix_fmt yuv420p frames.mp4`,
      },
    );
  // each count needs its point and infer's start-up: a budget that cannot hold one answers nothing
  const pointSeconds = o.pointSeconds ?? defaultPointSeconds(o.sourceFps);
  const smallest = pointSeconds + POINT_STARTUP_S;
  if (o.budget < smallest)
    throw new JetprofError(
      'BAD_OPTION',
      `--budget ${o.budget} cannot hold one count: each runs --point-seconds ${pointSeconds} plus about ${POINT_STARTUP_S} s of start-up`,
      { suggestion: `give --budget ${smallest} or more (or a smaller --point-seconds)` },
    );
  // the result may not replace an input, and its folder must take it: checked before minutes of search
  if (o.json) {
    requireWritableDir(o.json, '--json');
    claimOutputs(
      {
        source,
        model: infer.model,
        cfg: infer.cfg,
        weights: infer.weights,
        labels: infer.labels,
        engine: infer.engine,
      },
      { 'capacity JSON': o.json },
    );
  }
  return { backend, infer, pointSeconds };
}

/** The answer on stdout, as Markdown a report can paste: the counts tried, how many streams hold, on which machine. */
function capacityAnswer(r: CapacityResult, source: string): Block[] {
  const machine = capacityMachineLine(r);
  return [
    { kind: 'table', headers: CAPACITY_HEADERS, rows: capacityRows(r), align: CAPACITY_ALIGN },
    { kind: 'paragraph', text: `${capacitySentence(r, basename(source))} (searched in ${r.seconds.toFixed(0)} s).` },
    ...(machine ? [{ kind: 'paragraph' as const, text: machine }] : []),
  ];
}

/** The command: check, search, then the table and the answer (or why there is none). */
async function capacityAction(source: string, inferArgs: string[], o: CapacityCliOptions): Promise<void> {
  const signals = forwardSignalsToChild();
  try {
    const { backend, infer, pointSeconds } = await refuseBadCapacity(source, inferArgs, o);
    const { runCapacity } = await import('../jobs/capacity.ts');
    const r = await runCapacity({
      source,
      backend,
      sourceFps: o.sourceFps,
      p99Ms: o.p99Ms,
      budgetS: o.budget,
      pointS: pointSeconds,
      dropTolerance: o.maxDropped / 100,
      repeat: o.repeat,
      inferArgs,
      infer,
      write: o.write,
      stagger: o.stagger,
      onStep: (line) => say('jetprof capacity', line),
      shouldStop: signals.stopped,
      onChild: signals.onChild,
    });
    if (r.points.length === 0) {
      // nothing measured: no answer, and the previous --json stays as it was
      const why = signals.stopped()
        ? 'interrupted before the first count finished'
        : `the ${o.budget} s budget ran out before the first count finished`;
      process.stderr.write(
        `jetprof capacity: nothing measured (${why})${o.json ? `; ${o.json} left as it was` : ''}\n`,
      );
      process.exitCode = signals.stopped() ? 130 : 1;
      return;
    }
    process.stdout.write(markdownOf(capacityAnswer(r, source)));
    if (o.json) writeOutput(o.json, `${JSON.stringify(r, null, 2)}\n`);
    process.exitCode = signals.stopped() ? 130 : 0;
  } catch (e) {
    process.exitCode = handleError(e);
  } finally {
    signals.dispose();
  }
}
