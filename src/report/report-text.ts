/**
 * The report's shared text: the captions, sentences, headers and rows that the Markdown, the CSV and the HTML all
 * print, so each figure is phrased once. Pure.
 */
import { cpuBound, roundedPercents, shareLabel } from '../pipeline/figures.ts';
import { droppedVerdict, LAB_HEADERS, streamTableRows } from './run-lines.ts';
import type { Spread } from '../util/stats.ts';
import { capacitySentence, type CapacityResult } from './capacity-format.ts';
import type { FpsRow, LabReport, SteadyState, StageRow, StageTable, Sweep } from './report-types.ts';
import { formatDependencyNs, formatNs } from './tables.ts';
export const f2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '');
const pct = (share: number) => `${(share * 100).toFixed(1)}%`;

export function speedupLine(s: LabReport['speedups'][number]): string {
  return `${s.faster} vs ${s.baseline}: ${s.inference.toFixed(1)}x inference, ${s.endToEnd.toFixed(1)}x end to end`;
}

export const stdCell = (s: Spread) => (s.n > 1 ? f2(s.std) : '');

/** "17.05" for one run (its spread is unknown), "17.05 ± 0.31 (3 runs)" for several. */
export function fpsCell(s: Spread): string {
  return s.n > 1 ? `${s.mean.toFixed(2)} ± ${s.std.toFixed(2)} (${s.n} runs)` : s.mean.toFixed(2);
}

/** Rows from more than one machine (an x86 run beside a typed-in Jetson row): the lab table says which is which. */
export const mixedDevices = (r: LabReport) => new Set(r.fps.map((x) => x.machine)).size > 1;

/** The lab's four columns, with a Device column after the first when rows come from more than one machine. */
export function labHeaders(r: LabReport): string[] {
  const headers = mixedDevices(r) ? [LAB_HEADERS[0], 'Device', ...LAB_HEADERS.slice(1)] : LAB_HEADERS;
  return anyPaced(r) ? [...headers, 'Dropped (kept up?)'] : headers;
}

/** Rows paced as cameras deliver (--realtime, live sources): the lab table then says what each dropped. */
const anyPaced = (r: LabReport) => r.fps.some((x) => x.drops);

/** "80.1% (no)", "0% (yes)": the share of delivered frames dropped, and whether the row kept up. */
export function dropsCell(d: { dropped: number; delivered: number } | undefined): string {
  if (!d) return '';
  if (d.dropped === 0) return '0% (yes)';
  return `${((d.dropped / Math.max(1, d.delivered)) * 100).toFixed(1)}% (no)`;
}

export function labRows(r: LabReport): string[][] {
  const device = (d: string) => (mixedDevices(r) ? [d] : []);
  const paced = (d: string) => (anyPaced(r) ? [d] : []);
  return [
    ...r.fps.map((x) => [
      x.modelType,
      ...device(x.machine),
      x.inputSize,
      fpsCell(x.inferenceFps),
      fpsCell(x.endToEndFps),
      ...paced(dropsCell(x.drops)),
    ]),
    ...r.failed.map((x) => [x.modelType, ...device(''), '', `failed (exit ${x.exitCode})`, 'failed', ...paced('')]),
    ...r.skipped.map((x) => [x.modelType, ...device(''), '', 'skipped', 'skipped', ...paced('')]),
  ];
}

/** "what --interval 2 buys: ... 2.10x end to end; what it costs: 91% of the boxes match". */
export function intervalTradeLine(t: LabReport['intervalTrades'][number]): string {
  const pct = (v: number) => `${(v * 100).toFixed(v > 0.99 && v < 1 ? 1 : 0)}%`;
  const cost =
    t.matchedShare !== undefined
      ? `${pct(t.matchedShare)} of the boxes match on the same frames`
      : `not known (${t.note})`;
  return `what --interval ${t.interval} buys: ${t.withInterval} at ${t.endToEndFps[0].toFixed(2)} end-to-end FPS against ${t.base} at interval 0 at ${t.endToEndFps[1].toFixed(2)} (${t.ratio.toFixed(2)}x); what it costs: ${cost}`;
}

export function notComparedLine(n: LabReport['notCompared'][number]): string {
  return `not compared: ${n.a} vs ${n.b}: ${n.reason}`;
}

