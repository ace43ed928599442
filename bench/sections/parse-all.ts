/** bench section 8: see bench/run.ts for what each section measures. */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, TSX, WORK, log, results, row, state, traceLog } from '../common.ts';

/**
 * 8. `jetprof parse --trace-rows all --out F.json` on a 300 MB trace: every row kept, streamed out through scratch
 * files; peak RSS of the whole command (whole-process figure, as `/usr/bin/time -v` reports it).
 */
export async function benchParseAll() {
  state.section = 8;
  log('8. jetprof parse --trace-rows all --out on a generated 300 MB nvprof log: peak RSS');
  const path = await traceLog('nvprof-gpu-trace-300mb.txt', 300 * 1024 * 1024);
  const out = join(WORK, 'parse-all.json');
  const cli = existsSync(join(ROOT, 'dist/src/cli/jetprof.js'))
    ? [join(ROOT, 'dist/src/cli/jetprof.js')]
    : [TSX, join(ROOT, 'src/cli/jetprof.ts')];
  const t0 = performance.now();
  const r = spawnSync(
    '/usr/bin/time',
    ['-v', process.execPath, ...cli, 'parse', path, '--trace-rows', 'all', '--out', out],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`parse --trace-rows all failed: ${r.stderr.slice(-2000)}`);
  const rssMb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? NaN) / 1024;
  const outMb = statSync(out).size / 1e6;
  // the output is checked as JSON by a streaming count of its rows (it is too large to parse whole here)
  const rows = Number(execFileSync('grep', ['-c', '"startNs"', out], { encoding: 'utf8' }).trim());
  rmSync(out, { force: true });
  results.parseAll = { logMb: statSync(path).size / 1e6, outMb, rows, seconds, peakRssMb: rssMb };
  row(
    'parse --trace-rows all --out, 300 MB log: peak RSS (MB); rows written; JSON MB',
    `${rssMb.toFixed(0)}; ${rows}; ${outMb.toFixed(0)}`,
    '< 300 MB',
    rssMb < 300,
  );
}
