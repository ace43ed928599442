/**
 * The koffi declarations of native/jetprof_trt.h, and where the library is found. One place knows the C ABI;
 * tensorrt.ts builds the backend on it. The library is native/build/libjetprof_trt.so (npm run build:trt), or the
 * file named by JETPROF_TRT_SHIM (the tests point it at test/native's CPU implementation of the same ABI).
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JetprofError, messageOf } from '../util/errors.ts';
import { loadKoffi } from '../util/koffi.ts';

const ABI_VERSION = 1;
export const ERR_LEN = 1024;

export const STATUS = {
  OK: 0,
  ARGUMENT: 1,
  FILE: 2,
  DESERIALIZE: 3,
  PLUGIN: 4,
  CUDA: 5,
  UNSUPPORTED: 6,
  INFERENCE: 7,
} as const;

/** TensorRT's nvinfer1::DataType numbering. */
export const DTYPE_NAMES = [
  'float32',
  'float16',
  'int8',
  'int32',
  'bool',
  'uint8',
  'fp8',
  'bfloat16',
  'int64',
  'int4',
] as const;

export interface TensorInfo {
  name: string;
  isInput: boolean;
  dtype: number;
  dims: number[];
  bytes: number;
}

export interface Timing {
  h2d_ms: number;
  compute_ms: number;
  d2h_ms: number;
  wall_ms: number;
}

type AsyncFn = { async: (...args: unknown[]) => void };
type Fn = ((...args: unknown[]) => unknown) & AsyncFn;

export interface TrtAbi {
  path: string;
  abiVersion(): number;
  runtimeVersion(): number;
  compiledVersion(): number;
  setLogSeverity(severity: number): void;
  loadPlugin: Fn;
  engineOpen: Fn;
  tensorCount: Fn;
  tensorInfo: Fn;
  setInput: Fn;
  infer: Fn;
  getOutput: Fn;
  close: Fn;
  /** Decodes a jp_tensor_info object koffi returned. */
  readTensorInfo(raw: unknown): TensorInfo;
}

/** The package root: the folder above src/ (or dist/src/) holding package.json. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

function defaultShimPath(): string {
  return process.env.JETPROF_TRT_SHIM || join(packageRoot(), 'native', 'build', 'libjetprof_trt.so');
}

/** Folders where JetPack and TensorRT tar packages put libnvinfer. */
function libnvinferDirs(): string[] {
  const arch = `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`;
  const root = process.env.TENSORRT_ROOT;
  return [
    ...(root ? [join(root, 'lib'), join(root, 'lib64')] : []),
    ...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean),
    `/usr/lib/${arch}`,
    '/usr/local/tensorrt/lib',
    '/usr/local/cuda/lib64',
  ];
}

function findLibnvinfer(): string | undefined {
  for (const dir of libnvinferDirs()) {
    try {
      const hit = readdirSync(dir).find((f) => /^libnvinfer\.so(\.\d+)*$/.test(f));
      if (hit) return join(dir, hit);
    } catch {
      /* no such folder */
    }
  }
  return undefined;
}

const RUNTIME_MISSING = 'TensorRT runtime (libnvinfer) not found: run on JetPack or set TENSORRT_ROOT';

/** What makes TensorRT usable from jetprof, in order. */
const RUNTIME_FIX =
  "on a Jetson TensorRT comes with JetPack; then npm run build:trt builds jetprof's shim (native/build/libjetprof_trt.so) against it";

/** 8601 -> 8.6.1 (TensorRT 8.x), 100300 -> 10.3.0 (TensorRT 10 and later). */
export function formatTrtVersion(v: number): string {
  if (v >= 100000) return `${Math.floor(v / 10000)}.${Math.floor(v / 100) % 100}.${v % 100}`;
  return `${Math.floor(v / 1000)}.${Math.floor(v / 100) % 10}.${v % 100}`;
}

let cached: TrtAbi | undefined;

export function loadTrtAbi(path = defaultShimPath()): TrtAbi {
  if (cached?.path === path) return cached;
  const koffi = loadKoffi();
  const abi = bindAbi(koffi, openShim(koffi, path), path);
  const abiVersion = abi.abiVersion();
  if (abiVersion !== ABI_VERSION) {
    throw new JetprofError(
      'TENSORRT_UNAVAILABLE',
      `${path} speaks ABI version ${abiVersion}, this jetprof speaks ${ABI_VERSION}`,
      { suggestion: 'rebuild it with npm run build:trt' },
    );
  }
  cached = abi;
  return abi;
}

type Koffi = ReturnType<typeof loadKoffi>;

