/**
 * Nothing lost, ever: the bad-input, fault and signal cases of issue 17, each asserting the exit code, the one-line
 * message and exactly which files are left. A full disk is a real 300 KB tmpfs where this machine lets the test
 * mount one (root, as CI), else the output module's ENOSPC test hook.
 */
import test from 'ava';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  canMountTmpfs,
  inferRun,
  makeModel,
  makeVideo,
  PERSON_VEHICLE_CFG,
  probeVideo,
  requires,
  ROOT,
  runCli,
  scratchDir,
  startCli,
  YOLOV4_TINY_CFG,
} from './helpers/fixtures.ts';

const model = makeModel('reliable', PERSON_VEHICLE_CFG, 13);
const video = makeVideo('reliable.mp4', 12, 160, 120);
let dirs = 0;
const fresh = (name: string) => {
  const d = join(scratchDir(), `rel-${name}-${dirs++}`);
  mkdirSync(d, { recursive: true });
  return d;
};
const oneLine = (t: { is: (a: unknown, b: unknown, m?: string) => void }, stderr: string) =>
  t.is(stderr.trim().split('\n').length, 1, stderr);
const partials = (dir: string) =>
  readdirSync(dir).filter((f) => f.includes('.partial') || f.startsWith('.jetprof-out-'));

// 1. a full disk ------------------------------------------------------------------------------------------------

/** A 300 KB tmpfs, or undefined where mounting is not allowed. */
function smallDisk(): string | undefined {
  const dir = fresh('tmpfs');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=300k', 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? dir : undefined;
}

