/**
 * The TensorRT backend's TypeScript binding, tested through its C ABI (native/jetprof_trt.h) against
 * test/native/cpu_engine_abi.c: a CPU implementation of the same functions, built here with gcc. TensorRT itself
 * cannot run on these machines; the shim over it is compile-checked with scripts/check-trt-shim.sh.
 */
import test from 'ava';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkEngineIo } from '../src/backends/engine-io.ts';
import { createTensorRtSession } from '../src/backends/tensorrt.ts';
import { formatTrtVersion, loadTrtAbi } from '../src/backends/trt-abi.ts';
import { decodePluginDetections } from '../src/detect/decode.ts';
import { stretchGeometry } from '../src/detect/geometry.ts';
import { readModelInfo } from '../src/model/model-info.ts';
import { withFixedBatch } from '../src/model/onnx-export.ts';
import { trtexecArgv, trtexecVersion } from '../src/backends/build-engine.ts';
import {
  buildCpuEngineLib,
  errorLines,
  makeModel,
  makeVideo,
  PERSON_VEHICLE_CFG,
  probeVideo,
  runCli,
  scratchDir,
} from './helpers/fixtures.ts';

const dir = scratchDir();
const cpuLib = buildCpuEngineLib();
process.env.JETPROF_TRT_SHIM = cpuLib;

const model = makeModel('trt', PERSON_VEHICLE_CFG, 5);
const info = readModelInfo(model.onnxPath); // 640x480 input, heads 20x15 and 40x30, 2 classes
const [small, large] = info.heads;

function engineFile(name: string, lines: string[], version = '8.6.1'): string {
  const path = join(dir, name);
  writeFileSync(path, ['jetprof-cpu-engine 1', `tensorrt ${version}`, ...lines, ''].join('\n'));
  return path;
}

const headsEngine = engineFile('heads.engine', [
  'input images 0 1 3 480 640',
  `output ${small.output} 0 1 21 ${small.gridH} ${small.gridW} -10 0`,
  `output ${large.output} 0 1 21 ${large.gridH} ${large.gridW} 1 2`,
]);

const warn: string[] = [];
const options = { onWarning: (m: string) => warn.push(m) };

test('the C ABI: versions, TensorRT version numbers in both encodings', (t) => {
  const abi = loadTrtAbi();
  t.is(abi.abiVersion(), 1);
  t.is(abi.runtimeVersion(), 8601);
  t.is(formatTrtVersion(8601), '8.6.1');
  t.is(formatTrtVersion(8201), '8.2.1');
  t.is(formatTrtVersion(100300), '10.3.0');
  t.is(formatTrtVersion(101600), '10.16.0');
});

test('an engine opens; IO metadata, buffer sizes, outputs and timing fields come through the binding', async (t) => {
  const s = await createTensorRtSession(headsEngine, info, options);
  t.is(s.backend, 'tensorrt');
  t.is(s.description, 'TensorRT 8.6.1');
  t.is(s.inputName, 'images');
  t.deepEqual(s.outputNames, [small.output, large.output]);
  const input = new Float32Array(3 * 480 * 640).map((_, i) => (i % 251) / 250);
  const r = await s.run(input);
  const a = r.outputs.get(small.output)!;
  const b = r.outputs.get(large.output)!;
  t.is(a.length, 21 * small.gridH * small.gridW);
  t.is(b.length, 21 * large.gridH * large.gridW);
  t.true(a.every((v) => v === -10));
  for (const k of [0, 1, 250, 251, 9999, b.length - 1])
    t.is(b[k], Math.fround(1 + 2 * input[k % input.length]), `output value ${k}`);
  t.truthy(r.device);
  for (const key of ['h2dMs', 'gpuComputeMs', 'd2hMs'] as const)
    t.true(Number.isFinite(r.device![key]) && r.device![key] >= 0, key);
  // Two runs in flight are serialised on the one set of buffers, each getting its own result.
  const [r1, r2] = await Promise.all([
    s.run(new Float32Array(input.length).fill(0)),
    s.run(new Float32Array(input.length).fill(1)),
  ]);
  t.is(r1.outputs.get(large.output)![0], 1);
  t.is(r2.outputs.get(large.output)![0], 3);
  await t.throwsAsync(s.run(new Float32Array(10)), {
    message: /input images takes 3686400 bytes \(1x3x480x640 float32\), got 40/,
  });
  await s.dispose();
});

