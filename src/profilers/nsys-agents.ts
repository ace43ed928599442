/**
 * Keeping Nsight Systems 2022.4 in order beside Node (it hangs now and then): its agents by session, ending those a run
 * left behind, a watchdog that ends a run whose application has ended while nsys writes nothing, and one jetprof nsys
 * session at a time on a machine. Linux /proc only.
 */
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { JetprofError } from '../util/errors.ts';
import { childrenOf, commandLineOf, processRef, processStart, processState, signalProcess } from '../util/process.ts';

/**
 * nsys agents now running (`nsys --start-agent --session-name=profile-<app>-<pid of nsys profile>`), by process id,
 * with the process id of the `nsys profile` that started them.
 */
function nsysAgents(): Map<number, number | undefined> {
  const agents = new Map<number, number | undefined>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmd = commandLineOf(Number(entry)); // empty once it has gone
    if (!cmd.some((a) => /(^|\/)nsys$/.test(a)) || !cmd.includes('--start-agent')) continue;
    const session = cmd.map((a) => /^--session-name=profile-.*-(\d+)$/.exec(a)?.[1]).find(Boolean);
    agents.set(Number(entry), session ? Number(session) : undefined);
  }
  return agents;
}

function alive(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state !== 'Z';
}

/** Agents whose `nsys profile` has exited: what a failed nsys 2022.4 run with Node leaves spinning. */
export function orphanNsysAgents(): number[] {
  return [...nsysAgents()].filter(([, owner]) => owner !== undefined && !alive(owner)).map(([pid]) => pid);
}

