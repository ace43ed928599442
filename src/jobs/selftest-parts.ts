/**
 * `jetprof selftest`'s other parts: each video path decodes the clip and encodes it again (the written file counted
 * frame by frame), each profiler profiles a few frames (its output parsed), and on a board tegrastats and the power
 * mode are sampled.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { RunResult } from '../pipeline/run-result.ts';
import { inferArgv } from '../pipeline/infer-args.ts';
import { readBoard } from '../platform/board.ts';
import { parsePowerMode } from '../platform/env.ts';
import { parseTegrastatsLine } from '../platform/tegrastats.ts';
import { entryCommand } from '../profilers/profile-run.ts';
import { findExecutable } from '../util/executables.ts';
import { cliCommand, processRef, runCommand, signalProcess } from '../util/process.ts';
import { boardEncodes } from '../video/gstreamer.ts';
import { loadOpenCv, videoBackends } from '../video/opencv.ts';
import { inferArgs, Selftest } from './selftest-runner.ts';

/** Frames of a video file, counted by decoding every one (OpenCV). */
export function countFrames(path: string, limit = Infinity): number {
  const cv = loadOpenCv();
  const cap = new cv.VideoCapture(path);
  let n = 0;
  while (n < limit) {
    const m = cap.read();
    if (m.empty) break;
    n++;
    m.release();
  }
  cap.release();
  return n;
}

/** The video paths: OpenCV's FFmpeg reader and writer, GStreamer's (software, or the board's NVDEC/NVENC). */
export async function videoRows(t: Selftest, clip: string, model: string): Promise<void> {
  const has = videoBackends(loadOpenCv());
  const board = boardEncodes();
  const paths: { component: string; io: string; absent?: { detail: string; fix: string } }[] = [
    {
      component: 'video: FFmpeg (OpenCV)',
      io: 'ffmpeg',
      ...(has.ffmpeg
        ? {}
        : {
            absent: {
              detail: 'this OpenCV has no FFmpeg back-end',
              fix: "an OpenCV built with FFmpeg (Debian's and JetPack's are)",
            },
          }),
    },
    {
      component: board ? 'video: GStreamer nvv4l2 (NVDEC/NVENC)' : 'video: GStreamer software (avdec_h264, x264enc)',
      io: 'gstreamer',
      ...(has.gstreamer
        ? {}
        : {
            absent: {
              detail: 'this OpenCV has no GStreamer back-end',
              fix: "an OpenCV built with GStreamer (Debian's and JetPack's are)",
            },
          }),
    },
  ];
  for (const p of paths) {
    if (!t.going(p.component)) return;
    if (p.absent) {
      t.add({ component: p.component, status: 'absent', ...p.absent });
      continue;
    }
    const out = join(t.o.outDir, `video-${p.io}.mp4`);
    const json = join(t.o.outDir, `video-${p.io}.json`);
    const r = await t.run(
      [...entryCommand('onnx'), ...inferArgs(t, clip, model), ...inferArgv({ videoIo: p.io, output: out, json })],
      t.o.timeoutS,
    );
    if (r.code !== 0 || !existsSync(json)) {
      t.failed(p.component, r);
      continue;
    }
    const run = JSON.parse(readFileSync(json, 'utf8')) as RunResult;
    const read = run.frames + run.warmupFrames;
    const written = countFrames(out);
    const short = t.readShort(read);
    const ok = written === read && !short;
    t.add(
      {
        component: p.component,
        status: ok ? 'ok' : 'fail',
        figure: `${run.video.decoder ?? '?'} read ${read} frames, ${run.output?.encoder ?? '?'} wrote ${written} (${basename(out)}); write p50 ${run.stages.write.p50Ms.toFixed(1)} ms`,
        figures: {
          framesRead: read,
          framesWritten: written,
          decoder: run.video.decoder ?? '',
          encoder: run.output?.encoder ?? '',
        },
        command: r.command,
        ...(ok
          ? {}
          : short
            ? short
            : {
                detail: `the written file holds ${written} of the ${read} frames`,
                fix: 'jetprof doctor shows the writer and its elements',
              }),
      },
      r.seconds,
    );
  }
  if (!board && t.going('video: nvv4l2 (NVDEC/NVENC)'))
    t.add({
      component: 'video: nvv4l2 (NVDEC/NVENC)',
      status: 'absent',
      detail: 'no nvv4l2h264enc and nvvidconv here',
      fix: "a Jetson with JetPack's GStreamer plugins (in jetprof's JetPack 4 container: --runtime nvidia)",
    });
}

