/**
 * The board stand-in: what TensorRT on a Jetson looks like to jetprof, without a GPU. An engine of the CPU ABI library
 * (test/native/cpu_engine_abi.c, through jetprof's real koffi binding and backends/tensorrt.ts) that declares how long
 * one run takes on the "GPU" (spent asleep, as a host thread waits on cudaStreamSynchronize) and replays ONNX
 * Runtime's head outputs recorded on the same frames, so it finds exactly the boxes ONNX Runtime finds. It lives with
 * the tests and the bench and never ships as TensorRT.
 */
import { writeFileSync } from 'node:fs';
import { createOnnxSession } from '../../src/backends/onnx.ts';
import type { PostprocessOptions } from '../../src/detect/postprocess.ts';
import { readModelInfo } from '../../src/model/model-info.ts';
import { sha256File } from '../../src/util/files.ts';
import { openLoopIo } from '../../src/pipeline/loop-shared.ts';
import { type LoopOptions } from '../../src/pipeline/loop-options.ts';
import { cvCalls, preprocessFrame } from '../../src/pipeline/preprocess.ts';
import { disabledNvtx } from '../../src/pipeline/nvtx.ts';
import { classifySource } from '../../src/video/sources.ts';

/** Boards by the lab's and tensorrt_demos' figures: TensorRT's inference time per frame (ms) on the "GPU". */
export const BOARDS = {
  /** The lab's TensorRT row on a Jetson Nano: 10.45 FPS inference. */
  'nano-lab': { title: 'Jetson Nano, the lab (10.45 FPS)', gpuMs: 1000 / 10.45 },
  /** tensorrt_demos' yolov4-tiny-416 FP16 on a Nano: 25.5 FPS. */
  'nano-fp16': { title: 'Jetson Nano, FP16 (25.5 FPS)', gpuMs: 1000 / 25.5 },
  /** A Xavier NX at about 57 FPS. */
  'xavier-nx': { title: 'Jetson Xavier NX (57 FPS)', gpuMs: 1000 / 57 },
  /**
   * An Orin-class GPU: 3 ms a frame (this model runs in 0.42 ms at FP16 on a data-centre GPU; an Orin's FP16 figure is
   * a few ms): where jetprof's CPU stages, not the model, set end-to-end FPS and stream capacity.
   */
  'orin-class': { title: 'Orin-class GPU (3 ms a frame)', gpuMs: 3 },
} as const;
export type BoardName = keyof typeof BOARDS;

/** FNV-1a over 32-bit words from two offset bases: the key the C library finds a recorded image by. */
export function replayHash(data: Float32Array): [number, number] {
  const w = new Uint32Array(data.buffer, data.byteOffset, data.length);
  let h1 = 2166136261;
  let h2 = (2166136261 ^ 0x5bd1e995) >>> 0;
  for (let k = 0; k < w.length; k++) {
    h1 = Math.imul(h1 ^ w[k], 16777619) >>> 0;
    h2 = Math.imul(h2 ^ w[k], 16777619) >>> 0;
  }
  return [h1, h2];
}

export interface RecordOptions {
  video: string;
  model: string;
  frames: number;
  frameSize?: [number, number];
  letterbox?: boolean;
  out: string;
}

/**
 * ONNX Runtime's head outputs on the first `frames` frames of a video, preprocessed exactly as infer does (same
 * resize, geometry and blob), written as the C library's replay recording.
 */