test('bad engine - missing file, not an engine, another TensorRT version: one line each', async (t) => {
  await t.throwsAsync(createTensorRtSession(join(dir, 'nope.trt'), info, options), {
    message: /nope\.trt: engine file not found/,
  });
  const junk = join(dir, 'junk.trt');
  writeFileSync(junk, 'PK\u0003\u0004 not an engine');
  await t.throwsAsync(createTensorRtSession(junk, info, options), {
    message: /junk\.trt: not a TensorRT engine this runtime can load \(.*Magic Tag does not match\)/,
  });
  const old = engineFile('old.trt', ['input images 0 1 3 480 640'], '8.2.1');
  const e = await t.throwsAsync(createTensorRtSession(old, info, options), {
    message: /old\.trt: engine from another TensorRT version \(built by 8\.2\.1, runtime 8\.6\.1\)/,
  });
  t.regex((e as { suggestion?: string }).suggestion ?? '', /jetprof build-engine/);
});

test('bad engine - input shape mismatch, wrong outputs, dynamic shapes, missing plugin', async (t) => {
  const wrongSize = engineFile('416.engine', ['input images 0 1 3 416 416', `output ${small.output} 0 1 21 13 13 0 1`]);
  await t.throwsAsync(createTensorRtSession(wrongSize, info, options), {
    message: /416\.engine expects input 1x3x416x416 but the model is 640x480 \(input shape mismatch\)/,
  });
  const wrongOut = engineFile('out.engine', ['input images 0 1 3 480 640', 'output boxes 0 1 100 4 0 1']);
  await t.throwsAsync(createTensorRtSession(wrongOut, info, options), {
    message: /outputs boxes are neither the model's YOLO heads .* nor tensorrt_demos' detections/,
  });
  const dynamic = engineFile('dyn.engine', ['input images 0 -1 3 480 640']);
  await t.throwsAsync(createTensorRtSession(dynamic, info, options), {
    message:
      /input images has a dynamic dimension and no usable optimization profile; build the engine with trtexec --shapes=images:Nx3xHxW/,
  });
  await t.throwsAsync(
    createTensorRtSession(headsEngine, info, { ...options, plugins: [join(dir, 'libyolo_layer.so')] }),
    {
      message:
        /libyolo_layer\.so: plugin library could not be loaded \(.*libyolo_layer\.so: cannot open shared object file/,
    },
  );
});

const batchEngine = engineFile('batch2.engine', [
  'input images 0 2 3 480 640',
  `output ${small.output} 0 2 21 ${small.gridH} ${small.gridW} -10 0`,
  `output ${large.output} 0 2 21 ${large.gridH} ${large.gridW} 1 2`,
]);

test('an engine built for a batch of 2 takes one or two images per run: one is padded, its padding dropped; three are refused', async (t) => {
  const s = await createTensorRtSession(batchEngine, info, options);
  t.is(s.batchSize, 2);
  const per = 3 * 480 * 640;
  const two = new Float32Array(2 * per).map((_, i) => (i < per ? 0.25 : 0.75));
  const r2 = await s.run(two);
  const big = r2.outputs.get(large.output)!;
  const perOut = 21 * large.gridH * large.gridW;
  t.is(big.length, 2 * perOut, "two images: both images' heads, one after the other");
  t.is(big[0], 1 + 2 * 0.25);
  // the CPU stand-in computes out[k] = bias + scale * in[k % inputs]: every value of both images' heads comes through
  for (const k of [perOut - 1, perOut, 2 * perOut - 1]) t.is(big[k], Math.fround(1 + 2 * two[k % two.length]));
  const r1 = await s.run(new Float32Array(per).fill(0.75));
  t.is(r1.outputs.get(large.output)!.length, perOut, 'one image: the padding image is dropped');
  t.is(r1.outputs.get(small.output)!.length, 21 * small.gridH * small.gridW);
  t.is(r1.outputs.get(large.output)![0], 1 + 2 * 0.75);
  await t.throwsAsync(s.run(new Float32Array(3 * per)), {
    message: /input images takes 7372800 bytes \(2x3x480x640 float32\), got 11059200/,
  });
  await s.dispose();
});

test('infer with streams on a batch-2 engine: two streams run in batches of 2; three streams are refused with the command that builds the right engine', async (t) => {
  const video = makeVideo('trt-batch.mp4', 5, 160, 120);
  const json = join(dir, 'trt-batch.json');
  const args = [
    '--backend',
    'trt',
    video,
    '--engine',
    batchEngine,
    '--model',
    model.onnxPath,
    '--no-write',
    '--warmup',
    '1',
  ];
  const ok = await runCli('infer', [...args, '--streams', '2', '--json', json, '-q'], {
    env: { JETPROF_TRT_SHIM: cpuLib },
  });
  t.is(ok.code, 0, ok.stderr);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.batch, 2);
  t.is(run.batches.count, 4);
  t.is(run.batches.meanImages, 2);
  t.is(run.frames, 8);
  // a frame's share of its batch: the batch's inference time over its frames, so the stages add up
  t.true(Math.abs(run.batches.perFrameMs * 2 - run.batches.perBatchMs.mean) < 0.01);
  const three = await runCli('infer', [...args, '--streams', '3'], { env: { JETPROF_TRT_SHIM: cpuLib } });
  t.is(three.code, 2, three.stderr);
  t.is(errorLines(three.stderr).length, 1, three.stderr);
  t.regex(
    three.stderr,
    /batch2\.engine: the engine runs batches of 2; this run batches 3 frames \(3 streams\) \(fix: build an engine for it: jetprof build-engine --onnx .*trt\.onnx --batch 3 --out .*batch2-b3\.engine/,
  );
  // --batch 2 with three streams fits: batches of two, taken in turn
  const fits = await runCli('infer', [...args, '--streams', '3', '--batch', '2', '-q'], {
    env: { JETPROF_TRT_SHIM: cpuLib },
  });
  t.is(fits.code, 0, fits.stderr);
});

test('checkEngineIo accepts tensorrt_demos engines (one detections output)', (t) => {
  const io = checkEngineIo(
    'demos.trt',
    [
      { name: '000_net', isInput: true, dtype: 0, dims: [1, 3, 480, 640], bytes: 3686400 },
      { name: 'detections', isInput: false, dtype: 0, dims: [1, 18900, 1, 7], bytes: 18900 * 7 * 4 },
    ],
    info,
  );
  t.is(io.outputs[0].name, 'detections');
});

test('tensorrt_demos detections: top-left x/y and w/h as fractions of the input, score = confidence x probability', (t) => {
  const g = stretchGeometry(1280, 960, 640, 480);
  const rows = new Float32Array([
    0.25, 0.5, 0.1, 0.2, 0.9, 1, 0.8, /* kept: 0.72 */ 0.1, 0.1, 0.1, 0.1, 0.5, 0, 0.5, /* 0.25 < conf */ 0, 0, 0, 0, 0,
    0, 0,
  ]);
  const d = decodePluginDetections(rows, g, 0.3, 2).toDetections();
  t.is(d.length, 1);
  t.is(d[0].classId, 1);
  t.true(Math.abs(d[0].score - 0.72) < 1e-6);
  t.deepEqual(
    [d[0].x1, d[0].y1, d[0].x2, d[0].y2].map((v) => Math.round(v)),
    [320, 480, 448, 672],
  );
});

test('infer --backend trt end to end through the binding: video, run JSON with h2d/gpuCompute/d2h, version warning from the sidecar', async (t) => {
  const video = makeVideo('trt.mp4', 8, 320, 240);
  writeFileSync(
    `${headsEngine}.json`,
    JSON.stringify({
      schema: 'jetprof.engine/1',
      engine: headsEngine,
      onnx: { path: model.onnxPath, sha256: '' },
      tensorrt: '8.2.1',
      precision: 'fp16',
      trtexec: [],
      builtAt: '',
      buildSeconds: 0,
    }),
  );
  const json = join(dir, 'trt-run.json');
  const r = await runCli(
    'infer',
    ['--backend', 'trt', video, '--engine', headsEngine, '--warmup', '2', '--json', json],
    {
      env: { JETPROF_TRT_SHIM: cpuLib },
    },
  );
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /using .*trt\.onnx, the ONNX .*heads\.engine was built from/);
  t.regex(r.stderr, /heads\.engine was built by TensorRT 8\.2\.1 but the runtime is TensorRT 8\.6\.1: rebuild it/);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  t.is(run.backend, 'tensorrt');
  t.is(run.frames, 6);
  t.is(run.env.tensorrt, '8.6.1');
  for (const k of ['h2dMs', 'gpuComputeMs', 'd2hMs']) t.true(run.gpuTimings[k].meanMs >= 0, k);
  t.true(run.gpuTimings.gpuComputeMs.totalMs <= run.stages.inference.totalMs);
  t.is(run.perFrame.gpuComputeMs.length, 6, 'CUDA-event timings per frame');
  t.like(
    run.setup,
    { executionProvider: 'tensorrt', precision: 'fp16', label: 'trt-fp16-gpu-pipelined3', profiler: 'none' },
    'precision from the engine sidecar',
  );
  const out = join(dir, 'trt-tensorrt-detected.mp4');
  t.true(existsSync(out));
  t.is(probeVideo(out).frames, 8);
});

