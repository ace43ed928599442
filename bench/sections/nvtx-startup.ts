/** bench section 6: see bench/run.ts for what each section measures. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadNvtx } from '../../src/pipeline/nvtx.ts';
import { ROOT, TSX, log, median, results, row, state } from '../common.ts';

export function benchNvtxAndStartup() {
  state.section = 6;
  log('6. NVTX cost per range; jetprof parse --help start-up');
  const nvtx = loadNvtx();
  const n = 200_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    nvtx.push('bench');
    nvtx.pop();
  }
  const pushPopNs = Number(process.hrtime.bigint() - t0) / n;
  const t1 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) nvtx.end(nvtx.start('bench'));
  const startEndNs = Number(process.hrtime.bigint() - t1) / n;
  const built = join(ROOT, 'dist/src/cli/jetprof.js');
  const cmd = existsSync(built) ? [built] : [TSX, join(ROOT, 'src/cli/jetprof.ts')];
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const s = performance.now();
    execFileSync(process.execPath, [...cmd, 'parse', '--help'], { stdio: 'ignore' });
    times.push(performance.now() - s);
  }
  const startup = median(times);
  results.nvtx = {
    library: nvtx.detail,
    enabled: nvtx.enabled,
    pushPopNsPerRange: pushPopNs,
    startEndNsPerRange: startEndNs,
  };
  results.startup = {
    command: `node ${existsSync(built) ? 'dist/src/cli/jetprof.js' : 'src/cli/jetprof.ts (tsx: run npm run build first)'} parse --help`,
    msMedian: startup,
  };
  row(
    `NVTX push+pop per range (ns)${nvtx.enabled ? '' : ' [library absent: no-op]'}`,
    pushPopNs.toFixed(0),
    '',
    undefined,
  );
  row('jetprof parse --help start-up (ms)', startup.toFixed(0), '< 300 ms', startup < 300);
}
