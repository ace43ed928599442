/**
 * `jetprof capacity`: how many streams of a source, each paced at F FPS as a camera delivers it, this machine holds:
 * every stream at F FPS with nothing dropped and p99 latency (arrival to boxes) within D ms. It runs infer with
 * `--streams N --realtime` for 1, 2, 4, ... streams until a count fails, then bisects between the last that held and
 * the first that failed, each point long enough to settle and repeated, and stops by itself within its time budget.
 * Each point is its own infer process, as a user would run it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BACKENDS, type BackendName } from '../backends/types.ts';
import type { RunResult } from '../pipeline/run-result.ts';
import { entryCommand } from '../profilers/profile-run.ts';
import { type InferArgFacts, inferArgv, type InferFlags } from '../pipeline/infer-args.ts';
import { busyMachineSentence } from '../platform/machine-load.ts';
import { classifySource, isLive } from '../video/sources.ts';
import { JetprofError } from '../util/errors.ts';
import { processRef, runCommand, shellLine, signalProcess } from '../util/process.ts';
import {
  droppedShare,
  type CapacityPoint,
  type CapacityResult,
  type CapacitySetup,
} from '../report/capacity-format.ts';
import { clearlyFailed, combineRuns, judgePoint, type CapacityRule } from './capacity-rule.ts';

interface CapacityOptions {
  source: string;
  backend: BackendName;
  sourceFps: number;
  p99Ms: number;
  /** The share of delivered frames a run may drop and still hold (0..1). */
  dropTolerance: number;
  /** The whole search stops within this many seconds. */
  budgetS: number;
  /** Seconds each point runs (after its warm-up frames). */
  pointS: number;
  /** Runs of each point: it holds only when every run held. */
  repeat: number;
  /** infer's own arguments (model, frame size, ...), passed on as given. */
  inferArgs: string[];
  /** What infer's parser read of them (the CLI's). */
  infer: Pick<InferArgFacts, 'batch'>;
  /** Write every stream's annotated video, as infer does by default (default: not, --no-write). */
  write: boolean;
  /** infer --stagger: the streams' frames arrive spread over a frame time, not all at once. */
  stagger?: boolean;
  onStep: (line: string) => void;
  shouldStop?: () => boolean;
  onChild?: (pid: number) => () => void;
}

/**
 * infer's arguments for a count of streams: a `--batch B` given (a TensorRT engine's batch, or 1 for streams that
 * take turns) above the count becomes `--batch streams`, since a batch takes one frame from each stream (appended:
 * infer takes the last value given); without one, infer batches every stream (its default).
 */
export function batchAt(inferArgs: readonly string[], batch: number | undefined, streams: number): string[] {
  return batch === undefined || batch <= streams ? [...inferArgs] : [...inferArgs, ...inferArgv({ batch: streams })];
}

/** What the search measured, from its first run: so two results with different settings are told apart. */
function capacitySetup(run: RunResult, o: CapacityOptions): CapacitySetup {
  const batchValue = o.infer.batch;
  return {
    backend: run.backend,
    label: run.setup.label.replace(/-\d+streams(-batch\d+)?/, '').replace(/-realtime[\d.]*(fps)?(-staggered)?/, ''),
    device: run.setup.device,
    machine: run.env.jetson?.model ?? run.env.cpu,
    model: `${basename(run.model.path)} ${run.model.inputWidth}x${run.model.inputHeight} (${run.model.sha256.slice(0, 8)})`,
    frameSize: `${run.frameSize[0]}x${run.frameSize[1]}`,
    interval: run.interval ?? 0,
    ...(batchValue !== undefined ? { batch: batchValue } : {}),
    inferArgs: o.inferArgs,
    write: o.write,
    arrivals: isLive(classifySource(o.source).kind) ? 'live' : o.stagger ? 'staggered' : 'lock-step',
  };
}

/** One search: its scratch folder, its clock, its result so far; a count is measured by runs of infer. */
class CapacitySearch {
  readonly t0 = Date.now();
  readonly result: CapacityResult;
  readonly rule: CapacityRule;
  /** How long the last run of a count took (the next is started only when one that long fits the budget). */
  private lastPointS: number;

  constructor(
    private readonly o: CapacityOptions,
    private readonly dir: string,
  ) {
    this.result = {
      schema: 'jetprof.capacity/1',
      source: o.source,
      sourceFps: o.sourceFps,
      p99LimitMs: o.p99Ms,
      dropTolerance: o.dropTolerance,
      pointSeconds: o.pointS,
      maxStreams: 0,
      points: [],
      seconds: 0,
    };
    this.rule = { sourceFps: o.sourceFps, p99LimitMs: o.p99Ms, dropTolerance: o.dropTolerance };
    this.lastPointS = o.pointS + 5;
  }