/** The shim loaded, or why not in one line: not built, not where JETPROF_TRT_SHIM says, TensorRT itself missing. */
function openShim(koffi: Koffi, path: string): ReturnType<Koffi['load']> {
  if (!existsSync(path)) {
    if (process.env.JETPROF_TRT_SHIM) {
      throw new JetprofError('TENSORRT_UNAVAILABLE', `${path} (from JETPROF_TRT_SHIM) does not exist`, {
        suggestion: 'unset JETPROF_TRT_SHIM or point it at a built libjetprof_trt.so',
      });
    }
    if (!findLibnvinfer()) throw new JetprofError('TENSORRT_UNAVAILABLE', RUNTIME_MISSING, { suggestion: RUNTIME_FIX });
    throw new JetprofError('TENSORRT_UNAVAILABLE', `TensorRT shim not built (${path})`, {
      suggestion: 'run npm run build:trt',
    });
  }
  try {
    return koffi.load(path);
  } catch (e) {
    const why = messageOf(e).split('\n')[0];
    if (/libnvinfer|libcudart|libnvinfer_plugin/.test(why))
      throw new JetprofError('TENSORRT_UNAVAILABLE', `${RUNTIME_MISSING} (${why})`, { suggestion: RUNTIME_FIX });
    throw new JetprofError('TENSORRT_UNAVAILABLE', `${path} could not be loaded (${why})`, {
      suggestion: 'rebuild it with npm run build:trt',
    });
  }
}

/** The shim's C functions and structs (native/jetprof_trt.h) as JavaScript functions. */
function bindAbi(koffi: Koffi, lib: ReturnType<Koffi['load']>, path: string): TrtAbi {
  const info = koffi.struct('jp_tensor_info', {
    name: koffi.array('char', 256, 'String'),
    is_input: 'int32_t',
    dtype: 'int32_t',
    nb_dims: 'int32_t',
    dims: koffi.array('int64_t', 8, 'Array'),
    bytes: 'int64_t',
  });
  const timing = koffi.struct('jp_timing', {
    h2d_ms: 'double',
    compute_ms: 'double',
    d2h_ms: 'double',
    wall_ms: 'double',
  });
  const engine = koffi.opaque('jp_engine');
  const fn = (sig: string) => lib.func(sig) as unknown as Fn;
  return {
    path,
    abiVersion: fn('int32_t jp_abi_version(void)') as unknown as () => number,
    runtimeVersion: fn('int32_t jp_runtime_version(void)') as unknown as () => number,
    compiledVersion: fn('int32_t jp_compiled_version(void)') as unknown as () => number,
    setLogSeverity: fn('void jp_set_log_severity(int32_t severity)') as unknown as (s: number) => void,
    loadPlugin: fn('int32_t jp_load_plugin(const char *path, char *err, int32_t errLen)'),
    engineOpen: lib.func('jp_engine_open', 'int32_t', [
      'const char *',
      koffi.out(koffi.pointer(koffi.pointer(engine))),
      'char *',
      'int32_t',
    ]) as unknown as Fn,
    tensorCount: lib.func('jp_engine_tensor_count', 'int32_t', [koffi.pointer(engine)]) as unknown as Fn,
    tensorInfo: lib.func('jp_engine_tensor_info', 'int32_t', [
      koffi.pointer(engine),
      'int32_t',
      koffi.out(koffi.pointer(info)),
      'char *',
      'int32_t',
    ]) as unknown as Fn,
    setInput: lib.func('jp_engine_set_input', 'int32_t', [
      koffi.pointer(engine),
      'int32_t',
      'const void *',
      'int64_t',
      'char *',
      'int32_t',
    ]) as unknown as Fn,
    infer: lib.func('jp_engine_infer', 'int32_t', [
      koffi.pointer(engine),
      koffi.out(koffi.pointer(timing)),
      'char *',
      'int32_t',
    ]) as unknown as Fn,
    getOutput: lib.func('jp_engine_get_output', 'int32_t', [
      koffi.pointer(engine),
      'int32_t',
      'void *',
      'int64_t',
      'char *',
      'int32_t',
    ]) as unknown as Fn,
    close: lib.func('jp_engine_close', 'void', [koffi.pointer(engine)]) as unknown as Fn,
    readTensorInfo(raw: unknown): TensorInfo {
      const r = raw as {
        name: string;
        is_input: number;
        dtype: number;
        nb_dims: number;
        dims: (number | bigint)[];
        bytes: number | bigint;
      };
      return {
        name: r.name,
        isInput: r.is_input !== 0,
        dtype: r.dtype,
        dims: r.dims.slice(0, r.nb_dims).map(Number),
        bytes: Number(r.bytes),
      };
    },
  };
}

/** A C string out of a Buffer the library wrote into. */
export function cString(buf: Buffer): string {
  const end = buf.indexOf(0);
  return buf.toString('utf8', 0, end < 0 ? buf.length : end).trim();
}
