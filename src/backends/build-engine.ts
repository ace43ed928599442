/**
 * `jetprof build-engine`: ONNX -> serialized TensorRT engine through trtexec, plus the sidecar JSON.
 * The engine is written to a temporary name and renamed when trtexec succeeds. jetprof's ONNX has a symbolic batch
 * dimension: `--batch N` (default 1) becomes trtexec's `--shapes=<input>:Nx3xHxW`, an engine that runs N images at
 * a time (one frame from each of N streams).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type EngineSidecar, sidecarPath } from './engine-sidecar.ts';
import { formatTrtVersion } from './trt-abi.ts';
import { findExecutable } from '../util/executables.ts';
import { baseEnv } from '../platform/env.ts';
import { JetprofError } from '../util/errors.ts';
import { readOnnxSignature } from '../model/onnx-export.ts';
import { StagingFolder, writeOutput } from '../output/output.ts';
import { requireWritableDir, sha256File } from '../util/files.ts';
import { runCommand } from '../util/process.ts';

interface BuildEngineOptions {
  onnx: string;
  out: string;
  precision: 'fp32' | 'fp16' | 'int8';
  /** trtexec --calib: a calibration cache file (INT8). */
  calib?: string;
  workspaceMb?: number;
  /** Images per run of the engine (default 1). */
  batch?: number;
  onOutput?: (chunk: string) => void;
}

/**
 * trtexec's --shapes for a batch of `batch` images, when the ONNX's batch dimension is symbolic; undefined when it
 * is fixed at `batch` already. A fixed batch of another size cannot be built for `batch`: one line, with the fix.
 */
function batchShapes(onnxPath: string, batch: number): string | undefined {
  const { inputs } = readOnnxSignature(readFileSync(onnxPath));
  const input = inputs[0];
  if (!input || input.dims.length !== 4)
    throw new JetprofError('BAD_MODEL', `${onnxPath}: no [batch,3,H,W] input`, {
      suggestion: 'export it with `jetprof export --cfg C --weights W`',
    });
  const [n, c, h, w] = input.dims;
  if (typeof n === 'number' && n > 0) {
    if (n === batch) return undefined;
    throw new JetprofError(
      'BAD_MODEL',
      `${onnxPath}: the input ${input.name} has a fixed batch of ${n}, not ${batch}`,
      {
        suggestion:
          'export it again with `jetprof export` (its batch dimension is symbolic), then build-engine --batch N',
      },
    );
  }
  return `${input.name}:${batch}x${c}x${h}x${w}`;
}

function findTrtexec(): string {
  const fromEnv = process.env.JETPROF_TRTEXEC;
  if (fromEnv) {
    if (existsSync(fromEnv)) return fromEnv;
    throw new JetprofError('TOOL_MISSING', `${fromEnv} (from JETPROF_TRTEXEC) does not exist`, {
      suggestion: 'unset it or point it at trtexec',
    });
  }
  const root = process.env.TENSORRT_ROOT;
  const found = findExecutable('trtexec', [
    ...(root ? [join(root, 'bin', 'trtexec')] : []),
    '/usr/src/tensorrt/bin/trtexec',
    '/usr/local/tensorrt/bin/trtexec',
  ]);
  if (!found) {
    throw new JetprofError('TOOL_MISSING', 'trtexec not found (TensorRT is not installed here)', {
      suggestion:
        'on JetPack it is /usr/src/tensorrt/bin/trtexec (sudo apt install tensorrt); elsewhere set TENSORRT_ROOT or JETPROF_TRTEXEC',
    });
  }
  return found;
}

/** trtexec's arguments. `memPoolFlag`: TensorRT >= 8.4 takes --memPoolSize=workspace:N, older ones --workspace=N. */
export function trtexecArgv(
  o: BuildEngineOptions,
  enginePath: string,
  memPoolFlag: boolean,
  shapes?: string,
): string[] {
  const args = [`--onnx=${o.onnx}`, `--saveEngine=${enginePath}`, ...(shapes ? [`--shapes=${shapes}`] : [])];
  if (o.precision === 'fp16') args.push('--fp16');
  if (o.precision === 'int8') args.push('--int8', ...(o.calib ? [`--calib=${o.calib}`] : []));
  if (o.workspaceMb)
    args.push(memPoolFlag ? `--memPoolSize=workspace:${o.workspaceMb}` : `--workspace=${o.workspaceMb}`);
  return args;
}

