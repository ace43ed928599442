/**
 * `jetprof profile`: runs one entry script (infer-onnx / infer-trt) under nvprof or Nsight Systems, keeps the raw
 * output, parses it with src/parsers, and writes D/profile_<backend>.json beside it.
 */
import type { VideoIo } from '../video/gstreamer.ts';
import { spawnSync } from 'node:child_process';
import { readdirSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BACKENDS, type BackendName } from '../backends/types.ts';
import { defaultOutputPath } from '../pipeline/infer.ts';
import { inferArgv } from '../pipeline/infer-args.ts';
import { JetprofError } from '../util/errors.ts';
import { sameFile, StagingFolder, writeOutput } from '../output/output.ts';
import { requireWritableDir } from '../util/files.ts';
import { type ProfilerTool, requireProfiler } from './tools.ts';
import { entryCommand, fileVersion, type ProfileRequest, type ProfileResult } from './profile-run.ts';
import { profileWithNsys } from './nsys-run.ts';
import { profileWithNvprof } from './nvprof-run.ts';

/**
 * The infer arguments as the profiled run gets them: its run JSON in the out-dir (unless --json names a file), and
 * its video there too (`<source>-<backend>-detected.mp4`) unless --output or --no-write says otherwise: a profile
 * writes nothing into the current folder.
 */
function withRunJson(
  req: Pick<ProfileRequest, 'inferArgs' | 'outDir' | 'backend' | 'tool' | 'video' | 'json' | 'outputGiven'>,
): { args: string[]; runJson: string } {
  const named = req.json !== undefined && req.json !== '-';
  const runJson = named ? resolve(req.json!) : join(req.outDir, profileFileName('run', req.backend, req.tool));
  // infer takes the last --json given: one appended here wins over a `--json -` among the arguments
  const json = named ? undefined : runJson;
  const output = req.outputGiven ? undefined : defaultOutputPath(req.video, req.backend, { dir: req.outDir });
  return { args: [...req.inferArgs, ...inferArgv({ json, output })], runJson };
}

/**
 * `profile_<backend>_<tool>.json` and `run_<backend>_<tool>.json`: profiles of two tools in one folder (the README
 * uses one folder throughout) never overwrite each other.
 */
function profileFileName(kind: 'profile' | 'run', backend: BackendName, tool: ProfilerTool): string {
  return `${kind}_${BACKENDS[backend].tag}_${tool}.json`;
}

/** `jetprof profile` exits with this when nvprof found no usable GPU (nvprof itself may exit 19, or 0). */
export const EXIT_NO_GPU = 3;

/**
 * The video must open and give a frame before a profiler starts: a profiler run takes tens of seconds, and one that
 * could never work must not leave report files behind.
 */
async function checkVideo(video: string, videoIo: VideoIo = 'auto'): Promise<void> {
  // the source opened the way infer opens it: a file, a folder of images, rtsp://, /dev/videoN, csi://N, gst:
  const { openSource } = await import('../video/sources.ts');
  const { loadOpenCv } = await import('../video/opencv.ts');
  const source = openSource(video, loadOpenCv(), undefined, videoIo);
  try {
    if (!source.read()) {
      throw new JetprofError('BAD_VIDEO', `${video}: no frame could be decoded (empty video or unsupported codec)`, {
        suggestion: 'check it with `ffprobe`; re-encode with `ffmpeg -i IN -c:v libx264 OUT.mp4`',
      });
    }
  } finally {
    source.close();
  }
}

/**
 * Runs the profile. Every file the profiler and the profiled run write into the out-dir goes first into a folder of
 * this run's own inside it; they replace the previous profile's files only once the run is complete (a report, or
 * nvprof's data, and the run's JSON). A run that fails, finds no GPU or is stopped before its report leaves the
 * previous profile as it was, and its own log beside it as `<name>.failed.<ext>`.
 */