  elapsed(): number {
    return (Date.now() - this.t0) / 1000;
  }

  /** One run of infer with `streams` streams, judged; undefined when stopped or out of budget. */
  async runOnce(streams: number, k: number): Promise<CapacityPoint | undefined> {
    if (this.o.shouldStop?.()) return undefined;
    if (this.elapsed() + this.lastPointS > this.o.budgetS) return undefined;
    const json = join(this.dir, `point-${streams}-${k}.json`);
    const [cmd, ...pre] = entryCommand(this.o.backend);
    const started = Date.now();
    const warmup = String(Math.max(2, Math.round(this.o.sourceFps / 2)));
    const videos = join(this.dir, `videos-${streams}-${k}`);
    if (this.o.write) mkdirSync(videos, { recursive: true });
    const flags: InferFlags = {
      streams,
      realtime: true,
      stagger: this.o.stagger || undefined,
      sourceFps: this.o.sourceFps,
      duration: this.o.pointS,
      warmup,
      // --write: every stream's video, as infer writes by default (into the scratch folder, removed with it)
      ...(this.o.write ? { outputDir: videos } : { write: false }),
      // a point is judged on the frames it kept up with: the model-alone runs would only spend the budget
      modelAlone: 0,
      quiet: true,
      json,
    };
    const inferArgs = [this.o.source, ...batchAt(this.o.inferArgs, this.o.infer.batch, streams)];
    const args = [...pre, ...inferArgs, ...inferArgv(flags)];
    // by hand: what infer prints is the point, and the point's JSON went with the scratch folder
    const byHand = [
      BACKENDS[this.o.backend].entry,
      ...inferArgs,
      ...inferArgv({ ...flags, quiet: undefined, json: undefined }),
    ];
    // the budget is an upper bound on wall time: a point still running at its end is stopped (infer finalizes)
    let overBudget = false;
    this.o.onStep(
      `${streams} stream(s): run ${k + 1}${k < this.o.repeat ? ` of ${this.o.repeat}` : ' (borderline, again)'}, ${this.o.pointS} s of frames ...`,
    );
    const r = await runCommand(cmd, args, {
      onSpawn: (pid) => {
        const release = this.o.onChild?.(pid);
        const child = processRef(pid);
        // a Ctrl-C that came while this run was being started reaches it too
        if (this.o.shouldStop?.()) signalProcess(child, 'SIGINT');
        const timer = setTimeout(
          () => {
            overBudget = true;
            signalProcess(child, 'SIGTERM');
          },
          Math.max(0, this.o.budgetS * 1000 - (Date.now() - this.t0)),
        );
        return () => {
          clearTimeout(timer);
          release?.();
        };
      },
    });
    this.lastPointS = (Date.now() - started) / 1000;
    if (overBudget) return undefined;
    if (r.code !== 0) {
      if (this.o.shouldStop?.()) return undefined;
      const said = r.output.toString().trim().split('\n');
      // a crash prints more than one line worth keeping (a native stack, an abort's message): show its end
      if (r.signal)
        this.o.onStep(`infer died of ${r.signal}; the end of what it printed:\n${said.slice(-40).join('\n')}`);
      throw new JetprofError(
        'TOOL_FAILED',
        r.signal
          ? `infer with ${streams} stream(s) died of ${r.signal} (exit ${r.code})`
          : `infer with ${streams} stream(s) failed (exit ${r.code}): ${said.pop()}`,
        {
          suggestion: `run that infer command by hand to see why: ${shellLine(byHand)}`,
        },
      );
    }
    const run = JSON.parse(readFileSync(json, 'utf8')) as RunResult;
    // the written videos were the point's load, not its result: the scratch folder keeps only the run JSON
    if (this.o.write) rmSync(videos, { recursive: true, force: true });
    // a run that Ctrl-C cut short measured less than the point asks for: it is no measurement of the count
    if (run.interrupted || this.o.shouldStop?.()) return undefined;
    this.result.setup ??= capacitySetup(run, this.o);
    this.noteRun(run);
    return judgePoint(run, streams, this.rule);
  }

