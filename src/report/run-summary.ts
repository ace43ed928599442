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
  LAB_TABLE_HEADER,
  labTableRow,
  latencyLine,
  modelTypeName,
  streamHeaders,
  streamTableRows,
} from './run-lines.ts';
import { stageTable } from './run-rows.ts';

/** A short human summary for stderr: the lab row, the per-stage table, and where the gap between the two FPS goes. */
export function formatSummary(r: RunResult): string {
  const lines: string[] = [];
  const s = r.setup;
  const loop = s.loop === 'pipelined' ? `pipelined loop, ${s.inFlight} frames in flight` : 'sequential loop';
  lines.push(
    `${r.setup.label}: ${BACKENDS[r.backend].title} (${r.backendDetail}, ${s.precision}, on ${s.device}, ${loop}${s.profiler !== 'none' ? `, under ${s.profiler}` : ''}), ${r.frames} frames measured after ${r.warmupFrames} warm-up${r.interrupted ? ' (interrupted)' : ''}`,
  );
  lines.push('');
  lines.push(LAB_TABLE_HEADER);
  lines.push(labTableRow(r));
  lines.push('');
  // the stage table as the reports draw it (report-text.ts stageHeaders/stageRows: one renderer)
  const table = stageTable([r], modelTypeName(r));
  const headers = stageHeaders(table);
  lines.push(`| ${headers.join(' | ')} |`, `|${' --- |'.repeat(headers.length)}`);
  for (const row of stageRows(table)) lines.push(`| ${row.join(' | ')} |`);
  lines.push('');
  if (s.loop === 'sequential') {
    // the same rounded shares as the table, so the sentence adds up to what the table says
    const others = roundedShares(table.rows)
      .map(({ row, pct }) => ({ name: row.stage, pct }))
      .filter((x) => x.name !== 'inference');
    lines.push(
      `Not inference: ${sumOf(others.map((x) => x.pct)).toFixed(1)}% of the wall time (${others.map((x) => `${x.name} ${x.pct.toFixed(1)}%`).join(' + ')})${r.interval ? ': the time besides the model (with --interval, end-to-end FPS counts every frame and inference FPS only those the model ran on, so end-to-end can be the higher)' : ': why end-to-end FPS is below inference FPS'}.`,
    );
  } else {
    const notInference = notInferenceShare(r.stages.inference.totalMs, r.wallMs);
    lines.push(
      `Stages overlap in the pipelined loop: busy times add up to more than the ${table.wallMsPerFrame.toFixed(2)} ms of wall time per frame. The model was not running ${(notInference * 100).toFixed(1)}% of the wall time (end-to-end FPS is ${((1 - notInference) * 100).toFixed(1)}% of inference FPS; compare with --pipeline off).`,
    );
  }
  if (r.streams?.length) {
    lines.push('');
    const b = r.batches;
    const batchLine =
      (r.batch ?? 1) > 1 && b
        ? ` Inference ${b.perBatchMs.mean.toFixed(2)} ms per batch (p50 ${b.perBatchMs.p50.toFixed(2)}, p99 ${b.perBatchMs.p99.toFixed(2)}; ${b.count} batches of ${b.meanImages.toFixed(2)} frames on average), ${b.perFrameMs.toFixed(2)} ms per frame: a frame's preprocess and inference stages hold its share of its batch's.`
        : '';
    lines.push(
      `${r.streams.length} stream${r.streams.length === 1 ? '' : 's'} ${(r.batch ?? 1) > 1 ? `in batches of ${r.batch} (a frame from each of up to ${r.batch} streams per run)` : 'taking turns (batch 1)'}: aggregate ${(r.aggregateFps ?? r.endToEndFps).toFixed(2)} FPS (all frames over the wall time).${batchLine} Per stream:`,
    );
    const verdict = droppedVerdict(r.streams, r.setup.realtime);
    if (verdict) lines.push(verdict);
    const paced = !!r.setup.realtime;
    lines.push(`| ${streamHeaders(paced).join(' | ')} |`, `|${' --- |'.repeat(streamHeaders(paced).length)}`);
    for (const row of streamTableRows(r.streams, paced)) lines.push(`| ${row.join(' | ')} |`);
  }
  const line = intervalLine(r);
  if (line) lines.push('', line);
  const latency = latencyLine(r);
  if (latency) lines.push('', latency);
  const busy = r.machineLoad && busyMachineSentence(r.machineLoad);
  if (r.modelAlone)
    lines.push(
      '',
      modelAloneLine(r.modelAlone, loopInferenceMs(r), { wroteVideo: r.setup.write !== false, busyMachine: !!busy }),
    );
  if (busy) lines.push('', `This run was ${busy}.`);
  const pp = r.postprocess;
  if (pp)
    lines.push(
      `Postprocess: draw ${pp.draw.meanMs.toFixed(2)} ms of it per frame; ${pp.maxCandidatesSeen > 0 ? `at most ${pp.maxCandidatesSeen} candidate${pp.maxCandidatesSeen === 1 ? '' : 's'} in a frame` : 'no candidate above --conf in any frame'}.`,
    );
  lines.push(
    `Model load ${r.modelLoadMs.toFixed(0)} ms, first frame ${r.firstFrameMs.toFixed(1)} ms (both excluded). Detections: ${r.detections.total}.`,
  );
  return lines.join('\n');
}