test('bad call - TensorRT unavailable: the one-line message, exit 2', async (t) => {
  const video = makeVideo('trt-none.mp4', 2, 160, 120);
  const env = { JETPROF_TRT_SHIM: '', TENSORRT_ROOT: '', LD_LIBRARY_PATH: '' };
  const r = await runCli('infer-trt', [video, '--engine', headsEngine, '--model', model.onnxPath], { env });
  t.is(r.code, 2);
  t.is(errorLines(r.stderr).length, 1, r.stderr);
  t.regex(
    r.stderr,
    /infer: error: TensorRT cannot run on this machine: TensorRT runtime \(libnvinfer\) not found: run on JetPack or set TENSORRT_ROOT/,
  );
});

test('build-engine: trtexec flags per precision and TensorRT version; the banner gives the version', (t) => {
  const base = { onnx: 'm.onnx', out: 'e.trt', precision: 'fp16' as const, workspaceMb: 1024 };
  t.deepEqual(trtexecArgv(base, 'e.trt', true), [
    '--onnx=m.onnx',
    '--saveEngine=e.trt',
    '--fp16',
    '--memPoolSize=workspace:1024',
  ]);
  t.deepEqual(trtexecArgv({ ...base, precision: 'int8', calib: 'c.bin' }, 'e.trt', false), [
    '--onnx=m.onnx',
    '--saveEngine=e.trt',
    '--int8',
    '--calib=c.bin',
    '--workspace=1024',
  ]);
  t.is(
    trtexecVersion('&&&& RUNNING TensorRT.trtexec [TensorRT v8201] # /usr/src/tensorrt/bin/trtexec --onnx=x'),
    '8.2.1',
  );
  t.is(trtexecVersion('&&&& RUNNING TensorRT.trtexec [TensorRT v100300] # trtexec'), '10.3.0');
});

