/**
 * How busy the machine was while a run measured: the load average at its start and end, the share of every core's time
 * that was busy and that the hypervisor stole (/proc/stat), this process's own CPU time and peak memory. A run measured
 * on a machine busier than its cores, or with other processes taking a core or more, says so in its figures: its FPS
 * are then the machine's, not the model's. Linux's /proc; elsewhere only the process's own figures.
 */
import { readTextOr } from '../util/files.ts';
import { availableParallelism } from 'node:os';

export interface MachineLoad {
  cores: number;
  /** The 1-minute load average at the start and at the end of the run. */
  loadAvg: [number, number];
  /** Share of all cores' time that was busy over the run (any process), 0..1. */
  busyShare?: number;
  /** Share of all cores' time the hypervisor stole over the run, 0..1. */
  stealShare?: number;
  /** This process's CPU time over the run (user + system), ms. */
  cpuMs: number;
  /**
   * The main thread's own CPU time over the run, ms (Linux: /proc/self/task/PID/schedstat): the frame loop's thread,
   * where jetprof's per-pixel and per-box work runs; the rest of cpuMs is the runtime's, the decoder's and the
   * encoder's threads. On a board this is the figure that must fit inside the engine's time.
   */
  mainThreadCpuMs?: number;
  /** The same from the last warm-up frame's end to the run's: the measured frames' share, without start-up and JIT. */
  mainThreadMeasuredCpuMs?: number;
  /** Cores other processes kept busy on average: all busy time less this process's, over the wall time. */
  otherCores?: number;
  /** This process's peak resident memory, MB. */
  peakRssMb: number;
  wallMs: number;
}

/** The `cpu` line of /proc/stat: [busy ticks, all ticks, steal ticks], or undefined. */
export function parseProcStat(text: string): { busy: number; total: number; steal: number } | undefined {
  const m = /^cpu\s+(.+)$/m.exec(text);
  if (!m) return undefined;
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = m[1].trim().split(/\s+/).map(Number);
  if ([user, nice, system, idle].some((x) => !Number.isFinite(x))) return undefined;
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: user + nice + system + irq + softirq, total, steal };
}

const parseLoadAvg = (text: string): number | undefined => {
  const v = Number(text.trim().split(/\s+/)[0]);
  return Number.isFinite(v) ? v : undefined;
};

/** The main thread's time on a CPU so far, ns (undefined where /proc cannot tell). */
export const mainThreadCpuNs = () => onCpuNs(`/proc/self/task/${process.pid}/schedstat`);

/** A thread's time on a CPU so far, ns (the first field of its schedstat), or undefined where it cannot be read. */
export function onCpuNs(schedstat: string): number | undefined {
  const v = Number(readTextOr(schedstat).split(' ')[0]);
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

/** Starts watching; `stop()` gives what the machine did since. */
export function watchMachineLoad(cores = availableParallelism()) {
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const stat0 = parseProcStat(readTextOr('/proc/stat'));
  const load0 = parseLoadAvg(readTextOr('/proc/loadavg')) ?? 0;
  const main0 = mainThreadCpuNs();
  return {
    /** `measuredFromNs`: the main thread's CPU time (mainThreadCpuNs) when the measured frames began. */
    stop(measuredFromNs?: number): MachineLoad {
      const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
      const cpu = process.cpuUsage(cpu0);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      const stat1 = parseProcStat(readTextOr('/proc/stat'));
      const load1 = parseLoadAvg(readTextOr('/proc/loadavg')) ?? 0;
      const load: MachineLoad = {
        cores,
        loadAvg: [load0, load1],
        cpuMs: Math.round(cpuMs),
        peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
        wallMs: Math.round(wallMs),
      };
      const main1 = mainThreadCpuNs();
      if (main0 !== undefined && main1 !== undefined) load.mainThreadCpuMs = Math.round((main1 - main0) / 1e6);
      if (measuredFromNs !== undefined && main1 !== undefined)
        load.mainThreadMeasuredCpuMs = Math.round((main1 - measuredFromNs) / 1e6);
      if (stat0 && stat1 && stat1.total > stat0.total) {
        const total = stat1.total - stat0.total;
        load.busyShare = round3((stat1.busy - stat0.busy) / total);
        load.stealShare = round3((stat1.steal - stat0.steal) / total);
        // busy core-seconds over the wall time, less this process's own
        if (wallMs > 0) load.otherCores = round3(Math.max(0, load.busyShare * cores - cpuMs / wallMs));
      }
      return load;
    },
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * One sentence when, over the run itself, other processes kept a core or more busy or the hypervisor stole more than
 * 10% of the CPU time; undefined on a quiet machine. The load average is a one-minute decaying mean, so a run started
 * just after a heavy job shows a high one on a machine that is quiet while it measures: it decides only where
 * /proc/stat could not be read (and it is shown beside the answer either way).
 */
export function busyMachineSentence(l: MachineLoad): string | undefined {
  const reasons = busyMachineReasons(l);
  return reasons.length ? `measured on a busy machine (${reasons.join('; ')})${BUSY_ADVICE}` : undefined;
}

/** What a busy-machine note advises, once however many runs it names. */
export const BUSY_ADVICE =
  ": its figures are partly the other work's; measure again on a quiet machine before comparing";

/** Why a run's machine counts as busy (none: a quiet machine). */
export function busyMachineReasons(l: MachineLoad): string[] {
  const load = Math.max(...l.loadAvg);
  const measured = l.otherCores !== undefined;
  return [
    ...(!measured && load > l.cores ? [`load average ${load.toFixed(1)} on ${l.cores} cores`] : []),
    ...(measured && l.otherCores! >= 1
      ? [`other processes kept ${l.otherCores!.toFixed(1)} cores busy on average`]
      : []),
    ...(l.stealShare !== undefined && l.stealShare > 0.1
      ? [`the hypervisor took ${(l.stealShare * 100).toFixed(0)}% of the CPU time`]
      : []),
  ];
}
