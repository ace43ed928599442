/**
 * What every profiler run shares: the request and the result of `jetprof profile`, the entry script a profiler runs,
 * running it with its output teed to a log (and to the user), signals forwarded to the profiled application, and the
 * run JSON that application wrote.
 */
import type { VideoIo } from '../video/gstreamer.ts';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { BACKENDS, type BackendName } from '../backends/types.ts';
import type { Diagnostic } from '../parsers/diagnostics.ts';
import { type NsysStats } from '../parsers/nsys.ts';
import { type NvprofLog } from '../parsers/nvprof.ts';
import type { RunResult } from '../pipeline/run-result.ts';
import { cliCommand, commandLineOf, descendants, relayedProgressEnv, runCommand } from '../util/process.ts';
import { type ProfilerTool } from './tools.ts';
import { NsysEcho } from './nsys-echo.ts';
import { INFER_FLAGS } from '../pipeline/infer-args.ts';

export interface ProfileRequest {
  tool: ProfilerTool;
  backend: BackendName;
  /** Arguments for the entry script (video, model, ...), without --backend. */
  inferArgs: string[];
  /** The source among them (read by infer's own parser in the CLI): opened before the profiler starts. */
  video: string;
  /** --json among them, as infer's parser read it (undefined or `-`: the run JSON goes to the out-dir). */
  json?: string;
  /** Whether --output or --no-write among them says where the video goes (else it goes to the out-dir). */
  outputGiven: boolean;
  /** --video-io among them: the source is checked the way infer will open it. */
  videoIo?: VideoIo;
  outDir: string;
  metrics?: string[];
  /** Relay infer's progress lines even when it runs with -q (compare). */
  relayProgress?: boolean;
  /** nsys runs that end without a report are retried this many times in all (default 3). */
  tries?: number;
  /** An nsys run that writes nothing for this long after the application ended is ended and retried (default 60 s). */
  stallMs?: number;
  /**
   * Called with the profiler's pid once it starts (nsys or nvprof) and the process a signal is for (the profiled
   * application, once started: nsys 2022.4 lets it run on after a SIGTERM of its own); returns what to call when it
   * ends. The CLI forwards Ctrl-C, SIGTERM and SIGHUP through this: the application finalizes its files and exits, and
   * the profiler then writes its report of the frames done, as at the end of a video.
   */
  onChild?: (pid: number, target: () => number) => () => void;
  /** True once the user asked to stop (a signal): no further nsys try starts, and a stuck agent is ended sooner. */
  shouldStop?: () => boolean;
  onLog: (message: string) => void;
}

export interface ProfileResult {
  schema: 'jetprof.profile/1';
  tool: ProfilerTool;
  backend: BackendName;
  command: string[];
  exitCode: number;
  files: { log?: string; report?: string; stats?: string; run?: string; profile?: string };
  nvprof?: NvprofLog;
  nsys?: NsysStats;
  diagnostics: Diagnostic[];
  run?: RunResult;
  /** nvprof collected nothing because there is no usable GPU. */
  noGpu?: boolean;
  notes: string[];
}

/** `node <entry script>` of a backend (cliCommand: the built .js, or the .ts through tsx). */
export function entryCommand(backend: BackendName): string[] {
  return cliCommand(BACKENDS[backend].entry);
}

/** What identifies one written version of a file (infer writes its run JSON to a temporary name, then renames it). */
export function fileVersion(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.mtimeMs}:${s.size}`;
  } catch {
    return undefined;
  }
}

/** The run JSON this profile's run wrote: a file left there by an earlier run (same version as before) is not it. */
export function readRun(path: string, before: string | undefined): RunResult | undefined {
  if (fileVersion(path) === before) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as RunResult;
  } catch {
    return undefined;
  }
}

/**
 * Runs a command, teeing its output to `logPath` and (when `echo`) to our stderr, through an NsysEcho when given one
 * (which holds back nsys's lines about a stream it left to import); resolves with its exit code.
 */
export async function runLogged(
  cmd: string,
  args: string[],
  logPath: string,
  echo: boolean | NsysEcho,
  watches: ((pid: number) => () => void)[],
  relayProgress = false,
): Promise<number> {
  // infer's progress reaches the user through the profiler (minutes of silence otherwise), unless infer is told -q
  // (compare runs infer with -q and asks for the progress all the same)
  const quiet = args.includes('-q') || args.includes(INFER_FLAGS.quiet);
  const r = await runCommand(cmd, args, {
    onOutput:
      echo instanceof NsysEcho
        ? (d) => process.stderr.write(echo.feed(d.toString()))
        : echo
          ? (d) => process.stderr.write(d)
          : undefined,
    onSpawn: (pid) => {
      const ends = watches.map((w) => w(pid));
      return () => ends.forEach((end) => end());
    },
    ...(quiet && !relayProgress ? {} : { env: relayedProgressEnv() }),
  });
  if (echo instanceof NsysEcho) process.stderr.write(echo.flush());
  writeFileSync(logPath, r.output);
  return r.code;
}

/**
 * The process a forwarded signal is for: the profiled application (the entry script, a child or grandchild of the
 * profiler) once it runs, the profiler before that.
 */
export function forwardTo(req: ProfileRequest): ((pid: number) => () => void)[] {
  const onChild = req.onChild;
  if (!onChild) return [];
  const script = entryCommand(req.backend).at(-1)!; // what the profiler runs: node [--import tsx] <script>
  const application = (profiler: number) =>
    descendants(profiler).find((pid) => commandLineOf(pid).includes(script)) ?? profiler;
  return [(pid) => onChild(pid, () => application(pid))];
}

/** The run JSON the profiled run is to write, and the version of the file there before it started (if any). */
export interface RunJson {
  path: string;
  before: string | undefined;
}
