/**
 * Inputs: bad, ambiguous, impossible or implicit input is one line with the fix, before anything runs where it can be,
 * and a run that fails changes no file under a final name (a cfg's .names, a run file of a runset, the weights' export
 * cache, an odd frame size, a missing folder, too few file descriptors, hand-edited result files).
 */
import test from 'ava';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  canMountTmpfs,
  errorLines,
  freshDir,
  inferRun,
  makeModel,
  makeVideo,
  previousOutputs,
  requires,
  ROOT,
  runCli,
  type CliResult,
  scratchDir,
  TSX_IMPORT,
  SMALL_LAB_CFG,
} from './helpers/fixtures.ts';
import { cliCommand } from '../src/util/process.ts';

const model = makeModel('lost2', SMALL_LAB_CFG, 4);

test('a run that fails before its first measured frame leaves the previous video and JSON as they were', async (t) => {
  const dir = freshDir('warmup');
  const video = makeVideo('lost2-short.mp4', 6, 160, 120);
  const previous = previousOutputs(dir);
  const [out, json] = previous.files;
  const r = await runCli('infer', [
    video,
    '--model',
    model.onnxPath,
    '--warmup',
    '10',
    '--output',
    out,
    '--json',
    json,
  ]);
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, /no frame was measured: it gave 6 frame\(s\), all within --warmup 10/);
  previous.kept(t);
});

test('bad input, one line each: a cfg without [yolo], parse on a folder, --model with --cfg/--weights, --labels with --model', async (t) => {
  const dir = freshDir('bad');
  const cfg = join(dir, 'noyolo.cfg');
  writeFileSync(cfg, '[net]\nwidth=64\nheight=64\n[convolutional]\nfilters=8\nsize=3\npad=1\nactivation=leaky\n');
  const weights = join(dir, 'noyolo.weights');
  t.is((await runCli('jetprof', ['make-weights', '--cfg', cfg, '--out', weights])).code, 0);
  const cases: [string, CliResult, RegExp][] = [
    [
      'no [yolo]',
      await runCli('jetprof', ['export', '--cfg', cfg, '--weights', weights, '--out', join(dir, 'x.onnx')]),
      /noyolo\.cfg: no \[yolo\] layer, so this is not a YOLO detector/,
    ],
    [
      'parse a folder',
      await runCli('jetprof', ['parse', dir]),
      new RegExp(`${basename(dir)}: a folder, not a profiler log`),
    ],
    [
      '--model and --cfg',
      await runCli('infer', [
        'v.mp4',
        '--model',
        model.onnxPath,
        '--cfg',
        model.cfgPath,
        '--weights',
        model.weightsPath,
      ]),
      /--model .*lost2\.onnx and --cfg\/--weights both name a model: which one to run is ambiguous/,
    ],
    [
      '--labels with --model',
      await runCli('infer', ['v.mp4', '--model', model.onnxPath, '--labels', join(ROOT, 'weights/yolov4-tiny.names')]),
      /--labels .*yolov4-tiny\.names would be ignored: .*lost2\.onnx carries the labels it was exported with/,
    ],
  ];
  for (const [name, r, expected] of cases) {
    t.is(r.code, 2, `${name}: ${r.stderr}`);
    t.is(r.stderr.trim().split('\n').length, 1, `${name}: ${r.stderr}`);
    t.regex(r.stderr, expected, name);
  }
});

test('the export cache: <weights>.onnx beside the weights; a same-named file jetprof did not write is left alone (cache in $XDG_CACHE_HOME/jetprof)', async (t) => {
  const dir = freshDir('cache');
  const video = makeVideo('lost2-cache.mp4', 4, 160, 120);
  const cfg = join(dir, 'pv.cfg');
  writeFileSync(cfg, readFileSync(model.cfgPath));
  const weights = join(dir, 'pv.weights');
  writeFileSync(weights, readFileSync(model.weightsPath));
  const xdg = join(dir, 'xdg');
  const env = { XDG_CACHE_HOME: xdg };
  const first = await runCli('infer', [video, '--cfg', cfg, '--weights', weights, '--no-write', '--warmup', '1'], {
    env,
  });
  t.is(first.code, 0, first.stderr);
  t.regex(first.stderr, /exported .*pv\.weights\.onnx/);
  const again = await runCli('infer', [video, '--cfg', cfg, '--weights', weights, '--no-write', '--warmup', '1'], {
    env,
  });
  t.regex(again.stderr, /using cached .*pv\.weights\.onnx/);
  // a user's own file under that name (not a jetprof export): never overwritten
  const own = join(dir, 'own.weights');
  writeFileSync(own, readFileSync(model.weightsPath));
  writeFileSync(`${own}.onnx`, "my own model, not jetprof's");
  const r = await runCli('infer', [video, '--cfg', cfg, '--weights', own, '--no-write', '--warmup', '1'], { env });
  t.is(r.code, 0, r.stderr);
  t.is(readFileSync(`${own}.onnx`, 'utf8'), "my own model, not jetprof's");
  t.regex(
    r.stderr,
    /own\.weights\.onnx is not a model jetprof exported, so it is left alone; the export is cached in .*xdg\/jetprof instead \(--cache-dir to choose\)/,
  );
  const chosen = join(dir, 'chosen');
  const c = await runCli(
    'infer',
    [video, '--cfg', cfg, '--weights', own, '--no-write', '--warmup', '1', '--cache-dir', chosen],
    { env },
  );
  t.is(c.code, 0, c.stderr);
  t.regex(c.stderr, /exported .*chosen\/own\.weights-[0-9a-f]{12}\.onnx/);
});

