/** bench section writers (11): see bench/run.ts for what each section measures. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FRAMES, log, median, onnx, results, ROOT, row, state, TSX, VIDEO, WORK } from '../common.ts';

type Writer = 'no-write' | 'ffmpeg' | 'gstreamer';
const WRITERS: Writer[] = ['no-write', 'ffmpeg', 'gstreamer'];

/**
 * Where writing the annotated video goes in the stage table: the sequential loop on the demo model at 960x540 with
 * OpenCV's FFmpeg writer, GStreamer's x264enc writer and --no-write, in rotating order over three rounds. For each:
 * the inference stage over the model-alone time (the encoder must not run during inference), the write stage, and
 * end-to-end FPS; the stage table must account for what writing costs (the wall time a frame gains over --no-write):
 * the write stage (the hand-off and the wait for the encoder), the drawing (which only a written video has, shown
 * apart as postprocess.draw) and how much the CPU stages the encoder runs beside grew.
 */
export function benchWriters() {
  state.section = 11;
  const ROUNDS = 5;
  const frames = FRAMES ?? 150;
  log(
    `writers. sequential loop, demo model, vtest.avi at 960x540, ${frames} frames: FFmpeg / GStreamer / no write, ${ROUNDS} rotating rounds`,
  );
  const runs: Record<Writer, Record<string, any>[]> = { 'no-write': [], ffmpeg: [], gstreamer: [] };
  for (let k = 0; k < ROUNDS; k++) {
    for (let j = 0; j < WRITERS.length; j++) {
      const writer = WRITERS[(j + k) % WRITERS.length];
      const json = join(WORK, `writer-${writer}.json`);
      // GStreamer's writer through `auto`: --video-io gstreamer would decode through GStreamer too, and the
      // comparison is of writers, every run decoding with FFmpeg (checked below)
      const io = writer === 'gstreamer' ? 'auto' : writer;
      const out = writer === 'no-write' ? ['--no-write'] : ['--video-io', io, '-o', join(WORK, `writer-${writer}.mp4`)];
      const r = spawnSync(
        process.execPath,
        [
          TSX,
          join(ROOT, 'src/cli/infer-onnx.ts'),
          VIDEO,
          '--model',
          onnx,
          '--frame-size',
          '960x540',
          '--pipeline',
          'off',
          '--max-frames',
          String(frames),
          '-q',
          '--json',
          json,
          ...out,
        ],
        { encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(`infer (${writer}) failed: ${r.stderr}`);
      const run = JSON.parse(readFileSync(json, 'utf8'));
      if (run.video.decoder !== 'FFmpeg')
        throw new Error(`infer (${writer}) decoded with ${run.video.decoder}, not FFmpeg`);
      if (writer === 'gstreamer' && run.output?.encoder !== 'GStreamer x264enc')
        throw new Error(`infer (--video-io auto) wrote with ${run.output?.encoder}: ${run.output?.encoderNote}`);
      runs[writer].push(run);
    }
  }
  const figures = Object.fromEntries(
    WRITERS.map((w) => {
      const rs = runs[w];
      return [
        w,
        {
          encoder: rs[0].output?.encoder ?? 'none',
          inferenceMs: median(rs.map((r) => r.stages.inference.meanMs)),
          modelAloneMs: median(rs.map((r) => r.modelAlone.perFrameMs)),
          inferenceOverModelAlone: median(rs.map((r) => r.stages.inference.meanMs / r.modelAlone.perFrameMs)),
          writeMs: median(rs.map((r) => r.stages.write.meanMs)),
          // the CPU stages besides writing (read, preprocess, postprocess without the drawing): the encoder runs beside
          // them, one frame behind the model
          cpuStagesMs: median(
            rs.map(
              (r) =>
                r.stages.read.meanMs +
                r.stages.preprocess.meanMs +
                r.stages.postprocess.meanMs -
                (r.postprocess?.draw?.meanMs ?? 0),
            ),
          ),
          // drawing the boxes and the overlay happens only when the video is written; the run JSON has it apart
          // (postprocess.draw), inside the postprocess stage
          drawMs: median(rs.map((r) => r.postprocess?.draw?.meanMs ?? 0)),
          endToEndFps: median(rs.map((r) => r.endToEndFps)),
          wallMsPerFrame: median(rs.map((r) => r.wallMs / r.frames)),
        },
      ];
    }),
  ) as unknown as Record<Writer, Record<string, any>>;
  const bare = figures['no-write'];
  for (const w of WRITERS) {
    const f = figures[w];
    row(
      `${w}: inference stage / model alone`,
      `${f.inferenceMs.toFixed(1)} / ${f.modelAloneMs.toFixed(1)} ms = ${f.inferenceOverModelAlone.toFixed(2)}x`,
      '<= 1.10x',
      f.inferenceOverModelAlone <= 1.1,
    );
    if (w === 'no-write') {
      row('no-write: end-to-end FPS', bare.endToEndFps.toFixed(2), '', undefined);
      continue;
    }
    const cost = f.wallMsPerFrame - bare.wallMsPerFrame;
    // the encoder works beside the next frames' CPU stages: what it does not finish there is the write stage's wait,
    // what it slows there is those stages' growth over --no-write
    const beside = f.cpuStagesMs - bare.cpuStagesMs;
    const held = f.writeMs + f.drawMs + beside;
    row(
      `${w} (${f.encoder}): write stage + draw + CPU stages' growth beside the encoder / what writing costs`,
      `${f.writeMs.toFixed(1)} + ${f.drawMs.toFixed(1)} + ${beside.toFixed(1)} / ${cost.toFixed(1)} ms a frame; end-to-end ${f.endToEndFps.toFixed(2)} FPS`,
      'within 15%',
      Math.abs(cost - held) <= 0.15 * Math.max(held, cost),
    );
  }
  results.writers = { frames, rounds: ROUNDS, frameSize: '960x540', loop: 'sequential', writers: figures };
}