/** "[TensorRT v8601]" in trtexec's banner -> "8.6.1". */
export function trtexecVersion(output: string): string | undefined {
  const m = /\[TensorRT v(\d+)\]/.exec(output);
  return m ? formatTrtVersion(Number(m[1])) : undefined;
}

async function run(
  cmd: string,
  args: string[],
  onOutput?: (s: string) => void,
): Promise<{ code: number; output: string }> {
  const r = await runCommand(cmd, args, { onOutput: onOutput && ((d) => onOutput(d.toString())) });
  return { code: r.code, output: r.output.toString() };
}

export async function buildEngine(o: BuildEngineOptions): Promise<EngineSidecar> {
  if (!existsSync(o.onnx))
    throw new JetprofError('FILE_NOT_FOUND', `${o.onnx}: ONNX model not found`, {
      suggestion: 'export one with `jetprof export --cfg C --weights W`',
    });
  if (o.precision === 'int8' && o.calib && existsSync(o.calib) && statSync(o.calib).isDirectory()) {
    throw new JetprofError('BAD_OPTION', `${o.calib} is a folder, but trtexec --calib takes a calibration cache file`, {
      suggestion:
        'make the cache with tensorrt_demos (onnx_to_tensorrt.py --int8 writes calib_<model>.bin), or omit --calib to time INT8 with dummy scales',
    });
  }
  requireWritableDir(o.out, '--out');
  const batch = o.batch ?? 1;
  const shapes = batchShapes(o.onnx, batch);
  const trtexec = findTrtexec();
  const help = await run(trtexec, ['--help']);
  const memPool = /--memPoolSize/.test(help.output);
  // trtexec opens the engine by name: in a folder of this process's own, where no link can have been planted
  const staging = new StagingFolder(dirname(o.out), o.out);
  const partial = staging.path(basename(o.out));
  const args = trtexecArgv(o, partial, memPool, shapes);
  const t0 = Date.now();
  const r = await run(trtexec, args, o.onOutput);
  if (r.code !== 0 || !existsSync(partial)) {
    staging.drop();
    const last =
      r.output
        .trim()
        .split('\n')
        .filter((l) => /error|fail/i.test(l))
        .pop() ??
      r.output.trim().split('\n').pop() ??
      '';
    throw new JetprofError(
      'TOOL_FAILED',
      r.code === 0
        ? `trtexec exited 0 on ${o.onnx} but wrote no engine (its last line: ${last.slice(0, 200)})`
        : `trtexec failed on ${o.onnx} (exit code ${r.code}): ${last.slice(0, 200)}`,
      { exitCode: r.code || 1 },
    );
  }
  staging.commit([basename(o.out)]);
  const env = baseEnv();
  const sidecar: EngineSidecar = {
    schema: 'jetprof.engine/1',
    engine: o.out,
    onnx: { path: o.onnx, sha256: sha256File(o.onnx) },
    ...(trtexecVersion(r.output) ? { tensorrt: trtexecVersion(r.output) } : {}),
    precision: o.precision,
    batch,
    ...(o.workspaceMb ? { workspaceMb: o.workspaceMb } : {}),
    ...(o.calib ? { calibrationCache: o.calib } : {}),
    device: { model: env.jetson?.model, l4t: env.jetson?.l4t, cpu: env.cpu },
    trtexec: [trtexec, ...trtexecArgv(o, o.out, memPool, shapes)],
    builtAt: new Date().toISOString(),
    buildSeconds: (Date.now() - t0) / 1000,
  };
  writeOutput(sidecarPath(o.out), `${JSON.stringify(sidecar, null, 2)}\n`);
  return sidecar;
}