test("implicit inputs are inputs: --json onto the cfg's .names, report --out onto a run file of a runset; --repeat numbers its videos", async (t) => {
  const dir = freshDir('implicit');
  const video = makeVideo('lost2-implicit.mp4', 5, 160, 120);
  const cfg = join(dir, 'pv.cfg');
  writeFileSync(cfg, readFileSync(model.cfgPath));
  const names = join(dir, 'pv.names');
  writeFileSync(names, 'person\nvehicle\n');
  const r = await runCli('infer', [video, '--cfg', cfg, '--weights', model.weightsPath, '--no-write', '--json', names]);
  t.is(r.code, 2);
  t.regex(r.stderr, /pv\.names/);
  t.is(readFileSync(names, 'utf8'), 'person\nvehicle\n');
  const out = join(dir, 'out.mp4');
  const json = join(dir, 'R.json');
  const rep = await runCli('infer', [
    video,
    '--model',
    model.onnxPath,
    '--warmup',
    '1',
    '--repeat',
    '2',
    '--output',
    out,
    '--json',
    json,
    '-q',
  ]);
  t.is(rep.code, 0, rep.stderr);
  for (const k of [1, 2]) t.true(readFileSync(join(dir, `out-${k}.mp4`)).length > 0, `out-${k}.mp4 written`);
  const before = readFileSync(join(dir, 'R-1.json'), 'utf8');
  const bad = await runCli('jetprof', ['report', '--run', json, '--out', join(dir, 'R-1.json')]);
  t.is(bad.code, 2, bad.stderr);
  t.is(readFileSync(join(dir, 'R-1.json'), 'utf8'), before);
  // export --out onto the labels file the cfg reads without being told
  const ex = await runCli('jetprof', ['export', '--cfg', cfg, '--weights', model.weightsPath, '--out', names]);
  t.is(ex.code, 2, ex.stderr);
  t.is(readFileSync(names, 'utf8'), 'person\nvehicle\n');
  // compare on a missing video: one line before any backend starts
  const cmp = await runCli('jetprof', [
    'compare',
    join(dir, 'nope.mp4'),
    '--out-dir',
    join(dir, 'cmp'),
    '--',
    '--model',
    model.onnxPath,
  ]);
  t.is(cmp.code, 2, cmp.stderr);
  t.regex(cmp.stderr, /nope\.mp4: video not found/);
  t.is(cmp.stderr.trim().split('\n').length, 1, cmp.stderr);
});

