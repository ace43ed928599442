/**
 * The first hour (#25): what a newcomer runs, sees, saves and pastes. Every --help fits 80 columns; hints name the
 * real option; the table goes to stdout and progress to stderr.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildCpuEngineLib,
  type CliResult,
  errorLines,
  freshDir,
  ROOT as ROOT_DIR,
  runCli,
  scratchDir,
} from './helpers/fixtures.ts';

const SUBCOMMANDS = [
  'infer',
  'export',
  'make-weights',
  'build-engine',
  'parse',
  'profile',
  'report',
  'compare',
  'agree',
  'map',
  'doctor',
];

test('every --help fits 80 columns, examples included, with no line of a wrapped sentence left at column 0', async (t) => {
  // the scripts' own pages as processes (what a user's terminal gets), the subcommands' in this process
  const pages: [string, CliResult][] = [
    ['jetprof', await runCli('jetprof', ['--help'], { process: true })],
    ['infer', await runCli('infer', ['--help'], { process: true })],
  ];
  for (const c of SUBCOMMANDS) pages.push([`jetprof ${c}`, await runCli('jetprof', [c, '--help'])]);
  for (const c of ['infer-onnx', 'infer-trt', 'infer-opencv'] as const) pages.push([c, await runCli(c, ['--help'])]);
  for (const [name, r] of pages) {
    t.is(r.code, 0, `${name}: ${r.stderr}`);
    const wide = r.stdout.split('\n').filter((l) => l.length > 80);
    t.deepEqual(wide, [], `${name}: lines wider than 80 columns`);
    t.notRegex(r.stdout, /\npostprocess \+ write/, `${name}: no orphan from hand-wrapped text`);
    // pasted into a shell, an example block runs only its commands: every line is a comment, a command, or the
    // continuation of a command whose line ended with a backslash
    const examples = r.stdout.split(/\nExamples?:\n/)[1]?.split('\n\n')[0] ?? '';
    let continued = false;
    for (const line of examples.split('\n').filter(Boolean)) {
      const program = /^ {2}(jetprof|infer(-onnx|-trt|-opencv)?) /.test(line);
      const ok = continued ? /^ {6}\S/.test(line) : /^ {2}# /.test(line) || program;
      t.true(ok, `${name}: an example line that would run something it does not show: ${JSON.stringify(line)}`);
      continued = line.endsWith('\\') && !/^ {2}# /.test(line);
    }
  }
  const infer = pages.find(([n]) => n === 'infer')![1].stdout;
  t.regex(
    infer,
    /Examples:\n {2}infer videos\/vtest\.avi --cfg weights\/yolov4-tiny\.cfg \\\n {6}--weights weights\/yolov4-tiny\.weights --frame-size 960x540/,
    'a long example continues with a backslash',
  );
  t.regex(
    pages.find(([n]) => n === 'jetprof make-weights')![1].stdout,
    /seeded generator/,
    'make-weights has a description',
  );
  t.regex(infer, /--pipeline <auto\|on\|off>/);
  t.regex(infer, /opencv/, 'option texts that list backends name opencv too');
});

test('hints that work: build-engine names --out; infer-trt with a missing engine says so; profile without -- says where infer options go', async (t) => {
  const onnx = join(scratchDir(), 'hint.onnx');
  writeFileSync(onnx, 'not read before the output folder is checked');
  // a folder that cannot be made: a file stands where it would go (root, as CI runs, may make any other)
  const be = await runCli('jetprof', ['build-engine', '--onnx', onnx, '--out', join(onnx, 'dir', 'e.trt')]);
  t.is(be.code, 2, be.stderr);
  t.regex(
    be.stderr,
    /hint\.onnx\/dir\/e\.trt: the directory \S+hint\.onnx\/dir cannot be created \(a file is in its way\) \(fix: pass --out with a path in a folder you can write\)/,
  );
  // without TensorRT, the first attempt (no --engine even) tells the whole story: not here, and what works instead
  for (const args of [['v.mp4'], ['v.mp4', '--engine', 'missing.trt']]) {
    const none = await runCli('infer-trt', args, { env: { JETPROF_TRT_SHIM: '' } });
    t.is(none.code, 2, none.stderr);
    t.regex(
      none.stderr,
      /TensorRT cannot run on this machine: .*infer-trt runs on a board with JetPack .*off the board, run the lab's scripts under nvprof .*--fps "TensorRT@960x540=INF\/E2E"; infer-onnx and infer-opencv run here; jetprof doctor/,
    );
    t.is(errorLines(none.stderr).length, 1);
  }
  // with TensorRT (here the stand-in library), a missing engine is the next thing said
  const trt = await runCli('infer-trt', ['v.mp4', '--engine', 'missing.trt'], {
    env: { JETPROF_TRT_SHIM: buildCpuEngineLib() },
  });
  t.is(trt.code, 2);
  t.regex(trt.stderr, /missing\.trt: TensorRT engine not found \(fix: build it on this board: jetprof build-engine/);
  const prof = await runCli('jetprof', ['profile', '--tool', 'nsys', 'v.mp4', '--model', 'm.onnx']);
  t.is(prof.code, 2);
  t.regex(prof.stderr, /unknown option '--model'/);
  t.regex(prof.stderr, /infer's options go after --/);
});

// serial: the server answers from this process's event loop, which another test's command run in this process would
// hold up past the client's 2 s idle timeout
test.serial(
  'fetch-weights against a server on 127.0.0.1: a good file is written; a short file, a 404 and a hang write nothing, one line each',
  async (t) => {
    const { createServer } = await import('node:http');
    const { existsSync, readdirSync, readFileSync: read } = await import('node:fs');
    const { makeModel, PERSON_VEHICLE_CFG } = await import('./helpers/fixtures.ts');
    const m = makeModel('fetch', PERSON_VEHICLE_CFG, 9);
    const good = read(m.weightsPath);
    const server = createServer((req, res) => {
      if (req.url === '/good.weights') res.end(good);
      else if (req.url === '/short.weights') res.end(good.subarray(0, good.length >> 1));
      else if (req.url === '/hang.weights') {
        res.writeHead(200, { 'content-length': String(good.length) });
        res.write(good.subarray(0, 1000)); // then nothing more
      } else {
        res.writeHead(404);
        res.end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const dir = join(scratchDir(), 'fetch');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    const out = join(dir, 'w.weights');
    const { spawn } = await import('node:child_process');
    const { cliCommand } = await import('../src/util/process.ts');
    const [node, ...entry] = cliCommand('jetprof');
    // the server runs in this process: the command runs in a child, asynchronously
    const run = (url: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const c = spawn(node, [
          ...entry,
          'fetch-weights',
          '--url',
          url,
          '--cfg',
          PERSON_VEHICLE_CFG,
          '--out',
          out,
          '--idle-timeout',
          '2',
          '--force',
        ]);
        let stderr = '';
        c.stderr.on('data', (d) => (stderr += d));
        c.on('exit', (code) => resolve({ code, stderr }));
      });
    try {
      for (const [name, expected] of [
        [
          'short',
          /short\.weights: \d+ bytes arrived where yolov4-tiny-person-vehicle\.cfg needs \d+ \(a cut download, or weights for another cfg\); nothing was written/,
        ],
        ['missing', /missing\.weights: the server answered 404 Not Found; nothing was written/],
        ['hang', /hang\.weights: the server sent nothing for 2 s; nothing was written/],
      ] as const) {
        const r = await run(`${base}/${name}.weights`);
        t.is(r.code, 2, `${name}: ${r.stderr}`);
        t.regex(r.stderr, expected, name);
        t.is(
          r.stderr
            .trim()
            .split('\n')
            .filter((l) => l.includes('error')).length,
          1,
          `${name}: one error line`,
        );
        t.false(existsSync(out), `${name}: no file`);
        t.deepEqual(readdirSync(dir), [], `${name}: no partial file left`);
      }
      const ok = await run(`${base}/good.weights`);
      t.is(ok.code, 0, ok.stderr);
      t.true(read(out).equals(good), 'the bytes served, written whole');
    } finally {
      server.close();
    }
  },
);

test('parse --format md: nsys times carry units as nvprof times do; the CSV keeps integer nanoseconds under the original headers', async (t) => {
  const log = join(ROOT_DIR, 'test/fixtures/profiles/nsys-2022-column.txt');
  const md = await runCli('jetprof', ['parse', log, '--format', 'md']);
  t.is(md.code, 0, md.stderr);
  t.regex(md.stdout, /\| Time \(%\) \| Total Time \| Instances \| Avg \|/);
  t.regex(md.stdout, /\| 60 \| 600\.000 ms \| 10 \| 60\.000 ms \|/);
  const csv = await runCli('jetprof', ['parse', log, '--format', 'csv']);
  t.regex(csv.stdout, /^Time \(%\),Total Time \(ns\),Instances,Avg \(ns\)/);
  t.regex(csv.stdout, /\n60,600000000,10,60000000,/);
});

test('profile: --query-metrics without a GPU is one line (exit 3); a TensorRT run without its engine fails before the profiler starts', async (t) => {
  const q = await runCli('jetprof', ['profile', '--query-metrics']);
  if (q.code === 0) {
    t.regex(q.stdout, /Available Metrics|Device/, 'a machine with a GPU lists its metrics');
  } else {
    t.is(q.code, 3, q.stderr);
    t.regex(q.stderr, /nvprof --query-metrics needs a CUDA GPU and its driver, and found none here/);
    t.is(q.stderr.trim().split('\n').length, 1, q.stderr);
  }
  const t0 = Date.now();
  const trt = await runCli('jetprof', [
    'profile',
    '--tool',
    'nsys',
    '--',
    '--backend',
    'trt',
    'v.mp4',
    '--engine',
    'missing.trt',
    '--model',
    'm.onnx',
  ]);
  t.is(trt.code, 2, trt.stderr);
  t.regex(trt.stderr, /missing\.trt: TensorRT engine not found/);
  t.true(Date.now() - t0 < 20_000, 'refused at once, no profiler run');
});

test('say the whole story: infer-opencv on cfg + weights says the export is only the metadata; --detections says where it wrote; the overlay says its figures are running ones', async (t) => {
  const { makeModel, makeVideo, SMALL_LAB_CFG } = await import('./helpers/fixtures.ts');
  const m = makeModel('story', SMALL_LAB_CFG, 5);
  const v = makeVideo('story.mp4', 5, 160, 120);
  const dets = join(scratchDir(), 'story-dets.json');
  const r = await runCli('infer-opencv', [
    v,
    '--cfg',
    m.cfgPath,
    '--weights',
    m.weightsPath,
    '--warmup',
    '1',
    '--no-write',
    '--detections',
    dets,
  ]);
  t.is(r.code, 0, r.stderr);
  t.regex(
    r.stderr,
    /(YOLO metadata \(anchors, labels\) from the cached export|exported .* for the YOLO metadata \(anchors, labels\)).*; OpenCV DNN itself reads .* \(its darknet importer\)/,
  );
  t.notRegex(r.stderr, /infer: using cached/);
  t.regex(r.stderr, new RegExp(`wrote ${dets.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(every box, COCO results\\)`));
  const { LoopTally } = await import('../src/pipeline/loop-tally.ts');
  const [line, ...more] = new LoopTally(0, []).overlayText('onnx', false);
  t.regex(line, /^onnx {2}so far: inference [\d.]+ FPS {2}end-to-end [\d.]+ FPS$/);
  t.deepEqual(more, []);
  t.deepEqual(new LoopTally(0, []).overlayText('onnx', true).slice(1), [
    'RANDOM WEIGHTS: a timing demo, no real detections',
  ]);
  // every line fits the frame: at 960 px, and at 320 px where it is made smaller
  const { loadOpenCv } = await import('../src/video/opencv.ts');
  const { overlayScale } = await import('../src/detect/stamps.ts');
  const cv = loadOpenCv();
  for (const width of [960, 320])
    for (const text of new LoopTally(0, []).overlayText('OpenCV DNN (CUDA)', true)) {
      const scale = overlayScale(cv, text, width);
      t.true(
        cv.getTextSize(text, cv.FONT_HERSHEY_SIMPLEX, scale, 3).size.width <= width - 16,
        `${text} at ${width} px`,
      );
    }
});

test('an install that keeps working: the five install scripts are approved in package.json; setup names a native module that does not load', (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT_DIR, 'package.json'), 'utf8'));
  t.deepEqual(Object.keys(pkg.allowScripts).sort(), [
    '@u4/opencv4nodejs',
    'esbuild',
    'koffi',
    'onnxruntime-node',
    'protobufjs',
  ]);
  // setup.sh's check, run where no module is installed: one line per module, naming it and the fix
  const empty = freshDir('no-modules');
  const r = spawnSync(
    'bash',
    [
      '-c',
      `source <(sed -n '/^native_modules_load()/,/^}/p' ${join(ROOT_DIR, 'scripts/setup.sh')}); cd ${empty}; native_modules_load`,
    ],
    { encoding: 'utf8' },
  );
  t.is(r.status, 1);
  const lines = r.stderr.replace(/\n+$/, '').split('\n');
  t.is(lines.length, 3, r.stderr);
  for (const [i, name] of ['@u4/opencv4nodejs', 'onnxruntime-node', 'koffi'].entries())
    t.regex(
      lines[i],
      new RegExp(
        `^ {4}${name.replace('/', '\\/')} does not load: .*\\(fix: npm rebuild ${name.replace('/', '\\/')}; its install script must be approved in package.json allowScripts\\)$`,
      ),
    );
});

test("--version on every command prints package.json's version", async (t) => {
  const { version } = JSON.parse(readFileSync(join(ROOT_DIR, 'package.json'), 'utf8'));
  for (const script of ['jetprof', 'infer', 'infer-onnx', 'infer-trt', 'infer-opencv'] as const) {
    const r = await runCli(script, ['--version']);
    t.is(r.code, 0, `${script}: ${r.stderr}`);
    t.is(r.stdout.trim(), version, script);
  }
});

test('a command started as a process runs from the build JETPROF_BUILD names (scripts/test.sh makes one), else from source through tsx', async (t) => {
  const { cliCommand } = await import('../src/util/process.ts');
  const before = process.env.JETPROF_BUILD;
  try {
    delete process.env.JETPROF_BUILD;
    const [node, tsx, script] = cliCommand('infer-trt');
    t.is(node, process.execPath);
    t.regex(tsx, /^--import=file:.*tsx/);
    t.is(script, join(ROOT_DIR, 'src/cli/infer-trt.ts'));
    process.env.JETPROF_BUILD = '/b/dist';
    t.deepEqual(cliCommand('jetprof'), [process.execPath, '/b/dist/src/cli/jetprof.js']);
  } finally {
    if (before === undefined) delete process.env.JETPROF_BUILD;
    else process.env.JETPROF_BUILD = before;
  }
  // under scripts/test.sh the build is there and runs as the source does
  if (before) {
    const r = spawnSync(process.execPath, [join(before, 'src/cli/jetprof.js'), '--version'], { encoding: 'utf8' });
    t.is(r.stdout.trim(), JSON.parse(readFileSync(join(ROOT_DIR, 'package.json'), 'utf8')).version, r.stderr);
  }
});

test("setup builds the OpenCV binding for the six modules jetprof uses, and every cv.X jetprof's code calls is in the binding this machine built", async (t) => {
  // the shadow include folder: OpenCV's module list cut to six, every other header a link to the real one
  const setup = join(ROOT_DIR, 'scripts/setup.sh');
  const r = spawnSync(
    'bash',
    [
      '-c',
      `source <(sed -n '/^OPENCV_MODULES=/,/^}/p' ${setup}); d=$(opencv_module_shadow); [ -n "$d" ] || exit 3; grep '^#define HAVE_OPENCV_' "$d/opencv2/opencv_modules.hpp"; test -L "$d/opencv2/core.hpp" && echo linked; rm -rf "$(dirname "$d")"`,
    ],
    { encoding: 'utf8' },
  );
  if (r.status === 3) return t.pass('no /usr/include/opencv4 here: setup builds the binding for every module');
  t.is(r.status, 0, r.stderr);
  t.deepEqual(r.stdout.trim().split('\n'), [
    '#define HAVE_OPENCV_CORE',
    '#define HAVE_OPENCV_DNN',
    '#define HAVE_OPENCV_HIGHGUI',
    '#define HAVE_OPENCV_IMGCODECS',
    '#define HAVE_OPENCV_IMGPROC',
    '#define HAVE_OPENCV_VIDEOIO',
    'linked',
  ]);
  // what the code calls on cv is there: a call into a module the binding was not built for fails here, in CI's build
  const { loadOpenCv } = await import('../src/video/opencv.ts');
  const cv = loadOpenCv() as unknown as Record<string, unknown>;
  const { execSync } = await import('node:child_process');
  // the code's lines, not its comments
  const code = execSync(`grep -rhE '\\bcv\\.[A-Za-z_]' ${join(ROOT_DIR, 'src')} ${join(ROOT_DIR, 'bench')}`, {
    encoding: 'utf8',
  })
    .split('\n')
    .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
  const used = new Set(code.flatMap((line) => [...line.matchAll(/\bcv\.([A-Za-z_][A-Za-z_0-9]*)/g)].map((m) => m[1])));
  t.true(used.size > 30, `${used.size} names`);
  t.deepEqual(
    [...used].filter((name) => cv[name] === undefined),
    [],
  );
});
