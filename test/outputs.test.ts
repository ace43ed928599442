/**
 * Outputs: nothing lost. A full disk, an output that is an input, device files and links, the ONNX cache, a writer
 * that cannot open, a run that measures nothing, temporary files of dead processes and links planted where they were:
 * each asserts the exit code, the one-line message and exactly which files are left. A full disk is a real 300 KB
 * tmpfs where this machine lets the test mount one (root, as CI), else the output module's ENOSPC test hook. (Signals:
 * signals.test.ts; bad and implicit input: inputs.test.ts.)
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
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { injectWriteFault, place, StagingFolder, writeError } from '../src/output/output.ts';
import {
  canMountTmpfs,
  freshDir,
  inferRun,
  makeModel,
  makeVideo,
  partialsIn,
  previousOutputs,
  PERSON_VEHICLE_CFG,
  probeVideo,
  requires,
  runCli,
  YOLOV4_TINY_CFG,
  SMALL_LAB_CFG,
} from './helpers/fixtures.ts';

const model = makeModel('reliable', SMALL_LAB_CFG, 13);
const video = makeVideo('reliable.mp4', 12, 160, 120);
const oneLine = (t: { is: (a: unknown, b: unknown, m?: string) => void }, stderr: string) =>
  t.is(stderr.trim().split('\n').length, 1, stderr);

// a full disk

/** A 300 KB tmpfs, or undefined where mounting is not allowed. */
function smallDisk(): string | undefined {
  const dir = freshDir('tmpfs');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=300k', 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? dir : undefined;
}

