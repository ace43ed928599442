/**
 * NVTX ranges from Node: libnvToolsExt.so.1 (NVTX v2 C API) called through koffi.
 * JetPack ships it in /usr/local/cuda/lib64; Debian in libnvtoolsext1 (non-free). Without the library, or with
 * NVTX disabled, every call is a no-op. With no profiler attached the library's calls return at once (tens of ns).
 */
import { messageOf } from '../util/errors.ts';
import { loadKoffi } from '../util/koffi.ts';

export interface Nvtx {
  /** True when ranges reach libnvToolsExt. */
  readonly enabled: boolean;
  /** Library path that was loaded, or why none was. */
  readonly detail: string;
  push(name: string): void;
  pop(): void;
  /**
   * A range that need not nest (NVTX start/end): the pipelined loop's stages overlap on one thread, where
   * push/pop would pair the wrong ends. Returns the id `end` takes.
   */
  start(name: string): unknown;
  end(id: unknown): void;
}

const NVTX_LIBRARY_CANDIDATES = [
  'libnvToolsExt.so.1',
  '/usr/local/cuda/lib64/libnvToolsExt.so.1',
  '/usr/local/cuda/targets/aarch64-linux/lib/libnvToolsExt.so.1',
  '/usr/lib/x86_64-linux-gnu/libnvToolsExt.so.1',
  '/usr/lib/aarch64-linux-gnu/libnvToolsExt.so.1',
];

export function disabledNvtx(detail: string): Nvtx {
  return { enabled: false, detail, push() {}, pop() {}, start: () => 0, end() {} };
}

/** Loads NVTX from JETPROF_NVTX_LIBRARY or the usual places; a no-op Nvtx when none loads. */
export function loadNvtx(candidates: readonly string[] = NVTX_LIBRARY_CANDIDATES): Nvtx {
  const fromEnv = process.env.JETPROF_NVTX_LIBRARY;
  const paths = fromEnv ? [fromEnv] : candidates;
  let koffi: typeof import('koffi');
  try {
    koffi = loadKoffi();
  } catch (e) {
    return disabledNvtx(`koffi did not load (${messageOf(e).split('\n')[0]})`);
  }
  const errors: string[] = [];
  for (const path of paths) {
    try {
      const lib = koffi.load(path);
      const push = lib.func('int nvtxRangePushA(const char *message)');
      const pop = lib.func('int nvtxRangePop()');
      const start = lib.func('uint64_t nvtxRangeStartA(const char *message)');
      const end = lib.func('void nvtxRangeEnd(uint64_t id)');
      return {
        enabled: true,
        detail: path,
        push(name: string) {
          push(name);
        },
        pop() {
          pop();
        },
        start(name: string) {
          return start(name);
        },
        end(id: unknown) {
          end(id);
        },
      };
    } catch (e) {
      errors.push(`${path}: ${(e as Error).message}`);
    }
  }
  return disabledNvtx(`libnvToolsExt not found (${errors.length} places tried)`);
}

/**
 * NVTX range names: warm-up frames get `warmup-` names of their own, so that a profiler's instance counts of
 * `frame`, `read`, ... `write` equal the frames the FPS figures measure.
 */
export function rangeName(name: RangeKind, index: number, warmupFrames: number): RangeName {
  return warmRange(name, index < warmupFrames);
}

/**
 * The loop's NVTX range names: a frame's stages, its stream (several streams) and its batch (batches of several). The
 * profile's tables, `jetprof profile`'s checks and the tests read them by these names.
 */
export type RangeKind =
  | 'frame'
  | 'read'
  | 'preprocess'
  | 'inference'
  | 'postprocess'
  | 'write'
  | 'encoder-wait'
  | `stream-${number}`
  | `batch streams ${string}`;

/** Every range name a loop opens: a kind, its warm-up twin, and the read that only finds the end of a stream. */
export type RangeName = RangeKind | `warmup-${RangeKind}` | 'end-of-stream';

/** The one warm-up rule of the ranges: a warm-up frame's (or an all-warm-up batch's) range is named `warmup-<name>`. */
export const warmRange = (name: RangeKind, warmup: boolean): RangeName => (warmup ? (`warmup-${name}` as const) : name);

/** How a loop opens and closes NVTX ranges: nested push/pop (sequential loop) or start/end handles (overlapping frames). */
export interface RangeOps {
  open(name: RangeName): unknown;
  close(range: unknown): void;
}

/** push/pop: a range closes the innermost open one (the sequential loop nests them). */
export const pushPopRanges = (nvtx: Nvtx): RangeOps => ({ open: (n) => nvtx.push(n), close: () => nvtx.pop() });

/** start/end: ranges of different frames overlap (the pipelined loop). */
export const startEndRanges = (nvtx: Nvtx): RangeOps => ({ open: (n) => nvtx.start(n), close: (r) => nvtx.end(r) });