export function failedSentence(x: LabReport['failed'][number]): string {
  return `${x.modelType} failed: exit code ${x.exitCode}${x.lastLine ? `; its last line: ${x.lastLine}` : ''}`;
}

const SETUP_HEADERS = [
  'Label',
  'Loop',
  'Profiler',
  'Provider',
  'Precision',
  'Device',
  'Model',
  'Video',
  'Frame size',
  'Frames in, out',
  'Frames',
  'Runs',
];

/** A typed-in row's cell for what --fps does not carry. */
const NOT_GIVEN = 'not given';

/**
 * What each row measured: every column that says something for at least one row (a table of typed-in rows alone
 * keeps label, loop, profiler, device and frame size, not nine empty columns); a typed-in row's other cells say
 * "not given" beside rows measured here.
 */
export function setupTable(r: LabReport): { headers: string[]; rows: string[][] } {
  const full = r.fps.map((x) =>
    x.typedIn
      ? [
          `${x.label} (typed in)`,
          x.setup.loop,
          x.setup.profiler,
          NOT_GIVEN,
          NOT_GIVEN,
          x.setup.device,
          NOT_GIVEN,
          NOT_GIVEN,
          x.setup.frameSize,
          NOT_GIVEN,
          NOT_GIVEN,
          NOT_GIVEN,
        ]
      : [
          x.label,
          x.setup.loop,
          x.setup.profiler,
          x.setup.executionProvider,
          x.setup.precision,
          x.setup.device,
          x.setup.model,
          x.setup.video,
          x.setup.frameSize,
          x.setup.pacing,
          x.setup.frames,
          String(x.runs),
        ],
  );
  const keep = SETUP_HEADERS.map((_, c) => full.some((row) => row[c] !== '' && row[c] !== NOT_GIVEN));
  return {
    headers: SETUP_HEADERS.filter((_, c) => keep[c]),
    rows: full.map((row) => row.filter((_, c) => keep[c])),
  };
}

/** Where the gap between the two FPS goes, for one row: parts that add up to the total as printed. */
/**
 * The stage that bounds end-to-end FPS when it is not inference: a fast model (an Orin-class GPU: a few ms a frame)
 * leaves the CPU stages setting the rate. Sequential: the longest stage per frame; pipelined: the busiest.
 */
function boundingStage(x: FpsRow): string {
  const ms =
    x.pipelined && x.busyMs
      ? x.busyMs
      : Object.fromEntries(x.wallShares.map((p) => [p.name, p.share * x.wallMsPerFrame]));
  const b = cpuBound(ms);
  return b
    ? ` CPU-bound: ${b.stage} ${b.ms.toFixed(1)} ms a frame${x.pipelined ? ' busy' : ''}, more than inference's ${b.inferenceMs.toFixed(1)} ms, sets the end-to-end rate.`
    : '';
}

export function gapSentence(x: FpsRow): string {
  if (x.typedIn) {
    return `${x.modelType} (typed in): ${(x.notInference * 100).toFixed(1)}% of the wall time is not inference, by 1 - end-to-end FPS / inference FPS; a run JSON (infer --json) would break it down by stage.`;
  }
  if (x.pipelined && x.busyMs) {
    const busy = Object.entries(x.busyMs)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ');
    return `${x.modelType}: the model was not running ${pct(x.notInference)} of the wall time. Stages overlap in the pipelined loop, so no share of wall is given per stage: busy ms per frame ${busy}, against ${x.wallMsPerFrame.toFixed(2)} ms of wall time per frame.${boundingStage(x)}`;
  }
  // Rounded once over the whole breakdown (as the stage table), then the parts that are not inference.
  const parts = roundedShares(x.wallShares)
    .map(({ row, pct }) => ({ name: row.name, pct }))
    .filter((p) => p.name !== 'inference');
  const total = parts.reduce((a, p) => a + p.pct, 0);
  const realtime = !!x.basis?.pacing.startsWith('realtime');
  const interval = x.streamSetup?.interval
    ? ` Its inference FPS is the model's rate over the frames it ran on (--interval ${x.streamSetup.interval}), its end-to-end FPS over every frame.`
    : '';
  return `${x.modelType}: ${total.toFixed(1)}% of the wall time is not inference = ${parts.map((p) => `${shareLabel(p.name, realtime, (x.drops?.dropped ?? 0) > 0)} ${p.pct.toFixed(1)}%`).join(' + ')} (sequential loop, ${x.frames} frames).${interval}${boundingStage(x)}`;
}

