/** What infer refuses before anything runs: options that contradict each other or the run's sources, one line each. */
import { isLive } from '../video/sources.ts';
import { JetprofError } from '../util/errors.ts';
import type { StreamSpec } from '../pipeline/loop-options.ts';
import type { InferCliOptions } from './infer-options.ts';

/** Contradictory or impossible options: refused before anything runs, one line each. */
export function refuseBadOptions(o: InferCliOptions): void {
  if (o.maxFrames !== undefined && o.maxFrames <= o.warmup) {
    throw new JetprofError(
      'BAD_OPTION',
      `--max-frames ${o.maxFrames} leaves no frame to measure after --warmup ${o.warmup}`,
      {
        suggestion: `pass --max-frames ${o.warmup + 1} or more, or a smaller --warmup`,
      },
    );
  }
  if (o.model && (o.cfg || o.weights)) {
    throw new JetprofError(
      'BAD_OPTION',
      `--model ${o.model} and --cfg/--weights both name a model: which one to run is ambiguous`,
      {
        suggestion:
          "pass --model M.onnx alone, or --cfg C.cfg --weights W.weights alone (OpenCV DNN's darknet importer takes the latter)",
      },
    );
  }
  if (o.model && o.labels) {
    throw new JetprofError(
      'BAD_OPTION',
      `--labels ${o.labels} would be ignored: ${o.model} carries the labels it was exported with`,
      {
        suggestion: `export again with them: jetprof export --cfg C.cfg --weights W.weights --labels ${o.labels} --out ${o.model}`,
      },
    );
  }
  if (o.backend === 'opencv' && o.ep === 'tensorrt') {
    throw new JetprofError(
      'BAD_OPTION',
      '--ep tensorrt is an ONNX Runtime provider; OpenCV DNN takes --ep cpu or cuda',
      { suggestion: 'use --backend trt with an engine for TensorRT' },
    );
  }
}

/** Stream, batch and pacing options that contradict the run's sources: refused before anything runs. */
export function refuseBadStreamOptions(o: InferCliOptions, specs: StreamSpec[]): void {
  const streamCount = specs.length;
  if (o.batch !== undefined && o.batch > streamCount) {
    throw new JetprofError(
      'BAD_OPTION',
      `--batch ${o.batch} is more than the ${streamCount} stream${streamCount === 1 ? '' : 's'} of this run: a batch takes one frame from each stream`,
      { suggestion: `pass --batch ${streamCount} or less, or more streams (--streams N)` },
    );
  }
  const liveSource = specs.some((s) => isLive(s.arg.kind));
  if (o.batchTimeout !== undefined && !o.realtime && !liveSource) {
    throw new JetprofError('BAD_OPTION', '--batch-timeout paces batches of live sources and of --realtime files', {
      suggestion: 'add --realtime (files are otherwise read at once, so a batch never waits)',
    });
  }
  if (o.stagger && !o.realtime) {
    throw new JetprofError('BAD_OPTION', '--stagger spreads the arrivals of --realtime streams over a frame time', {
      suggestion: 'add --realtime (and --streams N)',
    });
  }
  if (o.sourceFps !== undefined && !o.realtime) {
    throw new JetprofError('BAD_OPTION', '--source-fps paces the sources of --realtime', {
      suggestion: 'add --realtime',
    });
  }
  // a folder of images has no frame rate of its own: it would be paced at 1 FPS without a word
  const folder = specs.find((s) => s.arg.kind === 'images');
  if (o.realtime && o.sourceFps === undefined && folder) {
    throw new JetprofError('BAD_OPTION', `${folder.source}: a folder of images has no frame rate for --realtime`, {
      suggestion: 'give the rate its camera delivered, e.g. --source-fps 10',
    });
  }
}
