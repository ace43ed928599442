/**
 * `jetprof doctor`: what this machine can run, one row per check with the fix for each gap. Pure: the board's facts
 * (board.ts) and what could only be probed live (a library loading, OpenCV's build) in, rows out.
 */
import { CONTAINER_PATHS, jetsonComputeCapability } from './board.ts';
import type { BoardFacts } from './board.ts';

type CheckStatus = 'ok' | 'warn' | 'fail' | 'info';

interface DoctorRow {
  check: string;
  status: CheckStatus;
  value: string;
  fix?: string;
}

/** What only this very machine can tell (undefined with --root: a fixture tree has no libraries to load). */
export interface LiveProbes {
  node: string;
  ort?: { loads: boolean; error?: string; providers: string[] };
  opencv?: { loads: boolean; error?: string; videoIo: string[]; cuda: boolean };
  /** What `--video-io auto` encodes the annotated video with here, and why not GStreamer when it is not. */
  videoWriter?: { encoder: string; why?: string; fix?: string };
  /** What `--video-io auto` decodes files with here, and why. */
  videoReader?: { decoder: string; detail: string };
  gpu?: string;
  powerMode?: string;
  shim?: { path?: string; built: boolean };
}

interface DoctorReport {
  schema: 'jetprof.doctor/1';
  root: string;
  rows: DoctorRow[];
  /** The main job (infer) can run here. */
  canRun: boolean;
  /** Which backend can run here, and why not where one cannot. */
  backends: { backend: string; runs: boolean; why?: string }[];
  /** What to do when it cannot. */
  routes: string[];
}

const versionAtLeast = (v: string | undefined, min: string) => {
  if (!v) return false;
  const a = v.replace(/^v/, '').split('.').map(Number);
  const b = min.split('.').map(Number);
  for (let i = 0; i < b.length; i++) if ((a[i] ?? 0) !== b[i]) return (a[i] ?? 0) > b[i];
  return true;
};

type AddRow = (check: string, status: CheckStatus, value: string, fix?: string) => void;

const RUNTIME_FIX = 'start it with --runtime nvidia -e NVIDIA_VISIBLE_DEVICES=all (bash board/jetpack4/run.sh does)';
const CSV_ALL_FIX =
  'add -e NVIDIA_REQUIRE_JETPACK=csv-mounts=all: nvidia-container-toolkit 1.9 and later mounts only l4t.csv otherwise (bash board/jetpack4/run.sh adds it)';

/**
 * Inside jetprof's JetPack 4 image: each of the board's paths it needs, there or not, and for a missing one the flag
 * of `docker run` that mounts it. No Tegra libraries at all means the NVIDIA runtime mounted nothing; Tegra
 * libraries without CUDA or TensorRT mean a toolkit that mounts the base lists only.
 */
function containerRows(f: BoardFacts, add: AddRow): void {
  const c = f.container;
  if (!c) return;
  const has = c.present;
  const runtime = has.tegra ? CSV_ALL_FIX : RUNTIME_FIX;
  const row = (check: string, ok: boolean, what: string, fix: string, status: CheckStatus = 'warn') =>
    add(`mount: ${check}`, ok ? 'ok' : status, ok ? `/${what}` : `/${what} missing`, ok ? undefined : fix);
  add('container', 'info', `jetprof's ${c.kind} image: the board's libraries come from the container runtime's mounts`);
  row('Tegra libraries', has.tegra, CONTAINER_PATHS.tegra, RUNTIME_FIX);
  row('CUDA 10.2', has.cuda, CONTAINER_PATHS.cuda, runtime);
  row('TensorRT', has.tensorrt, CONTAINER_PATHS.tensorrt, runtime);
  row(
    'TensorRT headers',
    has.tensorrtHeaders,
    CONTAINER_PATHS.tensorrtHeaders,
    has.tensorrt
      ? "this board's tensorrt.csv has no headers: add -v H:H:ro for each /usr/include/aarch64-linux-gnu/Nv*.h (the shim builds against them)"
      : runtime,
  );
  row('NVIDIA GStreamer plugins', has.gstreamer, CONTAINER_PATHS.gstreamer, RUNTIME_FIX);
  row('L4T release', has.l4tRelease, CONTAINER_PATHS.l4tRelease, '-v /etc/nv_tegra_release:/etc/nv_tegra_release:ro');
  const model = f.jetsonModel;
  add(
    'board model (from run.sh)',
    model ? 'ok' : 'warn',
    model ?? 'JETPROF_BOARD_MODEL not set',
    model
      ? undefined
      : `-e JETPROF_BOARD_MODEL="$(tr -d '\\0' </proc/device-tree/model)" (bash board/jetpack4/run.sh passes it)`,
  );
  row(
    'tegrastats',
    has.tegrastats,
    CONTAINER_PATHS.tegrastats,
    '-v /usr/bin/tegrastats:/usr/bin/tegrastats:ro',
    'info',
  );
  row(
    'Argus socket (CSI cameras)',
    has.argus,
    CONTAINER_PATHS.argus,
    '-v /tmp/argus_socket:/tmp/argus_socket, with nvargus-daemon running on the board',
    'info',
  );
}