/** The profilers present: a few frames profiled and the output parsed. */
export async function profilerRows(t: Selftest, clip: string, model: string, io: string): Promise<void> {
  for (const tool of ['nsys', 'nvprof'] as const) {
    const component = `profiler: ${tool}`;
    if (!t.going(component)) return;
    const found = findExecutable(tool, tool === 'nvprof' ? ['/usr/local/cuda/bin/nvprof'] : []);
    if (!found) {
      t.add({
        component,
        status: 'absent',
        detail: 'not installed',
        fix:
          tool === 'nsys'
            ? 'Nsight Systems (JetPack: nsight-systems; Debian: scripts/setup.sh --profilers)'
            : 'JetPack 4: /usr/local/cuda/bin/nvprof; Debian: scripts/setup.sh --profilers',
      });
      continue;
    }
    const dir = join(t.o.outDir, `profile-${tool}`);
    const r = await t.run(
      [
        ...cliCommand('jetprof'),
        'profile',
        '--tool',
        tool,
        '--out-dir',
        dir,
        '--',
        ...inferArgs(t, clip, model, Math.min(t.o.frames, 8)),
        ...inferArgv({ videoIo: io, write: false }),
      ],
      t.o.timeoutS,
    );
    const parsed = join(dir, `profile_onnx_${tool}.json`);
    if (tool === 'nvprof' && r.code === 3) {
      t.add(
        {
          component,
          status: 'absent',
          figure: found,
          detail: 'installed; needs a supported GPU (none here: nvprof found no CUDA device)',
          fix: 'nvprof runs on a Jetson up to Xavier (JetPack 4 and 5); elsewhere profiler: nsys',
        },
        r.seconds,
      );
      continue;
    }
    if (r.code !== 0 || !existsSync(parsed)) {
      t.failed(component, r);
      continue;
    }
    const p = JSON.parse(readFileSync(parsed, 'utf8')) as {
      nsys?: { tables: unknown[] };
      nvprof?: { processes: unknown[] };
    };
    const tables = p.nsys?.tables.length ?? p.nvprof?.processes.length ?? 0;
    t.add(
      {
        component,
        status: tables > 0 ? 'ok' : 'fail',
        figure: `${found}: ${tables} ${p.nsys ? 'report table(s)' : 'process(es)'} parsed from ${basename(parsed)}`,
        command: r.command,
        ...(tables > 0 ? {} : { fix: `see ${dir}` }),
      },
      r.seconds,
    );
  }
}

/** On a board: a tegrastats sample (load, clocks, power) and the power mode. */
export async function boardRows(t: Selftest): Promise<void> {
  const b = readBoard();
  if (!t.going('board: tegrastats')) return;
  if (!b.tools.tegrastats)
    t.add({
      component: 'board: tegrastats',
      status: 'absent',
      detail: 'not a Jetson (no tegrastats)',
      fix: "on a Jetson it is /usr/bin/tegrastats (in jetprof's container: board/jetpack4/run.sh mounts it)",
    });
  else {
    const r = await runWithOutput([b.tools.tegrastats, '--interval', '500'], 3);
    const sample = r.lines.map(parseTegrastatsLine).find((s) => s !== undefined);
    t.add(
      sample
        ? {
            component: 'board: tegrastats',
            status: 'ok',
            figure: r.lines.find((l) => parseTegrastatsLine(l))!.slice(0, 160),
          }
        : {
            component: 'board: tegrastats',
            status: 'fail',
            detail: `no line it printed parses as tegrastats (${r.lines[0] ?? 'nothing'})`,
            fix: 'run tegrastats by hand',
            log: r.lines.slice(-20),
          },
    );
  }
  if (!t.going('board: power mode')) return;
  if (!b.tools.nvpmodel)
    t.add({
      component: 'board: power mode',
      status: 'absent',
      detail: 'not a Jetson (no nvpmodel)',
      fix: 'on a Jetson: nvpmodel -q',
    });
  else {
    const r = await runWithOutput([b.tools.nvpmodel, '-q'], t.o.timeoutS);
    const mode = parsePowerMode(r.lines.join('\n'));
    t.add(
      mode
        ? { component: 'board: power mode', status: 'ok', figure: mode }
        : {
            component: 'board: power mode',
            status: 'fail',
            detail: r.lines[0] ?? 'nvpmodel -q printed nothing',
            fix: 'sudo nvpmodel -q',
            log: r.lines.slice(-20),
          },
    );
  }
}

/** A command's lines, the command ended after `seconds` (tegrastats runs until it is stopped). */
async function runWithOutput(argv: string[], seconds: number): Promise<{ lines: string[] }> {
  const chunks: Buffer[] = [];
  const [cmd, ...args] = argv;
  let child: ReturnType<typeof processRef> | undefined;
  const timer = setTimeout(() => child && signalProcess(child, 'SIGTERM'), seconds * 1000);
  try {
    await runCommand(cmd, args, { onOutput: (c) => chunks.push(c), onSpawn: (pid) => void (child = processRef(pid)) });
  } catch {
    /* not runnable: no lines */
  } finally {
    clearTimeout(timer);
  }
  return {
    lines: Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
  };
}