export async function runProfile(req: ProfileRequest): Promise<ProfileResult> {
  requireProfiler(req.tool); // a profiler that is not installed, then the input and the out-dir: before anything starts
  await checkVideo(req.video, req.videoIo);
  const jsonPath = join(req.outDir, profileFileName('profile', req.backend, req.tool));
  requireWritableDir(jsonPath, '--out-dir');
  if (req.json !== undefined && req.json !== '-' && sameFile(req.json, jsonPath))
    throw new JetprofError('BAD_OUTPUT', `${req.json}: the run's --json would be the profile's own JSON`, {
      suggestion: 'give the run JSON another name, or leave --json out (it then goes beside the profile)',
    });
  const folder = new StagingFolder(req.outDir);
  const staging = folder.dir;
  const relocate = (text: string) => text.split(staging).join(req.outDir);
  try {
    const staged = { ...req, outDir: staging };
    const { args, runJson: runPath } = withRunJson(staged);
    const runJson = { path: runPath, before: fileVersion(runPath) };
    // The run JSON then says its FPS were measured under a profiler (reports keep them out of speed-ups).
    const command = [...entryCommand(req.backend), ...args, '--profiler-attached', req.tool];
    let result: ProfileResult;
    try {
      result =
        req.tool === 'nsys'
          ? await profileWithNsys(staged, command, runJson)
          : await profileWithNvprof(staged, command, runJson);
    } catch (e) {
      const kept = keepFailedLogs(staging, req.outDir);
      if (e instanceof JetprofError)
        throw new JetprofError(e.code, relocateFailed(e.message, kept), {
          suggestion: e.suggestion,
          exitCode: e.exitCode,
        });
      throw e;
    }
    result.command = result.command.map(relocate);
    const complete = result.run !== undefined && (result.tool === 'nsys' ? result.nsys !== undefined : !result.noGpu);
    if (!complete) {
      const kept = keepFailedLogs(staging, req.outDir);
      result.files = Object.fromEntries(
        Object.entries(result.files).flatMap(([k, v]) => (v && kept.has(v) ? [[k, kept.get(v)!]] : [])),
      );
      result.notes = result.notes.map((n) => relocateFailed(n, kept));
      result.notes.push(`the previous profile in ${req.outDir} was left as it was (this run did not complete)`);
      return result;
    }
    folder.commit();
    result.files = Object.fromEntries(Object.entries(result.files).map(([k, v]) => [k, v && relocate(v)]));
    result.notes = result.notes.map(relocate);
    result.files.profile = jsonPath;
    writeOutput(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    folder.drop();
  }
}

/**
 * The logs of a run that did not complete, kept beside the previous profile without replacing its files:
 * `profile_onnx.nsys.log` -> `profile_onnx.nsys.failed.log`. Returns staged path -> kept path.
 */
function keepFailedLogs(staging: string, outDir: string): Map<string, string> {
  const kept = new Map<string, string>();
  for (const f of readdirSync(staging)) {
    if (!/\.(log|txt)$/.test(f)) continue;
    const to = join(outDir, f.replace(/\.(log|txt)$/, '.failed.$1'));
    renameSync(join(staging, f), to);
    kept.set(join(staging, f), to);
  }
  return kept;
}

/** A message that names staged files, naming where they were kept instead (or the log, for those that went). */
function relocateFailed(text: string, kept: Map<string, string>): string {
  let out = text;
  for (const [from, to] of kept) out = out.split(from).join(to);
  return out;
}

/** `nvprof --query-metrics`, passed through. */
export function queryMetrics(): number {
  const r = spawnSync(requireProfiler('nvprof'), ['--query-metrics'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.status === 0) {
    process.stdout.write(r.stdout);
    return 0;
  }
  // without a usable GPU nvprof says only "CUDA device error" (exit 11): say what it means, once
  if (/device error|no CUDA-capable device|driver/i.test(out) || r.status === 11) {
    throw new JetprofError(
      'TOOL_FAILED',
      `nvprof --query-metrics needs a CUDA GPU and its driver, and found none here (nvprof: ${
        out
          .trim()
          .split('\n')
          .pop()
          ?.replace(/^=+\s*/, '') ?? 'exit ' + r.status
      })`,
      {
        suggestion:
          "run it on the Jetson (JetPack 4: /usr/local/cuda/bin/nvprof --query-metrics); the metric names are also in NVIDIA's profiler user guide",
        exitCode: EXIT_NO_GPU,
      },
    );
  }
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  return r.status ?? 1;
}