export function skippedSentence(x: LabReport['skipped'][number]): string {
  return `${x.modelType} skipped: ${x.reason}.${x.commands?.length ? ` To include it: ${x.commands.map((c) => `\`${c}\``).join(', then ')}` : ''}`;
}

function stageCells(t: StageTable, x: StageRow, sharePct: number | undefined): string[] {
  const name = x.partOf ? `  ${x.stage} (part of ${x.partOf})` : x.stage;
  const opt = (v: number | undefined) => (v === undefined ? '' : f2(v));
  const cells = [name, f2(x.meanMs), opt(x.minMs), f2(x.p50Ms), f2(x.p90Ms), f2(x.p99Ms), opt(x.maxMs)];
  return t.pipelined ? cells : [...cells, sharePct === undefined ? '' : `${sharePct.toFixed(1)}%`];
}

export function stageHeaders(t: StageTable): string[] {
  return t.pipelined
    ? ['Stage', 'busy mean', 'min', 'p50', 'p90', 'p99', 'max']
    : ['Stage', 'mean', 'min', 'p50', 'p90', 'p99', 'max', 'share of wall'];
}

/**
 * The rows that have a share of the wall time, each with its share in percent, rounded together (stages and loop
 * overhead) so the printed figures add up to 100.0%: the one rounding the stage table, its console sentence and the
 * report's gap sentence all print.
 */
export function roundedShares<T extends { share?: number }>(rows: readonly T[]): { row: T; pct: number }[] {
  const withShare = rows.filter((x) => x.share !== undefined);
  const pct = roundedPercents(withShare.map((x) => x.share!));
  return withShare.map((row, i) => ({ row, pct: pct[i] }));
}

/** Stage rows; the pipelined loop adds the wall time per frame the busy times overlap in. */
export function stageRows(t: StageTable): string[][] {
  const shares = new Map(roundedShares(t.rows).map(({ row, pct }) => [row, pct]));
  const rows = t.rows.map((x) => stageCells(t, x, shares.get(x)));
  if (t.pipelined) rows.push(['wall per frame', f2(t.wallMsPerFrame), '', '', '', '', '']);
  return rows;
}

export function stageCaption(t: StageTable): string {
  const runs = t.runs > 1 ? `, mean of ${t.runs} runs` : '';
  return t.pipelined
    ? `${t.modelType}: ms per frame, pipelined loop (stages overlap: busy times add up to more than the wall time per frame)${runs}`
    : `${t.modelType}: ms per frame, sequential loop (the shares add up to 100%${t.batch > 1 ? `; in batches of ${t.batch}, a frame's preprocess and inference are its share of its batch's` : ''})${runs}`;
}

export const ACCURACY_HEADERS = [
  'Model Type',
  'Boxes matched',
  'Mean IoU',
  'Only in reference / only here',
  'Score diff (mean / max)',
  'AP@[.5:.95]',
  'AP50',
];

/** Accuracy cells per row: agreement with the reference's boxes, and mAP when ground truth was given. */
export function accuracyRows(r: LabReport): string[][] {
  const ap = (v: number | undefined) => (v === undefined ? '' : v < 0 ? 'n/a' : v.toFixed(3));
  return r.accuracy.map((x) => {
    const a = x.agreement;
    const agreeCells = x.isReference
      ? ['reference', '', '', '']
      : a && a.matched + a.onlyRef + a.onlyOther === 0
        ? // nothing to match: no IoU, counts or score differences to print (zeros would read as measured)
          ['no boxes in either', '', '', '']
        : a
          ? [
              `${(a.matchedShare * 100).toFixed(2)}% (${a.matched})`,
              a.meanIou.toFixed(4),
              `${a.onlyRef} / ${a.onlyOther}`,
              `${a.meanAbsScoreDiff.toFixed(4)} / ${a.maxAbsScoreDiff.toFixed(4)}`,
            ]
          : [x.note ?? '', '', '', ''];
    return [x.modelType, ...agreeCells, ap(x.map?.ap), ap(x.map?.ap50)];
  });
}