/** Ends the agents started by the `nsys profile` process `nsysPid` (and no other run's). */
export function endAgentsOf(nsysPid: number): number[] {
  const ended: number[] = [];
  for (const [pid, owner] of nsysAgents()) {
    if (owner !== nsysPid) continue;
    try {
      process.kill(pid, 'SIGKILL');
      ended.push(pid);
    } catch {
      /* already gone */
    }
  }
  return ended;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Children of `pid` (nsys starts its launcher from one of its threads), with their states. */
function childStates(pid: number): string[] {
  return childrenOf(pid).map((c) => processState(c) ?? 'gone');
}

/** Sizes and times of the files nsys writes while it finishes (its stream in /tmp, the report being made). */
function outputSignature(base: string): string {
  const files: string[] = [];
  for (const [dir, prefix] of [
    [tmpdir(), 'nsys-report-'],
    [dirname(base), basename(base)],
  ]) {
    try {
      for (const f of readdirSync(dir)) {
        if (!f.startsWith(prefix)) continue;
        const st = statSync(join(dir, f));
        files.push(`${f}:${st.size}:${st.mtimeMs}`);
      }
    } catch {
      /* folder gone */
    }
  }
  return files.sort().join('|');
}

/**
 * Watches an `nsys profile` process: once the application has exited and nsys has written nothing for `stallMs`,
 * the run is stuck (nsys 2022.4's agent spins forever after some Node runs). The agents of this nsys are killed,
 * which makes nsys exit; the caller then retries. `stallMs` is asked each second (an interrupted run waits less);
 * `onEnded` is told once when the application has exited (nsys then writes its report, for a Node program 5-16 s here
 * with nothing to show). Returns the function that stops watching.
 */
export function watchNsys(
  pid: number,
  base: string,
  stallMs: () => number,
  onStall: (waitedMs: number) => void,
  onEnded?: () => void,
): () => void {
  let lastSignature = '';
  let lastChange = Date.now();
  let launched = false;
  let ended = false;
  let killer: NodeJS.Timeout | undefined;
  const nsys = processRef(pid);
  const timer = setInterval(() => {
    const states = childStates(pid);
    const running = states.some((st) => st !== 'Z' && st !== 'gone');
    launched ||= states.length > 0;
    if (!launched || running) {
      lastChange = Date.now();
      return;
    }
    if (!ended) onEnded?.();
    ended = true;
    const sig = outputSignature(base);
    if (sig !== lastSignature) {
      lastSignature = sig;
      lastChange = Date.now();
      return;
    }
    const limit = stallMs();
    if (Date.now() - lastChange >= limit) {
      clearInterval(timer);
      onStall(limit);
      endAgentsOf(pid);
      // nsys still there 15 s after its agents ended: killed, if it is still the process watched (its id may have been
      // reused by then), and only while this watch runs
      killer = setTimeout(() => signalProcess(nsys, 'SIGKILL'), 15_000);
      killer.unref();
    }
  }, 1000);
  timer.unref();
  return () => {
    clearInterval(timer);
    clearTimeout(killer);
  };
}

function lockError(lock: string, code: string | undefined): JetprofError {
  return new JetprofError(
    'BAD_OUTPUT',
    `${lock}: cannot create the nsys lock (${code ?? 'error'}): the temporary folder ${dirname(lock)} is missing, full or read-only`,
    { suggestion: 'point TMPDIR at a writable folder with free space, e.g. TMPDIR=/var/tmp' },
  );
}

/**
 * One jetprof nsys session at a time on a machine: two at once disturb each other's timings, and nsys 2022.4 hangs
 * far more often. The lock file holds the owner's pid; a lock whose owner is gone, or is another process than the one that
 * wrote it (the file holds the pid and that process's start time: an id reused, or a pid written there by hand, does
 * not match), is taken over. A wait is given up after `maxWaitMs` and when `shouldStop` says so
 * (Ctrl-C is heard while waiting).
 */
export async function withNsysLock<T>(
  onWait: (owner: number) => void,
  body: () => Promise<T>,
  o: { shouldStop?: () => boolean; maxWaitMs?: number } = {},
): Promise<T> {
  const lock = join(tmpdir(), 'jetprof-nsys.lock');
  let announced = false;
  const waitUntil = Date.now() + (o.maxWaitMs ?? 30 * 60_000);
  for (let misses = 0; ;) {
    try {
      writeFileSync(lock, `${process.pid} ${processStart(process.pid) ?? ''}`, { flag: 'wx' });
      break;
    } catch (e) {
      // only "someone holds it" is worth waiting for: a missing, full or read-only temporary folder is said at once
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw lockError(lock, code);
      let owner = 0;
      let started: string | undefined;
      try {
        [owner, started] = ((text) => [Number(text[0] || 0), text[1]] as const)(
          readFileSync(lock, 'utf8').trim().split(/\s+/),
        );
      } catch {
        // released meanwhile; a lock that cannot be read either way is not one to spin on
        if (++misses > 20) throw lockError(lock, 'EACCES');
        await sleep(10);
        continue;
      }
      if (!owner || !alive(owner) || !started || processStart(owner) !== started) {
        try {
          unlinkSync(lock);
        } catch {
          /* another waiter took it over first */
        }
        // yield to the event loop between tries, so Ctrl-C and SIGTERM are heard
        await sleep(10);
        continue;
      }
      if (!announced) onWait(owner);
      announced = true;
      if (o.shouldStop?.())
        throw new JetprofError('INTERRUPTED', `stopped while waiting for the jetprof nsys run of pid ${owner}`, {
          exitCode: 130,
        });
      if (Date.now() > waitUntil)
        throw new JetprofError(
          'TOOL_FAILED',
          `another jetprof nsys run (pid ${owner}) still holds ${lock} after ${Math.round((o.maxWaitMs ?? 30 * 60_000) / 60_000)} minutes`,
          {
            suggestion: `wait for it to end, or end it (kill ${owner}); one nsys run at a time keeps both timings honest`,
          },
        );
      await sleep(500);
    }
  }
  try {
    return await body();
  } finally {
    try {
      if (readFileSync(lock, 'utf8').trim().split(/\s+/)[0] === String(process.pid)) unlinkSync(lock);
    } catch {
      /* already gone */
    }
  }
}
