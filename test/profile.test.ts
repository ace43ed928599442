/**
 * `jetprof profile` with the real profilers (installed by scripts/setup.sh --profilers): Nsight Systems records
 * jetprof's NVTX ranges from Node; nvprof accepts the lab's flags and says clearly that it found no GPU.
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nvprofArgv, nsysProfileArgv, nsysStatsArgv, NSYS_STATS_REPORTS } from '../src/profilers/argv.ts';
import { defaultProfiler } from '../src/profilers/device.ts';
import { jetsonComputeCapability } from '../src/platform/board.ts';
import { orphanNsysAgents, watchNsys } from '../src/profilers/nsys-agents.ts';
import { splitBackend } from '../src/cli/profile-command.ts';
import { loadNvtx } from '../src/pipeline/nvtx.ts';
import { nvprofStandIn } from './helpers/board-standins.ts';
import { nvtxStageRows } from '../src/report/profile-summary.ts';
import {
  freshDir,
  lastLines,
  makeModel,
  makeVideo,
  PERSON_VEHICLE_CFG,
  requires,
  runCli,
  scratchDir,
  startCli,
} from './helpers/fixtures.ts';

test("nvprof command line: the lab's flags, metrics, log file, then the command", (t) => {
  t.deepEqual(
    nvprofArgv({
      logFile: 'D/profiling_trt_log.txt',
      metrics: ['achieved_occupancy', 'sm_efficiency'],
      command: ['node', 'infer-trt.js', 'v.mp4'],
    }),
    [
      '--unified-memory-profiling',
      'off',
      '--dependency-analysis',
      '--metrics',
      'achieved_occupancy,sm_efficiency',
      '--log-file',
      'D/profiling_trt_log.txt',
      'node',
      'infer-trt.js',
      'v.mp4',
    ],
  );
  t.deepEqual(nvprofArgv({ logFile: 'L.%p.txt', childProcesses: true, command: ['x'] }).slice(0, 1), [
    '--profile-child-processes',
  ]);
});

test('nsys command lines: profile with cuda,nvtx,osrt (no CPU sampling) and stats as CSV', (t) => {
  t.deepEqual(nsysProfileArgv({ output: 'D/profile_onnx', command: ['node', 'infer-onnx.js'] }), [
    'profile',
    '-t',
    'cuda,nvtx,osrt',
    '-s',
    'none',
    '--cpuctxsw',
    'none',
    '--force-overwrite',
    'true',
    '-o',
    'D/profile_onnx',
    'node',
    'infer-onnx.js',
  ]);
  t.deepEqual(nsysStatsArgv('D/p.nsys-rep', NSYS_STATS_REPORTS), [
    'stats',
    '--report',
    'nvtx_sum,osrt_sum,cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum',
    '--format',
    'csv',
    '--force-export',
    'true',
    'D/p.nsys-rep',
  ]);
});

test('backend flag is taken out of the infer arguments; the default profiler follows the JetPack release', (t) => {
  t.deepEqual(splitBackend(['v.mp4', '--backend', 'trt', '--engine', 'e.trt']), {
    backend: 'tensorrt',
    rest: ['v.mp4', '--engine', 'e.trt'],
  });
  t.deepEqual(splitBackend(['-b', 'onnx', 'v.mp4']), { backend: 'onnx', rest: ['v.mp4'] });
  t.throws(() => splitBackend(['--backend=gpu']), { message: /--backend must be onnx, trt or opencv/ });
  t.is(defaultProfiler('32.7.4'), 'nvprof');
  t.is(defaultProfiler('36.3.0'), 'nsys');
  t.is(defaultProfiler(undefined), 'nsys');
  t.is(jetsonComputeCapability('NVIDIA Jetson AGX Orin Developer Kit'), 8.7);
  t.is(jetsonComputeCapability('NVIDIA Jetson Nano Developer Kit'), 5.3);
});

test("infer arguments read by infer's own parser: the video after value-taking options, --json=F and --json F alike, a bad one refused", async (t) => {
  const { inferArgFacts } = await import('../src/cli/infer-command.ts');
  const f = await inferArgFacts([
    '--duration',
    '5',
    '--model',
    'm.onnx',
    '--letterbox',
    'rtsp://cam/1',
    '--warmup',
    '2',
  ]);
  t.deepEqual(f.videos, ['rtsp://cam/1']);
  t.is(f.model, 'm.onnx');
  t.false(f.outputGiven);
  t.deepEqual(f.given.sort(), ['--duration', '--letterbox', '--model', '--warmup']);
  for (const form of [['--json=r.json'], ['--json', 'r.json']])
    t.is((await inferArgFacts(['v.mp4', ...form])).json, 'r.json', form.join(' '));
  t.true((await inferArgFacts(['v.mp4', '--no-write'])).outputGiven);
  t.true((await inferArgFacts(['v.mp4', '-o', 'x.mp4'])).outputGiven);
  t.is((await inferArgFacts(['v.mp4'])).pipeline, undefined, 'a default is not "given"');
  t.is((await inferArgFacts(['v.mp4', '--pipeline', 'on'])).pipeline, 'on');
  await t.throwsAsync(inferArgFacts(['v.mp4', '--max-det', 'many']), { message: /^infer arguments: .*--max-det/ });
});

test('bad call - a profiler that is not installed: one line with the install hint, exit 2', async (t) => {
  const r = await runCli('jetprof', ['profile', '--tool', 'nsys', '--', 'v.mp4'], {
    env: { JETPROF_NSYS: '/nonexistent/nsys' },
  });
  t.is(r.code, 2);
  t.is(r.stderr.trim().split('\n').length, 1);
  t.regex(
    r.stderr,
    /\/nonexistent\/nsys: nsys \(from JETPROF_NSYS\) is not an executable file \(fix: .*scripts\/setup\.sh --profilers/,
  );
  const n = await runCli('jetprof', ['profile', '--tool', 'nvprof', '--', 'v.mp4'], { env: { PATH: '/nonexistent' } });
  t.is(n.code, 2);
  t.regex(n.stderr, /nvprof is not installed .*use --tool nsys/);
});

test.serial(
  'bad calls refused before a profiler starts, exit 2, nothing replaced: --tries 0 and -5; --json naming the profile JSON itself; compare --profile nsys where nsys is not installed (the last REPORT.md stays)',
  async (t) => {
    const video = makeVideo('badcalls.mp4', 3, 160, 120);
    for (const tries of ['0', '-5', '1.5']) {
      const r = await runCli('jetprof', [
        'profile',
        '--tool',
        'nsys',
        '--tries',
        tries,
        '--',
        video,
        '--model',
        model.onnxPath,
      ]);
      t.is(r.code, 2, r.stderr);
      t.regex(r.stderr, new RegExp(`--tries ${tries.replace('.', '\\.')}: a whole number of nsys runs, at least 1`));
    }
    const out = freshDir('selfjson');
    const own = join(out, 'profile_onnx_nsys.json');
    writeFileSync(own, 'the last profile');
    const j = await runCli('jetprof', [
      'profile',
      '--tool',
      'nsys',
      '--out-dir',
      out,
      '--',
      video,
      '--model',
      model.onnxPath,
      '--json',
      own,
    ]);
    t.is(j.code, 2, j.stderr);
    t.regex(j.stderr, /profile_onnx_nsys\.json: the run's --json would be the profile's own JSON/);
    t.is(readFileSync(own, 'utf8'), 'the last profile');
    const lab = freshDir('compare-no-nsys');
    writeFileSync(join(lab, 'REPORT.md'), 'the last good report');
    const c = await runCli(
      'jetprof',
      ['compare', video, '--profile', 'nsys', '--out-dir', lab, '--', '--model', model.onnxPath],
      {
        env: { JETPROF_NSYS: '/nonexistent/nsys' },
      },
    );
    t.is(c.code, 2, c.stderr);
    t.regex(c.stderr, /nsys \(from JETPROF_NSYS\) is not an executable file/);
    t.is(readFileSync(join(lab, 'REPORT.md'), 'utf8'), 'the last good report');
  },
);

/** A read-only folder: a tmpfs mounted read-only (root ignores a folder's write bit), or undefined where not allowed. */
function readOnlyFolder(): { dir: string; done: () => void } | undefined {
  const dir = join(scratchDir(), `ro-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o555);
    return { dir, done: () => chmodSync(dir, 0o755) };
  }
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', dir]).status !== 0) return undefined;
  return { dir, done: () => spawnSync('umount', [dir]) };
}

/** Whether a read-only folder can be made: always for a user; for root, where a tmpfs can be mounted. */
function readOnlyPossible(): boolean {
  const ro = readOnlyFolder();
  ro?.done();
  return ro !== undefined;
}

requires(
  readOnlyPossible(),
  "root here may not mount a tmpfs, and ignores a folder's write bit",
  true,
)(
  'profile into a read-only out-dir: one line naming it, exit 2, before nsys runs (no stream left in TMPDIR)',
  async (t) => {
    const ro = readOnlyFolder()!;
    const tmp = freshDir('ro-tmpdir');
    try {
      const video = makeVideo('ro.mp4', 3, 160, 120);
      const r = await runCli(
        'jetprof',
        ['profile', '--tool', 'nsys', '--out-dir', ro.dir, '--', video, '--model', model.onnxPath],
        {
          env: { TMPDIR: tmp },
        },
      );
      t.is(r.code, 2, r.stderr);
      t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
      t.regex(r.stderr, /is on a read-only file system \(fix: pass --out-dir with a path in a folder you can write\)/);
      // (tsx, which runs the tests' jetprof from source, keeps its cache there)
      t.deepEqual(
        readdirSync(tmp).filter((f) => !f.startsWith('tsx-')),
        [],
        'nothing left in TMPDIR',
      );
    } finally {
      ro.done();
    }
  },
);

test('NVTX from Node: libnvToolsExt loads through koffi and push/pop run', (t) => {
  const nvtx = loadNvtx();
  t.true(nvtx.enabled, `libnvToolsExt.so.1 not loaded: ${nvtx.detail} (scripts/setup.sh --profilers installs it)`);
  nvtx.push('test');
  nvtx.pop();
  t.false(loadNvtx(['/nonexistent/libnvToolsExt.so.1']).enabled);
});

const model = makeModel('profiled', PERSON_VEHICLE_CFG, 9);

test.serial(
  'real nsys: the five stage ranges, one instance per frame, agreeing with the run JSON within 20%',
  async (t) => {
    const video = makeVideo('profiled.mp4', 12, 320, 240);
    const out = join(scratchDir(), 'nsys-profile');
    const r = await runCli(
      'jetprof',
      [
        'profile',
        '--tool',
        'nsys',
        '--out-dir',
        out,
        '--',
        video,
        '--model',
        model.onnxPath,
        '--pipeline',
        'on',
        '--warmup',
        '0',
        '-q',
        '--output',
        join(out, 'v.mp4'),
      ],
      { timeout: 900_000 }, // up to three nsys tries, each up to ~4 min on a loaded machine (its stall limit scales with load),
    );
    t.is(r.code, 0, lastLines(r.stderr));
    t.true(existsSync(join(out, 'profile_onnx.nsys-rep')));
    const profile = JSON.parse(readFileSync(join(out, 'profile_onnx_nsys.json'), 'utf8'));
    t.is(profile.schema, 'jetprof.profile/1');
    t.is(profile.tool, 'nsys');
    const stages = nvtxStageRows(profile.nsys);
    const byName = Object.fromEntries(stages.map((s) => [s.range, s]));
    for (const s of ['read', 'preprocess', 'inference', 'postprocess', 'write']) {
      t.truthy(byName[s], `NVTX range ${s} recorded`);
      t.is(byName[s].instances, 12, `${s}: one instance per frame`);
      // the run's write stage holds the hand-offs (write ranges) and the waits for the encoder before each model run
      const nvtxMs = (byName[s].totalNs + (s === 'write' ? (byName['encoder-wait']?.totalNs ?? 0) : 0)) / 1e6;
      const runMs = profile.run.stages[s].totalMs;
      t.true(
        Math.abs(nvtxMs - runMs) <= Math.max(0.2 * runMs, 1),
        `${s}: NVTX ${nvtxMs.toFixed(3)} ms vs run JSON ${runMs.toFixed(3)} ms`,
      );
    }
    t.is(byName['model-load'].instances, 1);
    t.regex(r.stdout, /\| inference \| 12 \|/);
    // nsys's words about the stream it could not import are said with what happened, after the import, not before it
    if (/nsys left its stream to be imported/.test(JSON.stringify(profile))) {
      t.notRegex(r.stderr, /^(Importer error status|Unable to retrieve the importer version|Generating '.*\.qdstrm')/m);
      t.regex(
        r.stderr,
        /nsys could not import its stream itself \(The importer binary and its dependencies were not found\) and left .*profile_onnx\.qdstrm; jetprof imported it with QdstrmImporter: the report is .*profile_onnx\.nsys-rep/,
      );
    } else t.notRegex(r.stderr, /could not import its stream itself/);
    t.like(
      profile.run.setup,
      { profiler: 'nsys', label: 'onnx-fp32-cpu-pipelined3-nsys' },
      'the run says it was measured under nsys',
    );
    const notRunning = ((1 - profile.run.stages.inference.totalMs / profile.run.wallMs) * 100).toFixed(1);
    t.true(
      r.stdout.includes(
        `the model was not running ${notRunning}% of the wall time (pipelined loop: frame ranges overlap`,
      ),
      'the same figure as the run JSON',
    );
    t.deepEqual(orphanNsysAgents(), [], 'no nsys agent left running after its nsys ended');
  },
);

test.serial(
  'real nsys, two streams in batches of 2: each frame sits inside a stream-<i> range (time per stream), each batch in a range naming its streams, the stage ranges keep their names',
  async (t) => {
    const video = makeVideo('profiled-streams.mp4', 6, 160, 120);
    const out = join(scratchDir(), 'nsys-streams');
    const r = await runCli(
      'jetprof',
      [
        'profile',
        '--tool',
        'nsys',
        '--out-dir',
        out,
        '--',
        video,
        '--streams',
        '2',
        '--model',
        model.onnxPath,
        '--warmup',
        '1',
        '--no-write',
        '-q',
      ],
      { timeout: 900_000 },
    );
    t.is(r.code, 0, lastLines(r.stderr));
    const profile = JSON.parse(readFileSync(join(out, 'profile_onnx_nsys.json'), 'utf8'));
    const rows = (profile.nsys.reports.nvtx_sum?.rows ?? []) as { range?: string; name?: string; instances: number }[];
    const count = (n: string) =>
      rows.find((x) => String(x.range ?? x.name ?? '').replace(/^[\w-]+:/, '') === n)?.instances ?? 0;
    t.is(count('stream-0'), 5, 'stream 0: its 5 measured frames');
    t.is(count('stream-1'), 5);
    t.is(count('warmup-stream-0'), 1, 'its warm-up frame under its own name');
    t.is(count('batch streams 0,1'), 5, 'one range per batch, naming the streams in it');
    t.is(count('warmup-batch streams 0,1'), 1);
    t.is(count('inference'), 5, 'one run of the model per batch');
    t.is(count('preprocess'), 5, 'one blob per batch');
    for (const stage of ['frame', 'read', 'postprocess', 'write'])
      t.is(count(stage), 10, `${stage}: one per measured frame of either stream`);
    t.is(profile.run.streams.length, 2);
    // the report does not divide summed frame ranges that overlap: it says why and points to the stage table
    const rep = await runCli('jetprof', ['report', '--profile', join(out, 'profile_onnx_nsys.json')]);
    t.is(rep.code, 0, rep.stderr);
    t.regex(
      rep.stdout.replace(/\s+/g, ' '),
      /frame ranges overlap in batches .*: 5 inference ranges are 5 runs of the model over batches of up to 2 frames/,
    );
  },
);

/** Processes whose command line mentions `text` (a test's own folder): what a run left behind. */
function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(text)) found.push(`${entry}: ${cmd}`);
    } catch {
      /* gone */
    }
  }
  return found;
}

for (const tool of ['nsys', 'nvprof'] as const) {
  test.serial(
    `SIGTERM to jetprof profile --tool ${tool} (a timeout's, which reaches jetprof alone): the profiled application finalizes its files, nothing outlives jetprof, exit 130${tool === 'nvprof' ? ' (nvprof: a stand-in that runs the application)' : ''}`,
    async (t) => {
      const video = makeVideo(`long-${tool}.mp4`, 3000, 160, 120);
      const out = join(scratchDir(), `sigterm-${tool}`);
      const env = tool === 'nvprof' ? { JETPROF_NVPROF: nvprofStandIn(scratchDir()) } : {};
      const run = startCli(
        'jetprof',
        [
          'profile',
          '--tool',
          tool,
          '--out-dir',
          out,
          '--',
          video,
          '--model',
          model.onnxPath,
          '--warmup',
          '0',
          '--no-write',
        ],
        { env },
      );
      await run.framesDone(3);
      run.child.kill('SIGTERM');
      t.is(await run.exit, 130, run.stderr());
      t.regex(run.stderr(), /jetprof profile: SIGTERM: ending the profiled run/);
      t.regex(run.stderr(), /interrupt \(SIGTERM\): finishing the current frame/, 'the application heard it');
      const written = JSON.parse(readFileSync(join(out, `run_onnx_${tool}.json`), 'utf8'));
      t.true(written.interrupted, 'the run JSON says it was interrupted');
      t.true(written.frames >= 3 && written.frames < 3000, `${written.frames} frames`);
      t.deepEqual(processesMentioning(out), [], 'no profiler or application left running');
      t.deepEqual(orphanNsysAgents(), [], 'no nsys agent left spinning');
      if (tool === 'nsys' && existsSync(join(out, 'profile_onnx_nsys.json'))) {
        // nsys wrote its report after the application ended: the frames done, no more
        const profile = JSON.parse(readFileSync(join(out, 'profile_onnx_nsys.json'), 'utf8'));
        const frames = nvtxStageRows(profile.nsys).find((r) => r.range === 'frame');
        t.is(frames?.instances, written.frames);
      } else if (tool === 'nsys') {
        // nsys 2022.4 can hang once the application ended: after a signal it is ended, not tried again
        t.regex(run.stderr(), /interrupted before nsys wrote a report/);
        t.notRegex(run.stderr(), /try 2\/3/);
      }
    },
  );
}

test.serial(
  'real nvprof without a GPU: the lab\'s flags are accepted, "no GPU" said clearly (exit 3), and nothing of the previous profile is replaced: its JSON, the lab log a student copied there, a run JSON, an nsys profile beside it; this run\'s log kept as .failed.txt',
  async (t) => {
    const video = makeVideo('nvprofiled.mp4', 4, 160, 120);
    const out = join(scratchDir(), 'nvprof-profile');
    mkdirSync(out, { recursive: true });
    // what earlier profiles left in the folder, and the lab's own log a student copied into it
    const before = new Map<string, string>([
      ['profile_onnx_nsys.json', JSON.stringify({ schema: 'jetprof.profile/1', tool: 'nsys', notes: ['earlier'] })],
      ['profile_onnx_nvprof.json', JSON.stringify({ schema: 'jetprof.profile/1', tool: 'nvprof', notes: ['a board'] })],
      ['run_onnx_nvprof.json', JSON.stringify({ schema: 'jetprof.run/2', stale: 'an earlier run' })],
      ['profiling_onnx_log.txt', '==6312== NVPROF is profiling process 6312 (the lab log, copied here)\n'],
    ]);
    for (const [f, text] of before) writeFileSync(join(out, f), text);
    const r = await runCli(
      'jetprof',
      ['profile', '--tool', 'nvprof', '--out-dir', out, '--', video, '--model', model.onnxPath, '--no-write', '-q'],
      { timeout: 300_000 },
    );
    t.is(r.code, 3, 'no usable GPU: the documented exit code 3, whatever nvprof itself returned');
    // Without a GPU, nvprof 11.8 stops the application when it loads libgomp (pulled in by FFmpeg): exit code 19.
    t.regex(
      r.stderr,
      /nvprof collected no GPU data \(CUDA device error, GPU profiling skipped(; Error: incompatible CUDA driver version\.)?\): no usable NVIDIA GPU or driver here; run it on the Jetson, or use --tool nsys/,
    );
    t.regex(
      r.stderr,
      /nothing replaced in .*nvprof-profile; this run's output is in .*profiling_onnx_log\.failed\.txt/,
    );
    for (const [f, text] of before) t.is(readFileSync(join(out, f), 'utf8'), text, `${f} is as it was`);
    t.regex(readFileSync(join(out, 'profiling_onnx_log.failed.txt'), 'utf8'), /CUDA device error|profil/);
    t.deepEqual(
      readdirSync(out).filter((f) => f.startsWith('.jetprof-out-')),
      [],
      'no staging folder left',
    );
  },
);

/**
 * A stand-in nsys (`script`) in a folder of its own, and an out-dir holding what a previous good profile left there:
 * the files, and their content, a run that does not complete must leave as they were.
 */
function previousProfileWithNsys(name: string, script: string) {
  const root = join(scratchDir(), name);
  mkdirSync(join(root, 'bin'), { recursive: true });
  const fake = join(root, 'bin', 'nsys');
  writeFileSync(fake, script, { mode: 0o755 });
  const out = join(root, 'out');
  mkdirSync(out, { recursive: true });
  const before = new Map<string, string>([
    ['profile_onnx.nsys-rep', 'last good report'],
    ['profile_onnx_stats.txt', 'last good stats'],
    ['profile_onnx.nsys.log', 'last good log'],
    ['profile_onnx_nsys.json', '{"schema":"jetprof.profile/1","notes":["last good"]}'],
    ['run_onnx_nsys.json', '{"schema":"jetprof.run/2","last":"good"}'],
  ]);
  for (const [f, text] of before) writeFileSync(join(out, f), text);
  return { fake, out, before };
}

test.serial(
  "nsys that leaves no report: the previous profile (report, stats, log, JSON) stays as it was, this run's log kept as .failed.log, exit 1",
  async (t) => {
    const { fake, out, before } = previousProfileWithNsys(
      'failing-nsys',
      '#!/bin/bash\necho "nsys: something went wrong"\nexit 1\n',
    );
    const video = makeVideo('failing-nsys.mp4', 3, 160, 120);
    const r = await runCli(
      'jetprof',
      ['profile', '--tool', 'nsys', '--tries', '1', '--out-dir', out, '--', video, '--model', model.onnxPath, '-q'],
      { env: { JETPROF_NSYS: fake }, timeout: 300_000 },
    );
    t.is(r.code, 1, r.stderr);
    t.regex(r.stderr, /nsys produced no report after 1 tries .*its output is in .*profile_onnx\.nsys\.failed\.log/);
    for (const [f, text] of before) t.is(readFileSync(join(out, f), 'utf8'), text, `${f} is as it was`);
    t.regex(readFileSync(join(out, 'profile_onnx.nsys.failed.log'), 'utf8'), /something went wrong/);
    t.deepEqual(
      readdirSync(out).filter((f) => f.startsWith('.jetprof-out-') || f.endsWith('.mp4')),
      [],
      'no staging folder, no video of the failed run',
    );
  },
);

test.serial(
  'Ctrl-C before nsys wrote its report: exit 130, the previous profile stays as it was, no staging folder left',
  async (t) => {
    // a profiler that has started and not yet written anything
    const { fake, out, before } = previousProfileWithNsys(
      'stopped-nsys',
      '#!/bin/bash\n[ "$1" = stats ] && exit 0\necho "nsys: collecting"\nexec sleep 600\n',
    );
    const video = makeVideo('stopped-nsys.mp4', 3, 160, 120);
    const run = startCli(
      'jetprof',
      ['profile', '--tool', 'nsys', '--tries', '1', '--out-dir', out, '--', video, '--model', model.onnxPath, '-q'],
      { env: { JETPROF_NSYS: fake } },
    );
    await run.waitFor(/nsys profile \(try 1\/1\)/);
    run.child.kill('SIGINT');
    t.is(await run.exit, 130, run.stderr());
    for (const [f, text] of before) t.is(readFileSync(join(out, f), 'utf8'), text, `${f} is as it was`);
    t.deepEqual(
      readdirSync(out).filter((f) => f.startsWith('.jetprof-out-')),
      [],
      'no staging folder left',
    );
  },
);

test.serial(
  'a hung nsys try: the stream it left is imported before anything runs again, and the application runs once',
  async (t) => {
    // a stand-in for nsys 2022.4 that runs the application, leaves its stream, then hangs (as its agent does)
    const root = join(scratchDir(), 'fake-nsys');
    mkdirSync(join(root, 'bin'), { recursive: true });
    mkdirSync(join(root, 'host-linux-x64'), { recursive: true });
    const count = join(root, 'runs.txt');
    const fake = join(root, 'bin', 'nsys');
    writeFileSync(
      fake,
      `#!/bin/bash
[ "$1" = stats ] && exit 0
shift
while [ $# -gt 0 ]; do case "$1" in -o) out=$2; shift 2;; -t|-s|--cpuctxsw|--force-overwrite) shift 2;; *) break;; esac; done
echo run >> ${JSON.stringify(count)}
# the launcher: runs the application, leaves the stream, and stays unreaped (a zombie) as nsys's does
( "$@"; echo stream > "$out.qdstrm" ) &
exec sleep 600
`,
      { mode: 0o755 },
    );
    writeFileSync(
      join(root, 'host-linux-x64', 'QdstrmImporter'),
      '#!/bin/bash\n[ "$1" = -i ] && cp "$2" "${2%.qdstrm}.nsys-rep"\n',
      { mode: 0o755 },
    );
    const video = makeVideo('hung-nsys.mp4', 3, 160, 120);
    const out = join(root, 'out');
    const previous = process.env.JETPROF_NSYS;
    process.env.JETPROF_NSYS = fake;
    const logged: string[] = [];
    try {
      const { runProfile } = await import('../src/profilers/run.ts');
      const result = await runProfile({
        tool: 'nsys',
        backend: 'onnx',
        inferArgs: [video, '--model', model.onnxPath, '--warmup', '1', '--no-write', '-q'],
        video,
        outputGiven: true,
        outDir: out,
        stallMs: 1500,
        onLog: (line) => logged.push(line),
      });
      t.is(readFileSync(count, 'utf8'), 'run\n', 'the application ran once');
      // the wait after the application's end is said as it begins, before the stall is named
      const ended = logged.findIndex((l) => /^the application ended; nsys is writing its report/.test(l));
      const stall = logged.findIndex((l) => /^nsys wrote nothing for \d+ s after the application ended/.test(l));
      t.true(ended >= 0 && ended < stall, logged.join('\n'));
      t.true(existsSync(join(out, 'profile_onnx.nsys-rep')), 'the report comes from the imported stream');
      t.false(existsSync(join(out, 'profile_onnx.qdstrm')));
      t.true(result.notes.some((n) => /try 1: nsys hung after the application ended/.test(n)));
      t.true(
        result.notes.some((n) => /try 1: jetprof imported the stream the hung nsys left/.test(n)),
        result.notes.join('\n'),
      );
      t.is(result.run?.frames, 2, "the run's own JSON");
    } finally {
      if (previous === undefined) delete process.env.JETPROF_NSYS;
      else process.env.JETPROF_NSYS = previous;
    }
  },
);

test.serial(
  'the nsys watchdog: an application that has ended and a profiler that writes nothing for the stall time is ended',
  async (t) => {
    // Stands for a stuck `nsys profile`: a parent whose only child (the "launcher") has exited and is not reaped.
    const stuck = spawn('perl', ['-e', 'if (fork() == 0) { exit 0 } sleep 600'], { stdio: 'ignore' });
    const base = join(scratchDir(), 'watchdog', 'profile_onnx');
    const t0 = Date.now();
    let endedAfter: number | undefined;
    const stalledAfter = await new Promise<number>((resolve) => {
      watchNsys(
        stuck.pid!,
        base,
        () => 2000,
        () => resolve(Date.now() - t0),
        () => (endedAfter = Date.now() - t0),
      );
    });
    t.true(endedAfter !== undefined && endedAfter <= stalledAfter, "the application's end is said before the stall");
    const exited = new Promise((resolve) => stuck.on('exit', resolve));
    // Any nsys writing its /tmp/nsys-report-* stream meanwhile (another test's) postpones the verdict, never advances it.
    t.true(stalledAfter >= 2000 && stalledAfter < 120_000, `stalled after ${stalledAfter} ms`);
    stuck.kill('SIGKILL');
    await exited;
  },
);

test.serial('the nsys watchdog leaves a running application alone', async (t) => {
  const busy = spawn('sh', ['-c', 'sleep 5 & wait'], { stdio: 'ignore' });
  let stalled = false;
  const stop = watchNsys(
    busy.pid!,
    join(scratchDir(), 'watchdog2', 'p'),
    () => 1000,
    () => {
      stalled = true;
    },
  );
  await new Promise((r) => setTimeout(r, 3500));
  stop();
  t.false(stalled, 'a child still running is not a stall');
  busy.kill('SIGKILL');
});