  /** The machine's state over the search: the busiest figures of its runs, what they cost, the board's clocks. */
  noteRun(run: RunResult): void {
    const l = run.machineLoad;
    if (!l) return;
    const m = (this.result.machine ??= { cores: l.cores, maxLoadAvg: 0, busyRuns: 0, runs: 0, cpuSeconds: 0 });
    m.runs++;
    m.maxLoadAvg = Math.max(m.maxLoadAvg, ...l.loadAvg);
    if (l.otherCores !== undefined) m.maxOtherCores = Math.max(m.maxOtherCores ?? 0, l.otherCores);
    if (l.stealShare !== undefined) m.maxStealShare = Math.max(m.maxStealShare ?? 0, l.stealShare);
    m.cpuSeconds = Math.round(((m.cpuSeconds ?? 0) + l.cpuMs / 1000) * 10) / 10;
    m.peakRssMb = Math.max(m.peakRssMb ?? 0, l.peakRssMb);
    if (busyMachineSentence(l)) m.busyRuns++;
    const mode = run.env.powerMode;
    if (mode && !m.powerModes?.includes(mode)) (m.powerModes ??= []).push(mode);
    const t = run.tegrastats?.summary;
    if (t?.meanGpuMhz !== undefined) {
      const mhz = Math.round(t.meanGpuMhz);
      m.gpuMhz = m.gpuMhz ? [Math.min(m.gpuMhz[0], mhz), Math.max(m.gpuMhz[1], mhz)] : [mhz, mhz];
    }
    if (t?.peakTempC !== undefined) m.peakTempC = Math.max(m.peakTempC ?? -Infinity, t.peakTempC);
  }

  /** A count of streams: its runs, as one point (repeated when borderline); undefined when none ran. */
  async measure(streams: number): Promise<CapacityPoint | undefined> {
    const runs: CapacityPoint[] = [];
    // --repeat runs; a run clearly past the line settles it (a count holds only when every run held)
    for (let k = 0; k < this.o.repeat; k++) {
      const p = await this.runOnce(streams, k);
      if (!p) break;
      runs.push(p);
      if (clearlyFailed(p)) break;
    }
    // a count that held, but near the line, is measured as many times again: it counts only if it holds in all of them
    const first = runs.length > 0 ? combineRuns(runs) : undefined;
    if (first?.held && first.borderline) {
      this.o.onStep(
        `${streams} stream(s): held, but near the line (${first.near}); running it ${this.o.repeat} more time(s) before it counts`,
      );
      for (let k = 0; k < this.o.repeat; k++) {
        const p = await this.runOnce(streams, this.o.repeat + k);
        if (!p) break;
        runs.push(p);
        if (!p.held) break;
      }
    }
    if (runs.length === 0) return undefined;
    const point = combineRuns(runs);
    this.result.points.push(point);
    this.o.onStep(
      `${point.streams} stream(s), batch ${point.batch ?? 1}: min ${point.minStreamFps.toFixed(2)} FPS, p99 ${point.p99Ms.toFixed(0)} ms, dropped ${point.delivered ? `${point.dropped} of ${point.delivered} (${droppedShare(point)})` : point.dropped}, held in ${point.heldRuns} of ${point.runs} runs: ${point.held ? 'held' : `not held (${point.why})`}${point.borderline ? ' (borderline)' : ''}`,
    );
    return point;
  }
}

export async function runCapacity(o: CapacityOptions): Promise<CapacityResult> {
  const dir = mkdtempSync(join(tmpdir(), 'jetprof-capacity-'));
  const run = new CapacitySearch(o, dir);
  const { result } = run;
  const measure = (n: number) => run.measure(n);
  try {
    let lastHeld = 0;
    let firstFailed: number | undefined;
    for (let n = 1; n <= 64; n *= 2) {
      const p = await measure(n);
      if (!p) break;
      if (!p.held) {
        firstFailed = n;
        break;
      }
      lastHeld = n;
    }
    // between the last count that held and the first that did not
    while (firstFailed !== undefined && firstFailed - lastHeld > 1) {
      const mid = Math.floor((lastHeld + firstFailed) / 2);
      const p = await measure(mid);
      if (!p) break;
      if (p.held) lastHeld = mid;
      else firstFailed = mid;
    }
    result.maxStreams = lastHeld;
    const settled = firstFailed !== undefined ? firstFailed - lastHeld === 1 : lastHeld === 64;
    if (!settled)
      result.cutShort = o.shouldStop?.()
        ? 'interrupted'
        : `the ${o.budgetS} s budget ran out before the search settled`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  result.seconds = run.elapsed();
  return result;
}
