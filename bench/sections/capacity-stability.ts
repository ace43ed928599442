/** bench section 13: see bench/run.ts for what each section measures. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, TSX, WORK, log, results, row, state, capacityArgs } from '../common.ts';

/** Spinning processes beside a search: each keeps one core busy until killed. */
function spinners(n: number): ChildProcess[] {
  return Array.from({ length: n }, () =>
    spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore', detached: false }),
  );
}

interface Search {
  maxStreams: number;
  answer: string;
  machineLine: string;
  busyRuns: number;
  runs: number;
  wallSeconds: number;
  points: { streams: number; held: boolean; runs?: number; heldRuns?: number; borderline?: boolean }[];
}

/**
 * 13. Capacity stability: the same `jetprof capacity` search (vtest.avi at 10 FPS, p99 <= 400 ms, the default rule)
 * twice in a row, then twice more beside two processes that each keep a core busy. On a quiet machine the two answers
 * must agree; beside the busy processes they agree, or the answer that differs says the machine was busy.
 */
export function benchCapacityStability() {
  state.section = 13;
  log('13. capacity: the same search twice in a row, then twice beside two busy processes');
  const cli = existsSync(join(ROOT, 'dist/src/cli/jetprof.js'))
    ? [join(ROOT, 'dist/src/cli/jetprof.js')]
    : [TSX, join(ROOT, 'src/cli/jetprof.ts')];
  const search = (name: string): Search => {
    const json = join(WORK, `capacity-${name}.json`);
    const t0 = performance.now();
    const c = spawnSync(process.execPath, [...cli, ...capacityArgs(json)], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (c.status !== 0) throw new Error(`capacity failed: ${c.stderr}`);
    const cap = JSON.parse(readFileSync(json, 'utf8'));
    const lines = c.stdout.trim().split('\n');
    const s: Search = {
      maxStreams: cap.maxStreams,
      answer: lines.find((l) => l.startsWith('this machine holds')) ?? '',
      machineLine: lines.find((l) => l.startsWith('The machine over the search')) ?? '',
      busyRuns: cap.machine?.busyRuns ?? 0,
      runs: cap.machine?.runs ?? 0,
      wallSeconds: Math.round((performance.now() - t0) / 1000),
      points: cap.points,
    };
    log(`  ${name}: ${s.maxStreams} streams in ${s.wallSeconds} s (busy in ${s.busyRuns} of ${s.runs} runs)`);
    return s;
  };
  const quiet = [search('quiet-1'), search('quiet-2')];
  const busy: Search[] = [];
  const spin = spinners(2);
  try {
    busy.push(search('busy-1'), search('busy-2'));
  } finally {
    for (const p of spin) p.kill('SIGKILL');
  }
  const agree = (a: Search, b: Search) => a.maxStreams === b.maxStreams;
  // beside the busy processes: the same answer, or every answer that differs from the quiet one says it was busy
  const busyHonest =
    agree(busy[0], busy[1]) || busy.every((s) => s.maxStreams === quiet[0].maxStreams || s.busyRuns > 0);
  results.capacityStability = { quiet, busy };
  // two answers that agree meet the target; two that differ miss it only when neither search saw a busy run
  const wasQuiet = quiet.every((s) => s.busyRuns === 0);
  const quietAgree = agree(quiet[0], quiet[1]);
  row(
    'jetprof capacity twice in a row (vtest.avi, 10 FPS, p99 <= 400 ms): streams held; runs that saw a busy machine',
    `${quiet[0].maxStreams}, ${quiet[1].maxStreams}; ${quiet[0].busyRuns} of ${quiet[0].runs}, ${quiet[1].busyRuns} of ${quiet[1].runs}`,
    'the same',
    quietAgree ? true : wasQuiet ? false : undefined,
  );
  row(
    'the same search twice beside two busy processes: streams held; runs that saw a busy machine',
    `${busy[0].maxStreams}, ${busy[1].maxStreams}; ${busy[0].busyRuns} of ${busy[0].runs}, ${busy[1].busyRuns} of ${busy[1].runs}`,
    'the same, or the answer says busy',
    busyHonest,
  );
}
