/**
 * The byte-level line source (#16): lines split as readline splits them, trace rows counted on bytes exactly where
 * the string regex would count them, and the whole parse equal to the readline-based one on every fixture, in LF,
 * CRLF, lone-CR and mixed forms, with rows kept and rows only counted. Remove the readline side with `lineReader`.
 */
import test from 'ava';
import fc from 'fast-check';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { LineSplitter } from '../src/parsers/line-scanner.ts';
import { isTraceRowStart, NvprofParser } from '../src/parsers/nvprof.ts';
import { parseProfileFile } from '../src/parsers/parse-file.ts';
import { decimalToNs, parseDurationNs } from '../src/parsers/units.ts';
import { ROOT, scratchDir, SHARED_FIXTURES } from './helpers/fixtures.ts';

/** Every profiler log the repo and ../shared hold. */
function allLogs(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(txt|log|csv)$/.test(f)) out.push(p);
    }
  };
  walk(join(ROOT, 'test/fixtures/profiles'));
  walk(join(SHARED_FIXTURES, 'profiler-logs'));
  return out;
}

async function readlineLines(chunks: Buffer[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({
    input: Readable.from(chunks.map((c) => c.toString('latin1'))),
    crlfDelay: Infinity,
  }))
    lines.push(line);
  return lines;
}

function splitterLines(chunks: Buffer[], withRun: boolean): { lines: string[]; tail: string | undefined } {
  const lines: string[] = [];
  // a run handler that takes one line at a time when it starts with `r`, to exercise the hand-over between both paths
  const onRun = (b: Buffer, pos: number, len: number): number => {
    if (b[pos] !== 0x72) return pos;
    const lf = b.indexOf(0x0a, pos);
    const cr = b.indexOf(0x0d, pos);
    if (lf === -1 || (cr !== -1 && cr < lf - 1) || lf >= len) return pos;
    lines.push(b.toString('latin1', pos, cr === lf - 1 ? cr : lf));
    return lf + 1;
  };
  const s = new LineSplitter(
    (b, start, end) => lines.push(b.toString('latin1', start, end)),
    withRun ? onRun : undefined,
  );
  for (const c of chunks) s.feed(Buffer.from(c)); // a copy, as the scanner reuses its read buffers
  const tail = s.end();
  return { lines, tail: tail?.toString('latin1') };
}

test('LineSplitter splits LF, CRLF and lone CR as readline does, for any chunking, and hands back an unterminated tail', async (t) => {
  const piece = fc.constantFrom('a', 'rx', '\n', '\r', '\r\n', ' ', '  12ms', '');
  await fc.assert(
    fc.asyncProperty(
      fc.array(piece, { maxLength: 40 }),
      fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }),
      fc.boolean(),
      async (pieces, cuts, withRun) => {
        const text = Buffer.from(pieces.join(''), 'latin1');
        const chunks: Buffer[] = [];
        let pos = 0;
        for (let i = 0; pos < text.length; i++) {
          const n = cuts[i % cuts.length];
          chunks.push(text.subarray(pos, pos + n));
          pos += n;
        }
        const expected = await readlineLines(chunks);
        const got = splitterLines(chunks, withRun);
        const terminated = text.length === 0 || text[text.length - 1] === 0x0a || text[text.length - 1] === 0x0d;
        // readline emits the unterminated last line; the splitter hands it back for the caller to judge
        t.deepEqual(terminated ? got.lines : [...got.lines, got.tail], expected);
        t.is(got.tail === undefined, terminated);
      },
    ),
    { numRuns: 400 },
  );
});

const TRACE_ROW_START = /^\s*\d+(\.\d+)?[mun]?s\s+\d+(\.\d+)?[mun]?s\s/;

test('isTraceRowStart on bytes says yes exactly where the regex does on ASCII lines, and never yes where it says no', (t) => {
  const token = fc.constantFrom(
    ' ',
    '  ',
    '\t',
    '1',
    '23',
    '.',
    '.5',
    'ms',
    'us',
    'ns',
    's',
    'm',
    'x',
    '(1 1 1)',
    'µ',
    '\u00a0',
  );
  fc.assert(
    fc.property(fc.array(token, { maxLength: 12 }), (parts) => {
      const line = parts.join('');
      const bytes = Buffer.from(`#${line}#`, 'utf8'); // offsets inside a larger buffer, as in a read chunk
      const onBytes = isTraceRowStart(bytes, 1, bytes.length - 1);
      const byRegex = TRACE_ROW_START.test(line);
      if (onBytes) t.true(byRegex, line);
      if (/^[\x20-\x7e\t]*$/.test(line)) t.is(onBytes, byRegex, JSON.stringify(line));
    }),
    { numRuns: 3000 },
  );
  t.true(isTraceRowStart(Buffer.from('  1.2345ms  3.10us  (1 1 1)'), 0, 27));
  t.false(isTraceRowStart(Buffer.from('  1.2345ms  3.10us'), 0, 18), 'a row needs a space after its duration');
});

