/**
 * tegrastats lines to typed samples, for every form JetPack has printed (pure; see test/fixtures/tegrastats for real
 * lines and their sources):
 *
 *   JetPack 3 (TX1):  RAM 3468/3983MB (lfb 48x4MB) SWAP ... cpu [17%,13%,29%,5%]@408 EMC 1%@408 APE 25 GR3D 3%@76
 *   JetPack 4 (Nano): RAM 1180/3965MB (lfb 1x2MB) ... CPU [30%@1036,...] EMC_FREQ 10%@1600 GR3D_FREQ 0%@76 ...
 *                     PLL@57C CPU@60.5C ... POM_5V_IN 4520/4680 POM_5V_GPU 0/0 POM_5V_CPU 1078/1205
 *   JetPack 4 (Xavier): ... VDD_IN 14025/14416 VDD_CPU 2209/2538 VDD_GPU 6854/6903 ... BCPU@-45C
 *   JetPack 5/6 (Orin): [MM-DD-YYYY HH:MM:SS] ... CPU [..%@..,off] EMC_FREQ 0%@2133 GR3D_FREQ 14%@[420] ...
 *                     cpu@48.7C soc2@48.0C tj@50.7C VDD_IN 6030mW/6030mW VDD_CPU_GPU_CV 1913mW/1913mW ...
 *   JetPack 7 (Orin): ... GR3D_FREQ 12%@[1300,1300] ... cpu@52.968C/52.968C ... VDD_GPU_SOC 5139mW/5139mW/5139mW
 *
 * Rails: current and average milliwatts (the third value of JetPack 7 is dropped). The board's input power is
 * VDD_IN or POM_5V_IN where the board has one (they already include the other rails); else the sum of the rails.
 */
import { maxOf } from '../util/stats.ts';

interface TegrastatsSample {
  ramUsedMb?: number;
  ramTotalMb?: number;
  swapUsedMb?: number;
  /** Per core: load % and MHz, or null for a core that is off. */
  cpu?: ({ loadPct: number; mhz?: number } | null)[];
  emcLoadPct?: number;
  emcMhz?: number;
  gpuLoadPct?: number;
  gpuMhz?: number;
  /** Degrees Celsius by sensor name as tegrastats prints it (CPU, GPU, tj, soc0 ...). */
  temps: Record<string, number>;
  /** Milliwatts by rail: current and the average tegrastats keeps. */
  rails: Record<string, { mw: number; avgMw: number }>;
}

const num = (s: string | undefined): number | undefined => (s === undefined || s === '' ? undefined : Number(s));

/** The board's input power in mW: VDD_IN or POM_5V_IN when present, else the sum of every rail. */
export function inputPowerMw(s: TegrastatsSample): number | undefined {
  const rails = Object.entries(s.rails);
  if (rails.length === 0) return undefined;
  const input = s.rails.VDD_IN ?? s.rails.POM_5V_IN;
  return input ? input.mw : rails.reduce((t, [, r]) => t + r.mw, 0);
}

/** One line, or undefined when it holds nothing tegrastats prints (a garbage line: the caller makes it a diagnostic). */
export function parseTegrastatsLine(line: string): TegrastatsSample | undefined {
  const text = line.replace(/^\d\d-\d\d-\d{4} \d\d:\d\d:\d\d\s+/, '').trim();
  const s: TegrastatsSample = { temps: {}, rails: {} };
  let found = false;
  let m: RegExpExecArray | null;
  if ((m = /\bRAM (\d+)\/(\d+)MB/.exec(text))) {
    s.ramUsedMb = Number(m[1]);
    s.ramTotalMb = Number(m[2]);
    found = true;
  }
  if ((m = /\bSWAP (\d+)\/(\d+)MB/.exec(text))) s.swapUsedMb = Number(m[1]);
  if ((m = /\bCPU \[([^\]]*)\]/.exec(text))) {
    s.cpu = m[1].split(',').map((c) => {
      const core = /^(\d+)%(?:@(\d+))?$/.exec(c.trim());
      return core ? { loadPct: Number(core[1]), ...(core[2] ? { mhz: Number(core[2]) } : {}) } : null;
    });
    found = true;
  } else if ((m = /\bcpu \[([^\]]*)\]@(\d+)/.exec(text))) {
    // JetPack 3: one frequency for all cores
    const mhz = Number(m[2]);
    s.cpu = m[1]
      .split(',')
      .map((c) => (/^\d+%$/.test(c.trim()) ? { loadPct: Number(c.trim().slice(0, -1)), mhz } : null));
    found = true;
  }
  if ((m = /\bEMC(?:_FREQ)? (?:(\d+)%)?(?:@(\d+))?/.exec(text)) && (m[1] || m[2])) {
    s.emcLoadPct = num(m[1]);
    s.emcMhz = num(m[2]);
  }
  if ((m = /\bGR3D(?:_FREQ)? (?:(\d+)%)?(?:@\[?(\d+)(?:,\d+)*\]?)?/.exec(text)) && (m[1] || m[2])) {
    s.gpuLoadPct = num(m[1]);
    s.gpuMhz = num(m[2]);
    found = true;
  }
  for (const t of text.matchAll(/\b([A-Za-z][\w]*)@(-?\d+(?:\.\d+)?)C\b/g)) s.temps[t[1]] = Number(t[2]);
  for (const r of text.matchAll(/\b([A-Z][A-Z0-9_]*) (\d+)mW\/(\d+)mW(?:\/\d+mW)?/g))
    s.rails[r[1]] = { mw: Number(r[2]), avgMw: Number(r[3]) };
  // JetPack 4 prints rails without units (POM_5V_IN 4520/4680, VDD_IN 14025/14416)
  for (const r of text.matchAll(/\b((?:POM|VDD)_[A-Z0-9_]+) (\d+)\/(\d+)(?![\dmM])/g))
    s.rails[r[1]] ??= { mw: Number(r[2]), avgMw: Number(r[3]) };
  if (Object.keys(s.temps).length || Object.keys(s.rails).length) found = true;
  return found ? s : undefined;
}

