/**
 * `jetprof profile`: runs one entry script (infer-onnx / infer-trt) under nvprof or Nsight Systems, keeps the raw
 * output, parses it with src/parsers, and writes D/profile_<backend>.json beside it.
 */
import type { VideoIo } from '../video/gstreamer.ts';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BACKENDS, type BackendName } from '../backends/types.ts';
import type { Diagnostic } from '../parsers/diagnostics.ts';
import { type NsysStats, parseNsysStats } from '../parsers/nsys.ts';
import { type NvprofLog, parseNvprof } from '../parsers/nvprof.ts';
import type { RunResult } from '../pipeline/run-result.ts';
import { defaultOutputPath } from '../pipeline/infer.ts';
import { JetprofError } from '../util/errors.ts';
import { dropStaging, sameFile, stagingDir, writeOutput } from '../output/output.ts';
import { requireWritableDir } from '../util/files.ts';
import { commandLineOf, descendants, relayedProgressEnv, runCommand } from '../util/process.ts';
import { NSYS_STATS_REPORTS, NSYS_STATS_REPORTS_OLD, nsysProfileArgv, nsysStatsArgv, nvprofArgv } from './argv.ts';
import { detectComputeCapability } from './device.ts';
import { endAgentsOf, sleep, watchNsys, withNsysLock } from './nsys-agents.ts';
import { findQdstrmImporter, type ProfilerTool, requireProfiler } from './tools.ts';
import { NsysEcho } from './nsys-echo.ts';

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

/** `node <entry script>`: the built .js, or the .ts through tsx when jetprof runs from source. */
export function entryCommand(backend: BackendName): string[] {
  const here = fileURLToPath(import.meta.url);
  const fromSource = here.endsWith('.ts');
  const script = fileURLToPath(
    new URL(`../cli/${BACKENDS[backend].entry}.${fromSource ? 'ts' : 'js'}`, import.meta.url),
  );
  return fromSource ? [process.execPath, `--import=${import.meta.resolve('tsx')}`, script] : [process.execPath, script];
}

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
  const json = named ? [] : ['--json', runJson];
  const output = req.outputGiven
    ? []
    : ['--output', join(req.outDir, basename(defaultOutputPath(req.video, req.backend)))];
  return { args: [...req.inferArgs, ...json, ...output], runJson };
}

/**
 * `profile_<backend>_<tool>.json` and `run_<backend>_<tool>.json`: profiles of two tools in one folder (the README
 * uses one folder throughout) never overwrite each other.
 */
export function profileFileName(kind: 'profile' | 'run', backend: BackendName, tool: ProfilerTool): string {
  return `${kind}_${BACKENDS[backend].tag}_${tool}.json`;
}

