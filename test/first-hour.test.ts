/**
 * The first hour (#25): what a newcomer runs, sees, saves and pastes. Every --help fits 80 columns; hints name the
 * real option; the table goes to stdout and progress to stderr.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, scratchDir } from './helpers/fixtures.ts';

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

test('every --help fits 80 columns, examples included, with no line of a wrapped sentence left at column 0', (t) => {
  const pages: [string, ReturnType<typeof runCli>][] = [
    ['jetprof', runCli('jetprof', ['--help'])],
    ...SUBCOMMANDS.map(
      (c) => [`jetprof ${c}`, runCli('jetprof', [c, '--help'])] as [string, ReturnType<typeof runCli>],
    ),
    ...(['infer', 'infer-onnx', 'infer-trt', 'infer-opencv'] as const).map(
      (c) => [c, runCli(c, ['--help'])] as [string, ReturnType<typeof runCli>],
    ),
  ];
  for (const [name, r] of pages) {
    t.is(r.code, 0, `${name}: ${r.stderr}`);
    const wide = r.stdout.split('\n').filter((l) => l.length > 80);
    t.deepEqual(wide, [], `${name}: lines wider than 80 columns`);
    t.notRegex(r.stdout, /\npostprocess \+ write/, `${name}: no orphan from hand-wrapped text`);
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

test('hints that work: build-engine names --out; infer-trt with a missing engine says so; profile without -- says where infer options go', (t) => {
  const onnx = join(scratchDir(), 'hint.onnx');
  writeFileSync(onnx, 'not read before the output folder is checked');
  const be = runCli('jetprof', ['build-engine', '--onnx', onnx, '--out', '/nonexistent/dir/e.trt']);
  t.is(be.code, 2, be.stderr);
  t.regex(
    be.stderr,
    /\/nonexistent\/dir\/e\.trt: the directory \/nonexistent\/dir does not exist or is not writable \(fix: create it, or pass --out with a writable path\)/,
  );
  const trt = runCli('infer-trt', ['v.mp4', '--engine', 'missing.trt']);
  t.is(trt.code, 2);
  t.regex(trt.stderr, /missing\.trt: TensorRT engine not found \(fix: build it on this board: jetprof build-engine/);
  const prof = runCli('jetprof', ['profile', '--tool', 'nsys', 'v.mp4', '--model', 'm.onnx']);
  t.is(prof.code, 2);
  t.regex(prof.stderr, /unknown option '--model'/);
  t.regex(prof.stderr, /infer's options go after --/);
});
