/**
 * infer's console summary of a run: the lab row, the stage table as the reports draw it, where the gap between the
 * two FPS goes, the streams, latency, the model alone, and what a run leaves out.
 */
import { BACKENDS } from '../backends/types.ts';
import { modelAloneLine, notInferenceShare } from '../pipeline/figures.ts';
import { loopInferenceMs, type RunResult } from '../pipeline/run-result.ts';
import { busyMachineSentence } from '../platform/machine-load.ts';
import { sumOf } from '../util/stats.ts';
import { roundedShares, stageHeaders, stageRows } from './report-text.ts';
import {
  droppedVerdict,
  intervalLine,
  LAB_HEADERS,
  labTableRow,
  latencyLine,
  modelTypeName,
  streamAlign,
  streamHeaders,
  streamTableRows,
} from './run-lines.ts';
import { type Block, right } from './blocks.ts';
import { markdownOf } from './markdown.ts';
import { stageTable } from './run-rows.ts';

/**
 * infer's summary as blocks: the run in one line, the lab row, the per-stage table, where the gap between the two FPS
 * goes, the streams, and what else the run says.
 */
function runSummaryBlocks(r: RunResult): Block[] {
  const blocks: Block[] = [];
  const say = (...texts: (string | undefined | false)[]) => {
    for (const text of texts) if (text) blocks.push({ kind: 'paragraph', text });
  };
  const s = r.setup;
  const loop = s.loop === 'pipelined' ? `pipelined loop, ${s.inFlight} frames in flight` : 'sequential loop';
  say(
    `${r.setup.label}: ${BACKENDS[r.backend].title} (${r.backendDetail}, ${s.precision}, on ${s.device}, ${loop}${s.profiler !== 'none' ? `, under ${s.profiler}` : ''}), ${r.frames} frames measured after ${r.warmupFrames} warm-up${r.interrupted ? ' (interrupted)' : ''}`,
  );
  blocks.push({ kind: 'table', headers: LAB_HEADERS, rows: [labTableRow(r)], align: right(4, [0, 1]) });
  // the stage table as the reports draw it (report-text.ts stageHeaders/stageRows)
  const table = stageTable([r], modelTypeName(r));
  const headers = stageHeaders(table);
  blocks.push({ kind: 'table', headers, rows: stageRows(table), align: right(headers.length) });
  if (s.loop === 'sequential') {
    // the same rounded shares as the table, so the sentence adds up to what the table says
    const others = roundedShares(table.rows)
      .map(({ row, pct }) => ({ name: row.stage, pct }))
      .filter((x) => x.name !== 'inference');
    say(
      `Not inference: ${sumOf(others.map((x) => x.pct)).toFixed(1)}% of the wall time (${others.map((x) => `${x.name} ${x.pct.toFixed(1)}%`).join(' + ')})${r.interval ? ': the time besides the model (with --interval, end-to-end FPS counts every frame and inference FPS only those the model ran on, so end-to-end can be the higher)' : ': why end-to-end FPS is below inference FPS'}.`,
    );
  } else {
    const notInference = notInferenceShare(r.stages.inference.totalMs, r.wallMs);
    say(
      `Stages overlap in the pipelined loop: busy times add up to more than the ${table.wallMsPerFrame.toFixed(2)} ms of wall time per frame. The model was not running ${(notInference * 100).toFixed(1)}% of the wall time (end-to-end FPS is ${((1 - notInference) * 100).toFixed(1)}% of inference FPS; compare with --pipeline off).`,
    );
  }
  if (r.streams?.length) {
    const b = r.batches;
    const batchLine =
      (r.batch ?? 1) > 1 && b
        ? ` Inference ${b.perBatchMs.mean.toFixed(2)} ms per batch (p50 ${b.perBatchMs.p50.toFixed(2)}, p99 ${b.perBatchMs.p99.toFixed(2)}; ${b.count} batches of ${b.meanImages.toFixed(2)} frames on average), ${b.perFrameMs.toFixed(2)} ms per frame: a frame's preprocess and inference stages hold its share of its batch's.`
        : '';
    say(
      `${r.streams.length} stream${r.streams.length === 1 ? '' : 's'} ${(r.batch ?? 1) > 1 ? `in batches of ${r.batch} (a frame from each of up to ${r.batch} streams per run)` : 'taking turns (batch 1)'}: aggregate ${(r.aggregateFps ?? r.endToEndFps).toFixed(2)} FPS (all frames over the wall time).${batchLine} Per stream:`,
      droppedVerdict(r.streams, r.setup.realtime),
    );
    const paced = !!r.setup.realtime;
    const rows = streamTableRows(r.streams, paced);
    blocks.push({ kind: 'table', headers: streamHeaders(paced), rows, align: streamAlign(paced) });
  }
  const busy = r.machineLoad && busyMachineSentence(r.machineLoad);
  const pp = r.postprocess;
  say(
    intervalLine(r),
    latencyLine(r),
    r.modelAlone &&
      modelAloneLine(r.modelAlone, loopInferenceMs(r), { wroteVideo: r.setup.write !== false, busyMachine: !!busy }),
    busy && `This run was ${busy}.`,
    pp &&
      `Postprocess: draw ${pp.draw.meanMs.toFixed(2)} ms of it per frame; ${pp.maxCandidatesSeen > 0 ? `at most ${pp.maxCandidatesSeen} candidate${pp.maxCandidatesSeen === 1 ? '' : 's'} in a frame` : 'no candidate above --conf in any frame'}.`,
    `Model load ${r.modelLoadMs.toFixed(0)} ms, first frame ${r.firstFrameMs.toFixed(1)} ms (both excluded). Detections: ${r.detections.total}.`,
  );
  return blocks;
}

/** The summary for stderr, as Markdown (markdown.ts: the reports' own renderer). */
export const formatSummary = (r: RunResult): string => markdownOf(runSummaryBlocks(r)).trimEnd();
