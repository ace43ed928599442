/**
 * `npm run bench`: jetprof against its peers on this machine, written to bench/results.json and printed as a table.
 *
 *   1. inference: onnxruntime-node on jetprof's ONNX vs OpenCV DNN readNetFromDarknet (same cfg + seeded weights,
 *      same thread count): ms per frame, ratio, achieved GFLOP/s against the machine's estimated peak
 *   2. end to end on videos/vtest.avi at 960x540 (as the lab): the default loop (--pipeline auto) against pipelined and
 *      sequential, alternating, on the demo and the dense model; the bare runtime beside the inference stage
 *   3. the Python peer (bench/peer_lab.py on Debian's python3-opencv), end to end, vs jetprof
 *   4. postprocess (decode + NMS) on a busy frame
 *   5. parser throughput on a generated 200 MB nvprof log vs a plain read, and its peak RSS
 *   6. NVTX cost per range; start-up time of `jetprof parse --help`
 *   7. a model that fires everywhere: postprocess and drawing on real frames, end to end vs the demo model (medians of
 *      3 alternating rounds), the Python peer
 *   8. jetprof parse --trace-rows all --out on a 300 MB trace: peak RSS of the whole command
 *   9. many streams: aggregate FPS of 1, 2, 4 streams at batch 1 and batch N; jetprof capacity on vtest.avi at 10 FPS
 *  10. boards (--only boards): the board stand-in at three boards' TensorRT figures (Nano as in the lab, Nano FP16,
 *      Xavier NX), sequential vs pipelined, alternating: inference and end-to-end FPS, and where the CPU is the limit
 *  11. writers (--only writers): the sequential loop writing with FFmpeg, with GStreamer and not at all, rotating: the
 *      inference stage over the model alone, the write stage against what writing costs end to end
 *  12. ortpeer (--only ortpeer): jetprof against the lab's script structure in Python on the same runtime (Python's
 *      onnxruntime on jetprof's .onnx, bench/peer_ort.py), sequential, demo and dense model, alternating
 *  13. capacity (--only capacity): the same jetprof capacity search twice in a row, then twice beside two processes that
 *      each keep a core busy: the answers, whether they agree, and whether one that differs says the machine was busy
 *  14. writebehind (--only writebehind): the sequential loop writing a model's 300 boxes a frame against the Python
 *      peer on the same weights, alternating: end-to-end over the peer's, and the inference stage over the model alone
 *  15. nanocpu (--only nanocpu): the board stand-in at the Nano FP16 figure, pipelined, writing: no boxes and every
 *      cell firing, preprocessing on the CPU and in the graph (export --frame-input); e2e / inference, the main thread's
 *      CPU a frame and its Nano projection (--board-factor F, default 5), the process's CPU without the encoder; where a
 *      cgroup v1 cpu group can be made, the CPU cases again with the main thread held to 1/F of a core after warm-up;
 *      and vtest.avi at --frame-size 960x540 resized by OpenCV on libuv's pool (FFmpeg) or by GStreamer's pipeline
 *
 * Options: --frames N (default: the whole video), --threads N (default: the number of cores), --only 1,2,...
 * Timings are wall-clock on a shared machine: run it twice before believing a difference under 10%.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { disableOrtTelemetry } from '../src/backends/onnx.ts';
import { ROOT, opt, ONLY, results, table } from './common.ts';
import { benchInference } from './sections/inference.ts';
import { benchEndToEnd } from './sections/end-to-end.ts';
import { benchPython } from './sections/python-peer.ts';
import { benchPostprocess } from './sections/postprocess.ts';
import { benchParser } from './sections/parser.ts';
import { benchNvtxAndStartup } from './sections/nvtx-startup.ts';
import { benchDense } from './sections/dense.ts';
import { benchParseAll } from './sections/parse-all.ts';
import { benchStreams } from './sections/streams.ts';
import { benchBoards } from './sections/boards.ts';
import { benchWriters } from './sections/writers.ts';
import { benchOrtPeer } from './sections/ort-peer.ts';
import { benchCapacityStability } from './sections/capacity-stability.ts';
import { benchWriteBehind } from './sections/write-behind.ts';
import { benchNanoCpu } from './sections/nano-cpu.ts';

// every ONNX Runtime here, jetprof's and the Python peers', runs with its telemetry client off, as jetprof runs it:
// the peers inherit the variable
disableOrtTelemetry();

let pipe: Record<string, any> | undefined;
if (ONLY.has(1)) await benchInference();
if (ONLY.has(2)) pipe = benchEndToEnd();
if (ONLY.has(3)) benchPython(pipe);
if (ONLY.has(4)) benchPostprocess();
if (ONLY.has(5)) await benchParser();
if (ONLY.has(6)) benchNvtxAndStartup();
if (ONLY.has(7)) await benchDense();
if (ONLY.has(8)) await benchParseAll();
if (ONLY.has(9)) benchStreams();
if (ONLY.has(10)) benchBoards();
if (ONLY.has(11)) benchWriters();
if (ONLY.has(12)) benchOrtPeer();
if (ONLY.has(13)) benchCapacityStability();
if (ONLY.has(14)) benchWriteBehind();
if (ONLY.has(15)) await benchNanoCpu();

results.table = table.map(([what, value, target, verdict, sectionNo]) => ({
  section: sectionNo,
  what,
  value,
  target,
  verdict,
}));
const outPath = join(ROOT, 'bench', 'results.json');
// --only: the sections not run keep their last results (and their table rows).
const previous =
  opt('--only') && existsSync(outPath)
    ? (JSON.parse(readFileSync(outPath, 'utf8')) as Record<string, unknown>)
    : undefined;
const merged = previous
  ? {
      ...previous,
      ...results,
      table: [
        ...((previous.table as { section?: number }[]) ?? []).filter(
          (r) => r.section !== undefined && !ONLY.has(r.section),
        ),
        ...(results.table as unknown[]),
      ],
    }
  : results;
writeFileSync(outPath, `${JSON.stringify(merged, null, 2)}\n`);
const w = ([0, 1, 2] as const).map((i) => Math.max(...table.map((r) => r[i].length), 6));
process.stdout.write(`${['measure'.padEnd(w[0]), 'value'.padEnd(w[1]), 'target'.padEnd(w[2]), ''].join(' | ')}\n`);
for (const r of table)
  process.stdout.write(`${r[0].padEnd(w[0])} | ${r[1].padEnd(w[1])} | ${r[2].padEnd(w[2])} | ${r[3]}\n`);
process.stdout.write(`\nwritten to ${outPath}\n`);
process.exit(0);
