/**
 * `<engine>.json` beside every engine `jetprof build-engine` writes: which TensorRT built it, from which ONNX, with
 * which flags, on which device. `infer --backend trt` reads it to warn about engines from another TensorRT version
 * and to find the ONNX (and so the YOLO metadata) when --model is not given.
 */
import { readFileSync } from 'node:fs';

export interface EngineSidecar {
  schema: 'jetprof.engine/1';
  engine: string;
  onnx: { path: string; sha256: string };
  /** e.g. "8.6.1", from trtexec's banner. */
  tensorrt?: string;
  precision: 'fp32' | 'fp16' | 'int8';
  /** Images per run (build-engine --batch); absent in sidecars written before batches: 1. */
  batch?: number;
  workspaceMb?: number;
  calibrationCache?: string;
  device?: { model?: string; l4t?: string; cpu?: string };
  trtexec: string[];
  builtAt: string;
  buildSeconds: number;
}

export function sidecarPath(enginePath: string): string {
  return `${enginePath}.json`;
}

export function readEngineSidecar(enginePath: string): EngineSidecar | undefined {
  try {
    const v = JSON.parse(readFileSync(sidecarPath(enginePath), 'utf8')) as EngineSidecar;
    return v.schema === 'jetprof.engine/1' ? v : undefined;
  } catch {
    return undefined;
  }
}