/** What identifies one written version of a file (infer writes its run JSON to a temporary name, then renames it). */
function fileVersion(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.mtimeMs}:${s.size}`;
  } catch {
    return undefined;
  }
}

/** The run JSON this profile's run wrote: a file left there by an earlier run (same version as before) is not it. */
function readRun(path: string, before: string | undefined): RunResult | undefined {
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
async function runLogged(
  cmd: string,
  args: string[],
  logPath: string,
  echo: boolean | NsysEcho,
  watches: ((pid: number) => () => void)[],
  relayProgress = false,
): Promise<number> {
  // infer's progress reaches the user through the profiler (minutes of silence otherwise), unless infer is told -q
  // (compare runs infer with -q and asks for the progress all the same)
  const quiet = args.includes('-q') || args.includes('--quiet');
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
function forwardTo(req: ProfileRequest): ((pid: number) => () => void)[] {
  const onChild = req.onChild;
  if (!onChild) return [];
  const script = entryCommand(req.backend).at(-1)!; // what the profiler runs: node [--import tsx] <script>
  const application = (profiler: number) =>
    descendants(profiler).find((pid) => commandLineOf(pid).includes(script)) ?? profiler;
  return [(pid) => onChild(pid, () => application(pid))];
}

/** The run JSON the profiled run is to write, and the version of the file there before it started (if any). */
interface RunJson {
  path: string;
  before: string | undefined;
}

/** How long a stuck nsys agent may spin after an interrupted application ended before it is ended. */
const INTERRUPTED_STALL_MS = 10_000;

/** QdstrmImporter on a stream nsys left: true when the report is there, else the importer's last words. */
function importStream(nsys: string, qdstrm: string, rep: string): true | string {
  const importer = findQdstrmImporter(nsys);
  if (!importer) return 'no QdstrmImporter beside this nsys';
  const r = spawnSync(importer, ['-i', qdstrm], { encoding: 'utf8', timeout: 600_000 });
  if (r.status === 0 && existsSync(rep)) {
    unlinkSync(qdstrm);
    return true;
  }
  const said = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').pop();
  return `QdstrmImporter exit ${r.status ?? r.signal}${said ? `: ${said}` : ''}`;
}

/** The `nsys-report-XXXX.qdstrm` files in the temporary folder. */
function tmpStreams(): string[] {
  try {
    return readdirSync(tmpdir()).filter((f) => /^nsys-report-[0-9a-f]+\.qdstrm$/.test(f));
  } catch {
    return [];
  }
}

/**
 * nsys 2022.4 leaves a small `nsys-report-XXXX.qdstrm` in the temporary folder after every run (its report is the
 * one in the out-dir): those that appeared during this try are removed, so profiling does not fill /tmp.
 */
function removeTmpStreams(before: readonly string[]): void {
  for (const f of tmpStreams()) {
    if (before.includes(f)) continue;
    try {
      unlinkSync(join(tmpdir(), f));
    } catch {
      /* gone already */
    }
  }
}

async function profileWithNsys(req: ProfileRequest, command: string[], runJson: RunJson): Promise<ProfileResult> {
  const nsys = requireProfiler('nsys');
  return withNsysLock(
    (owner) => req.onLog(`waiting for another jetprof nsys run (pid ${owner}) to finish`),
    () => profileWithNsysLocked(nsys, req, command, runJson),
    { shouldStop: req.shouldStop },
  );
}

async function profileWithNsysLocked(
  nsys: string,
  req: ProfileRequest,
  command: string[],
  runJson: RunJson,
): Promise<ProfileResult> {
  const base = join(req.outDir, `profile_${BACKENDS[req.backend].tag}`);
  const rep = `${base}.nsys-rep`;
  const qdstrm = `${base}.qdstrm`;
  const logPath = `${base}.nsys.log`;
  const notes: string[] = [];
  const tries = req.tries ?? 3;
  let exitCode = 0;
  let ok = false;
  // how long nsys may write nothing after the application ended before its agent counts as stuck: 60 s on an idle
  // machine, longer on a busy one (its agent finishes slower there), at most 180 s
  const stallMs = req.stallMs ?? Math.round(60_000 * Math.min(3, Math.max(1, loadavg()[0] / availableParallelism())));
  const stopped = () => req.shouldStop?.() === true;
  for (let attempt = 1; attempt <= tries && !ok && !stopped(); attempt++) {
    for (const f of [rep, qdstrm]) if (existsSync(f)) unlinkSync(f);
    let nsysPid = 0;
    req.onLog(`nsys profile (try ${attempt}/${tries}): ${command.join(' ')}`);
    let stalled = false;
    const tmpBefore = tmpStreams();
    const echo = new NsysEcho();
    exitCode = await runLogged(
      nsys,
      nsysProfileArgv({ output: base, command }),
      logPath,
      echo,
      [
        (pid) =>
          // after Ctrl-C the user waits: a stuck agent is ended after 10 s, not a minute
          watchNsys(
            (nsysPid = pid),
            base,
            () => (stopped() ? Math.min(stallMs, INTERRUPTED_STALL_MS) : stallMs),
            (waited) => {
              stalled = true;
              req.onLog(
                `nsys wrote nothing for ${(waited / 1000).toFixed(0)} s after the application ended: ending its stuck agent`,
              );
            },
          ),
        ...forwardTo(req),
      ],
      req.relayProgress,
    );
    if (stalled)
      notes.push(`try ${attempt}: nsys hung after the application ended (its agent spinning); jetprof ended it`);
    // the agents first: a stream is imported only once nothing writes to it any more
    await sleep(300);
    const ended = nsysPid ? endAgentsOf(nsysPid) : [];
    if (ended.length) notes.push(`ended ${ended.length} nsys agent(s) left running by try ${attempt}`);
    if (!existsSync(rep) && existsSync(qdstrm)) {
      // Debian's nsys cannot find its importer and leaves the raw stream, and a hung try leaves what it recorded:
      // import it before running the application again
      const imported = importStream(nsys, qdstrm, rep);
      // nsys's own words about the stream it left: said with what happened to it, or as nsys wrote them
      if (imported === true && echo.held.length)
        req.onLog(
          `nsys could not import its stream itself (${echo.reason() ?? 'no importer'}) and left ${qdstrm}; jetprof imported it with QdstrmImporter: the report is ${rep}`,
        );
      else if (echo.held.length) process.stderr.write(`${echo.held.join('\n')}\n`);
      if (imported === true)
        notes.push(
          stalled
            ? `try ${attempt}: jetprof imported the stream the hung nsys left (QdstrmImporter), so the application was not run again`
            : "nsys left its stream to be imported (as Debian's nsys 2022.4 does); jetprof imported it with QdstrmImporter, and the report is complete",
        );
      else {
        const kept = `${base}.try${attempt}.qdstrm`;
        renameSync(qdstrm, kept);
        notes.push(`try ${attempt}: the stream nsys left could not be imported (${imported}); kept as ${kept}`);
      }
    } else if (echo.held.length) process.stderr.write(`${echo.held.join('\n')}\n`);
    removeTmpStreams(tmpBefore);
    ok = existsSync(rep);
    if (!ok) req.onLog(`nsys produced no report on try ${attempt} (exit code ${exitCode}); see ${logPath}`);
  }
  if (!ok && stopped()) {
    throw new JetprofError('INTERRUPTED', `interrupted before nsys wrote a report; its output is in ${logPath}`, {
      suggestion: 'run it again, with --max-frames N for a shorter run',
      exitCode: 130,
    });
  }
  if (!ok) {
    throw new JetprofError(
      'TOOL_FAILED',
      `nsys produced no report after ${tries} tries (last exit code ${exitCode}); its output is in ${logPath}`,
      {
        suggestion:
          'check the log; on Debian nsys 2022.4 this is a known intermittent agent failure with Node, try again',
        exitCode: exitCode || 1,
      },
    );
  }
  const statsPath = `${base}_stats.txt`;
  let stats = spawnSync(nsys, nsysStatsArgv(rep, NSYS_STATS_REPORTS), { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (/could not be found/.test(stats.stderr ?? ''))
    stats = spawnSync(nsys, nsysStatsArgv(rep, NSYS_STATS_REPORTS_OLD), { encoding: 'utf8', maxBuffer: 1 << 28 });
  writeFileSync(statsPath, stats.stdout ?? '');
  const parsed = parseNsysStats(stats.stdout ?? '');
  const run = readRun(runJson.path, runJson.before);
  if (!run) {
    notes.push(`the profiled run did not finish (it wrote no ${runJson.path}); its messages are in ${logPath}`);
    exitCode ||= 1;
  }
  return {
    schema: 'jetprof.profile/1',
    tool: 'nsys',
    backend: req.backend,
    command,
    exitCode,
    files: { log: logPath, report: rep, stats: statsPath, run: runJson.path },
    nsys: parsed.value,
    diagnostics: parsed.diagnostics,
    run,
    notes,
  };
}

async function profileWithNvprof(req: ProfileRequest, command: string[], runJson: RunJson): Promise<ProfileResult> {
  const cc = detectComputeCapability();
  if (cc !== undefined && cc >= 8) {
    throw new JetprofError(
      'BAD_OPTION',
      `nvprof does not support this GPU (compute capability ${cc}; nvprof stops at 7.x, Orin is 8.7)`,
      {
        suggestion: 'use --tool nsys',
      },
    );
  }
  const nvprof = requireProfiler('nvprof');
  const logFile = join(req.outDir, `profiling_${BACKENDS[req.backend].tag}_log.txt`);
  const consoleLog = join(req.outDir, `profiling_${BACKENDS[req.backend].tag}_console.txt`);
  if (existsSync(logFile)) unlinkSync(logFile);
  req.onLog(`nvprof: ${command.join(' ')}`);
  const exitCode = await runLogged(
    nvprof,
    nvprofArgv({ logFile, metrics: req.metrics, command }),
    consoleLog,
    true,
    forwardTo(req),
    req.relayProgress,
  );
  // Without a GPU nvprof prints its verdict on the console, not in the log file: keep whichever exists.
  const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : readFileSync(consoleLog, 'utf8');
  if (!existsSync(logFile)) renameSync(consoleLog, logFile);
  const parsed = parseNvprof(text);
  const notes: string[] = [];
  const procs = parsed.value.processes;
  const hasData = procs.some((p) => p.summary.length > 0 || p.dependency.length > 0 || p.metrics.length > 0);
  if (!hasData) {
    // nvprof's own words only (a line of the application's command can land among the warnings)
    // (the application's output can also run into nvprof's line: a sentence of nvprof's ends at its full stop)
    const said = [
      ...new Set(
        procs
          .flatMap((p) => p.warnings)
          .filter((w) => /CUDA|GPU|device|driver|profil/i.test(w))
          .map((w) => w.replace(/^(.*?[.!])\s.*$/, '$1')),
      ),
    ];
    const why = said.join('; ').slice(0, 160) || 'no profile data collected';
    const instead =
      req.backend === 'tensorrt'
        ? 'run it on the Jetson (TensorRT needs the GPU)'
        : 'run it on the Jetson, or use --tool nsys, which records the NVTX ranges of the CPU pipeline without a GPU';
    notes.push(`nvprof collected no GPU data (${why}): no usable NVIDIA GPU or driver here; ${instead}`);
  }
  const run = readRun(runJson.path, runJson.before);
  if (!run)
    notes.push(
      `the profiled run did not finish (it wrote no ${runJson.path}; nvprof exit code ${exitCode}); its output is in ${logFile}`,
    );
  return {
    schema: 'jetprof.profile/1',
    tool: 'nvprof',
    ...(hasData ? {} : { noGpu: true }),
    backend: req.backend,
    command,
    exitCode,
    files: { log: logFile, run: runJson.path },
    nvprof: parsed.value,
    diagnostics: parsed.diagnostics,
    run,
    notes,
  };
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
  mkdirSync(req.outDir, { recursive: true });
  const jsonPath = join(req.outDir, profileFileName('profile', req.backend, req.tool));
  requireWritableDir(jsonPath, '--out-dir');
  if (req.json !== undefined && req.json !== '-' && sameFile(req.json, jsonPath))
    throw new JetprofError('BAD_OUTPUT', `${req.json}: the run's --json would be the profile's own JSON`, {
      suggestion: 'give the run JSON another name, or leave --json out (it then goes beside the profile)',
    });
  const staging = stagingDir(req.outDir);
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
    for (const f of readdirSync(staging)) renameSync(join(staging, f), join(req.outDir, f));
    result.files = Object.fromEntries(Object.entries(result.files).map(([k, v]) => [k, v && relocate(v)]));
    result.notes = result.notes.map(relocate);
    result.files.profile = jsonPath;
    writeOutput(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    dropStaging(staging);
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
