/**
 * Several sources in one run (`infer A.mp4 B.mp4`, `--streams N`), the DeepStream way of asking how many cameras a
 * board holds: the streams take turns, one frame each, through the same session, and each is read, preprocessed,
 * inferred, postprocessed and written in series (batch 1). A stream that ends leaves the others running. Every frame
 * is one record of one tally (its `stream` column says whose), so the run's figures are over all streams and each
 * stream's figures come from its own rows.
 */
import type { DetectorSession } from '../backends/types.ts';
import type { YoloModelInfo } from '../model/metadata.ts';
import { percentile } from '../util/stats.ts';
import {
  drawFrame,
  type FrameLoopOptions,
  noFrameDecoded,
  openLoopIo,
  preprocessFrame,
  pushPopRanges,
  rangeName,
  readNextFrame,
} from './loop-io.ts';
import { LoopTally } from './loop-tally.ts';
import { nsToMs, type PerFrame } from './stages.ts';

export interface StreamSpec {
  source: string;
  /** Its annotated video; undefined with --no-write. */
  outputPath?: string;
}

/** What one stream did, from its rows of the per-frame columns. */
export interface StreamRecord {
  index: number;
  source: string;
  width: number;
  height: number;
  frames: number;
  /** Frames its source gave that were not processed (0 here: every frame is processed at batch 1). */
  droppedFrames: number;
  endToEndFps: number;
  /** From the start of a frame's read to its boxes (ms), over the measured frames. */
  latencyMs: { p50: number; p90: number; p99: number };
  output?: { path: string; codec: string; width?: number; height?: number };
  /** The source stopped before the run did (a file that ended, a camera that went away). */
  endedEarly?: { framesRead: number; reason: string };
}

export interface MultiStreamResult {
  tally: LoopTally;
  streams: StreamRecord[];
  interrupted: boolean;
  framesRead: number;
  /** The first stream's source facts, for the run's top-level fields. */
  first: { video: ReturnType<typeof openLoopIo>['source']['info']; frameSize: [number, number] };
}

/** One stream's figures from the shared columns (rows whose `stream` is `i`). */
export function streamFigures(p: PerFrame, i: number): Pick<StreamRecord, 'frames' | 'endToEndFps' | 'latencyMs'> {
  const rows = p.index.map((_, k) => k).filter((k) => p.stream?.[k] === i);
  if (rows.length === 0) return { frames: 0, endToEndFps: 0, latencyMs: { p50: NaN, p90: NaN, p99: NaN } };
  const wall = Math.max(...rows.map((k) => p.endMs[k])) - Math.min(...rows.map((k) => p.startMs[k]));
  const latency = rows.map((k) => p.postprocessStartMs[k] + p.postprocessMs[k] - p.startMs[k]).sort((a, b) => a - b);
  return {
    frames: rows.length,
    endToEndFps: wall > 0 ? (rows.length / wall) * 1000 : 0,
    latencyMs: { p50: percentile(latency, 50), p90: percentile(latency, 90), p99: percentile(latency, 99) },
  };
}

export async function runMultiStreamLoop(
  session: DetectorSession,
  model: YoloModelInfo,
  o: FrameLoopOptions & { streams: StreamSpec[] },
): Promise<MultiStreamResult> {
  const ios: ReturnType<typeof openLoopIo>[] = [];
  try {
    for (const s of o.streams) ios.push(openLoopIo(model, { ...o, videoPath: s.source, outputPath: s.outputPath }));
  } catch (e) {
    for (const io of ios) {
      io.sink?.abort();
      io.source.close();
    }
    throw e;
  }
  const tally = new LoopTally(o.warmupFrames, model.labels, false);
  const ranges = pushPopRanges(o.nvtx);
  const state = ios.map(() => ({ index: 0, done: false, endOfStream: false }));
  let interrupted = false;
  let framesRead = 0;
  try {
    while (state.some((s) => !s.done)) {
      if (o.shouldStop()) {
        interrupted = true;
        break;
      }
      if (o.shouldEnd?.()) break;
      for (const [i, io] of ios.entries()) {
        const s = state[i];
        if (s.done) continue;
        if (o.maxFrames !== undefined && s.index >= o.maxFrames) {
          s.done = true;
          continue;
        }
        const t0 = process.hrtime.bigint();
        tally.begin(t0);
        const got = await readNextFrame(
          () => io.source.read(),
          io.source.info.frameCount,
          s.index,
          ranges,
          io.resize,
          o.warmupFrames,
        );
        if (!got) {
          s.done = true;
          s.endOfStream = true;
          continue;
        }
        const frame = got.frame;
        const name = (n: string) => rangeName(n, s.index, o.warmupFrames);
        const t1 = process.hrtime.bigint();
        o.nvtx.push(name('preprocess'));
        const { input, blob } = preprocessFrame(io.cv, frame, io.g);
        o.nvtx.pop();
        const t2 = process.hrtime.bigint();
        o.nvtx.push(name('inference'));
        const result = await session.run(input, blob);
        o.nvtx.pop();
        const t3 = process.hrtime.bigint();
        o.nvtx.push(name('postprocess'));
        const post = io.post.run(result.outputs);
        const drawMs = drawFrame(io, frame, post.detections, tally, session.backend, model);
        o.nvtx.pop();
        const t4 = process.hrtime.bigint();
        o.nvtx.push(name('write'));
        io.sink?.write(frame);
        o.nvtx.pop();
        const t5 = process.hrtime.bigint();
        ranges.close(got.frameRange);
        tally.record(
          {
            index: s.index,
            t0,
            tInference: t2,
            tPostprocess: t3,
            tEnd: t5,
            readMs: nsToMs(t1 - t0),
            preprocessMs: nsToMs(t2 - t1),
            inferenceMs: nsToMs(t3 - t2),
            postprocessMs: nsToMs(t4 - t3),
            drawMs,
            writeMs: nsToMs(t5 - t4),
          },
          result,
          post,
          i,
        );
        s.index++;
        framesRead++;
      }
    }
    if (framesRead === 0 && !interrupted) throw noFrameDecoded(o.streams.map((s) => s.source).join(', '));
  } catch (e) {
    for (const io of ios) {
      io.sink?.abort();
      io.source.close();
    }
    throw e;
  }
  const streams: StreamRecord[] = [];
  for (const [i, io] of ios.entries()) {
    io.source.close();
    const figures = streamFigures(tally.measured, i);
    // a stream's video is kept when the stream measured frames: a failed or empty one leaves nothing
    if (io.sink && figures.frames > 0) await io.sink.finish();
    else io.sink?.abort();
    const sink = io.sink && figures.frames > 0 ? io.sink : undefined;
    const s = state[i];
    const earlyEnd = s.endOfStream && state.some((x, k) => k !== i && x.index > s.index);
    streams.push({
      index: i,
      source: o.streams[i].source,
      width: io.frameW,
      height: io.frameH,
      ...figures,
      droppedFrames: 0,
      ...(sink ? { output: { path: sink.path, codec: sink.codec, ...(sink.written ?? {}) } } : {}),
      ...(earlyEnd
        ? { endedEarly: { framesRead: s.index, reason: 'its source gave no more frames while other streams went on' } }
        : {}),
    });
  }
  return {
    tally,
    streams,
    interrupted,
    framesRead,
    first: { video: ios[0].source.info, frameSize: [ios[0].frameW, ios[0].frameH] },
  };
}
