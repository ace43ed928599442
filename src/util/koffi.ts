/**
 * koffi, the FFI through which jetprof calls native libraries (NVTX, the TensorRT shim), loaded once with the settings
 * those calls need. koffi takes settings only before its first library loads, so every caller takes koffi from here.
 *
 * The stack of an async call: a TensorRT engine is deserialized and run through koffi's async calls
 * (backends/tensorrt.ts), which run on a stack koffi allocates, 128 KiB unless told. On a board that call is where
 * CUDA initializes and where TensorRT loads cuBLAS and cuDNN, their static initializers running on that stack; a
 * thread gets 8 MiB from glibc. Too small a stack there is a SIGSEGV on the board only, so the async stack gets 8 MiB
 * too (address space: koffi keeps up to 8 such stacks, and only the pages a call touches take memory). The board
 * stand-in's `stack-kib` line (test/native/cpu_engine_abi.c) checks that an open may use 1 MiB of it.
 */
import { createRequire } from 'node:module';

type Koffi = typeof import('koffi');

const ASYNC_STACK_BYTES = 8 * 1024 * 1024;

let koffi: Koffi | undefined;

/** koffi with jetprof's settings; throws as require does when koffi is not installed. */
export function loadKoffi(): Koffi {
  if (koffi) return koffi;
  const k = createRequire(import.meta.url)('koffi') as Koffi;
  k.config({ ...k.config(), async_stack_size: ASYNC_STACK_BYTES });
  koffi = k;
  return k;
}
