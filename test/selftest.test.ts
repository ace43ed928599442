/**
 * `jetprof selftest` through the real command: on this machine (no GPU), and with the board stand-ins as a board's
 * parts: the CPU ABI library as TensorRT (replaying ONNX Runtime's heads: ok with no difference; constant outputs:
 * fail with the figure; a crash: fail with the signal; a run that never ends: ended and reported, nothing left
 * running) and the GStreamer board elements as nvv4l2decoder/nvv4l2h264enc.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseHeadsFile } from '../src/pipeline/heads-file.ts';
import { headDifference } from '../src/jobs/selftest.ts';
import { Selftest } from '../src/jobs/selftest-runner.ts';
import { selftestDocument } from '../src/jobs/selftest-format.ts';
import { markdownOf } from '../src/report/markdown.ts';
import { shellLine } from '../src/util/process.ts';
import { boardEngine, recordHeads } from './helpers/board.ts';
import {
  buildCpuEngineLib,
  gstBoardEnv,
  makeModel,
  makeVideo,
  ROOT,
  runCli,
  scratchDir,
  SMALL_LAB_CFG,
  freshDir,
  startCli,
} from './helpers/fixtures.ts';

const dir = join(scratchDir(), 'selftest');
mkdirSync(dir, { recursive: true });
// a small model (160x128) that fires on every frame (objectness bias 0), so there are boxes to match
const model = makeModel('selftest', SMALL_LAB_CFG, 3, undefined, 0);
const FRAMES = 8;
const video = makeVideo('selftest.mp4', FRAMES + 2, 320, 240);
const replay = recordHeads({ video, model: model.onnxPath, frames: FRAMES, out: join(dir, 'heads.bin') });
const shim = { JETPROF_TRT_SHIM: buildCpuEngineLib() };

interface Entry {
  component: string;
  status: 'ok' | 'fail' | 'absent';
  figure?: string;
  fix?: string;
  detail?: string;
  figures?: Record<string, number | string>;
}

async function selftest(name: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const out = join(dir, name);
  const r = await runCli(
    'jetprof',
    ['selftest', '--out-dir', out, '--model', model.onnxPath, '--video', video, '--frames', String(FRAMES), ...args],
    { env, timeout: 600_000 },
  );
  const json = join(out, 'selftest.json');
  const result = existsSync(json) ? JSON.parse(readFileSync(json, 'utf8')) : undefined;
  const entry = (c: string): Entry => result?.entries.find((e: Entry) => e.component === c);
  const maybe = (c: string): Entry | undefined => entry(c);
  return { r, out, result, entry, maybe };
}

const validate = (() => {
  const Ajv = createRequire(import.meta.url)('ajv') as new (o: object) => {
    compile(s: object): ((v: unknown) => boolean) & { errors?: unknown };
  };
  return new Ajv({ strict: false }).compile(
    JSON.parse(readFileSync(join(ROOT, 'src/schemas/selftest-v1.schema.json'), 'utf8')),
  );
})();

test('jetprof selftest on this machine: every present component works (exit 0), absent ones say why and how to fix; selftest.json follows its schema', async (t) => {
  const { r, out, result, entry } = await selftest('here', []);
  t.is(r.code, 0, r.stderr);
  t.true(validate(result), JSON.stringify(validate.errors));
  t.like(entry('backend: ONNX Runtime (CPU)'), { status: 'ok' });
  const cv = entry('backend: OpenCV DNN (CPU)');
  t.is(cv.status, 'ok', JSON.stringify(cv));
  t.true(Number(cv.figures!.maxAbsDiff) < 1e-3, `OpenCV DNN's heads against ONNX Runtime's: ${cv.figure}`);
  t.is(cv.figures!.matchedShare, 1);
  t.like(entry('backend: TensorRT'), { status: 'absent' });
  t.regex(entry('backend: TensorRT').fix!, /--engine E\.trt/);
  for (const v of ['video: FFmpeg (OpenCV)', 'video: GStreamer software (avdec_h264, x264enc)']) {
    t.is(entry(v).status, 'ok', JSON.stringify(entry(v)));
    t.is(entry(v).figures!.framesWritten, FRAMES, v);
  }
  t.like(entry('video: nvv4l2 (NVDEC/NVENC)'), { status: 'absent' });
  t.like(entry('profiler: nvprof'), { status: 'absent' });
  t.regex(entry('profiler: nvprof').detail!, /installed; needs a supported GPU \(none here/);
  t.like(entry('profiler: nsys'), { status: 'ok' });
  for (const b of ['board: tegrastats', 'board: power mode']) t.like(entry(b), { status: 'absent' });
  for (const e of result.entries as Entry[]) if (e.status !== 'ok') t.truthy(e.fix, `${e.component} has its fix`);
  const md = readFileSync(join(out, 'SELFTEST.md'), 'utf8');
  t.regex(md, /\| backend: OpenCV DNN \(CPU\) \| ok \| .*heads vs ONNX Runtime: max \\\|d\\\| /);
  t.regex(r.stdout, /component\(s\) work, 0 failed, \d+ absent \(not a failure\)/);
  // what a maintainer asks first: the versions of what ran, and doctor's table
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  t.like(result.versions, { jetprof: version, 'Node.js': process.version });
  for (const v of ['ONNX Runtime (onnxruntime-node)', 'OpenCV', 'GStreamer', 'nsys', 'nvprof'])
    t.regex(result.versions[v] ?? '', /^\d+\.\d+/, v);
  t.truthy(
    result.doctor.find((d: { check: string }) => d.check === 'ONNX Runtime (Node)'),
    'doctor rows',
  );
  t.regex(md, /## Versions\n\n\| Component \| Version \|\n[\s\S]*\| jetprof \| \d/);
  t.regex(md, /## jetprof doctor\n\n\| Check \| Status \| Value \| Fix \|/);
});

test('selftest with the board stand-ins: TensorRT (the CPU ABI library) that replays ONNX Runtime is ok with no difference; the board GStreamer elements are the nvv4l2 path', async (t) => {
  const engine = boardEngine(join(dir, 'good.trt'), model.onnxPath, { gpuMs: [5, 0], replay: await replay });
  const { r, entry, maybe } = await selftest('board', ['--engine', engine, '--only', 'backends,video'], {
    ...shim,
    ...gstBoardEnv(),
  });
  t.is(r.code, 0, r.stderr);
  const trt = entry('backend: TensorRT');
  t.is(trt.status, 'ok', JSON.stringify(trt));
  t.is(trt.figures!.maxAbsDiff, 0);
  t.is(trt.figures!.matchedShare, 1);
  t.is(trt.figures!.precision, 'fp16');
  const hw = entry('video: GStreamer nvv4l2 (NVDEC/NVENC)');
  t.is(hw.status, 'ok', JSON.stringify(hw));
  t.regex(String(hw.figures!.encoder), /nvv4l2h264enc/);
  t.is(maybe('video: nvv4l2 (NVDEC/NVENC)'), undefined, 'no absent row where the board elements are');
  t.is(maybe('profiler: nsys'), undefined, '--only leaves the other groups out');
});

test('selftest fails with a clear line against a bad stand-in: heads that differ (the figure), a crash (the signal), a run that never ends (ended, nothing left running)', async (t) => {
  const constant = boardEngine(join(dir, 'constant.trt'), model.onnxPath, { gpuMs: [1, 0] });
  const differs = await selftest('differs', ['--engine', constant, '--only', 'backends'], shim);
  t.is(differs.r.code, 1, differs.r.stderr);
  const d = differs.entry('backend: TensorRT');
  t.is(d.status, 'fail');
  t.regex(d.detail!, /its heads differ beyond fp16's tolerance/);
  t.regex(d.figure!, /heads vs ONNX Runtime: max \|d\| [\d.e+]+, mean \|d\| [\d.e+]+/);
  t.regex(d.fix!, /^compare its boxes: jetprof agree /);
  t.regex(differs.r.stdout, /1 failed.*: backend: TensorRT\./);

  const crashing = boardEngine(join(dir, 'crash.trt'), model.onnxPath, {
    gpuMs: [1, 0],
    replay: await replay,
    faultAtRun: 2,
  });
  const crash = await selftest('crash', ['--engine', crashing, '--only', 'backends'], shim);
  t.is(crash.r.code, 1);
  t.like(crash.entry('backend: TensorRT'), { status: 'fail', detail: 'died of SIGSEGV (exit 139)' });
  t.regex(crash.entry('backend: TensorRT').fix!, /^run it by hand to see why: infer-trt .*--engine .*crash\.trt/);
  // the end of what it printed (here the native stack: the crashing frame), in the JSON and under its own heading
  const log = (crash.entry('backend: TensorRT') as Entry & { log: string[] }).log;
  t.true(log.length > 0 && log.length <= 20, JSON.stringify(log));
  t.regex(
    readFileSync(join(crash.out, 'SELFTEST.md'), 'utf8'),
    /## backend: TensorRT: the end of its output\n\n```+\n[\s\S]*jp_engine_infer[\s\S]*\n```+\n/,
  );

  const hanging = boardEngine(join(dir, 'hang.trt'), model.onnxPath, { gpuMs: [600_000, 0], replay: await replay });
  const hang = await selftest('hang', ['--engine', hanging, '--only', 'backends', '--timeout', '8'], shim);
  t.is(hang.r.code, 1);
  t.like(hang.entry('backend: TensorRT'), {
    status: 'fail',
    detail: 'did not finish within 8 s: ended (it and what it started)',
  });
  const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  t.false(left.includes('hang.trt'), 'no infer left running on the hanging engine');
});

test('bad input: --only with an unknown group, a missing --engine, a model that is not ONNX, a FIFO or a file in --out-dir as the video: one line, exit 2, nothing written', async (t) => {
  const notOnnx = join(dir, 'not-onnx.onnx');
  writeFileSync(notOnnx, 'a text file, not a model\n');
  const fifo = join(dir, 'clip.fifo');
  execFileSync('mkfifo', [fifo]);
  const inOut = join(dir, 'bad-inside');
  mkdirSync(inOut, { recursive: true });
  copyFileSync(video, join(inOut, 'clip.mp4'));
  const cases: [string, string[], RegExp][] = [
    [
      'only',
      ['--only', 'gpu'],
      /--only gpu: 'gpu' is not a group \(fix: use one or more of backends, video, profilers, board\)/,
    ],
    ['engine', ['--engine', join(dir, 'missing.trt')], /missing\.trt: not found \(--engine\)/],
    ['model', ['--model', notOnnx], /not-onnx\.onnx: not an ONNX model \(--model\) \(fix: export one/],
    ['fifo', ['--video', fifo], /clip\.fifo: not a regular file \(--video\); every component reads it again/],
  ];
  for (const [name, args, re] of cases) {
    const out = join(dir, `bad-${name}`);
    const r = await runCli('jetprof', ['selftest', '--out-dir', out, ...args]);
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, re);
    t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    t.false(existsSync(out), 'no out-dir made for a refused call');
  }
  const inside = await runCli('jetprof', ['selftest', '--out-dir', inOut, '--video', join(inOut, 'clip.mp4')]);
  t.is(inside.code, 2, inside.stderr);
  t.regex(inside.stderr, /clip\.mp4: in --out-dir, where selftest writes its own files \(--video\)/);
  t.deepEqual(readdirSync(inOut), ['clip.mp4'], 'nothing written beside it');
});

test('an interrupted selftest writes nothing: the previous selftest.json and SELFTEST.md stay, and it says so (exit 130)', async (t) => {
  const out = join(dir, 'interrupted');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'selftest.json'), '{"previous": true}\n');
  writeFileSync(join(out, 'SELFTEST.md'), '# the previous result\n');
  // 5 s a run: the TensorRT row is still running when Ctrl-C comes, and infer ends it after the run in progress
  const slow = boardEngine(join(dir, 'slow-int.trt'), model.onnxPath, { gpuMs: [5000, 0], replay: await replay });
  const run = startCli(
    'jetprof',
    [
      'selftest',
      '--out-dir',
      out,
      '--model',
      model.onnxPath,
      '--video',
      video,
      '--frames',
      String(FRAMES),
      '--engine',
      slow,
      '--only',
      'backends',
    ],
    { env: shim },
  );
  await run.waitFor(/backend: OpenCV DNN \(CUDA\)/);
  run.child.kill('SIGINT');
  t.is(await run.exit, 130, run.stderr());
  t.regex(run.stderr(), /interrupted: nothing written; \S+selftest\.json is as it was/);
  t.is(readFileSync(join(out, 'selftest.json'), 'utf8'), '{"previous": true}\n');
  t.is(readFileSync(join(out, 'SELFTEST.md'), 'utf8'), '# the previous result\n');
});

test('heads files: a round trip keeps every value; the difference of a file with itself is 0, and a changed value shows', (t) => {
  const files = (offset: number) => {
    const a = new Float32Array([1, 2, 3, 4]);
    a[2] += offset;
    const header = { schema: 'jetprof.heads/1', frames: [{ index: 0, heads: [{ name: 'h', length: 4 }] }] };
    return parseHeadsFile(Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), Buffer.from(a.buffer)]));
  };
  const base = files(0);
  t.deepEqual([...base[0].heads.get('h')!], [1, 2, 3, 4]);
  t.like(headDifference(base, base), { maxAbs: 0, meanAbs: 0, values: 4 });
  t.like(headDifference(base, files(0.5)), { maxAbs: 0.5, meanAbs: 0.125 });
  t.throws(() => parseHeadsFile(Buffer.from('{"schema":"other"}\n')), { message: /not jetprof\.heads\/1/ });
});

test('SELFTEST.md, the file a bug report carries: names and tool output from outside are text, never HTML, links or terminal escapes; a command to paste is quoted for the shell', (t) => {
  const hostile = 'x<img src=x onerror=alert(1)>\x1b]0;pwned\x07[y](http://e.vil)';
  const md = markdownOf(
    selftestDocument({
      schema: 'jetprof.selftest/1',
      startedAt: '2026-11-27T00:00:00.000Z',
      machine: { board: `NVIDIA Jetson ${hostile}`, os: hostile, node: 'v22.0.0', arch: 'arm64' },
      versions: { jetprof: '0.1.0', GStreamer: hostile },
      doctor: [{ check: 'Board', status: 'info', value: hostile }],
      clip: { path: `/v/${hostile}.mp4`, frames: 24, made: false },
      model: { path: '/m/$(touch pwned).onnx', made: false },
      entries: [
        {
          component: 'backend: TensorRT',
          status: 'fail',
          detail: hostile,
          fix: `run it by hand to see why: ${shellLine(['infer-trt', '/v/$(touch pwned).mp4', '--engine', "it's.trt"])}`,
          log: ['``` closes a short fence', `\x1b[2Jcleared ${hostile}`],
          seconds: 1,
        },
      ],
      ok: false,
      seconds: 3,
    }),
  );
  t.notRegex(md, /\x1b|\x07/, 'no terminal escape anywhere');
  // outside the fenced output (text there is literal), every < and ]( is escaped
  const prose = md.replace(/\n(`{3,})\n[\s\S]*?\n\1\n/g, '\n');
  t.notRegex(prose, /(^|[^\\])<img/, 'no live HTML');
  t.notRegex(prose, /(^|[^\\])\]\(http/, 'no live link');
  t.regex(prose, /^NVIDIA Jetson x\\<img src=x onerror=alert\(1\)\\>\\x1b\]0;pwned\\x07\[y\\\]\(http/m);
  // the fix line as the shell reads it (Markdown shows the backslash that it escapes here)
  t.regex(md, /run it by hand to see why: infer-trt '\/v\/\$\(touch pwned\)\.mp4' --engine 'it'\\\\''s\.trt'/);
  // the log's fence is longer than any run of backticks inside it
  t.regex(md, /\n````\n``` closes a short fence\n\\x1b\[2Jcleared .*\n````\n/);
});

test("selftest works in a folder of its own, which becomes DIR/run when it is complete: nothing planted in DIR is written through, and a second run replaces the first's files", async (t) => {
  const out = join(dir, 'planted');
  mkdirSync(out, { recursive: true });
  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, 'not yours');
  for (const name of ['clip.mp4', 'selftest.weights', 'selftest.onnx']) symlinkSync(victim, join(out, name));
  // in a folder without videos/vtest.avi, selftest makes its clip with ffmpeg
  const once = async () => {
    const r = await runCli(
      'jetprof',
      ['selftest', '--out-dir', out, '--model', model.onnxPath, '--frames', '4', '--only', 'board'],
      {
        cwd: freshDir('no-vtest'),
      },
    );
    t.is(r.code, 0, r.stderr);
    return JSON.parse(readFileSync(join(out, 'selftest.json'), 'utf8'));
  };
  const first = await once();
  t.like(first.clip, { path: join(out, 'run', 'clip.mp4'), made: true });
  t.true(existsSync(first.clip.path));
  const second = await once();
  t.is(second.clip.path, first.clip.path);
  t.is(readFileSync(victim, 'utf8'), 'not yours');
  t.deepEqual(
    readdirSync(out).sort(),
    ['SELFTEST.md', 'clip.mp4', 'run', 'selftest.json', 'selftest.onnx', 'selftest.weights'],
    'the run folder, the two result files, and the planted links left as they were',
  );
  t.true(lstatSync(join(out, 'clip.mp4')).isSymbolicLink());
});

test('a run that reads fewer frames than the clip gives fails, with the count and the fix', (t) => {
  const s = new Selftest({ outDir: dir, frames: 24, timeoutS: 5, onStep: () => undefined });
  s.expectedFrames = 24;
  t.is(s.readShort(24), undefined);
  t.regex(s.readShort(6)!.detail, /^read 6 of the 24 frames the clip gives: its decoder stopped early$/);
});