export function accuracyCaption(r: LabReport): string {
  const ref = r.fps.find((x) => x.label === r.accuracyReference)?.modelType ?? r.accuracyReference ?? 'the reference';
  return `Do they find the same boxes? Each row against ${ref}, warm-up frames excluded: boxes matched per frame and class at IoU >= 0.5 (matched / (matched + only in one)); AP as pycocotools computes it, when ground truth was given.`;
}

export const BOARD_HEADERS = [
  'Model Type',
  'GPU load (mean)',
  'GPU clock (mean)',
  'EMC load',
  'CPU load',
  'Peak temp.',
  'Input power (mean)',
  'Energy per frame',
  'Samples',
];

/** tegrastats over the measured frames, per row (the board's input rail: VDD_IN or POM_5V_IN, else the sum of rails). */
export function boardRows(r: LabReport): string[][] {
  const f = (v: number | undefined, unit: string, d = 0) => (v === undefined ? '' : `${v.toFixed(d)} ${unit}`);
  return r.board.map((b) => [
    b.modelType,
    f(b.summary.meanGpuLoadPct, '%', 1),
    f(b.summary.meanGpuMhz, 'MHz'),
    f(b.summary.meanEmcLoadPct, '%', 1),
    f(b.summary.meanCpuLoadPct, '%', 1),
    f(b.summary.peakTempC, 'C', 1),
    f(b.summary.meanInputMw, 'mW'),
    f(b.summary.energyPerFrameMj, 'mJ', 1),
    String(b.summary.samples),
  ]);
}

/** A capacity result's caption: the answer, and how long the search took. */
export function capacityCaption(c: CapacityResult): string {
  const s = capacitySentence(c);
  return `${s.charAt(0).toUpperCase()}${s.slice(1)} (searched in ${c.seconds.toFixed(0)} s)`;
}

/** What "held" means, under every capacity table. */
export const CAPACITY_RULE =
  "A count of streams held when every stream kept at least 95% of the source frame rate, the frames dropped stayed within the search's tolerance (its answer names it; 1% by default) and the worst stream's p99 latency (arrival to boxes) was within the limit; in every run of the count (each its own `infer --streams N --realtime`); a count that held near the line was measured again before it counted.";

export function streamsCaption(m: LabReport['multiStream'][number]): string {
  const b = m.batches;
  const setup =
    m.batch > 1
      ? `${m.streams.length} streams in batches of ${m.batch}${b ? ` (inference ${b.perBatchMs.mean.toFixed(2)} ms per batch of ${b.meanImages.toFixed(2)} frames on average, ${b.perFrameMs.toFixed(2)} ms per frame)` : ''}`
      : m.streams.length === 1
        ? '1 stream, batch 1'
        : `${m.streams.length} streams taking turns, batch 1`;
  return `${m.modelType}: ${setup}: aggregate ${m.aggregateFps.toFixed(2)} FPS (all frames over the wall time); latency from a frame's ${m.realtime ? 'arrival' : 'read'} to its boxes`;
}

export function streamRows(m: LabReport['multiStream'][number]): string[][] {
  return streamTableRows(m.streams, !!m.realtime);
}

/** Above the per-stream table of a --realtime run: kept up, or how much was dropped. */
export function streamsVerdict(m: LabReport['multiStream'][number]): string | undefined {
  return droppedVerdict(m.streams, m.realtime);
}

