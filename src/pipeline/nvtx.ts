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
