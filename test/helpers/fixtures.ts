/**
 * Fixtures the tests make for themselves: seeded weights and exported models for the shipped cfgs, small cfgs,
 * and videos made with ffmpeg. Everything lands in one temporary folder per test process.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import type { RunResult } from '../../src/pipeline/run-result.ts';
import type { Script } from '../../src/cli/programs.ts';
import test, { type ExecutionContext, type Implementation, registerCompletionHandler } from 'ava';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCfg, yoloLayers, type DarknetCfg } from '../../src/model/cfg.ts';
import { cliCommand } from '../../src/util/process.ts';
import { exportOnnx } from '../../src/model/onnx-export.ts';
import { generateWeights, serializeWeights, type DarknetWeights } from '../../src/model/weights.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const YOLOV4_TINY_CFG = join(ROOT, 'weights/yolov4-tiny.cfg');
export const PERSON_VEHICLE_CFG = join(ROOT, 'weights/yolov4-tiny-person-vehicle.cfg');
/**
 * The lab's cfg (2 classes, its layers and heads) at 160x128 instead of 640x480 and with an eighth of its filters (the
 * heads' 21 kept): for tests in which the model is incidental to what they check. Measured here, one process: weights
 * and export 21 ms against 657 ms at the lab's width, its ONNX 0.4 MB against 23 MB, ONNX Runtime's session 8 against
 * 366 ms of CPU and a frame 0.4 ms against 6 (and 79 at 640x480). Not where a test needs a model slower than its
 * source or its signals (signals, capacity's search, streams' dropped frames), the lab's direction of the
 * speed-up (board) or stage ranges long enough for nsys to time (profile).
 */
export const SMALL_LAB_CFG = readFileSync(PERSON_VEHICLE_CFG, 'utf8')
  .replace(/^width=640$/m, 'width=160')
  .replace(/^height=480$/m, 'height=128')
  .replace(/^filters=(\d+)$/gm, (line, n: string) => (n === '21' ? line : `filters=${Number(n) / 8}`));
/**
 * The lab's cfg at 160x128 with all its filters: where a test needs scores spread over the threshold (seeded weights,
 * objectness bias 0, 60 vtest frames at --conf 0.4: 69 boxes scoring 0.40 to 0.50; with an eighth of the filters every
 * score is within 0.30-0.36, 36 boxes over 0.35 and the lowest 0.350006, a rounding from the threshold).
 */
export const LAB_CFG_160 = readFileSync(PERSON_VEHICLE_CFG, 'utf8')
  .replace(/^width=640$/m, 'width=160')
  .replace(/^height=480$/m, 'height=128');
/** The shared folder with real profiler logs, when the checkout sits beside it. */
export const SHARED_FIXTURES = resolve(ROOT, '../shared/fixtures');

let scratch: string | undefined;
export function scratchDir(): string {
  scratch ??= mkdtempSync(join(tmpdir(), 'jetprof-test-'));
  return scratch;
}

/**
 * Every Node process the tests start, and this one, prints its native stack if it dies of a fault
 * (test/native/crash_report.c through test/helpers/crash-report.mjs, inherited in NODE_OPTIONS): a crash on a CI
 * machine then says where it happened, where a bare "exit 139" says nothing.
 */
async function installCrashReport(): Promise<void> {
  const include = join(dirname(dirname(process.execPath)), 'include', 'node');
  // Node's headers come with Node's packages; without them, no report
  if (!existsSync(join(include, 'node_api.h'))) return;
  const lib = buildTestLib('crash_report.c', 'libjetprof_crash_report.so', [`-I${include}`]);
  process.env.JETPROF_TEST_CRASH_LIB = lib;
  const hook = pathToFileURL(join(ROOT, 'test/helpers/crash-report.mjs')).href;
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--import=${hook}`].filter(Boolean).join(' ');
  await import(hook);
}
await installCrashReport();

export function loadCfgFile(path: string): DarknetCfg {
  return parseCfg(readFileSync(path, 'utf8'), path);
}

export interface ModelFixture {
  cfgPath: string;
  cfg: DarknetCfg;
  weights: DarknetWeights;
  weightsPath: string;
  onnxPath: string;
}

/**
 * A fixture made once per `npm test` and copied to where a test wants it: scripts/test.sh names a folder for the whole
 * run (JETPROF_TEST_CACHE), shared by the test files' processes; alone, a test file keeps its own. The name is the hash
 * of `key`, which holds everything the file is made from; made under a name of this process's and renamed, so a file
 * another process is still writing is never read. `out` gets its own copy: a test may change it. Without a key (a
 * fixture no other test makes) it is made at `out` directly.
 */
function fromCache(key: string | undefined, out: string, make: (path: string) => void): string {
  if (key === undefined) {
    make(out);
    return out;
  }
  const dir = process.env.JETPROF_TEST_CACHE || scratchDir();
  const cached = join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 24)}${extname(out)}`);
  if (!existsSync(cached)) {
    const tmp = join(dir, `.${process.pid}-${basename(cached)}`);
    make(tmp);
    renameSync(tmp, cached);
  }
  copyFileSync(cached, out);
  return out;
}

