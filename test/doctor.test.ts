/**
 * jetprof doctor on board file trees (test/fixtures/boards, sources in its README) and live on this machine: the
 * table, the exit code, and the JetPack 4 limit with its routes.
 */
import test from 'ava';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { glibcOfOs, jetpackOf } from '../src/platform/board.ts';
import { parsePowerMode } from '../src/platform/env.ts';
import { ROOT, runCli, scratchDir } from './helpers/fixtures.ts';

const BOARDS = join(ROOT, 'test/fixtures/boards');
/** The model string board/jetpack4/run.sh passes into the container (JETPROF_BOARD_MODEL). */
const NANO = 'NVIDIA Jetson Nano Developer Kit';
const doctorOf = async (root?: string, env: NodeJS.ProcessEnv = { JETPROF_BOARD_MODEL: NANO }) => {
  const r = await runCli('jetprof', ['doctor', '--json', ...(root ? ['--root', join(BOARDS, root)] : [])], { env });
  const report = JSON.parse(r.stdout);
  const row = (check: string) => report.rows.find((x: { check: string }) => x.check === check);
  return { r, report, row };
};

test('a Nano on JetPack 4.6: glibc 2.27 stops official Node 20 and onnxruntime-node; exit 1 with the two routes', async (t) => {
  const { r, report, row } = await doctorOf('nano-jp46');
  t.is(r.code, 1, r.stderr);
  t.like(row('L4T (JetPack)'), { value: '32.7.6 (JetPack 4.6.1+)' });
  t.like(row('glibc'), { status: 'fail', value: '2.27' });
  t.like(row('Node.js'), { status: 'fail', value: 'official Node 20 builds cannot run (glibc 2.27)' });
  t.like(row('ONNX Runtime (Node)'), {
    status: 'fail',
    value: 'libonnxruntime.so.1 (arm64) needs GLIBC_2.28: cannot load',
  });
  t.like(row('GPU'), { value: 'NVIDIA Jetson Nano Developer Kit (compute capability 5.3)' });
  t.like(row('TensorRT'), { status: 'ok', value: '8.2.1' });
  t.like(row('nvprof'), { status: 'ok' }, "nvprof works on a Nano (compute 5.3): the lab's tool");
  t.false(report.canRun);
  t.regex(report.routes.join('\n'), /container with glibc >= 2\.28/);
  t.regex(report.routes.join('\n'), /the off-board route: .* jetprof report --profile LOG --fps/);
});

test("inside jetprof's JetPack 4 image: every mount it needs is named, and a missing one with the docker flag that mounts it", async (t) => {
  const whole = await doctorOf('nano-jp46-container');
  t.is(whole.r.code, 0, whole.r.stderr);
  t.like(whole.row('glibc'), { status: 'ok', value: '2.31' });
  t.like(whole.row('Board'), { value: NANO }, 'the model run.sh passes');
  t.like(whole.row('board model (from run.sh)'), { status: 'ok', value: NANO });
  const unnamed = await doctorOf('nano-jp46-container', { JETPROF_BOARD_MODEL: '' });
  t.like(unnamed.row('board model (from run.sh)'), { status: 'warn', value: 'JETPROF_BOARD_MODEL not set' });
  t.regex(
    unnamed.row('board model (from run.sh)').fix,
    /-e JETPROF_BOARD_MODEL="\$\(tr -d '\\0' <\/proc\/device-tree\/model\)"/,
  );
  // outside the container neither the variable nor a file another user planted in /tmp names the board
  const planted = join(scratchDir(), 'planted-root');
  mkdirSync(join(planted, 'tmp'), { recursive: true });
  writeFileSync(join(planted, 'tmp/nv_jetson_model'), 'NVIDIA Jetson AGX Orin Developer Kit');
  const host = await runCli('jetprof', ['doctor', '--json', '--root', planted], {
    env: { JETPROF_BOARD_MODEL: 'NVIDIA Jetson AGX Orin Developer Kit', JETPROF_CONTAINER: '' },
  });
  t.notRegex(host.stdout, /Orin/);
  for (const m of [
    'Tegra libraries',
    'CUDA 10.2',
    'TensorRT',
    'TensorRT headers',
    'NVIDIA GStreamer plugins',
    'L4T release',
  ])
    t.like(whole.row(`mount: ${m}`), { status: 'ok' }, m);
  // a toolkit that mounts l4t.csv only: Tegra libraries but no CUDA or TensorRT
  const base = await doctorOf('nano-jp46-container-base');
  t.regex(
    base.r.stdout + JSON.stringify(base.report.backends),
    /"backend":"TensorRT","runs":false,"why":"no TensorRT mounted: the mount rows above name the flag"/,
  );
  t.like(
    base.report.backends.find((b: { backend: string }) => b.backend === 'ONNX Runtime (CPU)'),
    { runs: true },
    'ONNX Runtime on the CPU runs in the container without the mounts',
  );
  for (const m of ['CUDA 10.2', 'TensorRT']) {
    t.like(base.row(`mount: ${m}`), { status: 'warn' }, m);
    t.regex(base.row(`mount: ${m}`).fix, /NVIDIA_REQUIRE_JETPACK=csv-mounts=all/);
  }
  t.regex(base.row('mount: tegrastats').fix, /-v \/usr\/bin\/tegrastats:\/usr\/bin\/tegrastats:ro/);
  // the board itself says where the container route is
  t.regex(
    (await doctorOf('nano-jp46')).report.routes.join('\n'),
    /bash board\/jetpack4\/build\.sh, then bash board\/jetpack4\/run\.sh/,
  );
});