test('one line each: a 300-character --output, report on a profile without its run or on a parsed profile, --kind named only where it exists, --ep cuda without CUDA', async (t) => {
  const dir = freshDir('smaller');
  const video = makeVideo('lost2-smaller.mp4', 4, 160, 120);
  const long = await runCli('infer', [
    video,
    '--model',
    model.onnxPath,
    '--warmup',
    '1',
    '--output',
    join(dir, `${'a'.repeat(300)}.mp4`),
  ]);
  t.is(long.code, 2, long.stderr);
  t.regex(
    long.stderr,
    /the file name has 304 characters, more than a file system allows \(255\) \(fix: give --output a shorter name\)/,
  );
  const noRun = join(dir, 'profile_onnx.json');
  writeFileSync(
    noRun,
    JSON.stringify({ schema: 'jetprof.profile/1', tool: 'nsys', backend: 'onnx', exitCode: 1, notes: [] }),
  );
  const r1 = await runCli('jetprof', ['report', '--run', noRun]);
  t.is(r1.code, 2);
  t.regex(
    r1.stderr,
    /profile_onnx\.json: a profile whose run did not finish \(no run result in it\) \(fix: pass it with --profile/,
  );
  const parsed = join(dir, 'parsed.json');
  writeFileSync(parsed, JSON.stringify({ schema: 'jetprof.nvprof/1', processes: [] }));
  t.regex(
    (await runCli('jetprof', ['report', '--run', parsed])).stderr,
    /parsed\.json: a parsed profile \(jetprof\.nvprof\/1\), not a run result \(fix: pass it with --profile/,
  );
  const garbage = join(dir, 'garbage.txt');
  writeFileSync(garbage, 'hello\nworld\n');
  const rep = await runCli('jetprof', ['report', '--profile', garbage]);
  t.is(rep.code, 2);
  t.regex(
    rep.stderr,
    /neither nvprof nor Nsight Systems output .*\(jetprof parse --kind nvprof\|nsys forces the kind\)/,
    'report has no --kind: it does not offer one',
  );
  t.regex((await runCli('jetprof', ['parse', garbage])).stderr, /or force the kind with --kind nvprof\|nsys/);
  const cuda = await runCli('infer', [
    video,
    '--model',
    model.onnxPath,
    '--ep',
    'cuda',
    '--warmup',
    '1',
    '--no-write',
    '-q',
  ]);
  t.is(cuda.code, 0, cuda.stderr);
  t.notRegex(cuda.stderr, /onnxruntime_src|\[E:onnxruntime/, 'no raw ONNX Runtime error lines');
  t.regex(cuda.stderr, /execution provider 'cuda' is not available here .*; using 'cpu'/);
});

test('an odd frame size is written one pixel smaller by H.264: said, and both sizes in the run JSON; rotation metadata is said with the fix', async (t) => {
  const dir = freshDir('odd');
  const odd = join(dir, 'odd.mkv');
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'color=c=red:size=767x431:rate=30,format=rgb24',
    '-frames:v',
    '4',
    '-c:v',
    'ffv1',
    odd,
  ]);
  const said = (warnings: string[], re: RegExp) =>
    t.true(
      warnings.some((w) => re.test(w)),
      warnings.join(' | '),
    );
  const r = await inferRun([odd, '--model', model.onnxPath, '--warmup', '1', '-o', join(dir, 'odd-out.mp4')]);
  said(
    r.warnings,
    /odd-out\.mp4: written at 766x430, not the 767x431 of the frames \(avc1 encodes even sizes only; the run JSON records both\)/,
  );
  t.deepEqual(r.run.frameSize, [767, 431]);
  t.like(r.run.output, { width: 766, height: 430 });
  const plain = makeVideo('lost2-rot-plain.mp4', 4, 320, 240);
  const rot = join(dir, 'rot.mp4');
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', plain, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', rot]);
  const rr = await inferRun([rot, '--model', model.onnxPath, '--warmup', '1', '--no-write']);
  said(
    rr.warnings,
    /rot\.mp4: carries rotation metadata \(90°, a phone video\?\): its frames were read as stored, not turned .* ffmpeg -i .*rot\.mp4 -c:v libx264 upright\.mp4/,
  );
  t.like(rr.run.video, { width: 320, height: 240, rotation: 90 });
  // among several streams: the rotated one is named by its index and source
  const two = await inferRun([plain, rot, '--model', model.onnxPath, '--warmup', '1', '--no-write']);
  said(two.warnings, /stream 1 \(\S*rot\.mp4\): carries rotation metadata \(90°/);
  t.false(
    two.warnings.some((w) => /stream 0 \([^)]*\): carries rotation/.test(w)),
    two.warnings.join(' | '),
  );
});

