/**
 * Stand-ins for the tools only a board has, as executables a command line finds where the board's would be: nvprof
 * (which cannot run an application without a GPU) and trtexec (which needs TensorRT). trtexec's stand-in writes an
 * engine of the CPU ABI library (test/native/cpu_engine_abi.c, see board.ts) for the ONNX it is given.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, TSX_IMPORT } from './fixtures.ts';

/**
 * nvprof: runs the application as its child and, like nsys 2022.4, does not end it on a SIGTERM of its own; then
 * writes a summary as nvprof does on a board. Its path, in `dir`.
 */
export function nvprofStandIn(dir: string): string {
  const path = join(dir, 'nvprof-stand-in');
  writeFileSync(
    path,
    `#!/bin/bash
trap 'echo "nvprof stand-in: SIGTERM ignored" >&2' TERM
while [ $# -gt 0 ]; do case "$1" in --log-file) log=$2; shift 2;; --unified-memory-profiling|--metrics) shift 2;; --*) shift;; *) break;; esac; done
"$@"
code=$?
# what nvprof writes on a board once the application has ended: its summary
{ echo "==1== Profiling application: $*"; echo "==1== Profiling result:"
  echo "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"
  echo " GPU activities:  100.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  kernel"; } > "$log"
exit $code
`,
    { mode: 0o755 },
  );
  return path;
}

/** What trtexec's stand-in builds: how long a run takes on the "GPU", and the frames whose outputs it replays. */
export interface TrtexecStandInOptions {
  gpuMs: [number, number];
  /** ONNX Runtime's head outputs on these frames, recorded at build time (else the engine finds no boxes). */
  replay?: { video: string; frames: number; frameSize?: [number, number]; out: string };
  /** The TensorRT version it claims (default 8.2.1, JetPack 4.6's). */
  tensorrt?: string;
}

/** trtexec: `--help`, and `--onnx=M --saveEngine=E [--fp16]...` writing a stand-in engine. Its path, in `dir`. */
export function trtexecStandIn(dir: string, o: TrtexecStandInOptions): string {
  const path = join(dir, 'trtexec');
  const settings = JSON.stringify({ ...o, tensorrt: o.tensorrt ?? '8.2.1' });
  writeFileSync(
    path,
    `#!/bin/sh\nJETPROF_TRTEXEC_STANDIN='${settings.replace(/'/g, `'\\''`)}' exec "${process.execPath}" ${TSX_IMPORT} "${join(ROOT, 'test/helpers/trtexec-standin.ts')}" "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}
