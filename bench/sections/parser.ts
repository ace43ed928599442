/** bench section 5: see bench/run.ts for what each section measures. */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, TSX, log, median, results, row, state, traceLog } from '../common.ts';

export async function benchParser() {
  state.section = 5;
  log('5. parser on a generated 200 MB nvprof log');
  const path = await traceLog('nvprof-gpu-trace-200mb-v2.txt', 200 * 1024 * 1024);
  const size = statSync(path).size;
  // Plain read and parse alternate, five times each, medians kept: the plain read alone varies 2-4x between runs here,
  // and the ratio of one pair by +-0.1; every pair's figures are kept to show the spread.
  // Both run in a fresh Node process (as `jetprof parse` does), so the two figures are measured the same way.
  const readSeconds: number[] = [];
  const parses: { seconds: number; rows: number; omitted: number; diagnostics: number; maxRssMb: number }[] = [];
  // The parser in a child, so its peak RSS is its own: the built one (as users run it) when dist/ exists.
  const builtParser = join(ROOT, 'dist/src/parsers/parse-file.js');
  const parserModule = existsSync(builtParser) ? builtParser : join(ROOT, 'src/parsers/parse-file.ts');
  for (let k = 0; k < 5; k++) {
    const plain = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
      import { createReadStream } from 'node:fs';
      const t0 = performance.now();
      await new Promise((res, rej) => createReadStream(${JSON.stringify(path)}, { highWaterMark: 1 << 20 }).on('data', () => undefined).on('end', res).on('error', rej));
      console.log((performance.now() - t0) / 1000);
    `,
      ],
      { encoding: 'utf8' },
    );
    if (plain.status !== 0) throw new Error(`plain-read bench failed: ${plain.stderr}`);
    readSeconds.push(Number(plain.stdout.trim()));
    const r = spawnSync(
      process.execPath,
      [
        ...(existsSync(builtParser) ? [] : [TSX]),
        '--input-type=module',
        '-e',
        `
      const { parseProfileFile } = await import(${JSON.stringify(parserModule)});
      const t0 = performance.now();
      const p = await parseProfileFile(${JSON.stringify(path)});
      const s = (performance.now() - t0) / 1000;
      const rows = p.result.value.processes.reduce((n, x) => n + (x.gpuTrace?.length ?? 0), 0);
      const omitted = p.result.value.processes.reduce((n, x) => n + (x.traceRowsOmitted ?? 0), 0);
      console.log(JSON.stringify({ seconds: s, rows, omitted, diagnostics: p.result.diagnostics.length, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
    `,
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    if (r.status !== 0) throw new Error(`parser bench failed: ${r.stderr}`);
    parses.push(JSON.parse(r.stdout.trim().split('\n').pop()!));
  }
  const readS = median(readSeconds);
  const p = {
    ...parses[0],
    seconds: median(parses.map((x) => x.seconds)),
    maxRssMb: Math.max(...parses.map((x) => x.maxRssMb)),
  };
  const mb = size / 1e6;
  results.parser = {
    module: parserModule.replace(`${ROOT}/`, ''),
    sizeMb: mb,
    plainReadMbPerS: mb / readS,
    plainReadMbPerSRuns: readSeconds.map((x) => mb / x),
    parseMbPerS: mb / p.seconds,
    parseMbPerSRuns: parses.map((x) => mb / x.seconds),
    ratio: readS / p.seconds,
    ratioRuns: parses.map((x, k) => readSeconds[k] / x.seconds),
    rowsKept: p.rows,
    rowsCounted: p.rows + p.omitted,
    diagnostics: p.diagnostics,
    peakRssMb: p.maxRssMb,
  };
  row(
    'parser MB/s (plain read MB/s)',
    `${(mb / p.seconds).toFixed(0)} (${(mb / readS).toFixed(0)})`,
    '>= 50% of read',
    readS / p.seconds >= 0.5,
  );
  row(
    'parser peak RSS (MB); trace rows kept / counted',
    `${p.maxRssMb.toFixed(0)}; ${p.rows} / ${p.rows + p.omitted}`,
    '< 150 MB',
    p.maxRssMb < 150,
  );
}