/** Writes seeded weights and the exported .onnx for a cfg (file path or cfg text); `objectnessBias` as make-weights'. */
export function makeModel(
  name: string,
  cfgPathOrText: string,
  seed = 1,
  mutate?: (w: DarknetWeights, cfg: DarknetCfg) => void,
  objectnessBias?: number,
): ModelFixture {
  const dir = scratchDir();
  let cfgPath = cfgPathOrText;
  if (!existsSync(cfgPathOrText)) {
    cfgPath = join(dir, `${name}.cfg`);
    writeFileSync(cfgPath, cfgPathOrText);
  }
  const cfgText = readFileSync(cfgPath, 'utf8');
  const cfg = loadCfgFile(cfgPath);
  let weights: DarknetWeights | undefined;
  const made = () => {
    if (weights) return weights;
    weights = generateWeights(cfg, seed, objectnessBias);
    mutate?.(weights, cfg);
    return weights;
  };
  // weights a test changed by hand are its own; the rest are the same bytes for the same cfg, seed and bias
  const key = mutate ? undefined : JSON.stringify([cfgText, seed, objectnessBias]);
  const weightsPath = fromCache(key && `weights ${key}`, join(dir, `${name}.weights`), (p) =>
    writeFileSync(p, serializeWeights(cfg, made())),
  );
  const labels = Array.from({ length: yoloLayers(cfg)[0].classes }, (_, i) => `c${i}`);
  const onnxPath = fromCache(key && `onnx ${key}`, join(dir, `${name}.onnx`), (p) =>
    writeFileSync(p, exportOnnx(cfg, made(), { labels, source: { generatedWeights: true } }).bytes),
  );
  return {
    cfgPath,
    cfg,
    get weights() {
      return made();
    },
    weightsPath,
    onnxPath,
  };
}

/** An H.264 test video from ffmpeg's testsrc2 pattern. */
export function makeVideo(name: string, frames: number, width = 320, height = 240, fps = 30): string {
  const args = [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${fps}`],
    ...['-frames:v', String(frames), '-c:v', 'libx264', '-pix_fmt', 'yuv420p'],
  ];
  return fromCache(`video ${args.join(' ')} ${extname(name)}`, join(scratchDir(), name), (p) =>
    // the container from the name's ending, not the temporary name's
    execFileSync('ffmpeg', [...args, '-f', containerOf(name), p]),
  );
}

/** ffmpeg's muxer for a video name's ending. */
function containerOf(name: string): string {
  const ext = extname(name).slice(1).toLowerCase();
  return ({ mkv: 'matroska', avi: 'avi', mov: 'mov', mp4: 'mp4', ts: 'mpegts' } as Record<string, string>)[ext] ?? ext;
}

/** A folder of `frames` JPEG images (f001.jpg, ...) from ffmpeg's testsrc2 pattern. */
export function makeImages(name: string, frames: number, width = 160, height = 120): string {
  const folder = join(scratchDir(), name);
  mkdirSync(folder, { recursive: true });
  execFileSync('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=10`],
    ...['-frames:v', String(frames), join(folder, 'f%03d.jpg')],
  ]);
  return folder;
}

export interface ProbeResult {
  codec: string;
  width: number;
  height: number;
  frames: number;
}