test('a Xavier NX on JetPack 5.1 and an AGX Orin on JetPack 6.1: the job runs, ORT on the CPU, nvprof not on Orin, TensorRT 10', async (t) => {
  const nx = await doctorOf('xaviernx-jp51');
  t.is(nx.r.code, 0, nx.r.stderr);
  t.like(nx.row('L4T (JetPack)'), { value: '35.4.1 (JetPack 5.1.x)' });
  t.like(nx.row('ONNX Runtime (Node)'), { status: 'ok', value: 'CPU only (GPU providers are for linux x64 only)' });
  t.like(nx.row('nvprof'), { status: 'ok' });
  t.like(nx.row('nsys'), { status: 'ok', value: '/opt/nvidia/nsight-systems/2023.2.4/bin/nsys' });
  const orin = await doctorOf('orin-jp6');
  t.is(orin.r.code, 0, orin.r.stderr);
  t.like(orin.row('L4T (JetPack)'), { value: '36.4.0 (JetPack 6.1/6.2)' });
  t.like(orin.row('GPU'), { value: 'NVIDIA Jetson AGX Orin Developer Kit (compute capability 8.7)' });
  t.like(orin.row('nvprof'), { status: 'warn', fix: 'use jetprof profile --tool nsys' });
  t.regex(orin.row('nvprof').value, /does not support compute capability 8\.7/);
  t.like(orin.row('CUDA runtime'), { value: '12.6.68' });
  t.regex(orin.row('TensorRT').value, /^10\.3\.0/);
});

test('this x86 machine, live: ONNX Runtime loads, OpenCV with FFmpeg, no TensorRT; exit 0; the table on the console', async (t) => {
  const { r, report, row } = await doctorOf();
  t.is(r.code, 0, r.stderr);
  t.true(report.canRun);
  t.like(row('ONNX Runtime (Node)'), { status: 'ok' });
  t.regex(row('ONNX Runtime (Node)').value, /^loads; providers cpu/);
  t.regex(row('OpenCV').value, /^4\.\d+\.\d+; video I\/O FFMPEG/);
  // nvprof here (scripts/setup.sh --test installs it) has no GPU to profile: installed, not ok
  if (row('nvprof').value !== 'not installed')
    t.like(row('nvprof'), {
      status: 'warn',
      value: `${row('nvprof').value.split(':')[0]}: installed; needs a supported GPU (none here)`,
    });
  t.like(row('Board'), { value: 'not a Jetson' });
  const md = await runCli('jetprof', ['doctor']);
  t.is(md.code, 0);
  t.regex(md.stdout, /^\| check \| \| value \| fix \|/);
  t.regex(
    md.stdout,
    /The main job \(infer\) can run here with ONNX Runtime, OpenCV DNN; not TensorRT \(TensorRT is not installed\)\./,
  );
});

test('L4T to JetPack, OS to glibc', (t) => {
  t.is(jetpackOf('32.7.6'), '4.6.1+');
  t.is(jetpackOf('32.6.1'), '4.6');
  t.is(jetpackOf('35.4.1'), '5.1.x');
  t.is(jetpackOf('36.4.3'), '6.1/6.2');
  t.is(glibcOfOs('ubuntu', '18.04'), '2.27');
  t.is(glibcOfOs('ubuntu', '22.04'), '2.35');
  t.is(glibcOfOs('debian', '12'), '2.36');
});

test('nvpmodel -q in the forms boards print it: plain, after the fan mode line, verbose; anything else is no mode', (t) => {
  t.is(parsePowerMode('NV Power Mode: MODE_15W_6CORE\n2\n'), 'MODE_15W_6CORE (mode 2)');
  t.is(parsePowerMode('NV Fan Mode:quiet\nNV Power Mode: MAXN\n0\n'), 'MAXN (mode 0)');
  t.is(
    parsePowerMode(
      'NVPM VERB: Config file: /etc/nvpmodel.conf\nNVPM VERB: parsing done for /etc/nvpmodel.conf\nNV Fan Mode:quiet\nNVPM VERB: Current mode: NV Power Mode: MODE_15W_6CORE\n2\nNVPM VERB: PARAM CPU_ONLINE: ARG CORE_0: PATH /sys/devices/system/cpu/cpu0/online: REAL_VAL: 1 CONF_VAL: 1\n',
    ),
    'MODE_15W_6CORE (mode 2)',
  );
  t.is(parsePowerMode('NV Power Mode: MODE_30W\r\n8\r\n'), 'MODE_30W (mode 8)');
  t.is(parsePowerMode('NV Power Mode: 15W'), '15W');
  t.is(parsePowerMode('nvpmodel: command not found\n'), undefined);
  t.is(parsePowerMode(''), undefined);
});