test.serial(
  '1. a full disk: exit 2 with the path and ENOSPC, the good file that was there untouched, no partial left (a real 300 KB tmpfs where allowed)',
  (t) => {
    const disk = smallDisk();
    const dir = disk ?? fresh('enospc');
    const out = join(dir, 'out.mp4');
    const good = makeVideo('good.mp4', 3, 64, 48);
    copyFileSync(good, out);
    const before = readFileSync(out);
    const json = join(fresh('enospc-json'), 'run.json');
    try {
      const r = runCli(
        'infer',
        [video, '--model', model.onnxPath, '--output', out, '--json', json, '--warmup', '1', '-q'],
        { env: disk ? {} : { JETPROF_FAULT_ENOSPC: 'out.mp4' } },
      );
      t.is(r.code, 2, r.stderr);
      t.regex(
        r.stderr,
        disk
          ? /out\.mp4: cannot write \(ENOSPC: no space left on device\) \(fix: free some space or write elsewhere; the previous file, if any, is untouched\)/
          : /out\.mp4: cannot write \(ENOSPC: no space left on device \(simulated: JETPROF_FAULT_ENOSPC=out\.mp4 is set, the disk is not full\)\) \(fix: free some space/,
      );
      oneLine(t, r.stderr);
      t.is(Buffer.compare(readFileSync(out), before), 0, 'the good out.mp4 is untouched');
      t.deepEqual(partials(dir), []);
      t.false(existsSync(json), 'no run JSON claims a video that was not written');
      // the same for a JSON output: the old file stays as it was
      const jsonDir = fresh('enospc-json2');
      const oldJson = join(jsonDir, 'run.json');
      writeFileSync(oldJson, '{"old": true}');
      const r2 = runCli(
        'infer',
        [video, '--model', model.onnxPath, '--no-write', '--json', oldJson, '--warmup', '1', '-q'],
        { env: { JETPROF_FAULT_ENOSPC: 'run.json' } },
      );
      t.is(r2.code, 2, r2.stderr);
      // the hook says it is one: a user who left it set does not hunt for a full disk
      t.regex(
        r2.stderr,
        /run\.json: cannot write \(ENOSPC: no space left on device \(simulated: JETPROF_FAULT_ENOSPC=run\.json is set, the disk is not full\)\)/,
      );
      t.is(readFileSync(oldJson, 'utf8'), '{"old": true}');
      t.deepEqual(partials(jsonDir), []);
    } finally {
      if (disk) spawnSync('umount', [disk]);
    }
    if (!disk) t.log('simulated ENOSPC (this machine does not allow mounting a tmpfs)');
  },
);

/** Free space on a mounted disk, in bytes. */
function freeOn(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

requires(
  canMountTmpfs(),
  'mounting a tmpfs is not allowed here (CI runs as root and mounts one)',
  true,
)(
  '1b. a disk that fills after the last space check, when the encoder writes the frames it held: exit 2 with ENOSPC and the count, the old .mkv/.avi untouched (a real 12 MB tmpfs)',
  (t) => {
    const disk = fresh('latefill');
    t.is(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=12m', 'tmpfs', disk]).status, 0);
    try {
      // 30 frames of noise: FFmpeg's x264 holds them all (40 frames of look-ahead) and writes them at release, several MB
      const noise = join(fresh('noise'), 'noise.avi');
      execFileSync('ffmpeg', [
        ...['-v', 'error', '-y', '-f', 'lavfi', '-i'],
        'nullsrc=s=960x540:r=25,geq=random(1)*255:random(2)*255:random(3)*255',
        ...['-frames:v', '30', '-c:v', 'mjpeg', '-q:v', '2', noise],
      ]);
      for (const ext of ['mkv', 'avi']) {
        for (const f of readdirSync(disk)) rmSync(join(disk, f), { recursive: true, force: true });
        const out = join(disk, `out.${ext}`);
        writeFileSync(out, 'the good video of yesterday');
        // 4.25 MiB free: above the writer's 4 MiB floor at every check, below what the encoder writes at release
        writeFileSync(join(disk, 'filler'), Buffer.alloc(freeOn(disk) - (4 * 1024 + 256) * 1024));
        const r = runCli('infer', [
          noise,
          '--model',
          model.onnxPath,
          '--warmup',
          '1',
          '--video-io',
          'ffmpeg',
          '-o',
          out,
          '-q',
        ]);
        t.is(r.code, 2, `${ext}: ${r.stderr}`);
        t.regex(
          r.stderr,
          new RegExp(
            `out\\.${ext}: cannot write \\(ENOSPC: no space left on device \\(the encoder (wrote \\d+ of the 30 frames|left no playable video)\\)\\)`,
          ),
        );
        oneLine(t, r.stderr);
        t.is(readFileSync(out, 'utf8'), 'the good video of yesterday', `${ext}: the old file is untouched`);
        t.deepEqual(partials(disk), [], `${ext}: no temporary file left`);
      }
    } finally {
      spawnSync('umount', [disk]);
    }
  },
);

// 2. an output that is an input ----------------------------------------------------------------------------------

test('2. an output path equal to an input (or to another output, or through a symlink) is refused before anything runs', (t) => {
  const dir = fresh('same');
  const input = join(dir, 'in.mp4');
  copyFileSync(video, input);
  const before = readFileSync(input);
  const cases: [string[], RegExp][] = [
    [['--output', input], /in\.mp4: the output video would overwrite the video/],
    [['--no-write', '--json', input], /in\.mp4: the run JSON would overwrite the video/],
    [
      ['--json', join(dir, 'o.mp4'), '--output', join(dir, 'o.mp4')],
      /o\.mp4: the run JSON and the output video are the same file/,
    ],
    [['--no-write', '--detections', model.onnxPath], /the detections file would overwrite the model/],
  ];
  for (const [args, message] of cases) {
    const r = runCli('infer', [input, '--model', model.onnxPath, '--warmup', '1', '-q', ...args], { cwd: dir });
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, message);
    oneLine(t, r.stderr);
  }
  const link = join(dir, 'link.mp4');
  symlinkSync(input, link);
  const r = runCli('infer', [input, '--model', model.onnxPath, '--output', link, '-q'], { cwd: dir });
  t.is(r.code, 2);
  t.regex(r.stderr, /link\.mp4: the output video would overwrite the video/);
  t.is(Buffer.compare(readFileSync(input), before), 0, 'the input video is untouched');
  t.true(lstatSync(link).isSymbolicLink());
  // export over its own weights, make-weights over its cfg
  const weights = readFileSync(model.weightsPath);
  const e = runCli('jetprof', [
    'export',
    '--cfg',
    model.cfgPath,
    '--weights',
    model.weightsPath,
    '--out',
    model.weightsPath,
  ]);
  t.is(e.code, 2);
  t.regex(e.stderr, /the ONNX would overwrite the weights/);
  t.is(
    Buffer.compare(readFileSync(model.weightsPath), weights),
    0,
    'trained weights are not overwritten by ONNX bytes',
  );
  const cfgCopy = join(dir, 'c.cfg');
  copyFileSync(PERSON_VEHICLE_CFG, cfgCopy);
  const m = runCli('jetprof', ['make-weights', '--cfg', cfgCopy, '--out', cfgCopy]);
  t.is(m.code, 2);
  t.regex(m.stderr, /c\.cfg: the weights would overwrite the cfg/);
  t.is(readFileSync(cfgCopy, 'utf8'), readFileSync(PERSON_VEHICLE_CFG, 'utf8'));
});

// 3. special files ------------------------------------------------------------------------------------------------

test('3. device files and symlinks: written through, never replaced', async (t) => {
  const dir = fresh('special');
  const runJson = join(dir, 'run.json');
  await inferRun([video, '--model', model.onnxPath, '--no-write', '--json', runJson, '--warmup', '1']);
  const r = runCli('jetprof', ['report', '--run', runJson, '--out', '/dev/null', '--html', '/dev/null']);
  t.is(r.code, 0, r.stderr);
  t.true(statSync('/dev/null').isCharacterDevice(), '/dev/null is still the device');
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const reader = spawn('cat', [fifo]);
  let piped = '';
  reader.stdout.on('data', (d) => (piped += d));
  const readerDone = new Promise((r) => reader.on('close', r));
  const viaFifo = runCli('jetprof', ['report', '--run', runJson, '--out', fifo]);
  t.is(viaFifo.code, 0, viaFifo.stderr);
  t.true(lstatSync(fifo).isFIFO(), 'the FIFO is still a FIFO');
  const target = join(dir, 'real.md');
  const link = join(dir, 'link.md');
  writeFileSync(target, 'old');
  symlinkSync(target, link);
  t.is(runCli('jetprof', ['report', '--run', runJson, '--out', link]).code, 0);
  t.true(lstatSync(link).isSymbolicLink(), 'the link is still a link');
  t.regex(readFileSync(target, 'utf8'), /^# YOLOv4-Tiny/, 'its target got the report');
  await readerDone;
  t.regex(piped, /^# YOLOv4-Tiny/, 'the reader of the FIFO got the report');
  const bad = runCli('infer', [video, '--model', model.onnxPath, '--output', '/dev/null']);
  t.is(bad.code, 2);
  t.regex(
    bad.stderr,
    /\/dev\/null: the annotated video must go to a regular file \(fix: give a \.mp4 path, or pass --no-write/,
  );
});

// 4. the ONNX cache -----------------------------------------------------------------------------------------------

test('4. the ONNX cache is keyed on content: another cfg with the same weights, an edited .names, a broken cfg', (t) => {
  const dir = fresh('cache');
  const cfg416 = join(dir, 'a416.cfg');
  const cfg608 = join(dir, 'b608.cfg');
  const text = readFileSync(YOLOV4_TINY_CFG, 'utf8');
  writeFileSync(cfg416, text);
  writeFileSync(cfg608, text.replace(/^width=416$/m, 'width=608').replace(/^height=416$/m, 'height=608'));
  const weights = join(dir, 'm.weights');
  t.is(runCli('jetprof', ['make-weights', '--cfg', cfg416, '--out', weights]).code, 0);
  const run = (cfg: string) => {
    const r = runCli('infer', [
      video,
      '--cfg',
      cfg,
      '--weights',
      weights,
      '--no-write',
      '--max-frames',
      '3',
      '--warmup',
      '1',
      '--json',
      '-',
      '-q',
    ]);
    t.is(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  t.is(run(cfg416).model.inputWidth, 416);
  t.is(run(cfg608).model.inputWidth, 608, 'the 608 cfg runs the 608 model, not the cached 416 one');
  writeFileSync(join(dir, 'a416.names'), Array.from({ length: 80 }, (_, i) => `thing${i}`).join('\n'));
  t.deepEqual(run(cfg416).model.labels.slice(0, 2), ['thing0', 'thing1'], 'an edited .names file is used');
  writeFileSync(cfg416, text.replace(/^filters=255$/m, 'filters=25x'));
  const broken = runCli('infer', [video, '--cfg', cfg416, '--weights', weights, '--no-write', '-q']);
  t.is(broken.code, 2, 'a broken cfg fails even though a cached export exists');
  t.regex(broken.stderr, /a416\.cfg:\d+: filters=25x is not an integer/);
});

// 5. video writers that cannot open -------------------------------------------------------------------------------

test('5. a video writer that cannot open fails before the first frame, in one line', (t) => {
  const dir = fresh('writer');
  mkdirSync(join(dir, 'folder.mp4'));
  const cases: [string[], RegExp][] = [
    [
      ['--output', join(dir, 'out')],
      /out: OpenCV picks the video container from the extension, and '\(none\)' is not one/,
    ],
    [
      ['--output', join(dir, 'out.txt')],
      /out\.txt: OpenCV picks the video container from the extension, and '\.txt' is not one/,
    ],
    [['--output', join(dir, 'folder.mp4')], /folder\.mp4: is a folder, not a file/],
    [['--frame-size', '1x1'], /--frame-size must be between 32x32 and 8192x8192, got 1x1/],
    [['--frame-size', '20000x20000'], /--frame-size must be between 32x32 and 8192x8192, got 20000x20000/],
    [['--frame-size', '100000x100000'], /--frame-size must be between 32x32 and 8192x8192/],
  ];
  for (const [args, message] of cases) {
    const t0 = Date.now();
    const r = runCli('infer', [video, '--model', model.onnxPath, '-q', ...args], { cwd: dir });
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, message);
    oneLine(t, r.stderr);
    t.false(/internal error|at .*\.ts:\d+/.test(r.stderr), 'no stack trace');
    t.true(Date.now() - t0 < 60_000);
  }
  t.deepEqual(readdirSync(dir).sort(), ['folder.mp4'], 'nothing written');
});

// 6. other internal errors ----------------------------------------------------------------------------------------

test('6. --backend foo and report --csv on a file: one line, exit 2, no stack', async (t) => {
  const r = runCli('infer', [video, '--backend', 'foo']);
  t.is(r.code, 2);
  t.regex(r.stderr, /--backend must be onnx, trt or opencv, got 'foo'/);
  t.false(r.stderr.includes('internal error'));
  const dir = fresh('csv');
  const runJson = join(dir, 'run.json');
  await inferRun([video, '--model', model.onnxPath, '--no-write', '--json', runJson, '--warmup', '1']);
  const file = join(dir, 'existing.csv');
  writeFileSync(file, 'x');
  const c = runCli('jetprof', ['report', '--run', runJson, '--csv', file]);
  t.is(c.code, 2, c.stderr);
  t.regex(c.stderr, /existing\.csv: --csv takes a folder \(one CSV file per table\), and this is a file/);
  oneLine(t, c.stderr);
});

// 7. runs that measure nothing, streams that end early --------------------------------------------------------------

test('7. a run that measures no frame exits 2 with why; a stream that ends early is a warning with the counts', (t) => {
  const dir = fresh('zero');
  const one = makeVideo('one.mp4', 1, 160, 120);
  const r = runCli('infer', [one, '--model', model.onnxPath, '--no-write', '--json', join(dir, 'r.json'), '-q']);
  t.is(r.code, 2);
  t.regex(
    r.stderr,
    /one\.mp4: no frame was measured: it gave 1 frame\(s\), all within --warmup 5 \(fix: use a longer video, or a smaller --warmup \(e\.g\. --warmup 0\)\)/,
  );
  t.false(existsSync(join(dir, 'r.json')));
  const big = runCli('infer', [video, '--model', model.onnxPath, '--no-write', '--warmup', '50', '-q']);
  t.is(big.code, 2);
  t.regex(big.stderr, /no frame was measured: it gave 12 frame\(s\), all within --warmup 50/);
  // a report of an old run JSON that measured nothing: one line, not a crash on null
  const empty = join(dir, 'empty.json');
  writeFileSync(
    empty,
    JSON.stringify({
      schema: 'jetprof.run/1',
      backend: 'onnx',
      backendDetail: 'x',
      frames: 0,
      inferenceFps: 0,
      endToEndFps: 0,
      stages: { read: { meanMs: null } },
    }),
  );
  const rep = runCli('jetprof', ['report', '--run', empty]);
  t.is(rep.code, 2);
  t.regex(rep.stderr, /empty\.json: this run measured no frame/);
  // an mp4 cut short: fewer frames than the container declares
  const whole = makeVideo('whole.avi', 50, 160, 120);
  const cut = join(dir, 'cut.avi');
  copyFileSync(whole, cut);
  truncateSync(cut, Math.floor(statSync(whole).size * 0.3));
  const w = runCli('infer', [cut, '--model', model.onnxPath, '--no-write', '--warmup', '1', '--json', '-']);
  t.is(w.code, 0, w.stderr);
  t.regex(
    w.stderr,
    /cut\.avi: the stream ended after \d+ of the 50 frames its container declares \(a cut or damaged file\?\)/,
  );
});

// 8. signals ------------------------------------------------------------------------------------------------------

/** A 600-frame run to be signalled once its first measured frames went through (condition, not clock). */
async function startLongRun(dir: string) {
  const long = makeVideo('sig-long.mp4', 600, 160, 120);
  const out = join(dir, 'out.mp4');
  const json = join(dir, 'run.json');
  const run = startCli('infer', [long, '--model', model.onnxPath, '--output', out, '--json', json, '--warmup', '2'], {
    cwd: dir,
  });
  await run.framesDone(6);
  return { ...run, out, json };
}

test.serial('8a. two SIGINTs 10 ms apart: no abort; the video and JSON are finalized', async (t) => {
  const dir = fresh('sig2');
  const run = await startLongRun(dir);
  run.child.kill('SIGINT');
  // 10 ms: late enough to be delivered as a second signal, early enough that finishing the frame and closing the
  // files (which took under 50 ms in one CI run) is still under way
  await new Promise((r) => setTimeout(r, 10));
  run.child.kill('SIGINT');
  const code = await run.exit;
  t.is(code, 130, run.stderr());
  t.false(/terminate called|Napi::Error|Aborted/.test(run.stderr()));
  t.regex(run.stderr(), /SIGINT again: still finishing the frame in flight/);
  const json = JSON.parse(readFileSync(run.json, 'utf8'));
  t.true(json.interrupted);
  t.is(probeVideo(run.out).frames, json.frames + json.warmupFrames);
  t.deepEqual(partials(dir), []);
});

test.serial('8b. SIGHUP (an ssh session dropped) finalizes like SIGTERM', async (t) => {
  const dir = fresh('hup');
  const run = await startLongRun(dir);
  run.child.kill('SIGHUP');
  const code = await run.exit;
  t.is(code, 130, run.stderr());
  t.true(JSON.parse(readFileSync(run.json, 'utf8')).interrupted);
  t.true(probeVideo(run.out).frames > 0);
  t.deepEqual(partials(dir), []);
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  test.serial(
    `8e. the OpenCV DNN backend in the sequential loop hears ${signal}: it stops after the frame in flight`,
    async (t) => {
      const dir = fresh(`cvsig-${signal}`);
      const long = makeVideo('sig-long.mp4', 600, 160, 120);
      const json = join(dir, 'run.json');
      const run = startCli(
        'infer',
        [long, '--backend', 'opencv', '--model', model.onnxPath, '--pipeline', 'off', '--no-write', '--json', json],
        { cwd: dir },
      );
      await run.framesDone(6);
      run.child.kill(signal);
      const code = await run.exit;
      t.is(code, 130, run.stderr());
      const result = JSON.parse(readFileSync(json, 'utf8'));
      t.true(result.interrupted, 'the run says it was interrupted');
      t.true(result.frames + result.warmupFrames < 600, `stopped early: ${result.frames} frames`);
      t.notRegex(run.stderr(), /nothing was written/);
    },
  );
}

test("8c. jetprof's temporary files and folders of dead processes are removed at the next run; a running one's, a user's look-alike and a link stay", (t) => {
  const dir = fresh('stale');
  const dead = join(dir, '.out.partial-999999-0123456789ab.mp4');
  const deadFolder = join(dir, '.jetprof-out-999999-AbC123');
  const alive = join(dir, `.out.partial-${process.pid}-0123456789ab.mp4`);
  // not jetprof's: a user's file of a similar name, and a link named like a temporary file
  const thesis = join(dir, '.thesis.partial-999998.tex');
  const victim = join(dir, 'victim.txt');
  const link = join(dir, '.run.partial-999997-ba9876543210.json');
  writeFileSync(dead, 'half a video');
  mkdirSync(deadFolder);
  writeFileSync(join(deadFolder, 'out.mp4'), 'half a video');
  writeFileSync(alive, 'being written');
  writeFileSync(thesis, 'a chapter');
  writeFileSync(victim, 'keep me');
  symlinkSync(victim, link);
  const r = runCli('infer', [
    video,
    '--model',
    model.onnxPath,
    '--output',
    join(dir, 'out.mp4'),
    '--warmup',
    '1',
    '-q',
  ]);
  t.is(r.code, 0, r.stderr);
  t.false(existsSync(dead), "the dead process's partial is gone");
  t.false(existsSync(deadFolder), "the dead process's staging folder is gone");
  t.true(existsSync(alive), "a running process's partial stays");
  t.is(readFileSync(thesis, 'utf8'), 'a chapter', "a user's file that only looks like one stays");
  t.true(lstatSync(link).isSymbolicLink(), 'a link is never swept');
  t.is(readFileSync(victim, 'utf8'), 'keep me');
});

test('8d. links planted where temporary names used to be predictable are never written through (video, run JSON)', (t) => {
  const dir = fresh('planted');
  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, 'keep me');
  // an attacker in a shared folder guesses the next process ids: links for a few hundred of them
  for (let pid = process.pid; pid < process.pid + 400; pid++) {
    symlinkSync(victim, join(dir, `.out.partial-${pid}.mp4`));
    symlinkSync(victim, join(dir, `.run.partial-${pid}.json`));
  }
  const r = runCli('infer', [
    video,
    '--model',
    model.onnxPath,
    '--output',
    join(dir, 'out.mp4'),
    '--json',
    join(dir, 'run.json'),
    '--warmup',
    '1',
    '--max-frames',
    '3',
    '-q',
  ]);
  t.is(r.code, 0, r.stderr);
  t.is(readFileSync(victim, 'utf8'), 'keep me');
  t.true(probeVideo(join(dir, 'out.mp4')).frames > 0);
  t.is(JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).schema, 'jetprof.run/2');
  t.deepEqual(
    readdirSync(dir).filter((f) => f.startsWith('.jetprof-out-') || /partial-\d+-/.test(f)),
    [],
    'no temporary file or folder left',
  );
});

// 10. cfg keys darknet does not know ----------------------------------------------------------------------------------

test('10. an unknown cfg key is a warning with the line and the nearest key; --strict makes it an error', (t) => {
  const dir = fresh('cfgkey');
  const cfg = join(dir, 'typo.cfg');
  writeFileSync(
    cfg,
    readFileSync(PERSON_VEHICLE_CFG, 'utf8')
      .replace('activation=leaky', 'activaton=leaky')
      .replace(/^width=640$/m, 'width=640\nwidht=416'),
  );
  const weights = join(dir, 'typo.weights');
  t.is(runCli('jetprof', ['make-weights', '--cfg', cfg, '--out', weights]).code, 0);
  const r = runCli('jetprof', ['export', '--cfg', cfg, '--weights', weights, '--out', join(dir, 'typo.onnx')]);
  t.is(r.code, 0, r.stderr);
  t.regex(
    r.stderr,
    /typo\.cfg:\d+: unknown key 'widht' in \[net\] \(did you mean 'width'\?\); darknet ignores it too \("Unused field"\)/,
  );
  t.regex(r.stderr, /typo\.cfg:\d+: unknown key 'activaton' in \[convolutional\] \(did you mean 'activation'\?\)/);
  const strict = runCli('jetprof', [
    'export',
    '--cfg',
    cfg,
    '--weights',
    weights,
    '--out',
    join(dir, 'strict.onnx'),
    '--strict',
  ]);
  t.is(strict.code, 2);
  t.regex(
    strict.stderr,
    /typo\.cfg:\d+: unknown key 'widht' in \[net\] \(did you mean 'width'\?\) \(fix: fix the key, or drop --strict/,
  );
  t.false(existsSync(join(dir, 'strict.onnx')));
  // the shipped cfgs use only keys darknet knows
  for (const c of [YOLOV4_TINY_CFG, PERSON_VEHICLE_CFG]) {
    const e = runCli('jetprof', [
      'export',
      '--cfg',
      c,
      '--weights',
      c === YOLOV4_TINY_CFG ? join(dir, 'x.weights') : weights,
      '--out',
      join(dir, 'x.onnx'),
      '--strict',
    ]);
    if (c === YOLOV4_TINY_CFG) continue; // (no weights for it here; the lab cfg is checked)
    t.is(e.code, 0, e.stderr);
  }
});

// 9. profiler logs cut, concatenated, or fuzzed ---------------------------------------------------------------------

const SYNTHETIC_NVPROF = readFileSync(join(ROOT, 'test/fixtures/profiles/nvprof-synthetic-trt-lab.txt'), 'utf8');
const NSYS_2022 = readFileSync(join(ROOT, 'test/fixtures/profiles/nsys-2022-column.txt'), 'utf8');

test('9a. no newline after the last line: a whole row is kept (with a note), a line cut in its numbers is a diagnostic', async (t) => {
  const { parseNsysStats } = await import('../src/parsers/nsys.ts');
  const { parseNvprof } = await import('../src/parsers/nvprof.ts');
  const rangesOf = (text: string) => (parseNsysStats(text).value.reports.nvtx_sum?.rows ?? []).map((x) => x.range);
  // the NVTX table's rows up to its last one, with no newline after it
  const nsysText = NSYS_2022.slice(0, NSYS_2022.indexOf('PushPop  postprocess') + 'PushPop  postprocess'.length);
  const whole = rangesOf(`${nsysText}\n`);
  t.true(whole.includes('postprocess'));
  // many saved logs simply end without a newline: the last row is not lost
  t.deepEqual(rangesOf(nsysText), whole, 'the same rows as with the newline');
  t.true(parseNsysStats(nsysText).diagnostics.some((d) => d.code === 'NO_FINAL_NEWLINE'));
  // cut inside the numbers of the last row: not a row, a TRUNCATED_LINE diagnostic
  const lastLine = nsysText.split('\n').pop()!;
  const cut = nsysText.slice(0, nsysText.length - lastLine.length + lastLine.search(/\d/) + 3);
  const r = parseNsysStats(cut);
  t.is(rangesOf(cut).length, whole.length - 1, 'the cut row is not kept');
  t.true(r.diagnostics.some((d) => d.code === 'TRUNCATED_LINE' && /the log ends mid-line/.test(d.message)));
  // the same through a file, and for nvprof: the last row of the dependency table cut in its numbers
  const dir = fresh('cut');
  const file = join(dir, 'cut.txt');
  const nv = SYNTHETIC_NVPROF.trimEnd();
  const nvLast = nv.split('\n').pop()!;
  const nvCut = nv.slice(0, nv.length - nvLast.length + nvLast.search(/\d/) + 3);
  writeFileSync(file, nvCut);
  const p = runCli('jetprof', ['parse', file]);
  t.is(p.code, 0, p.stderr);
  const parsed = JSON.parse(p.stdout);
  const lastName = nvLast
    .trim()
    .split(/\s{2,}/)
    .pop()!;
  const names = parsed.processes.flatMap((x: { dependency: { name: string }[]; summary: { name: string }[] }) =>
    [...x.dependency, ...x.summary].map((d) => d.name),
  );
  t.false(names.includes(lastName), 'the cut row is not a row');
  t.regex(p.stderr, /the log ends mid-line/);
  t.is(parseNvprof(nvCut).diagnostics.filter((d) => d.code === 'TRUNCATED_LINE').length, 1);
  // the whole log without its final newline keeps its last row, through the file path (byte scanner) too
  writeFileSync(file, nv);
  const kept = JSON.parse(runCli('jetprof', ['parse', file]).stdout);
  t.true(
    kept.processes.some((x: { dependency: { name: string }[]; summary: { name: string }[] }) =>
      [...x.dependency, ...x.summary].some((d) => d.name === lastName),
    ),
    `the last row (${lastName}) is kept`,
  );
});

test('9b. a log concatenated with itself: no doubled rows, one diagnostic; --all-runs keeps each copy', async (t) => {
  const { parseNvprof } = await import('../src/parsers/nvprof.ts');
  const once = parseNvprof(SYNTHETIC_NVPROF).value;
  const twice = parseNvprof(SYNTHETIC_NVPROF + SYNTHETIC_NVPROF);
  t.is(twice.value.processes.length, once.processes.length);
  t.deepEqual(
    twice.value.processes.map((p) => p.summary.length),
    once.processes.map((p) => p.summary.length),
    'rows not doubled',
  );
  t.deepEqual(twice.value.processes[0].summary, once.processes[0].summary);
  t.true(
    twice.diagnostics.some(
      (d) =>
        d.code === 'DUPLICATE_RUN' && /the first copy is kept \(jetprof parse --all-runs keeps each\)/.test(d.message),
    ),
  );
  const all = parseNvprof(SYNTHETIC_NVPROF + SYNTHETIC_NVPROF, { allRuns: true }).value;
  t.is(all.processes.length, once.processes.length * 2);
  t.is(all.processes[1].run, 2);
  t.deepEqual(all.processes[1].summary, once.processes[0].summary);
  const { parseNsysStats } = await import('../src/parsers/nsys.ts');
  const ns = parseNsysStats(NSYS_2022 + NSYS_2022);
  t.deepEqual(ns.value.reports.nvtx_sum.rows, parseNsysStats(NSYS_2022).value.reports.nvtx_sum.rows);
  t.true(ns.diagnostics.some((d) => d.code === 'DUPLICATE_RUN'));
});

test('9c. a number nsys could not have printed ("2,3414.") leaves the field empty with a diagnostic, never a string', async (t) => {
  const { parseNsysStats } = await import('../src/parsers/nsys.ts');
  const text = [
    'Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range',
    '41.3,51019894,5,"2,3414.",10168216.0,10151811,10344318,80235.0,PushPop,inference',
    '',
  ].join('\n');
  const r = parseNsysStats(text);
  const row = r.value.reports.nvtx_sum?.rows[0] ?? r.value.tables[0].rows[0];
  t.is(row.avgNs, null);
  t.is(row.medNs, 10168216);
  t.true(r.diagnostics.some((d) => d.code === 'BAD_ROW' && d.message.includes('Avg (ns)=2,3414.')));
});

test('9d. fuzzed nsys output: every *Ns field is a finite number (totals, minimums and maximums integers; averages at the decimal nsys printed) or empty, and reports never print NaN', async (t) => {
  const fc = (await import('fast-check')).default;
  const { parseNsysStats } = await import('../src/parsers/nsys.ts');
  const { buildLabReport } = await import('../src/report/lab-report.ts');
  const { reportMarkdown, reportCsv } = await import('../src/report/markdown.ts');
  const lines = NSYS_2022.split('\n');
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('', ',', '.', 'x', '-', '1e9', ' ', '"', '2,3414.', '∞')), {
        maxLength: 12,
      }),
      (edits) => {
        // (no 'NaN' among the edits: a name may hold any text; a NaN in the output must come from a number)
        const mutated = [...lines];
        for (const [li, ci, s] of edits) {
          const i = li % mutated.length;
          const c = ci % (mutated[i].length + 1);
          mutated[i] = mutated[i].slice(0, c) + s + mutated[i].slice(c + 1);
        }
        const r = parseNsysStats(mutated.join('\n'));
        for (const table of r.value.tables) {
          for (const row of table.rows) {
            for (const [k, v] of Object.entries(row))
              if (k.endsWith('Ns')) {
                if (v === null) continue;
                if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return false;
                if (/^(total|min|max)Ns$/.test(k) && !Number.isSafeInteger(v)) return false;
              }
          }
        }
        const report = buildLabReport([], [{ label: 'fuzz', nsys: r.value }]);
        const text = reportMarkdown(report) + Object.values(reportCsv(report)).join('');
        return !/NaN|undefined/.test(text);
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});

// 11. profile -------------------------------------------------------------------------------------------------------

test('11. profile checks its input before the profiler starts: a text file named .mp4 fails at once and leaves nothing', (t) => {
  const dir = fresh('profile-input');
  const fake = join(dir, 'notes.mp4');
  writeFileSync(fake, 'this is not a video\n');
  const out = join(dir, 'profiles');
  const t0 = Date.now();
  const r = runCli('jetprof', ['profile', '--tool', 'nsys', '--out-dir', out, '--', fake, '--model', model.onnxPath]);
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, /notes\.mp4/);
  oneLine(t, r.stderr);
  t.true(Date.now() - t0 < 20_000, `failed in ${Date.now() - t0} ms, before any profiler ran`);
  t.false(existsSync(out), 'no report files for a run that never started');
  const none = runCli('jetprof', ['profile', '--tool', 'nsys', '--out-dir', out, '--', '--model', model.onnxPath]);
  t.is(none.code, 2);
  t.regex(none.stderr, /no video among the infer arguments/);
});

test('a signal sent later by process id (a budget timer, a forwarded Ctrl-C, the nsys watchdog) reaches only the process it was meant for, never one that got its id after it ended', async (t) => {
  const { processRef, signalProcess } = await import('../src/util/process.ts');
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)));
  const ref = processRef(child.pid!);
  t.truthy(ref.start, 'its start time is read from /proc');
  // the same id under another start time: what a reused id looks like
  t.false(signalProcess({ pid: ref.pid, start: String(Number(ref.start) + 1) }, 'SIGTERM'), 'not sent');
  t.is(child.exitCode, null);
  t.true(signalProcess(ref, 'SIGTERM'));
  t.is(await exited, 'SIGTERM');
  t.false(signalProcess(ref, 'SIGTERM'), 'gone: nothing is sent');
});