test('decimalToNs in safe integers gives what the BigInt reference gives, rounding half away from zero', (t) => {
  const reference = (v: string, scale: bigint): number => {
    const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(v)!;
    const frac = m[3] ?? '';
    const num = BigInt((m[2] || '0') + frac) * scale;
    const den = 10n ** BigInt(frac.length);
    const ns = num / den + ((num % den) * 2n >= den ? 1n : 0n);
    return Number(m[1] === '-' ? -ns : ns) || 0;
  };
  const scales: Record<string, bigint> = { ns: 1n, us: 1000n, ms: 1_000_000n, s: 1_000_000_000n };
  fc.assert(
    fc.property(
      fc.constantFrom('', '-', '+'),
      fc.stringMatching(/^\d{0,12}$/),
      fc.option(fc.stringMatching(/^\d{0,12}$/)),
      fc.constantFrom('ns', 'us', 'ms', 's'),
      (sign, whole, frac, unit) => {
        const v = `${sign}${whole}${frac === null ? '' : `.${frac}`}`;
        if (whole === '' && !frac) return t.is(decimalToNs(v, unit), undefined);
        t.is(decimalToNs(v, unit), reference(v, scales[unit]), `${v} ${unit}`);
        t.is(parseDurationNs(`${v}${unit}`), reference(v, scales[unit]));
      },
    ),
    { numRuns: 2000 },
  );
  t.is(decimalToNs('123456789012345678.5', 'ns'), 123456789012345680); // past 15 digits: BigInt, then the nearest double
  t.is(parseDurationNs('5 ms'), undefined);
  t.is(parseDurationNs('s'), undefined);
});

test('the byte scanner and the readline source give the same parse on every fixture, in LF, CRLF, lone-CR and mixed forms, rows kept or counted', async (t) => {
  const logs = allLogs();
  t.true(logs.length >= 5, 'the repo alone has five logs');
  const dir = scratchDir();
  let compared = 0;
  for (const path of logs) {
    const text = readFileSync(path, 'latin1').replace(/\r\n/g, '\n');
    let k = 0;
    const mixed = text.replace(/\n/g, () => ['\n', '\r\n', '\r'][k++ % 3]);
    const forms = { lf: text, crlf: text.replace(/\n/g, '\r\n'), cr: text.replace(/\n/g, '\r'), mixed };
    for (const [form, body] of Object.entries(forms)) {
      const file = join(dir, `bytes-${form}-${path.split('/').pop()}`);
      writeFileSync(file, body, 'latin1');
      for (const maxTraceRows of [undefined, 2]) {
        const bytes = await parseProfileFile(file, undefined, { maxTraceRows });
        const lines = await parseProfileFile(file, undefined, { maxTraceRows, lineReader: 'readline' });
        t.deepEqual(bytes, lines, `${path} ${form} maxTraceRows=${maxTraceRows}`);
        compared++;
      }
    }
  }
  t.is(compared, logs.length * 8);
});

test('countRows counts a run of trace rows past the cap in one call and stops at the first other line', (t) => {
  const p = new NvprofParser(1);
  for (const line of ['==7== Profiling result:', '   Start  Duration  Name']) p.push(line);
  // right-aligned under `Start` and `Duration`, as nvprof prints them
  const rows = '   1.0ms     2.0us  k [1]\n   2.0ms     2.0us  k [2]\r\n   3.0ms     2.0us  k [3]\n==7== API calls:\n';
  const buf = Buffer.from(rows);
  t.is(p.countRows(buf, 0, buf.length), 0, 'nothing is counted before the cap is reached');
  p.pushBytes(buf, 0, rows.indexOf('\n')); // the first row is kept
  const at = rows.indexOf('   2.0ms');
  const stop = p.countRows(buf, at, buf.length);
  t.is(buf.toString('utf8', stop, stop + 6), '==7== ');
  const log = p.finish().value;
  t.is(log.processes[0].apiTrace?.length, 1);
  t.is(log.processes[0].traceRowsOmitted, 2);
});

test('sliceRightAligned gives what slice-then-trim gives, for any line and columns, Unicode spaces included', async (t) => {
  const { sliceRightAligned } = await import('../src/parsers/columns.ts');
  const ch = fc.constantFrom('a', '1', ' ', '\t', '\u00a0', '\u2003', '\ufeff', 'µ', '(', ')');
  fc.assert(
    fc.property(
      fc.array(ch, { maxLength: 40 }),
      fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 6 }),
      (chars, widths) => {
        const line = chars.join('');
        let end = 0;
        const cols = widths.map((w, i) => ({ label: `c${i}`, start: end, end: (end += w) }));
        const expected: string[] = [];
        let from = 0;
        cols.forEach((c, i) => {
          expected.push((i === cols.length - 1 ? line.slice(from) : line.slice(from, c.end)).trim());
          from = c.end;
        });
        t.deepEqual(sliceRightAligned(line, cols), expected);
      },
    ),
    { numRuns: 2000 },
  );
});

test('memory stays bounded on a 64 MB file without a line break: the line is cut to MAX_LINE_BYTES, the parse ends with a one-line answer', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const { TSX_IMPORT } = await import('./helpers/fixtures.ts');
  const file = join(scratchDir(), 'no-newline-64mb.txt');
  // an nvprof header, then 64 MB of one line (what a binary or a cut download looks like to a line reader)
  writeFileSync(file, Buffer.concat([Buffer.from('==1== Profiling result:\n'), Buffer.alloc(64 << 20, 0x41)]));
  const script = `
    const { parseProfileFile } = await import(${JSON.stringify(join(ROOT, 'src/parsers/parse-file.ts'))});
    const r = await parseProfileFile(${JSON.stringify(file)});
    console.log(JSON.stringify({ diagnostics: r.result.diagnostics.map((d) => d.code), rssMb: process.resourceUsage().maxRSS / 1024 }));
  `;
  const r = spawnSync(process.execPath, [TSX_IMPORT, '--input-type=module', '-e', script], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
  t.deepEqual(out.diagnostics, ['TRUNCATED_LINE'], 'the cut line is reported, not kept');
  t.true(out.rssMb < 200, `peak RSS ${out.rssMb} MB for a 64 MB line`);
});