/** Samples stamped with their time (ms on the run's clock), columnar as the per-frame records. */
export interface TegrastatsSeries {
  /** tegrastats --interval, ms. */
  intervalMs: number;
  tMs: number[];
  gpuLoadPct: (number | null)[];
  gpuMhz: (number | null)[];
  emcLoadPct: (number | null)[];
  /** Mean load of the cores that are on. */
  cpuLoadPct: (number | null)[];
  ramUsedMb: (number | null)[];
  /** The hottest sensor of each sample. */
  maxTempC: (number | null)[];
  /** The board's input power (VDD_IN or POM_5V_IN, else the sum of the rails). */
  inputMw: (number | null)[];
  /** Every rail, current mW. */
  rails: Record<string, (number | null)[]>;
  temps: Record<string, (number | null)[]>;
  /** Lines that were not tegrastats output (kept out of the series). */
  diagnostics: { tMs: number; line: string }[];
}

export function emptySeries(intervalMs: number): TegrastatsSeries {
  return {
    intervalMs,
    tMs: [],
    gpuLoadPct: [],
    gpuMhz: [],
    emcLoadPct: [],
    cpuLoadPct: [],
    ramUsedMb: [],
    maxTempC: [],
    inputMw: [],
    rails: {},
    temps: {},
    diagnostics: [],
  };
}

/** Adds one line read at `tMs` to the series (or to its diagnostics). */
export function addLine(series: TegrastatsSeries, tMs: number, line: string): void {
  if (line.trim() === '') return;
  const s = parseTegrastatsLine(line);
  if (!s) {
    if (series.diagnostics.length < 100) series.diagnostics.push({ tMs, line: line.slice(0, 200) });
    return;
  }
  const i = series.tMs.length;
  series.tMs.push(tMs);
  const on = (s.cpu ?? []).filter((c): c is { loadPct: number } => c !== null);
  series.gpuLoadPct.push(s.gpuLoadPct ?? null);
  series.gpuMhz.push(s.gpuMhz ?? null);
  series.emcLoadPct.push(s.emcLoadPct ?? null);
  series.cpuLoadPct.push(on.length ? on.reduce((t, c) => t + c.loadPct, 0) / on.length : null);
  series.ramUsedMb.push(s.ramUsedMb ?? null);
  const temps = Object.values(s.temps);
  series.maxTempC.push(temps.length ? maxOf(temps) : null);
  series.inputMw.push(inputPowerMw(s) ?? null);
  const column = (table: Record<string, (number | null)[]>, key: string) =>
    (table[key] ??= new Array<number | null>(i).fill(null));
  for (const [k, r] of Object.entries(s.rails)) column(series.rails, k).push(r.mw);
  for (const [k, t] of Object.entries(s.temps)) column(series.temps, k).push(t);
  // columns this sample lacks stay aligned
  for (const table of [series.rails, series.temps])
    for (const col of Object.values(table)) while (col.length <= i) col.push(null);
}

/** What the report shows for a run: means over the measured window (first read to last write), peak temperature. */
export interface TegrastatsSummary {
  samples: number;
  meanGpuLoadPct?: number;
  meanGpuMhz?: number;
  meanEmcLoadPct?: number;
  meanCpuLoadPct?: number;
  peakTempC?: number;
  meanInputMw?: number;
  /** meanInputMw x wall time per frame: millijoules per measured frame. */
  energyPerFrameMj?: number;
}

export function summarizeSeries(
  series: TegrastatsSeries,
  window: { startMs: number; endMs: number; frames: number },
): TegrastatsSummary {
  const idx = series.tMs
    .map((t, i) => [t, i] as const)
    .filter(([t]) => t >= window.startMs && t <= window.endMs)
    .map(([, i]) => i);
  const mean = (col: (number | null)[]) => {
    const v = idx.map((i) => col[i]).filter((x): x is number => x !== null && Number.isFinite(x));
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : undefined;
  };
  const temps = idx.map((i) => series.maxTempC[i]).filter((x): x is number => x !== null);
  const meanInputMw = mean(series.inputMw);
  const wallPerFrame = window.frames > 0 ? (window.endMs - window.startMs) / window.frames : undefined;
  return {
    samples: idx.length,
    meanGpuLoadPct: mean(series.gpuLoadPct),
    meanGpuMhz: mean(series.gpuMhz),
    meanEmcLoadPct: mean(series.emcLoadPct),
    meanCpuLoadPct: mean(series.cpuLoadPct),
    peakTempC: temps.length ? maxOf(temps) : undefined,
    meanInputMw,
    energyPerFrameMj:
      meanInputMw !== undefined && wallPerFrame !== undefined ? (meanInputMw * wallPerFrame) / 1000 : undefined,
  };
}