export async function recordHeads(o: RecordOptions): Promise<string> {
  const info = readModelInfo(o.model);
  const postprocess = {} as PostprocessOptions;
  const loop = {
    streams: [],
    frameSize: o.frameSize,
    letterbox: !!o.letterbox,
    postprocess,
    warmup: 0,
    batch: 1,
    inFlight: 1,
    nvtx: disabledNvtx('recording'),
    shouldStop: () => false,
  } as LoopOptions;
  const io = openLoopIo(info, loop, { source: o.video, arg: classifySource(o.video) });
  const session = await createOnnxSession(o.model, { executionProvider: 'cpu', onWarning: () => undefined });
  const records: Buffer[] = [];
  let floats = 0;
  try {
    for (let i = 0; i < o.frames; i++) {
      let frame = io.source.read();
      if (!frame) break;
      if (io.resize) frame = frame.resize(io.resize[1], io.resize[0]);
      const { input, blob } = await preprocessFrame(cvCalls(io.cv), frame, io.g);
      const result = await session.run(input, blob);
      const heads = info.heads.map((h) => result.outputs.get(h.output)!);
      floats = heads.reduce((n, h) => n + h.length, 0);
      const rec = Buffer.alloc(8 + floats * 4);
      const [h1, h2] = replayHash(input);
      rec.writeUInt32LE(h1, 0);
      rec.writeUInt32LE(h2, 4);
      let at = 8;
      for (const h of heads) {
        Buffer.from(h.buffer, h.byteOffset, h.byteLength).copy(rec, at);
        at += h.byteLength;
      }
      records.push(rec);
    }
  } finally {
    io.source.close();
    io.sink?.abort();
    await session.dispose();
  }
  const header = Buffer.alloc(16);
  header.write('JPRPLY01', 0, 'ascii');
  header.writeUInt32LE(records.length, 8);
  header.writeUInt32LE(floats, 12);
  writeFileSync(o.out, Buffer.concat([header, ...records]));
  return o.out;
}

/** A stand-in engine's run time on the "GPU", recording, batch, claimed TensorRT version and faults (boardEngine). */
interface EngineOptions {
  gpuMs: [number, number];
  replay?: string;
  batch?: number;
  tensorrt?: string;
  faultAtRun?: number;
  stackKib?: number;
  /** The constant every output value holds without a replay: -10 (the default) finds no box, 5 a box in every cell. */
  outputValue?: number;
}

/** The text of a stand-in engine for a model (the lines the C library reads; see boardEngine). */
export function engineText(model: string, o: EngineOptions): string {
  const info = readModelInfo(model);
  const b = o.batch ?? 1;
  const lines = [
    'jetprof-cpu-engine 1',
    `tensorrt ${o.tensorrt ?? '8.6.1'}`,
    // a model that preprocesses in its graph takes the frame's uint8 bytes (TensorRT's kUINT8, 5)
    info.frameInput
      ? `input ${info.inputName} 5 ${b} ${info.frameInput.height} ${info.frameInput.width} 3`
      : `input ${info.inputName} 0 ${b} 3 ${info.inputHeight} ${info.inputWidth}`,
    ...info.heads.map(
      (h) =>
        `output ${h.output} 0 ${b} ${h.anchors.length * (5 + info.classes)} ${h.gridH} ${h.gridW} ${o.outputValue ?? -10} 0`,
    ),
    `gpu-ms ${o.gpuMs[0]} ${o.gpuMs[1]}`,
    ...(o.replay ? [`replay ${o.replay}`] : []),
    ...(o.faultAtRun ? [`fault-at-run ${o.faultAtRun}`] : []),
    ...(o.stackKib ? [`stack-kib ${o.stackKib}`] : []),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * A stand-in engine for a model: its input and heads at `batch` images, one run taking `gpuMs[0] + gpuMs[1] x batch`
 * ms, outputs replayed from `replay` (else constant: no boxes), its run `faultAtRun` dying of SIGSEGV, its open using
 * `stackKib` KiB of stack, and the sidecar `build-engine` would write (the ONNX it stands for, FP16), so
 * `infer-trt --engine E.trt` finds the metadata as it does on a board.
 */
export function boardEngine(path: string, model: string, o: EngineOptions): string {
  const b = o.batch ?? 1;
  const tensorrt = o.tensorrt ?? '8.6.1';
  writeFileSync(path, engineText(model, o));
  writeFileSync(
    `${path}.json`,
    `${JSON.stringify(
      {
        schema: 'jetprof.engine/1',
        engine: path,
        onnx: { path: model, sha256: sha256File(model) },
        tensorrt,
        precision: 'fp16',
        batch: b,
        device: { model: 'board stand-in (test/native/cpu_engine_abi.c)' },
        trtexec: [],
        builtAt: new Date(0).toISOString(),
        buildSeconds: 0,
      },
      null,
      2,
    )}\n`,
  );
  return path;
}
