/**
 * Exact number handling for profiler text: times become integer nanoseconds by decimal arithmetic on the digits
 * (BigInt), never by multiplying floats. `197.397023s` -> 197397023000, `7.9230us` -> 7923, `0ns` -> 0.
 */

const NS_PER_UNIT: Record<string, bigint> = { ns: 1n, us: 1_000n, 'µs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n };
export type TimeUnit = 'ns' | 'us' | 'ms' | 's';

/**
 * Converts a decimal string (digits, optional fraction, optional sign) in `unit` to integer nanoseconds.
 * Sub-nanosecond remainders are rounded half away from zero. Returns undefined for anything else.
 */
export function decimalToNs(value: string, unit: string): number | undefined {
  const scale = NS_PER_UNIT[unit];
  if (scale === undefined) return undefined;
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const sign = m[1] === '-' ? -1n : 1n;
  const whole = BigInt(m[2] === '' ? '0' : m[2]);
  const frac = m[3] ?? '';
  const fracValue = frac === '' ? 0n : BigInt(frac);
  const denom = 10n ** BigInt(frac.length);
  const numerator = (whole * denom + fracValue) * scale;
  let ns = numerator / denom;
  if ((numerator % denom) * 2n >= denom) ns += 1n;
  return Number(sign * ns);
}

/** `6.35491s`, `987.46us`, `625ns`, `20.348ms` -> integer nanoseconds; undefined when not a time. */
export function parseDurationNs(token: string): number | undefined {
  const m = /^([+-]?[\d.]+)(ns|us|µs|ms|s)$/.exec(token.trim());
  if (!m) return undefined;
  return decimalToNs(m[1], m[2]);
}

/** `64.43%` or `64.43` -> 64.43. */
export function parsePercent(token: string): number | undefined {
  const m = /^([+-]?\d+(?:\.\d+)?)%?$/.exec(token.trim());
  return m ? Number(m[1]) : undefined;
}

/**
 * A number as nsys prints it: digit grouping by commas in any group size (`5,511,756,619`, or `44,0087,8248` in
 * locales that group by four) is removed. Returns undefined for anything that is not a number.
 */
export function parseGroupedNumber(token: string): number | undefined {
  const t = token.trim();
  if (!/^[+-]?\d[\d,]*(?:\.\d+)?$/.test(t)) return undefined;
  return Number(t.replace(/,/g, ''));
}

/** An integer that must stay exact (nanosecond totals): grouping removed, parsed through BigInt. */
export function parseGroupedInteger(token: string): number | undefined {
  const t = token.trim().replace(/,/g, '');
  if (!/^[+-]?\d+$/.test(t)) return undefined;
  return Number(BigInt(t));
}

/** Splits one CSV line (RFC 4180 quoting, as nvprof --csv and nsys --format csv write it). */
export function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"') {
        if (line[i + 1] === '"') {
          cur += '"';
          i++;
        } else quoted = false;
      } else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}
