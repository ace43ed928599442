/** Summary statistics of a list of durations (milliseconds). Pure; used for stage timings. */
export interface StageStats {
  count: number;
  totalMs: number;
  meanMs: number;
  minMs: number;
  maxMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Coefficient of variation in percent (stddev / mean * 100), as trtexec reports it. */
  covPct: number;
}

/** A timing's spread, as trtexec prints a latency: mean, min, p50, p90, p99, max (ms). */
export function spreadMs(s: StageStats): Pick<StageStats, 'meanMs' | 'minMs' | 'p50Ms' | 'p90Ms' | 'p99Ms' | 'maxMs'> {
  return { meanMs: s.meanMs, minMs: s.minMs, p50Ms: s.p50Ms, p90Ms: s.p90Ms, p99Ms: s.p99Ms, maxMs: s.maxMs };
}

/**
 * Percentile by linear interpolation between closest ranks (numpy's default, "linear").
 * `sorted` must be ascending; p is in [0, 100].
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  if (p < 0 || p > 100) throw new RangeError(`'p' is out of range [0, 100]: ${p}`);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

/** Sum, mean and sample standard deviation (n - 1; 0 for a single value) of a non-empty list. */
function meanAndStd(values: readonly number[]): { total: number; mean: number; std: number } {
  const n = values.length;
  let total = 0;
  for (const v of values) total += v;
  const mean = total / n;
  let sq = 0;
  for (const v of values) sq += (v - mean) * (v - mean);
  return { total, mean, std: n > 1 ? Math.sqrt(sq / (n - 1)) : 0 };
}

export function summarize(values: readonly number[]): StageStats {
  const n = values.length;
  if (n === 0) {
    return {
      count: 0,
      totalMs: 0,
      meanMs: NaN,
      minMs: NaN,
      maxMs: NaN,
      p50Ms: NaN,
      p90Ms: NaN,
      p99Ms: NaN,
      covPct: NaN,
    };
  }
  const sorted = [...values].sort((a, b) => a - b);
  const { total, mean, std } = meanAndStd(values);
  return {
    count: n,
    totalMs: total,
    meanMs: mean,
    minMs: sorted[0],
    maxMs: sorted[n - 1],
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    covPct: mean > 0 ? (std / mean) * 100 : 0,
  };
}

/** Mean, sample standard deviation, range and a 95% confidence interval of the mean (Student's t) of repeated runs. */
export interface Spread {
  n: number;
  mean: number;
  std: number;
  min: number;
  max: number;
  /** [low, high]; equal to the mean when n = 1. */
  ci95: [number, number];
}

/** Two-sided 95% Student t quantiles for 1..30 degrees of freedom; 1.96 beyond. */
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

function t95(degreesOfFreedom: number): number {
  return degreesOfFreedom >= 1 && degreesOfFreedom <= 30 ? T95[degreesOfFreedom - 1] : 1.96;
}

export function spread(values: readonly number[]): Spread {
  const n = values.length;
  if (n === 0) throw new RangeError('spread of no values');
  const { mean, std } = meanAndStd(values);
  const half = n > 1 ? (t95(n - 1) * std) / Math.sqrt(n) : 0;
  return { n, mean, std, min: minOf(values), max: maxOf(values), ci95: [mean - half, mean + half] };
}

/**
 * Reductions over arrays of any length, without spreading them into arguments (`Math.max(...v)` throws "Maximum call
 * stack size exceeded" above about 125,000 values: a 150,000-frame run). Empty: 0 for the sum, -Infinity / Infinity
 * for max / min, as Math.max() and Math.min() give.
 */
export const sumOf = (v: readonly number[]): number => {
  let s = 0;
  for (const x of v) s += x;
  return s;
};

/** The mean; 0 for an empty list (a row or a point without values shows 0, not NaN). */
export const meanOf = (v: readonly number[]): number => sumOf(v) / Math.max(1, v.length);

export const maxOf = (v: readonly number[]): number => {
  let m = -Infinity;
  for (const x of v) if (x > m || Number.isNaN(x)) m = x;
  return m;
};

export const minOf = (v: readonly number[]): number => {
  let m = Infinity;
  for (const x of v) if (x < m || Number.isNaN(x)) m = x;
  return m;
};