export function defaultTitle(r: LabReport): string {
  const names = [...new Set(r.fps.map((x) => x.modelType.replace(/ \(.*$/, '')))];
  const skipped = r.skipped.map((x) => x.modelType);
  const failed = r.failed.map((x) => x.modelType);
  const ran = names.length
    ? names.join(' vs ')
    : r.runNotes.some((n) => n.includes('interrupted'))
      ? 'interrupted before a run was complete'
      : r.capacity.length && !r.profiles.length
        ? 'how many streams this machine holds'
        : 'no backend ran';
  const aside = [
    failed.length ? `${failed.join(', ')} failed` : '',
    skipped.length ? `${skipped.join(', ')} skipped` : '',
  ].filter(Boolean);
  return `YOLOv4-Tiny: ${ran}${aside.length ? ` (${aside.join('; ')})` : ''}`;
}

export const STEADY_HEADERS = ['Share of the rest', 'Critical path', 'Waiting time', 'Name'];

/** What the steady-state table leaves out and how its shares are counted. */
export function steadyStateCaption(s: SteadyState): string {
  // sums of the table's rows, shown at the table's own precision (microseconds), not at the nanoseconds they add up to
  const us = (ns: number) => formatDependencyNs(Math.round(ns / 1000) * 1000);
  const occasional = s.occasional ?? [];
  const named = occasional
    .slice(0, 5)
    .map((o) => `${o.name} ${o.calls}`)
    .join(', ');
  const rare = occasional.length
    ? ` and the ${occasional.length} row${occasional.length === 1 ? '' : 's'} called fewer times than the ${s.frames} frames, so not once a frame (calls: ${named}${occasional.length > 5 ? `, ${occasional.length - 5} more` : ''}: ${us(s.occasionalNs ?? 0)})`
    : '';
  return `Steady state: the critical path without the ${s.removed.length} row${s.removed.length === 1 ? '' : 's'} of start-up and tear-down (${s.removed.join(', ')}: ${us(s.removedNs)})${rare}, each remaining row's share of the ${us(s.remainingNs)} left`;
}

export function steadyStateRows(s: SteadyState): string[][] {
  return s.rows.map((r) => [
    `${r.pct.toFixed(2)}%`,
    formatDependencyNs(r.criticalPathNs),
    formatDependencyNs(r.waitingNs),
    r.name,
  ]);
}

/** What the log gives per frame, each figure with the rows it comes from; undefined when the log has none of it. */
export function perFrameLine(s: SteadyState): string | undefined {
  const parts: string[] = [];
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  if (s.frames && s.gpuNs !== undefined && s.gpuPerFrameNs !== undefined) {
    // a copy of a few microseconds a frame is shown in microseconds, not as 0.0 ms
    const small = (ns: number) => (ns >= 1e5 ? `${ms(ns)} ms` : `${(ns / 1e3).toFixed(1)} us`);
    const kinds = s.gpuByKind?.length
      ? ` (${s.gpuByKind.map((k) => `${k.kind} ${small(k.perFrameNs)}`).join(', ')})`
      : '';
    parts.push(
      `GPU activities (kernels and copies) ${formatNs(s.gpuNs)} in all, ${ms(s.gpuPerFrameNs)} ms a frame${kinds} over the ${s.frames} ExecutionContext::enqueue ranges (one per frame)`,
    );
  }
  if (s.enqueuePerFrameNs !== undefined) {
    // a slow first call (start-up inside the first enqueue) moves the mean: the mean without it beside it
    const n = s.frames ?? 0;
    const rest =
      s.enqueueMaxNs !== undefined && n > 1 ? (s.enqueuePerFrameNs * n - s.enqueueMaxNs) / (n - 1) : undefined;
    parts.push(
      rest !== undefined && s.enqueueMaxNs! > 2 * rest
        ? `TensorRT's enqueue holds the host ${ms(s.enqueuePerFrameNs)} ms a frame on average, ${ms(rest)} ms without its slowest call (${ms(s.enqueueMaxNs!)} ms: start-up work inside one enqueue; the fastest ${ms(s.enqueueMinNs ?? 0)} ms)`
        : `TensorRT's enqueue holds the host ${ms(s.enqueuePerFrameNs)} ms a frame (the range's mean)`,
    );
  }
  if (s.sync)
    parts.push(
      `the host waits ${ms(s.sync.avgNs)} ms a call in ${s.sync.name} (${s.sync.calls} calls: the API table's average)`,
    );
  if (s.otherNs !== undefined)
    parts.push(
      `<Other> (${formatDependencyNs(s.otherNs)}) is the host's time outside any CUDA call over the whole process, its start and end included: nvprof's summary has no timestamps to cut the frame loop out by`,
    );
  return parts.length ? `Per frame, from the log: ${parts.join('; ')}.` : undefined;
}

export const LAYER_HEADERS = [
  'GPU time',
  'GPU a frame',
  "Share of the layers' GPU",
  'Host time in the range',
  'Calls',
  'Layer',
];

/** What the layer table shows, and how much of the log's GPU time its ranges hold. */
export function layersCaption(s: SteadyState): string {
  const sum = s.layersGpuNs ?? 0;
  const of = s.gpuNs ? `; the ranges hold ${formatNs(sum)} of the log's ${formatNs(s.gpuNs)} of GPU activities` : '';
  return `TensorRT layers by GPU time: the kernels and copies launched inside each layer's NVTX range, which says which layer is slowest (the host's time in the range is only the launch)${of}`;
}

export function layerRows(s: SteadyState): string[][] {
  const sum = s.layersGpuNs ?? 0;
  return (s.layers ?? []).map((l) => [
    formatNs(l.gpuNs),
    `${(l.gpuNs / Math.max(1, l.calls) / 1e6).toFixed(3)} ms`,
    sum > 0 ? `${((l.gpuNs / sum) * 100).toFixed(1)}%` : '-',
    formatNs(l.hostNs),
    String(l.calls),
    l.name,
  ]);
}

export const SWEEP_HEADERS = [
  'Row',
  'Streams',
  'Batch',
  'Interval',
  'Aggregate FPS',
  'Slowest stream FPS',
  'Worst p99 (ms)',
  'Dropped',
  'CPU ms a frame',
];

/** A sweep's caption: what its rows share, and what each column counts. */
export function sweepCaption(s: Sweep): string {
  return `Sweep: ${s.rows.length} rows that differ only in streams, batch and interval (${s.setup}); aggregate FPS is every stream's frames over the wall time, the slowest stream and the worst p99 (a frame's read or arrival to its boxes) over all runs, CPU ms a frame is infer's CPU time over the frames it ran`;
}

/**
 * Each row of a sweep against its first (fewest streams, batch 1): the change in aggregate FPS and worst p99, and
 * whether it stands out of the noise: only repeats (--repeat) give a spread to tell; one run a row says so.
 */
export function sweepDeltas(r: LabReport, s: Sweep): string[] {
  const rows = s.rows.map((name) => r.fps.find((y) => y.modelType === name)!);
  const [base, ...rest] = rows;
  const setup = (x: FpsRow) =>
    `${x.streamSetup!.streams} stream${x.streamSetup!.streams === 1 ? '' : 's'}, batch ${x.streamSetup!.batch}${x.streamSetup!.interval ? `, interval ${x.streamSetup!.interval}` : ''}`;
  return rest.map((x) => {
    // the change is worked out from the figures as printed, so a reader who checks it gets the same percentage
    const a = Number(base.sweep!.aggregateFps.toFixed(2));
    const b = Number(x.sweep!.aggregateFps.toFixed(2));
    const p99 =
      base.sweep!.worstP99Ms !== undefined && x.sweep!.worstP99Ms !== undefined
        ? `, worst p99 ${x.sweep!.worstP99Ms.toFixed(0)} against ${base.sweep!.worstP99Ms.toFixed(0)} ms`
        : '';
    const [sa, sb] = [base.endToEndFps, x.endToEndFps];
    const noise =
      sa.n > 1 && sb.n > 1
        ? // the 95% intervals of the two rows' end-to-end FPS
          sa.ci95[1] < sb.ci95[0] || sb.ci95[1] < sa.ci95[0]
          ? "outside the noise: the rows' 95% intervals do not overlap"
          : "within the noise: the rows' 95% intervals overlap"
        : 'one run a row, so nothing tells it from noise (--repeat 3 gives each row a spread)';
    return `${setup(x)} against ${setup(base)}: aggregate ${b.toFixed(2)} against ${a.toFixed(2)} FPS (${b >= a ? '+' : ''}${(((b - a) / a) * 100).toFixed(1)}%)${p99}; ${noise}.`;
  });
}

/** One row per sweep row, fewest streams first. */
export function sweepRows(r: LabReport, s: Sweep): string[][] {
  const opt = (v: number | undefined, digits: number) => (v === undefined ? '' : v.toFixed(digits));
  return s.rows.map((name) => {
    const x = r.fps.find((y) => y.modelType === name)!;
    const f = x.sweep!;
    return [
      x.modelType,
      String(x.streamSetup!.streams),
      String(x.streamSetup!.batch),
      String(x.streamSetup!.interval),
      f.aggregateFps.toFixed(2),
      f.minStreamFps.toFixed(2),
      opt(f.worstP99Ms, 1),
      x.drops ? dropsCell(x.drops) : '',
      opt(f.cpuMsPerFrame, 1),
    ];
  });
}