test('build-engine runs trtexec, writes the engine and its sidecar; trtexec missing is one line', async (t) => {
  // A stand-in for trtexec (not available here): prints TensorRT 8.6's banner and writes --saveEngine's file.
  const fake = join(dir, 'trtexec-standin.sh');
  writeFileSync(
    fake,
    [
      '#!/bin/sh',
      'if [ "$1" = --help ]; then echo "  --memPoolSize=poolspec"; exit 0; fi',
      `echo "$@" > ${join(dir, 'trtexec-args.txt')}`,
      'echo "&&&& RUNNING TensorRT.trtexec [TensorRT v8601] # trtexec $*"',
      'for a in "$@"; do case "$a" in --saveEngine=*) echo engine > "${a#--saveEngine=}";; esac; done',
      'echo "&&&& PASSED TensorRT.trtexec [TensorRT v8601]"',
    ].join('\n'),
  );
  chmodSync(fake, 0o755);
  const out = join(dir, 'built.trt');
  const r = await runCli(
    'jetprof',
    ['build-engine', '--onnx', model.onnxPath, '--out', out, '--fp16', '--workspace', '512', '-q'],
    { env: { JETPROF_TRTEXEC: fake } },
  );
  t.is(r.code, 0, r.stderr);
  t.is(readFileSync(out, 'utf8'), 'engine\n');
  const side = JSON.parse(readFileSync(`${out}.json`, 'utf8'));
  t.is(side.schema, 'jetprof.engine/1');
  t.is(side.tensorrt, '8.6.1');
  t.is(side.precision, 'fp16');
  t.is(side.onnx.sha256.length, 64);
  t.is(side.batch, 1);
  t.deepEqual(side.trtexec.slice(1), [
    `--onnx=${model.onnxPath}`,
    `--saveEngine=${out}`,
    // jetprof's ONNX has a symbolic batch: trtexec gets the shape to build for
    '--shapes=input:1x3x480x640',
    '--fp16',
    '--memPoolSize=workspace:512',
  ]);
  t.regex(
    readFileSync(join(dir, 'trtexec-args.txt'), 'utf8'),
    // trtexec writes into a folder of jetprof's own (0700, a new name): nobody can have planted a link there
    /--saveEngine=.*\/\.jetprof-out-\d+-[0-9a-f]{8}-\w{6}\/built\.trt --shapes=input:1x3x480x640 --fp16/,
  );
  // --batch 4: an engine for four images per run (one frame from each of four streams)
  const out4 = join(dir, 'built-b4.trt');
  const b4 = await runCli('jetprof', ['build-engine', '--onnx', model.onnxPath, '--out', out4, '--batch', '4', '-q'], {
    env: { JETPROF_TRTEXEC: fake },
  });
  t.is(b4.code, 0, b4.stderr);
  t.regex(b4.stderr, /built .*built-b4\.trt \(fp32, batch 4, TensorRT 8\.6\.1\)/);
  t.is(JSON.parse(readFileSync(`${out4}.json`, 'utf8')).batch, 4);
  t.regex(readFileSync(join(dir, 'trtexec-args.txt'), 'utf8'), / --shapes=input:4x3x480x640( |$)/m);
  // an ONNX whose batch is fixed (another exporter, or jetprof before batches) builds only that batch
  const fixed = join(dir, 'fixed-b1.onnx');
  writeFileSync(fixed, withFixedBatch(readFileSync(model.onnxPath), 1));
  const bad = await runCli('jetprof', ['build-engine', '--onnx', fixed, '--out', join(dir, 'f.trt'), '--batch', '2'], {
    env: { JETPROF_TRTEXEC: fake },
  });
  t.is(bad.code, 2, bad.stderr);
  t.regex(
    bad.stderr,
    /^jetprof: error: .*fixed-b1\.onnx: the input input has a fixed batch of 1, not 2 \(fix: export it again with `jetprof export`/,
  );
  t.false(existsSync(join(dir, 'f.trt')));
  // a trtexec that says PASSED (exit 0) and writes no engine: said as such, not as a failure with exit code 0
  const silent = join(dir, 'trtexec-silent.sh');
  writeFileSync(silent, '#!/bin/sh\necho "&&&& PASSED TensorRT.trtexec [TensorRT v8601]"\n');
  chmodSync(silent, 0o755);
  const none = await runCli('jetprof', ['build-engine', '--onnx', model.onnxPath, '--out', join(dir, 'n.trt')], {
    env: { JETPROF_TRTEXEC: silent },
  });
  t.is(none.code, 1, none.stderr);
  t.regex(none.stderr, /trtexec exited 0 on \S+ but wrote no engine \(its last line: &&&& PASSED/);
  t.false(existsSync(join(dir, 'n.trt')));
  const missing = await runCli('jetprof', ['build-engine', '--onnx', model.onnxPath, '--out', join(dir, 'x.trt')], {
    env: { PATH: '/usr/bin:/bin', TENSORRT_ROOT: '' },
  });
  t.is(missing.code, 2);
  t.regex(missing.stderr, /trtexec not found \(TensorRT is not installed here\).*\/usr\/src\/tensorrt\/bin\/trtexec/);
  t.false(existsSync(join(dir, 'x.trt')));
});