/** TensorRT and its shim, CUDA, the profilers, tegrastats, the power mode and the free disk. */
function toolRows(f: BoardFacts, live: LiveProbes | undefined, cc: number | undefined, add: AddRow): void {
  add(
    'TensorRT',
    f.tensorrt ? 'ok' : 'warn',
    f.tensorrt ?? 'not installed (--backend trt unavailable)',
    f.tensorrt ? undefined : 'JetPack ships TensorRT; on x86 install it from NVIDIA',
  );
  if (live?.shim) {
    add(
      'TensorRT shim',
      live.shim.built ? 'ok' : f.tensorrt ? 'warn' : 'info',
      live.shim.built ? (live.shim.path ?? 'built') : 'not built',
      live.shim.built
        ? undefined
        : f.tensorrt
          ? 'npm run build:trt (builds native/build/libjetprof_trt.so against this TensorRT)'
          : 'install TensorRT (JetPack ships it), then npm run build:trt',
    );
  }
  add('CUDA runtime', f.cuda ? 'ok' : 'info', f.cuda ?? 'not installed');
  const nvprofWorks = f.tools.nvprof && (cc === undefined || cc < 8);
  // live on a machine with no GPU at all (no Jetson, nvidia-smi finds none): installed, but nvprof has nothing to profile
  const noGpu = live !== undefined && !f.jetsonModel && !live.gpu;
  add(
    'nvprof',
    f.tools.nvprof ? (nvprofWorks && !noGpu ? 'ok' : 'warn') : 'info',
    f.tools.nvprof
      ? !nvprofWorks
        ? `${f.tools.nvprof}: does not support compute capability ${cc} (8.0 and later)`
        : noGpu
          ? `${f.tools.nvprof}: installed; needs a supported GPU (none here)`
          : `${f.tools.nvprof}`
      : 'not installed',
    f.tools.nvprof && (!nvprofWorks || noGpu)
      ? noGpu
        ? 'run it on a Jetson up to Xavier or a GPU up to Turing; here jetprof profile --tool nsys records the CPU pipeline'
        : 'use jetprof profile --tool nsys'
      : undefined,
  );
  add(
    'nsys',
    f.tools.nsys ? 'ok' : 'info',
    f.tools.nsys ?? 'not installed',
    f.tools.nsys ? undefined : 'scripts/setup.sh --profilers (Debian), Nsight Systems for L4T on a Jetson',
  );
  add(
    'tegrastats',
    f.tools.tegrastats ? 'ok' : 'info',
    f.tools.tegrastats ? `${f.tools.tegrastats} (recorded beside every run)` : 'not present (not a Jetson)',
  );
  if (live?.powerMode) add('Power mode', 'info', live.powerMode);
  if (f.freeDiskBytes !== undefined) {
    const gb = f.freeDiskBytes / 1e9;
    add(
      'Free disk',
      gb < 1 ? 'warn' : 'ok',
      `${gb.toFixed(1)} GB`,
      gb < 1 ? 'annotated videos need room: free some space' : undefined,
    );
  }
}

/** The ONNX Runtime row: whether it loads (live), or whether it can on that board (--root); returns which. */
function ortRow(f: BoardFacts, live: LiveProbes | undefined, glibcOk: boolean | undefined, add: AddRow): boolean {
  if (live?.ort) {
    const ortOk = live.ort.loads;
    const gpuNote =
      f.arch === 'arm64' ? ' (onnxruntime-node has GPU providers for linux x64 only: CPU on a Jetson)' : '';
    add(
      'ONNX Runtime (Node)',
      ortOk ? 'ok' : 'fail',
      ortOk ? `loads; providers ${live.ort.providers.join(', ')}${gpuNote}` : `does not load: ${live.ort.error ?? ''}`,
      ortOk ? undefined : 'bash scripts/setup.sh',
    );
    return ortOk;
  }
  const ortOk = f.arch !== 'arm64' || glibcOk === true;
  add(
    'ONNX Runtime (Node)',
    ortOk ? 'ok' : 'fail',
    f.arch === 'arm64'
      ? ortOk
        ? 'CPU only (GPU providers are for linux x64 only)'
        : 'libonnxruntime.so.1 (arm64) needs GLIBC_2.28: cannot load'
      : 'CPU (CUDA with the cuda12 install)',
    ortOk ? undefined : 'use --backend trt or --backend opencv on this board',
  );
  return ortOk;
}

/** JetPack 4's two routes (glibc 2.27): the container, or profiling on the board and reading the logs on a PC. */
function jetpack4Routes(glibc: string | undefined): string[] {
  return [
    'this board has glibc ' +
      glibc +
      " (JetPack 4): run jetprof in a container with glibc >= 2.28 and the board's TensorRT: bash board/jetpack4/build.sh, then bash board/jetpack4/run.sh (README: On a Jetson Nano), or",
    'the off-board route: run the lab\'s scripts here under nvprof, then on a PC: jetprof parse LOG and jetprof report --profile LOG --fps "TensorRT@960x540=INF/E2E"',
  ];
}

