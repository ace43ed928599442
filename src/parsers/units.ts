/**
 * Exact number handling for profiler text: times become integer nanoseconds by decimal arithmetic on the digits
 * (integers: safe-integer Numbers, BigInt beyond), never by multiplying floats. `197.397023s` -> 197397023000,
 * `7.9230us` -> 7923, `0ns` -> 0.
 */

const NS_PER_UNIT: Record<string, bigint> = { ns: 1n, us: 1_000n, µs: 1_000n, ms: 1_000_000n, s: 1_000_000_000n };

/**
 * Converts a decimal string (digits, optional fraction, optional sign) in `unit` to integer nanoseconds.
 * Sub-nanosecond remainders are rounded half away from zero. Returns undefined for anything else.
 */
export function decimalToNs(value: string, unit: string): number | undefined {
  const scale = NS_PER_UNIT[unit];
  if (scale === undefined) return undefined;
  const v = plainDecimal(value.trim());
  return v === undefined ? undefined : digitsToNs(v, 0, v.length, scale);
}

/**
 * A decimal in e-notation (`2.3e-05`, `1.5E+03`, as nvprof prints bare numbers under a fixed time unit) rewritten
 * with its point moved, digit for digit (`0.000023`, `1500`): the value stays exact. Other strings are returned as
 * they are; undefined when an exponent is malformed.
 */
function plainDecimal(v: string): string | undefined {
  const e = v.search(/[eE]/);
  if (e < 0) return v;
  const m = /^([+-]?)(\d*)(?:\.(\d*))?[eE]([+-]?\d{1,4})$/.exec(v);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const digits = m[2] + (m[3] ?? '');
  const point = m[2].length + Number(m[4]);
  const whole =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return m[1] + whole;
}

/**
 * `[+-]digits[.digits]` (characters [from, to) of `v`) times `scale`, in integers: safe-integer Numbers up to 15
 * digits, BigInt beyond.
 */
function digitsToNs(v: string, from: number, to: number, scale: bigint): number | undefined {
  let i = from;
  let negative = false;
  if (v.charCodeAt(i) === 0x2b || v.charCodeAt(i) === 0x2d) {
    negative = v.charCodeAt(i) === 0x2d;
    i++;
  }
  let digits = 0;
  let fracDigits = 0;
  let seenDot = false;
  let n = 0;
  for (; i < to; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      n = n * 10 + (c - 0x30);
      digits++;
      if (seenDot) fracDigits++;
    } else if (c === 0x2e && !seenDot) seenDot = true;
    else return undefined;
  }
  if (digits === 0) return undefined;
  let ns: number;
  const numerator = n * Number(scale);
  if (digits <= 15 && Number.isSafeInteger(numerator)) {
    const denom = 10 ** fracDigits;
    const rem = numerator % denom;
    ns = (numerator - rem) / denom + (rem * 2 >= denom ? 1 : 0);
  } else {
    const big = BigInt(v.slice(from, to).replace(/^[+-]/, '').replace('.', '') || '0') * scale;
    const bigDenom = 10n ** BigInt(fracDigits);
    ns = Number(big / bigDenom + ((big % bigDenom) * 2n >= bigDenom ? 1n : 0n));
  }
  return negative && ns !== 0 ? -ns : ns;
}

/** nvprof's memory sizes are binary: KB = 1024 B (`4.000000` under a `KB` unit is 4096 bytes). */
const BYTES_PER_UNIT: Record<string, bigint> = { B: 1n, KB: 1n << 10n, MB: 1n << 20n, GB: 1n << 30n, TB: 1n << 40n };

/** Whether a unit from an nvprof units row is a size (`B`, `KB`, `MB`, `GB`, `TB`). */
export function isSizeUnit(unit: string): boolean {
  return BYTES_PER_UNIT[unit] !== undefined;
}

/** A decimal size in `unit` (B, KB, MB, GB, TB) to whole bytes, exactly; undefined for anything else. */
export function decimalToBytes(value: string, unit: string): number | undefined {
  const scale = BYTES_PER_UNIT[unit];
  if (scale === undefined) return undefined;
  const v = plainDecimal(value.trim());
  return v === undefined ? undefined : digitsToNs(v, 0, v.length, scale);
}

/** `6.35491s`, `987.46us`, `625ns`, `20.348ms` -> integer nanoseconds; undefined when not a time. */
export function parseDurationNs(token: string): number | undefined {
  const t = token.trim();
  return durationNsAt(t, 0, t.length);
}

/**
 * parseDurationNs on characters [from, to) of `s`, which hold no surrounding space: a cell of a row read in place,
 * without a string per cell (trace rows come by the ten thousand).
 */
export function durationNsAt(s: string, from: number, to: number): number | undefined {
  if (to - from < 2 || s.charCodeAt(to - 1) !== 0x73) return undefined; // ends with `s`
  // the unit from the character before the `s`
  const u = s.charCodeAt(to - 2);
  const scale =
    u === 0x6e
      ? NS_PER_UNIT.ns
      : u === 0x75 || u === 0xb5
        ? NS_PER_UNIT.us
        : u === 0x6d
          ? NS_PER_UNIT.ms
          : NS_PER_UNIT.s;
  const digitsEnd = scale === NS_PER_UNIT.s ? to - 1 : to - 2;
  if (digitsEnd <= from) return undefined;
  const ns = digitsToNs(s, from, digitsEnd, scale);
  if (ns !== undefined) return ns;
  // e-notation with its unit (`6.0360e-03ms`, nvprof's Unified Memory times under `-u ms`): the rare slow path
  const plain = plainDecimal(s.slice(from, digitsEnd));
  return plain === undefined || plain === s.slice(from, digitsEnd)
    ? undefined
    : digitsToNs(plain, 0, plain.length, scale);
}

/** `64.43%` or `64.43` -> 64.43. */
export function parsePercent(token: string): number | undefined {
  const m = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)%?$/.exec(token.trim());
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