test.serial(
  'a full disk: exit 2 with the path and ENOSPC, the good file that was there untouched, no partial left (a real 300 KB tmpfs where allowed)',
  async (t) => {
    const disk = smallDisk();
    const dir = disk ?? freshDir('enospc');
    const out = join(dir, 'out.mp4');
    const good = makeVideo('good.mp4', 3, 64, 48);
    copyFileSync(good, out);
    const before = readFileSync(out);
    const json = join(freshDir('enospc-json'), 'run.json');
    try {
      if (!disk) injectWriteFault((p) => p.includes('out.mp4'));
      const r = await runCli('infer', [
        video,
        '--model',
        model.onnxPath,
        '--output',
        out,
        '--json',
        json,
        '--warmup',
        '1',
        '-q',
      ]);
      injectWriteFault();
      t.is(r.code, 2, r.stderr);
      t.regex(
        r.stderr,
        disk
          ? /out\.mp4: cannot write \(ENOSPC: no space left on device\) \(fix: free some space or write elsewhere; the previous file, if any, is untouched\)/
          : /out\.mp4: cannot write \(ENOSPC: no space left on device \(simulated by a test, the disk is not full\)\) \(fix: free some space/,
      );
      oneLine(t, r.stderr);
      t.is(Buffer.compare(readFileSync(out), before), 0, 'the good out.mp4 is untouched');
      t.deepEqual(partialsIn(dir), []);
      t.false(existsSync(json), 'no run JSON claims a video that was not written');
      // the same for a JSON output: the old file stays as it was
      const jsonDir = freshDir('enospc-json2');
      const oldJson = join(jsonDir, 'run.json');
      writeFileSync(oldJson, '{"old": true}');
      injectWriteFault((p) => p.includes('run.json'));
      const r2 = await runCli('infer', [
        video,
        '--model',
        model.onnxPath,
        '--no-write',
        '--json',
        oldJson,
        '--warmup',
        '1',
        '-q',
      ]);
      injectWriteFault();
      t.is(r2.code, 2, r2.stderr);
      // the injected fault says it is one
      t.regex(
        r2.stderr,
        /run\.json: cannot write \(ENOSPC: no space left on device \(simulated by a test, the disk is not full\)\)/,
      );
      t.is(readFileSync(oldJson, 'utf8'), '{"old": true}');
      t.deepEqual(partialsIn(jsonDir), []);
    } finally {
      injectWriteFault();
      if (disk) spawnSync('umount', [disk]);
    }
    if (!disk) t.log('simulated ENOSPC (this machine does not allow mounting a tmpfs)');
  },
);

test.serial(
  "a run's files are one set: a JSON that cannot be written leaves the previous video, detections and JSON as they were (the new video is never renamed in beside an old JSON), nothing partial left",
  async (t) => {
    const dir = freshDir('set');
    const previous = previousOutputs(dir, ['out.mp4', 'run.json', 'dets.json']);
    const [out, json, dets] = previous.files;
    injectWriteFault((p) => p === json);
    try {
      const r = await runCli('infer', [
        ...[video, '--model', model.onnxPath, '--output', out, '--json', json, '--detections', dets],
        ...['--warmup', '1', '-q'],
      ]);
      t.is(r.code, 2, r.stderr);
      t.regex(r.stderr, /run\.json: cannot write \(ENOSPC: no space left on device \(simulated/);
    } finally {
      injectWriteFault();
    }
    previous.kept(t);
    t.deepEqual(partialsIn(dir), [], 'the finished video and detections were dropped, not left under temporary names');
    // and with room, the three are written together
    const r = await runCli('infer', [
      ...[video, '--model', model.onnxPath, '--output', out, '--json', json, '--detections', dets],
      ...['--warmup', '1', '-q'],
    ]);
    t.is(r.code, 0, r.stderr);
    t.is(JSON.parse(readFileSync(json, 'utf8')).output.path, out);
    t.true(readFileSync(out).length > 1000 && JSON.parse(readFileSync(dets, 'utf8')).length >= 0);
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
  'a disk that fills after the last space check, when the encoder writes the frames it held: exit 2 with ENOSPC and the count, the old .mkv/.avi untouched (a real 12 MB tmpfs)',
  async (t) => {
    const disk = freshDir('latefill');
    t.is(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=12m', 'tmpfs', disk]).status, 0);
    try {
      // 30 frames of noise: FFmpeg's x264 holds them all (40 frames of look-ahead) and writes them at release, several MB
      const noise = join(freshDir('noise'), 'noise.avi');
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
        const r = await runCli('infer', [
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
        t.deepEqual(partialsIn(disk), [], `${ext}: no temporary file left`);
      }
    } finally {
      spawnSync('umount', [disk]);
    }
  },
);

test('a video written to .avi or .mkv, whose frames have no index, is counted from its packets at the end: every frame there is accepted, as decoding counts them', async (t) => {
  const { fileCaptureApi, loadOpenCv } = await import('../src/video/opencv.ts');
  const cv = loadOpenCv();
  const dir = freshDir('containers');
  for (const ext of ['avi', 'mkv']) {
    const out = join(dir, `out.${ext}`);
    const r = await runCli('infer', [video, '--model', model.onnxPath, '--warmup', '1', '-o', out, '-q']);
    t.is(r.code, 0, `${ext}: ${r.stderr}`);
    const cap = new cv.VideoCapture(out, fileCaptureApi(cv));
    let decoded = 0;
    for (let m = cap.read(); m && !m.empty; m = cap.read()) decoded++;
    cap.release();
    t.is(decoded, 12, `${ext}: every frame of the clip, decoded`);
    t.deepEqual(partialsIn(dir), []);
  }
});

// an output that is an input

test('an output path equal to an input (or to another output, or through a symlink) is refused before anything runs', async (t) => {
  const dir = freshDir('same');
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
    const r = await runCli('infer', [input, '--model', model.onnxPath, '--warmup', '1', '-q', ...args], { cwd: dir });
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, message);
    oneLine(t, r.stderr);
  }
  // --repeat N: the names its runs write (out-1.mp4 ... out-N.mp4, the same for --json and --detections) are claimed
  const one = join(dir, 'clip-1.mp4');
  copyFileSync(video, one);
  for (const [flag, name, what] of [
    ['--output', 'clip.mp4', 'output video of run 1'],
    ['--json', 'clip.mp4', 'run JSON of run 1'],
    ['--detections', 'clip.mp4', 'detections file of run 1'],
  ]) {
    const write = flag === '--output' ? [] : ['--no-write'];
    const r = await runCli(
      'infer',
      [one, '--model', model.onnxPath, '--repeat', '2', ...write, flag, join(dir, name), '-q'],
      {
        cwd: dir,
      },
    );
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, new RegExp(`clip-1\\.mp4: the ${what} would overwrite the video`));
  }
  t.is(Buffer.compare(readFileSync(one), before), 0, 'the input clip-1.mp4 is untouched');
  const link = join(dir, 'link.mp4');
  symlinkSync(input, link);
  const r = await runCli('infer', [input, '--model', model.onnxPath, '--output', link, '-q'], { cwd: dir });
  t.is(r.code, 2);
  t.regex(r.stderr, /link\.mp4: the output video would overwrite the video/);
  t.is(Buffer.compare(readFileSync(input), before), 0, 'the input video is untouched');
  t.true(lstatSync(link).isSymbolicLink());
  // export over its own weights, make-weights over its cfg
  const weights = readFileSync(model.weightsPath);
  const e = await runCli('jetprof', [
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
  const m = await runCli('jetprof', ['make-weights', '--cfg', cfgCopy, '--out', cfgCopy]);
  t.is(m.code, 2);
  t.regex(m.stderr, /c\.cfg: the weights would overwrite the cfg/);
  t.is(readFileSync(cfgCopy, 'utf8'), readFileSync(PERSON_VEHICLE_CFG, 'utf8'));
});

// special files

test('device files and symlinks: written through, never replaced', async (t) => {
  const dir = freshDir('special');
  const runJson = join(dir, 'run.json');
  await inferRun([video, '--model', model.onnxPath, '--no-write', '--json', runJson, '--warmup', '1']);
  const r = await runCli('jetprof', ['report', '--run', runJson, '--out', '/dev/null', '--html', '/dev/null']);
  t.is(r.code, 0, r.stderr);
  t.true(statSync('/dev/null').isCharacterDevice(), '/dev/null is still the device');
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const reader = spawn('cat', [fifo]);
  let piped = '';
  reader.stdout.on('data', (d) => (piped += d));
  const readerDone = new Promise((r) => reader.on('close', r));
  const viaFifo = await runCli('jetprof', ['report', '--run', runJson, '--out', fifo]);
  t.is(viaFifo.code, 0, viaFifo.stderr);
  t.true(lstatSync(fifo).isFIFO(), 'the FIFO is still a FIFO');
  const target = join(dir, 'real.md');
  const link = join(dir, 'link.md');
  writeFileSync(target, 'old');
  symlinkSync(target, link);
  t.is((await runCli('jetprof', ['report', '--run', runJson, '--out', link])).code, 0);
  t.true(lstatSync(link).isSymbolicLink(), 'the link is still a link');
  t.regex(readFileSync(target, 'utf8'), /^# YOLOv4-Tiny/, 'its target got the report');
  await readerDone;
  t.regex(piped, /^# YOLOv4-Tiny/, 'the reader of the FIFO got the report');
  const bad = await runCli('infer', [video, '--model', model.onnxPath, '--output', '/dev/null']);
  t.is(bad.code, 2);
  t.regex(
    bad.stderr,
    /\/dev\/null: the annotated video must go to a regular file \(fix: give a \.mp4 path, or pass --no-write/,
  );
});

// the ONNX cache

test('the ONNX cache is keyed on content: another cfg with the same weights, an edited .names, a broken cfg', async (t) => {
  const dir = freshDir('cache');
  const cfg416 = join(dir, 'a416.cfg');
  const cfg608 = join(dir, 'b608.cfg');
  const text = readFileSync(YOLOV4_TINY_CFG, 'utf8');
  writeFileSync(cfg416, text);
  writeFileSync(cfg608, text.replace(/^width=416$/m, 'width=608').replace(/^height=416$/m, 'height=608'));
  const weights = join(dir, 'm.weights');
  t.is((await runCli('jetprof', ['make-weights', '--cfg', cfg416, '--out', weights])).code, 0);
  const run = async (cfg: string) =>
    (await inferRun([video, '--cfg', cfg, '--weights', weights, '--no-write', '--max-frames', '3', '--warmup', '1']))
      .run;
  t.is((await run(cfg416)).model.inputWidth, 416);
  t.is((await run(cfg608)).model.inputWidth, 608, 'the 608 cfg runs the 608 model, not the cached 416 one');
  writeFileSync(join(dir, 'a416.names'), Array.from({ length: 80 }, (_, i) => `thing${i}`).join('\n'));
  t.deepEqual((await run(cfg416)).model.labels!.slice(0, 2), ['thing0', 'thing1'], 'an edited .names file is used');
  writeFileSync(cfg416, text.replace(/^filters=255$/m, 'filters=25x'));
  const broken = await runCli('infer', [video, '--cfg', cfg416, '--weights', weights, '--no-write', '-q']);
  t.is(broken.code, 2, 'a broken cfg fails even though a cached export exists');
  t.regex(broken.stderr, /a416\.cfg:\d+: filters=25x is not an integer/);
});

// video writers that cannot open

test('a video writer that cannot open fails before the first frame, in one line', async (t) => {
  const dir = freshDir('writer');
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
    const r = await runCli('infer', [video, '--model', model.onnxPath, '-q', ...args], { cwd: dir });
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, message);
    oneLine(t, r.stderr);
    t.false(/internal error|at .*\.ts:\d+/.test(r.stderr), 'no stack trace');
    t.true(Date.now() - t0 < 60_000);
  }
  t.deepEqual(readdirSync(dir).sort(), ['folder.mp4'], 'nothing written');
});

// other internal errors

test('--backend foo and report --csv on a file: one line, exit 2, no stack', async (t) => {
  const r = await runCli('infer', [video, '--backend', 'foo']);
  t.is(r.code, 2);
  t.regex(r.stderr, /--backend must be onnx, trt or opencv, got 'foo'/);
  t.false(r.stderr.includes('internal error'));
  const dir = freshDir('csv');
  const runJson = join(dir, 'run.json');
  await inferRun([video, '--model', model.onnxPath, '--no-write', '--json', runJson, '--warmup', '1']);
  const file = join(dir, 'existing.csv');
  writeFileSync(file, 'x');
  const c = await runCli('jetprof', ['report', '--run', runJson, '--csv', file]);
  t.is(c.code, 2, c.stderr);
  t.regex(c.stderr, /existing\.csv: --csv takes a folder \(one CSV file per table\), and this is a file/);
  oneLine(t, c.stderr);
});

// runs that measure nothing, streams that end early

test('a run that measures no frame exits 2 with why; a stream that ends early is a warning with the counts', async (t) => {
  const dir = freshDir('zero');
  const one = makeVideo('one.mp4', 1, 160, 120);
  const r = await runCli('infer', [one, '--model', model.onnxPath, '--no-write', '--json', join(dir, 'r.json'), '-q']);
  t.is(r.code, 2);
  t.regex(
    r.stderr,
    /one\.mp4: no frame was measured: it gave 1 frame\(s\), all within --warmup 5 \(fix: use a longer video, or a smaller --warmup \(e\.g\. --warmup 0\)\)/,
  );
  t.false(existsSync(join(dir, 'r.json')));
  const big = await runCli('infer', [video, '--model', model.onnxPath, '--no-write', '--warmup', '50', '-q']);
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
  const rep = await runCli('jetprof', ['report', '--run', empty]);
  t.is(rep.code, 2);
  t.regex(rep.stderr, /empty\.json: this run measured no frame/);
  // an mp4 cut short: fewer frames than the container declares
  const whole = makeVideo('whole.avi', 50, 160, 120);
  const cut = join(dir, 'cut.avi');
  copyFileSync(whole, cut);
  truncateSync(cut, Math.floor(statSync(whole).size * 0.3));
  const w = await runCli('infer', [cut, '--model', model.onnxPath, '--no-write', '--warmup', '1', '--json', '-']);
  t.is(w.code, 0, w.stderr);
  t.regex(
    w.stderr,
    /cut\.avi: the stream ended after \d+ of the 50 frames its container declares \(a cut or damaged file\?\)/,
  );
});

test("jetprof's temporary files and folders of dead processes are removed at the next run; a running one's, a user's look-alike and a link stay", async (t) => {
  const dir = freshDir('stale');
  const dead = join(dir, `.out.partial-999999-${place()}-0123456789ab.mp4`);
  const deadFolder = join(dir, `.jetprof-out-999999-${place()}-AbC123`);
  const alive = join(dir, `.out.partial-${process.pid}-${place()}-0123456789ab.mp4`);
  // another place's (a container's, another machine's on NFS): process 999999 there is not process 999999 here
  const elsewhere = place() === 'deadbeef' ? 'feedbeef' : 'deadbeef';
  const foreign = join(dir, `.out.partial-999999-${elsewhere}-0123456789ab.mp4`);
  const foreignFolder = join(dir, `.jetprof-out-999999-${elsewhere}-AbC123`);
  // an older jetprof's names say no place: swept only once a day has passed without a write
  const unplacedFresh = join(dir, '.old.partial-999999-0123456789ab.mp4');
  const unplacedOld = join(dir, '.older.partial-999999-0123456789ab.mp4');
  for (const f of [foreign, unplacedFresh, unplacedOld]) writeFileSync(f, 'half a video');
  mkdirSync(foreignFolder);
  const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
  utimesSync(unplacedOld, twoDaysAgo, twoDaysAgo);
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
  const r = await runCli('infer', [
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
  t.true(existsSync(foreign) && existsSync(foreignFolder), "another place's names stay: nothing here proves them dead");
  t.true(existsSync(unplacedFresh), "an older jetprof's recent partial stays");
  t.false(existsSync(unplacedOld), "an older jetprof's partial untouched for two days is gone");
  t.true(existsSync(alive), "a running process's partial stays");
  t.is(readFileSync(thesis, 'utf8'), 'a chapter', "a user's file that only looks like one stays");
  t.true(lstatSync(link).isSymbolicLink(), 'a link is never swept');
  t.is(readFileSync(victim, 'utf8'), 'keep me');
});

test('links planted where temporary names used to be predictable are never written through (video, run JSON)', async (t) => {
  const dir = freshDir('planted');
  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, 'keep me');
  // an attacker in a shared folder guesses the next process ids: links for a few hundred of them
  for (let pid = process.pid; pid < process.pid + 400; pid++) {
    symlinkSync(victim, join(dir, `.out.partial-${pid}.mp4`));
    symlinkSync(victim, join(dir, `.run.partial-${pid}.json`));
  }
  const r = await runCli('infer', [
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

// cfg keys darknet does not know

test('an unknown cfg key is a warning with the line and the nearest key; --strict makes it an error', async (t) => {
  const dir = freshDir('cfgkey');
  const cfg = join(dir, 'typo.cfg');
  writeFileSync(
    cfg,
    readFileSync(PERSON_VEHICLE_CFG, 'utf8')
      .replace('activation=leaky', 'activaton=leaky')
      .replace(/^width=640$/m, 'width=640\nwidht=416'),
  );
  const weights = join(dir, 'typo.weights');
  t.is((await runCli('jetprof', ['make-weights', '--cfg', cfg, '--out', weights])).code, 0);
  const r = await runCli('jetprof', ['export', '--cfg', cfg, '--weights', weights, '--out', join(dir, 'typo.onnx')]);
  t.is(r.code, 0, r.stderr);
  t.regex(
    r.stderr,
    /typo\.cfg:\d+: unknown key 'widht' in \[net\] \(did you mean 'width'\?\); darknet ignores it too \("Unused field"\)/,
  );
  t.regex(r.stderr, /typo\.cfg:\d+: unknown key 'activaton' in \[convolutional\] \(did you mean 'activation'\?\)/);
  const strict = await runCli('jetprof', [
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
    const e = await runCli('jetprof', [
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

// profile

test('profile checks its input before the profiler starts: a text file named .mp4 fails at once and leaves nothing', async (t) => {
  const dir = freshDir('profile-input');
  const fake = join(dir, 'notes.mp4');
  writeFileSync(fake, 'this is not a video\n');
  const out = join(dir, 'profiles');
  const t0 = Date.now();
  const r = await runCli('jetprof', [
    'profile',
    '--tool',
    'nsys',
    '--out-dir',
    out,
    '--',
    fake,
    '--model',
    model.onnxPath,
  ]);
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, /notes\.mp4/);
  oneLine(t, r.stderr);
  t.true(Date.now() - t0 < 20_000, `failed in ${Date.now() - t0} ms, before any profiler ran`);
  t.false(existsSync(out), 'no report files for a run that never started');
  const none = await runCli('jetprof', [
    'profile',
    '--tool',
    'nsys',
    '--out-dir',
    out,
    '--',
    '--model',
    model.onnxPath,
  ]);
  t.is(none.code, 2);
  t.regex(none.stderr, /no video among the infer arguments/);
});

test("the staging folder: a private folder of the process's own beside the outputs, dead runs' swept first; a commit gives each file its own name and removes the folder, a failed one is one line naming the output; drop leaves nothing", (t) => {
  const dir = freshDir('staging');
  const dead = join(dir, `.jetprof-out-999999-${place()}-AbC123`);
  mkdirSync(dead);
  writeFileSync(join(dir, 'a.txt'), 'the previous a');
  const f = new StagingFolder(dir, join(dir, 'a.txt'));
  t.false(existsSync(dead), "a dead run's folder is swept before this one is made");
  t.is(lstatSync(f.dir).mode & 0o777, 0o700, 'nobody else can put a link in it');
  t.regex(f.dir, new RegExp(`/\\.jetprof-out-${process.pid}-${place()}-\\w{6}$`));
  writeFileSync(f.path('a.txt'), 'the new a');
  writeFileSync(f.path('b.txt'), 'a new b');
  t.is(readFileSync(join(dir, 'a.txt'), 'utf8'), 'the previous a', 'nothing takes its name before the commit');
  f.commit();
  t.deepEqual(readdirSync(dir).sort(), ['a.txt', 'b.txt']);
  t.is(readFileSync(join(dir, 'a.txt'), 'utf8'), 'the new a');
  // a commit that cannot rename (a folder stands where the file goes): one line naming the output, nothing left
  const g = new StagingFolder(dir, join(dir, 'c.txt'));
  mkdirSync(join(dir, 'c.txt'));
  writeFileSync(join(dir, 'c.txt', 'x'), 'in the way');
  writeFileSync(g.path('c.txt'), 'c');
  t.throws(() => g.commit(['c.txt']), { message: /c\.txt: cannot write \(/ });
  t.false(existsSync(g.dir));
  const h = new StagingFolder(dir);
  writeFileSync(h.path('d.txt'), 'd');
  h.drop();
  t.deepEqual(readdirSync(dir).sort(), ['a.txt', 'b.txt', 'c.txt']);
});

test("a write error says what jetprof knows of a full disk from the error's own detail, never from its message", (t) => {
  const fault = (message: string, extra: object = {}) =>
    Object.assign(new Error(message), { code: 'ENOSPC', ...extra });
  t.is(
    writeError('out.mp4', fault('ENOSPC: no space left on device, write')).message,
    'out.mp4: cannot write (ENOSPC: no space left on device)',
  );
  t.is(
    writeError('out.mp4', fault('ENOSPC (anything)', { detail: 'the encoder wrote 3 of the 30 frames' })).message,
    'out.mp4: cannot write (ENOSPC: no space left on device (the encoder wrote 3 of the 30 frames))',
  );
  t.is(
    writeError('out.mp4', fault('ENOSPC (a message that only looks like a detail)')).message,
    'out.mp4: cannot write (ENOSPC: no space left on device)',
  );
  t.regex(writeError('out.mp4', fault('x')).suggestion ?? '', /free some space or write elsewhere/);
});

requires(canMountTmpfs(), 'mounting a tmpfs is not allowed here')(
  'annotated images onto a disk that fills part-way: the image that did not fit is named with ENOSPC, exit 2, and every previous image stays (the move-in is all or nothing)',
  async (t) => {
    const images = freshDir('fill-images');
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=10', '-frames:v', '12'],
      join(images, 'img-%03d.jpg'),
    ]);
    const disk = freshDir('fill-disk');
    // about three of the annotated images fit beside the previous ones (each about 46 KB at JPEG quality 95)
    t.is(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=200k', 'tmpfs', disk]).status, 0);
    try {
      const out = join(disk, 'out');
      mkdirSync(out);
      const names = readdirSync(images);
      const previous = previousOutputs(out, names);
      const r = await runCli('infer', [images, '--model', model.onnxPath, '--output', out, '-q']);
      t.is(r.code, 2, r.stderr);
      t.regex(r.stderr, /out\/img-0\d\d\.jpg: cannot write \(ENOSPC: no space left on device\)/);
      t.notRegex(r.stderr, /img-001\.jpg: cannot write/, 'it failed part-way, not on the first image');
      oneLine(t, r.stderr);
      previous.kept(t);
      t.deepEqual(partialsIn(out), []);
    } finally {
      spawnSync('umount', [disk]);
    }
  },
);