export function doctor(f: BoardFacts, live: LiveProbes | undefined): DoctorReport {
  const rows: DoctorRow[] = [];
  const add = (check: string, status: CheckStatus, value: string, fix?: string) =>
    rows.push({ check, status, value, ...(fix ? { fix } : {}) });
  const cc = jetsonComputeCapability(f.jetsonModel);

  add('Board', 'info', f.jetsonModel ?? 'not a Jetson');
  if (f.l4t) add('L4T (JetPack)', 'info', `${f.l4t} (JetPack ${f.jetpack ?? '?'})`);
  add('OS', 'info', f.os?.prettyName ?? 'unknown');
  const glibcOk = f.glibc ? versionAtLeast(f.glibc, '2.28') : undefined;
  add(
    'glibc',
    glibcOk === false ? 'fail' : glibcOk ? 'ok' : 'warn',
    f.glibc ?? 'unknown',
    glibcOk === false
      ? 'official Node.js 18+ builds and onnxruntime-node 1.30 (arm64) need glibc 2.28; see the JetPack 4 routes below'
      : undefined,
  );
  // Node: the running one when live; with --root, whether official builds can run on that board at all
  const nodeOk = live ? versionAtLeast(live.node, '20.19') : glibcOk !== false;
  add(
    'Node.js',
    nodeOk ? 'ok' : 'fail',
    live
      ? live.node
      : glibcOk === false
        ? `official Node 20 builds cannot run (glibc ${f.glibc})`
        : 'official Node 20 builds run here',
    nodeOk
      ? undefined
      : live
        ? 'install Node.js 20.19 or newer'
        : 'a newer userland (glibc >= 2.28), or the off-board route',
  );
  add('CPU', 'info', f.cpu ?? 'unknown');
  const gpu = f.jetsonModel ? `${f.jetsonModel} (compute capability ${cc ?? '?'})` : live?.gpu;
  add('GPU', gpu ? 'info' : 'warn', gpu ?? 'none found (inference on the CPU only)');

  const ortOk = ortRow(f, live, glibcOk, add);
  const opencvOk = live?.opencv ? live.opencv.loads : f.opencv !== undefined;
  const io = live?.opencv
    ? `; video I/O ${live.opencv.videoIo.join(', ') || 'none'}; CUDA ${live.opencv.cuda ? 'yes' : 'no'}`
    : '';
  add(
    'OpenCV',
    opencvOk ? 'ok' : 'fail',
    opencvOk ? `${f.opencv ?? 'loads'}${io}` : (live?.opencv?.error ?? 'not installed'),
    opencvOk ? undefined : 'bash scripts/setup.sh (libopencv-dev; JetPack ships OpenCV)',
  );
  if (live?.videoWriter)
    add(
      'Video writer',
      live.videoWriter.why ? 'warn' : 'ok',
      `${live.videoWriter.encoder} (--video-io auto)${live.videoWriter.why ? `: not GStreamer, ${live.videoWriter.why}` : ''}`,
      live.videoWriter.fix,
    );
  if (live?.videoReader)
    add('Video reader', 'ok', `${live.videoReader.decoder} (--video-io auto): ${live.videoReader.detail}`);
  toolRows(f, live, cc, add);
  containerRows(f, add);
  const canRun = nodeOk && opencvOk && (ortOk || !!f.tensorrt);
  const backends = [
    { backend: f.arch === 'arm64' ? 'ONNX Runtime (CPU)' : 'ONNX Runtime', runs: ortOk },
    {
      backend: 'TensorRT',
      runs: !!f.tensorrt,
      why: f.tensorrt
        ? undefined
        : f.container
          ? 'no TensorRT mounted: the mount rows above name the flag'
          : 'TensorRT is not installed',
    },
    { backend: 'OpenCV DNN', runs: opencvOk },
  ];
  const routes =
    glibcOk === false ? jetpack4Routes(f.glibc) : canRun ? [] : ['bash scripts/setup.sh installs what is missing'];
  return { schema: 'jetprof.doctor/1', root: f.root, rows, canRun, backends, routes };
}

/** The table for the console (and the README). */
export function doctorMarkdown(r: DoctorReport): string {
  const mark: Record<CheckStatus, string> = { ok: 'ok', warn: 'WARN', fail: 'FAIL', info: '' };
  const lines = [
    '| check | | value | fix |',
    '| --- | --- | --- | --- |',
    ...r.rows.map((x) => `| ${x.check} | ${mark[x.status]} | ${x.value.replace(/\|/g, '\\|')} | ${x.fix ?? ''} |`),
  ];
  lines.push(
    '',
    r.canRun
      ? `The main job (infer) can run here with ${r.backends
          .filter((b) => b.runs)
          .map((b) => b.backend)
          .join(', ')}${r.backends
          .filter((b) => !b.runs && b.why)
          .map((b) => `; not ${b.backend} (${b.why})`)
          .join('')}.`
      : 'The main job (infer) cannot run here:',
    ...r.routes.map((x) => `- ${x}`),
    '',
    'doctor reads what is installed and runs nothing; `jetprof selftest` proves what works by running each part (a few minutes).',
  );
  return `${lines.join('\n')}\n`;
}