/** ffprobe's view of a video: codec, size, and the decoded frame count. */
export function probeVideo(path: string): ProbeResult {
  const r = spawnSync(
    'ffprobe',
    [
      '-v',
      'error',
      '-select_streams',
      'v:0',
      '-count_frames',
      '-show_entries',
      'stream=codec_name,width,height,nb_read_frames',
      '-of',
      'json',
      path,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`ffprobe failed on ${path}: ${r.stderr}`);
  const s = JSON.parse(r.stdout).streams[0];
  return { codec: s.codec_name, width: s.width, height: s.height, frames: Number(s.nb_read_frames) };
}

/** `--import=<tsx>` with an absolute URL, so a child started in another folder still finds tsx. */
export const TSX_IMPORT = `--import=${import.meta.resolve('tsx')}`;

/**
 * The arguments of a whole `jetprof capacity` search as the tests run it: one 2 s run per count, a p99 of 2 s, within
 * a 60 s budget; `options` are capacity's own, `infer` (the model or engine, infer's options) go after `--`.
 */
export function quickCapacityArgs(
  source: string,
  sourceFps: number,
  json: string,
  options: string[],
  infer: string[],
): string[] {
  return [
    'capacity',
    source,
    '--source-fps',
    String(sourceFps),
    '--p99-ms',
    '2000',
    '--point-seconds',
    '2',
    '--repeat',
    '1',
    '--budget',
    '60',
    '--json',
    json,
    ...options,
    '--',
    ...infer,
  ];
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  signal: NodeJS.Signals | null;
}

/**
 * Runs one of jetprof's CLIs in this test's process (src/cli/run-program.ts runInProcess): the same program, rules and
 * exit codes as the script, without a child process and its start-up. What it prints is captured, `cwd` and `env`
 * hold for the call. In-process runs take turns (they share stdout, stderr, the folder and the environment), and so
 * does inferRun. `process: true` starts the script as a process instead (runCliProcess): for what only a process
 * shows (its own exit, a time limit); an environment read when a library loads (LOAD_TIME_ENV) always does.
 */
export async function runCli(
  script: Script,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number; process?: boolean } = {},
): Promise<CliResult> {
  const readAtLoad = Object.keys(options.env ?? {}).some((k) => LOAD_TIME_ENV.test(k));
  if (options.process || options.timeout !== undefined || readAtLoad) return runCliProcess(script, args, options);
  const [{ programFor }, { runInProcess }] = await Promise.all([
    import('../../src/cli/programs.ts'),
    import('../../src/cli/run-program.ts'),
  ]);
  return inTurn(async () => {
    const out = { stdout: '', stderr: '' };
    const restore = redirect(out, options);
    try {
      const code = await runInProcess(programFor(script), args);
      return { code, stdout: out.stdout, stderr: out.stderr, signal: null };
    } finally {
      restore();
    }
  });
}

/** Variables read once, when a native library loads (GStreamer's plugin path and registry, the loader's): a process. */
const LOAD_TIME_ENV = /^(GST_|LD_)/;

let turns: Promise<unknown> = Promise.resolve();
/** Runs `fn` once every in-process run before it has ended. */
function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  const mine = turns.then(fn, fn);
  turns = mine.catch(() => undefined);
  return mine;
}