test('a videos folder that cannot be made is said before anything runs, naming the option that sets it: --output-dir with several streams, --output with one; missing folders are made', async (t) => {
  const video = makeVideo('lost2-outdir.mp4', 3, 160, 120);
  // a file where the folder would go: root (as CI runs) could make any other
  const blocked = join(video, 'no-such-folder');
  const several = await runCli('infer', [
    video,
    '--streams',
    '2',
    '--model',
    model.onnxPath,
    '--output-dir',
    blocked,
    '-q',
  ]);
  t.is(several.code, 2, several.stderr);
  t.is(errorLines(several.stderr).length, 1, several.stderr);
  t.regex(
    several.stderr,
    /no-such-folder\/\S+-0-onnx-detected\.mp4: the directory \S+no-such-folder cannot be created \(a file is in its way\) \(fix: pass --output-dir with a path in a folder you can write\)/,
  );
  t.notRegex(several.stderr, /WARNING|sequential loop/, 'said before the model loads');
  const one = await runCli('infer', [video, '--model', model.onnxPath, '--output', join(blocked, 'a.mp4'), '-q']);
  t.is(one.code, 2, one.stderr);
  t.regex(
    one.stderr,
    /a\.mp4: the directory \S+no-such-folder cannot be created \(a file is in its way\) \(fix: pass --output with a path/,
  );
  // folders that are only missing are made, as report and compare make theirs (the lab's `--json runs/trt.json`)
  const fresh = join(scratchDir(), 'made-here');
  const made = await runCli('infer', [
    video,
    '--model',
    model.onnxPath,
    '--output',
    join(fresh, 'videos', 'a.mp4'),
    '--json',
    join(fresh, 'runs', 'a.json'),
    '--detections',
    join(fresh, 'boxes', 'a.jsonl'),
    '--warmup',
    '1',
    '-q',
  ]);
  t.is(made.code, 0, made.stderr);
  t.deepEqual(readdirSync(fresh).sort(), ['boxes', 'runs', 'videos']);
  t.deepEqual(readdirSync(join(fresh, 'videos')), ['a.mp4']);
  t.deepEqual(readdirSync(join(fresh, 'runs')), ['a.json']);
});

test('parse --trace-rows all streams its JSON (rows through scratch files): the same JSON as holding every row, to a file and to stdout, no scratch left', async (t) => {
  const dir = freshDir('stream-json');
  // two processes' GPU traces in nvprof's form, 10,000 rows each (more than one spill block), one API trace
  const gpu = (pid: number) => [
    `==${pid}== NVPROF is profiling process ${pid}, command: app${pid}`,
    `==${pid}== Profiling application: app${pid}`,
    `==${pid}== Profiling result:`,
    '   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*           Device   Context    Stream  Name',
    ...Array.from({ length: 10000 }, (_, i) => {
      const cells = [
        `${(100 + i * 0.01).toPrecision(5)}ms`,
        `${(3.1 + (i % 97) / 10).toFixed(3)}us`,
        `(${i % 64} 1 1)`,
        '(128 1 1)',
        String(32 + (i % 8)),
        '0B',
        '0B',
        'NVIDIA Tegra X1',
        '1',
        String(7 + (i % 3)),
      ];
      const widths = [8, 8, 19, 14, 8, 8, 8, 15, 8, 8];
      return `${cells.map((c, j) => c.padStart(widths[j])).join('  ')}  kernel_${i % 50}(float*) [${i + pid}]`;
    }),
  ];
  const log = join(dir, 'trace.txt');
  writeFileSync(log, [...gpu(11), ...gpu(22), ''].join('\n'));
  const held = await runCli('jetprof', ['parse', log, '--trace-rows', '1000000']);
  t.is(held.code, 0, held.stderr);
  const out = join(dir, 'all.json');
  const streamed = await runCli('jetprof', ['parse', log, '--trace-rows', 'all', '--out', out]);
  t.is(streamed.code, 0, streamed.stderr);
  const a = JSON.parse(held.stdout);
  const b = JSON.parse(readFileSync(out, 'utf8'));
  t.is(b.processes.length, 2);
  t.is(b.processes[0].gpuTrace.length, 10000);
  t.deepEqual(b, a, 'the same rows in the same order');
  const toStdout = await runCli('jetprof', ['parse', log, '--trace-rows', 'all']);
  t.deepEqual(JSON.parse(toStdout.stdout), a);
  t.deepEqual(readdirSync(dir).sort(), ['all.json', 'trace.txt'], 'no scratch folder or partial file left');
});

/** A read-only folder can be made here: a tmpfs remounted read-only (root, as CI), or a folder without its write bit (a user). */
function readOnlyFolderPossible(): boolean {
  return process.getuid?.() !== 0 || canMountTmpfs();
}

requires(
  readOnlyFolderPossible(),
  "root here may not mount a tmpfs, and ignores a folder's write bit",
  true,
)(
  'the export cache of weights in a read-only folder goes to $XDG_CACHE_HOME/jetprof, and says so (a read-only tmpfs where mounting is allowed)',
  async (t) => {
    const dir = freshDir('ro');
    const ro = join(dir, 'weights');
    mkdirSync(ro);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', ro]).status === 0;
    if (!mounted) {
      // without mount rights a read-only folder is a folder without the write bit (root ignores that bit)
      if (process.getuid?.() === 0)
        return t.fail('root could not mount a tmpfs here, though canMountTmpfs said it could: no read-only folder');
    }
    try {
      const cfg = join(ro, 'pv.cfg');
      const weights = join(ro, 'pv.weights');
      writeFileSync(cfg, readFileSync(model.cfgPath));
      writeFileSync(weights, readFileSync(model.weightsPath));
      if (mounted) t.is(spawnSync('mount', ['-o', 'remount,ro', ro]).status, 0);
      else chmodSync(ro, 0o555);
      const xdg = join(dir, 'xdg');
      const video = makeVideo('lost2-ro.mp4', 4, 160, 120);
      const r = await runCli('infer', [video, '--cfg', cfg, '--weights', weights, '--no-write', '--warmup', '1'], {
        env: { XDG_CACHE_HOME: xdg },
      });
      t.is(r.code, 0, r.stderr);
      t.regex(r.stderr, /weights is read-only: the export is cached in .*xdg\/jetprof \(--cache-dir to choose\)/);
      t.true(readdirSync(join(xdg, 'jetprof')).some((f) => /^pv\.weights-[0-9a-f]{12}\.onnx$/.test(f)));
    } finally {
      if (mounted) spawnSync('umount', [ro]);
      else chmodSync(ro, 0o755);
    }
  },
);

// serial: its paced run is in this process, and another test's child process would hold up its event loop
test.serial(
  '--realtime: a frame rate under one frame in 10 s is refused; --duration bounds the wall time even while waiting for the next frame',
  async (t) => {
    const video = makeVideo('slow-source.mp4', 8, 160, 120);
    const slow = await runCli('infer', [
      video,
      '--model',
      model.onnxPath,
      '--realtime',
      '--source-fps',
      '0.001',
      '--no-write',
    ]);
    t.is(slow.code, 2);
    t.regex(slow.stderr, /--source-fps must be a frame rate from 0\.1 \(one frame in 10 s\) to 1000, got '0\.001'/);
    const capSlow = await runCli('jetprof', ['capacity', video, '--source-fps', '1e-9', '--p99-ms', '400']);
    t.is(capSlow.code, 2);
    t.regex(capSlow.stderr, /--source-fps must be a frame rate from 0\.1/);
    // at 0.1 FPS the next frame is 10 s away: --duration 1 ends the run at once instead of waiting for it
    const { run } = await inferRun([
      video,
      '--model',
      model.onnxPath,
      '--realtime',
      '--source-fps',
      '0.1',
      '--duration',
      '1',
      '--warmup',
      '0',
      '--no-write',
    ]);
    // waiting for frame 2 (due at 10 s) would have processed it: the run ends with the one that arrived
    t.is(run.frames, 1, 'the one frame that arrived within the duration');
  },
);

test('a run that cannot report what it measured is an error with the counts and writes nothing: --interval with no inferred measured frame, an undecodable file beside a good one', async (t) => {
  const dir = join(scratchDir(), 'incomplete');
  mkdirSync(dir, { recursive: true });
  const video = makeVideo('incomplete.mp4', 12, 160, 120);
  const previous = previousOutputs(dir);
  const [out, json] = previous.files;
  const interval = await runCli('infer', [
    video,
    '--model',
    model.onnxPath,
    '--interval',
    '100',
    '--warmup',
    '2',
    '--output',
    out,
    '--json',
    json,
  ]);
  t.is(interval.code, 2, interval.stderr);
  t.regex(
    interval.stderr,
    /--interval 100: the model ran on none of the 10 measured frame\(s\) .* \(fix: use a smaller --interval \(at most 9 here\)/,
  );
  t.notRegex(interval.stdout, /Inference|NaN/);
  previous.kept(t);
  // an undecodable file (bytes that are no video, named .mp4) beside a good one
  const broken = join(dir, 'broken.mp4');
  writeFileSync(broken, Buffer.alloc(4096, 7));
  const two = await runCli('infer', [video, broken, '--model', model.onnxPath, '--no-write', '--json', json]);
  t.not(two.code, 0, two.stderr);
  t.is(two.code, 2, two.stderr);
  t.notRegex(`${two.stdout}${two.stderr}`, /NaN/);
  t.regex(two.stderr, /broken\.mp4/);
  previous.kept(t);
  // a file that opens but yields no measured frame (all within --warmup) beside one that does
  const short = makeVideo('incomplete-short.mp4', 3, 160, 120);
  const mixed = await runCli('infer', [
    video,
    short,
    '--model',
    model.onnxPath,
    '--warmup',
    '5',
    '--output-dir',
    dir,
    '--json',
    json,
  ]);
  t.is(mixed.code, 2, mixed.stderr);
  t.regex(
    mixed.stderr,
    /incomplete-short\.mp4: stream 1 gave no measured frame \(3 read, --warmup 5\) while the other streams ran: .*nothing was written/,
  );
  t.notRegex(`${mixed.stdout}${mixed.stderr}`, /NaN/);
  previous.kept(t);
  t.deepEqual(
    readdirSync(dir).filter((f) => f.includes('-detected')),
    [],
    'no stream video written',
  );
});

test.serial(
  'a missing temporary folder or an out-dir that is a file: one line with the path and the fix, never a stack trace or a spin',
  async (t) => {
    // in this process: jetprof's CLIs run from source through tsx, which itself needs the temporary folder
    const { withNsysLock } = await import('../src/profilers/nsys-agents.ts');
    const { handleError } = await import('../src/cli/handle-error.ts');
    const before = process.env.TMPDIR;
    process.env.TMPDIR = join(scratchDir(), 'no-such-tmp');
    try {
      const e = await t.throwsAsync(
        withNsysLock(
          () => undefined,
          async () => 1,
        ),
      );
      t.regex(
        e!.message,
        /jetprof-nsys\.lock: cannot create the nsys lock \(ENOENT\): the temporary folder .*no-such-tmp is missing, full or read-only/,
      );
      // what capacity's scratch folder (mkdtemp) or any other unforeseen system error becomes: one line, exit 2
      let mkdtempError: unknown;
      try {
        mkdtempSync(join(tmpdir(), 'jetprof-capacity-'));
      } catch (err) {
        mkdtempError = err;
      }
      const written: string[] = [];
      const write = process.stderr.write;
      process.stderr.write = ((s: string) => written.push(s)) as never;
      let code: number;
      try {
        code = handleError(mkdtempError, 'jetprof');
      } finally {
        process.stderr.write = write;
      }
      t.is(code, 2);
      t.is(written.length, 1);
      t.regex(
        written[0],
        /^jetprof: error: .*no-such-tmp\/jetprof-capacity-\w*: does not exist .*\(ENOENT\) \(fix: create it/,
      );
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
    const video = makeVideo('no-tmp.mp4', 4, 160, 120);
    const file = join(scratchDir(), 'out-dir-is-a-file');
    writeFileSync(file, 'x');
    const outDir = await runCli('jetprof', [
      'profile',
      '--tool',
      'nsys',
      '--out-dir',
      file,
      '--',
      video,
      '--model',
      model.onnxPath,
    ]);
    t.is(outDir.code, 2, outDir.stderr);
    t.regex(outDir.stderr, /out-dir-is-a-file/);
    t.notRegex(outDir.stderr, /internal error|\n\s+at /, 'no stack trace');
    t.is(errorLines(outDir.stderr).length, 1, outDir.stderr);
  },
);

test('a hand-edited run or capacity file with impossible figures is refused on load; a legal 250-byte output name is written; --realtime on an image folder asks for its rate', async (t) => {
  const dir = freshDir('part3-small');
  const video = makeVideo('part3.mp4', 4, 160, 120);
  const json = join(dir, 'run.json');
  await inferRun([video, '--model', model.onnxPath, '--warmup', '1', '--no-write', '--json', json]);
  const run = readFileSync(json, 'utf8');
  for (const [field, value] of [
    ['endToEndFps', '1e999'],
    ['inferenceFps', '-5'],
  ]) {
    const forged = join(dir, `forged-${field}.json`);
    writeFileSync(forged, run.replace(new RegExp(`"${field}": [^,]+,`), `"${field}": ${value},`));
    const r = await runCli('jetprof', ['report', '--run', forged]);
    t.is(r.code, 2, `${field}: ${r.stderr}`);
    t.regex(r.stderr, new RegExp(`${field} (Infinity|-5): not a figure a run can measure`));
    t.notRegex(r.stdout, /Infinity|-5\.00/);
  }
  const capacity = join(dir, 'forged-capacity.json');
  const point = { streams: 1, minStreamFps: 10, meanStreamFps: 10, p99Ms: 80, dropped: 0, held: true };
  const result = {
    schema: 'jetprof.capacity/1',
    source: 'vtest.avi',
    sourceFps: 10,
    p99LimitMs: 400,
    maxStreams: 999,
    points: [point],
    seconds: 10,
  };
  writeFileSync(capacity, JSON.stringify(result));
  const cap = await runCli('jetprof', ['report', '--capacity', capacity]);
  t.is(cap.code, 2, cap.stderr);
  t.regex(cap.stderr, /an answer of 999 streams that none of its counts held/);
  t.notRegex(cap.stdout, /999/);
  // a mistyped field, a null where a count goes, a search of 200,000 counts: one line naming the field, exit 2
  for (const [forged, field] of [
    [
      { ...result, maxStreams: 1, machine: { cores: 2, maxLoadAvg: '3.1', busyRuns: 0, runs: 1 } },
      /field machine\.maxLoadAvg must be number/,
    ],
    [{ ...result, maxStreams: 1, points: [{ ...point, dropped: null }] }, /field points\.0\.dropped must be integer/],
    [
      { ...result, maxStreams: 1, points: Array(200_000).fill(point) },
      /field points must NOT have more than 1000 items/,
    ],
  ] as const) {
    writeFileSync(capacity, JSON.stringify(forged));
    const r = await runCli('jetprof', ['report', '--capacity', capacity]);
    t.is(r.code, 2, r.stderr);
    t.is(errorLines(r.stderr).length, 1, r.stderr);
    t.regex(r.stderr, new RegExp(`forged-capacity\\.json: not a valid jetprof\\.capacity/1 file: ${field.source}`));
    t.notRegex(r.stderr, /TypeError|is not a function|Cannot read/);
  }
  // 250 bytes: legal; its temporary name, with `.partial-PID` added, would not be
  const long = join(dir, `${'n'.repeat(246)}.mp4`);
  await inferRun([video, '--model', model.onnxPath, '--warmup', '1', '--output', long, '-q']);
  t.true(readFileSync(long).length > 0);
  const images = join(dir, 'frames');
  mkdirSync(images, { recursive: true });
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', video, join(images, 'f-%02d.jpg')]);
  const paced = await runCli('infer', [images, '--model', model.onnxPath, '--realtime', '--no-write']);
  t.is(paced.code, 2);
  t.regex(
    paced.stderr,
    /frames: a folder of images has no frame rate for --realtime \(fix: give the rate its camera delivered, e\.g\. --source-fps 10\)/,
  );
});

test('too few file descriptors for many streams (ulimit -n): the real cause, EMFILE, and its fix, in one line; no partial file left', async (t) => {
  const dir = join(scratchDir(), 'emfile');
  mkdirSync(dir, { recursive: true });
  const video = makeVideo('emfile.mp4', 4, 160, 120);
  // Loading the program takes about 35 descriptors at once (the loader reads modules in parallel, more of them
  // open together on a loaded machine) and 32 streams about 250: a limit of 120 leaves the start a wide margin and
  // the streams none, whatever the machine's load. tsx compiles a module it has not cached in an esbuild process,
  // which a low limit cannot start: src/'s modules
  // are compiled (and cached) first, with the usual limit, so the limited run only reads tsx's cache. The entry
  // scripts and the worker threads' modules (*-thread.ts) run when imported: infer's entry is started instead (--version).
  const runs = /^(cli\/(jetprof|infer|infer-onnx|infer-trt|infer-opencv)|\w+\/[\w-]+-thread)\.ts$/;
  const modules = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && !runs.test(f),
  );
  const imports = modules.map((f) => `import(${JSON.stringify(pathToFileURL(join(ROOT, 'src', f)).href)})`);
  const warm = spawnSync(
    process.execPath,
    [TSX_IMPORT, '--input-type=module', '-e', `await Promise.all([${imports}]);`],
    {
      encoding: 'utf8',
    },
  );
  t.is(warm.status, 0, warm.stderr);
  t.is((await runCli('infer', ['--version'], { process: true })).code, 0);
  const r = spawnSync(
    'bash',
    [
      '-c',
      `ulimit -n 120; exec ${cliCommand('infer')
        .map((a) => `"${a}"`)
        .join(' ')} "${video}" --streams 32 --model "${model.onnxPath}" --output-dir "${dir}" -q`,
    ],
    { encoding: 'utf8', timeout: 240_000 },
  );
  t.is(r.status, 2, r.stderr);
  t.regex(
    r.stderr,
    /EMFILE: too many open files, ulimit -n\) \(fix: raise the limit \(e\.g\. ulimit -n 4096\) or run fewer streams\)/,
  );
  t.notRegex(r.stderr, /not a video OpenCV can open|use a \.mp4/);
  t.deepEqual(readdirSync(dir), [], 'nothing written, no partial file');
});

test('FIFOs: one given as the video is named as such (not "not found"); an output FIFO nobody reads is refused at once, signals never left unheard in a blocked open; with a reader it gets the JSON', async (t) => {
  const dir = freshDir('fifo');
  const video = makeVideo('fifo-src.mp4', 8, 160, 120);
  const fifoVideo = join(dir, 'camera.avi');
  execFileSync('mkfifo', [fifoVideo]);
  const asVideo = await runCli('infer', [fifoVideo, '--model', model.onnxPath, '--no-write', '--max-frames', '6']);
  t.is(asVideo.code, 2, asVideo.stderr);
  t.regex(asVideo.stderr, /camera\.avi: is a FIFO, not a video file \(fix: give a video file/);
  const out = join(dir, 'run.json');
  execFileSync('mkfifo', [out]);
  const args = [video, '--model', model.onnxPath, '--no-write', '--warmup', '1', '--json', out, '-q'];
  // a process with a time limit: an open that blocked would end in the limit's kill, and the test would say so
  const alone = await runCli('infer', args, { timeout: 120_000 });
  t.is(alone.code, 2, alone.stderr);
  t.regex(
    alone.stderr,
    /run\.json: cannot write \(ENXIO: a FIFO no process is reading\) \(fix: start its reader first/,
  );
  // a reader that holds the FIFO open from the start (a non-blocking open returns at once), then reads to its end
  const readerScript = `
    const fs = require('node:fs');
    const fd = fs.openSync(process.argv[1], fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    process.stdout.write('ready\\n');
    const buf = Buffer.alloc(65536), parts = [], pause = new Int32Array(new SharedArrayBuffer(4));
    for (let seen = false; ; ) {
      let n = -1;
      try { n = fs.readSync(fd, buf); } catch (e) { if (e.code !== 'EAGAIN') throw e; }
      if (n > 0) { seen = true; parts.push(Buffer.from(buf.subarray(0, n))); continue; }
      if (n === 0 && seen) break;
      Atomics.wait(pause, 0, 0, 2);
    }
    fs.writeFileSync(process.argv[1] + '.got', Buffer.concat(parts));`;
  const reader = spawn(process.execPath, ['-e', readerScript, out], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => reader.stdout.once('data', resolve));
  const read = new Promise((resolve) => reader.on('close', resolve));
  const withReader = await runCli('infer', args, { timeout: 120_000 });
  await read;
  t.is(withReader.code, 0, withReader.stderr);
  t.is(JSON.parse(readFileSync(`${out}.got`, 'utf8')).schema, 'jetprof.run/2');
});

requires(canMountTmpfs(), 'mounting a tmpfs is not allowed here')(
  '--out-dir on a read-only file system: "read-only", not "does not exist, create it", exit 2, before anything runs (compare, selftest, profile)',
  async (t) => {
    const ro = freshDir('ro');
    t.is(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', ro]).status, 0);
    try {
      const video = makeVideo('ro.mp4', 4, 160, 120);
      for (const [args, made] of [
        [['compare', video, '--backends', 'onnx', '--out-dir', ro], 'is on a read-only file system'],
        [['compare', video, '--backends', 'onnx', '--out-dir', join(ro, 'lab')], 'cannot be created \\(EROFS'],
        [['selftest', '--out-dir', join(ro, 'st')], 'cannot be created \\(EROFS'],
        [['profile', '--tool', 'nsys', '--out-dir', join(ro, 'p'), '--', video], 'cannot be created \\(EROFS'],
      ] as const) {
        const r = await runCli('jetprof', [...args]);
        t.is(r.code, 2, r.stderr);
        t.regex(r.stderr, new RegExp(`the directory ${ro}.* ${made}.*\\(fix: pass --out-dir`), args.join(' '));
        t.notRegex(r.stderr, /\[1\//, 'no backend ran');
      }
      // a file written through the one output writer, into a folder it would have to make there: the real reason
      const log = join(ROOT, 'test/fixtures/profiles/nvprof-synthetic-trt-lab.txt');
      const parsed = await runCli('jetprof', ['parse', log, '--out', join(ro, 'sub', 'p.json')]);
      t.is(parsed.code, 2, parsed.stderr);
      t.regex(parsed.stderr, /sub\/p\.json: cannot write \(EROFS: read-only file system\)/);
    } finally {
      spawnSync('umount', [ro]);
    }
  },
);