/** stdout and stderr into `out` (as a pipe: no TTY), the folder and the environment of `options`; returns the undo. */
function redirect(out: { stdout: string; stderr: string }, options: { cwd?: string; env?: NodeJS.ProcessEnv }) {
  const undo: (() => void)[] = [];
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = process[name];
    const { write, isTTY } = stream;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      out[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof stream.write;
    stream.isTTY = false as true;
    undo.push(() => {
      stream.write = write;
      stream.isTTY = isTTY;
    });
  }
  const cwd = process.cwd();
  process.chdir(options.cwd ?? scratchDir());
  undo.push(() => process.chdir(cwd));
  for (const [key, value] of Object.entries(options.env ?? {})) {
    const before = process.env[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
    undo.push(() => (before === undefined ? delete process.env[key] : (process.env[key] = before)));
  }
  return () => undo.reverse().forEach((u) => u());
}

/**
 * Runs one of jetprof's CLIs as a process of its own (cliCommand: the test run's build, else its source through tsx),
 * returning exit code and output.
 */
export function runCliProcess(
  script: Script,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {},
): CliResult {
  const timeout = options.timeout ?? 240_000;
  const started = Date.now();
  const [node, ...entry] = cliCommand(script);
  const r = spawnSync(node, [...entry, ...args], {
    cwd: options.cwd ?? scratchDir(),
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout,
    maxBuffer: 1 << 28,
  });
  // a run that did not exit by itself says so at the end of its stderr, which every failed assertion shows
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const ending =
    r.status !== null
      ? ''
      : (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT'
        ? `\n[test: ${script} was still running after ${timeout / 1000} s and was ended with ${r.signal}]\n`
        : `\n[test: ${script} died of ${r.signal} after ${seconds} s]\n`;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr + ending, signal: r.signal };
}

/**
 * infer in this process (src/cli/infer-command.ts runInferArgs): for a test that reads only what the run wrote (its
 * JSON, its detections, its video), without a child process and its start-up. The run and the warnings it gave.
 */
export async function inferRun(args: string[]): Promise<{ run: RunResult; warnings: string[] }> {
  const { runInferArgs } = await import('../../src/cli/infer-command.ts');
  const warnings: string[] = [];
  const run = await inTurn(() => runInferArgs(args, (m) => warnings.push(m)));
  return { run, warnings };
}

/**
 * Builds test/native/cpu_engine_abi.c, the CPU implementation of the TensorRT shim's C ABI, and returns its path
 * (for JETPROF_TRT_SHIM). Its engines are small text files: see the comment at the top of the C file.
 */
export function buildCpuEngineLib(): string {
  return buildTestLib('cpu_engine_abi.c', 'libjetprof_cpu_engine_abi.so', [`-I${join(ROOT, 'native')}`], ['-ldl']);
}

/** Builds a C file of test/native into a shared library in the scratch folder, once per test run (fromCache). */
function buildTestLib(source: string, name: string, flags: string[] = [], libs: string[] = []): string {
  const lib = join(scratchDir(), name);
  if (existsSync(lib)) return lib;
  const c = join(ROOT, 'test/native', source);
  const args = ['-shared', '-fPIC', '-O2', '-Wall', '-Wextra', '-Werror', ...flags, c];
  return fromCache(`gcc ${args.join(' ')} ${libs.join(' ')} ${readFileSync(c, 'utf8')}`, lib, (out) =>
    execFileSync('gcc', [...args, '-o', out, ...libs]),
  );
}

/**
 * Builds test/native/gst_board_elements.c, the Jetson's GStreamer elements stood in for by software ones, and returns
 * the environment that adds them to GStreamer (a plugin folder and a registry of its own).
 */
export function gstBoardEnv(): { GST_PLUGIN_PATH_1_0: string; GST_REGISTRY_1_0: string } {
  const dir = join(scratchDir(), 'gst-board');
  const lib = join(dir, 'libgstjetprofboard.so');
  if (!existsSync(lib)) {
    mkdirSync(dir, { recursive: true });
    const flags = execFileSync('pkg-config', ['--cflags', '--libs', 'gstreamer-1.0'], { encoding: 'utf8' });
    execFileSync('gcc', [
      '-shared',
      '-fPIC',
      '-O2',
      '-Wall',
      '-Werror',
      join(ROOT, 'test/native/gst_board_elements.c'),
      '-o',
      lib,
      ...flags.trim().split(/\s+/),
    ]);
  }
  return { GST_PLUGIN_PATH_1_0: dir, GST_REGISTRY_1_0: join(scratchDir(), 'registry-board.bin') };
}

/**
 * The end of a command's stderr, progress lines left out: an assertion's message that survives a CI log cut after its
 * first lines (a profiler run prints its command and infer's tables first, and why it failed last).
 */
export function lastLines(stderr: string, n = 25): string {
  const lines = stderr.split('\n').filter((l) => l.trim() && !l.startsWith('progress: '));
  return `(last ${Math.min(n, lines.length)} lines of stderr)\n${lines.slice(-n).join('\n')}`;
}

/** The lines of a command's stderr that report an error (a bad input must give exactly one). */
export function errorLines(stderr: string): string[] {
  return stderr
    .trim()
    .split('\n')
    .filter((l) => /error/.test(l));
}

/**
 * Starts one of jetprof's CLIs (as runCliProcess does) with `JETPROF_PROGRESS=lines` (a `progress: frame N` line per
 * frame), to be signalled mid-run: `framesDone(n)` waits until n frames went through, `waitFor(re)` until its stderr
 * matches; both wait on the run itself, never on the clock (a loaded machine only makes them wait longer), and fail
 * with the stderr so far after `limitMs`. `exit` is its exit code.
 */
export function startCli(
  script: 'infer' | 'infer-onnx' | 'jetprof',
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
  const [node, ...entry] = cliCommand(script);
  const child = spawn(node, [...entry, ...args], {
    cwd: options.cwd ?? scratchDir(),
    env: { ...process.env, JETPROF_PROGRESS: 'lines', ...options.env },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', () => undefined);
  // 'close', not 'exit': the exit can come before the last of its stderr has been read (seen on a loaded machine)
  const exit = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  let ended = false;
  void exit.then(() => (ended = true));
  const waitFor = async (what: RegExp | ((stderr: string) => boolean), limitMs = 240_000): Promise<void> => {
    const started = Date.now();
    const met = () => (what instanceof RegExp ? what.test(stderr) : what(stderr));
    while (!met()) {
      if (ended || Date.now() - started > limitMs)
        throw new Error(`${script} ${ended ? 'ended' : 'still running'} before ${what}; its stderr:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /** Until the progress lines say `n` frames (warm-up included) went through. */
  const framesDone = (n: number) =>
    waitFor((text) => [...text.matchAll(/progress: .*?frame (\d+)/g)].some((m) => Number(m[1]) >= n));
  return { child, stderr: () => stderr, waitFor, framesDone, exit };
}

/** A new empty folder in the scratch folder, its name starting with `name` (two calls never share one). */
export function freshDir(name: string): string {
  return mkdtempSync(join(scratchDir(), `${name}-`));
}

/** jetprof's temporary outputs in a folder (names with `partial`, `.jetprof-out-` folders): none after any run. */
export function partialsIn(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.includes('partial') || f.startsWith('.jetprof-out-'));
}

/**
 * Outputs of an earlier run (a video and a run JSON, or the files named) that a run which fails or is stopped before
 * it measured anything must leave as they were: their paths, and `kept(t)` to check they are byte for byte.
 */
export function previousOutputs(dir: string, names = ['out.mp4', 'run.json']) {
  const files = names.map((n) => join(dir, n));
  for (const f of files) writeFileSync(f, `the previous ${basename(f)}\n`);
  const kept = (t: ExecutionContext) => {
    for (const f of files) t.is(readFileSync(f, 'utf8'), `the previous ${basename(f)}\n`, `${f} kept as it was`);
  };
  return { files, kept };
}

/** Whether a tmpfs can be mounted here (root, as CI): a real small or read-only disk for the tests that need one. */
export function canMountTmpfs(): boolean {
  const probe = mkdtempSync(join(scratchDir(), 'mount-probe-'));
  const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]).status === 0;
  if (ok) spawnSync('umount', [probe]);
  return ok;
}

/**
 * `test` when the condition holds, else `test.skip` with the reason in the title, so the SKIP line says why.
 * Usage: requires(existsSync(DIR), `${DIR} is not beside this checkout`)('title', (t) => ...).
 */
export function requires(
  condition: boolean,
  reason: string,
  serial = false,
): (title: string, fn: Implementation<[]>) => void {
  if (condition) return serial ? (title, fn) => test.serial(title, fn) : (title, fn) => test(title, fn);
  return (title, fn) => test.skip(`${title} [skipped: ${reason}]`, fn);
}

// A test file's process leaves through process.exit() once ava is done with it, as jetprof's commands do (run-program.ts
// exitBeforeTeardown): Node's teardown could run the finalizers of OpenCV Mats that in-process runs left to the
// garbage collector, and die of SIGSEGV after every test passed.
registerCompletionHandler(() => process.exit());

// Each test process removes its scratch folder when it ends (one `npm test` made about 1 GB of them before).
process.on('exit', () => {
  if (scratch && !process.env.JETPROF_KEEP_TEST_FILES) rmSync(scratch, { recursive: true, force: true });
});
