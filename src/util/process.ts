/** Running an external command (nsys, nvprof, trtexec, an entry script) and collecting what it prints. */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface RunCommandOptions {
  /** Each chunk as it arrives, with the stream it came from. */
  onOutput?: (chunk: Buffer, from: 'stdout' | 'stderr') => void;
  /**
   * Called with the child's pid once started; may return a function called when it closes (its output may close after
   * it exited, held open by a process it started: a signal sent by pid meanwhile goes through signalProcess).
   */
  onSpawn?: (pid: number) => (() => void) | void;
  /** The child's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/**
 * `node <script>` for one of jetprof's commands (jetprof, infer, infer-onnx...), as this process runs: the built .js,
 * or the .ts through tsx when jetprof runs from source. JETPROF_BUILD names a build of these same sources
 * (scripts/test.sh makes one before the tests): from source, a child starts from it, 0.5 s of CPU less than through tsx.
 */
export function cliCommand(name: string): string[] {
  const fromSource = fileURLToPath(import.meta.url).endsWith('.ts');
  const build = process.env.JETPROF_BUILD;
  if (fromSource && build) return [process.execPath, join(build, 'src', 'cli', `${name}.js`)];
  const script = fileURLToPath(new URL(`../cli/${name}.${fromSource ? 'ts' : 'js'}`, import.meta.url));
  return fromSource ? [process.execPath, `--import=${import.meta.resolve('tsx')}`, script] : [process.execPath, script];
}

/**
 * A command line a user can paste into a shell: `node [--import=tsx] .../src/cli/NAME.ts|js` becomes NAME (the command
 * on PATH), and every argument a shell would read otherwise is single-quoted (a name holding `$(...)` stays text).
 */
export function shellLine(argv: readonly string[]): string {
  const entry = argv.findIndex((a) => /\/(dist\/)?src\/cli\/[\w-]+\.(ts|js)$/.test(a));
  const words =
    argv[0] === process.execPath && entry > 0
      ? [/([\w-]+)\.(ts|js)$/.exec(argv[entry])![1], ...argv.slice(entry + 1)]
      : argv;
  return words.map((a) => (/^[\w./:=,@+%-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * The environment for an infer that a job runs and relays (profile, compare): a progress line every `seconds`
 * seconds on its stderr, a pipe where the terminal's one-line display would stay silent. One the user set is kept.
 */
export function relayedProgressEnv(seconds = 10): NodeJS.ProcessEnv {
  return { ...process.env, JETPROF_PROGRESS: process.env.JETPROF_PROGRESS ?? `every:${seconds}` };
}

/**
 * Resolves with the exit code (128 + the signal's number when a signal ended it), that signal, and stdout + stderr in
 * arrival order.
 */
export function runCommand(
  cmd: string,
  args: string[],
  o: RunCommandOptions = {},
): Promise<{ code: number; signal?: NodeJS.Signals; output: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(o.env ? { env: o.env } : {}) });
    const onClose = child.pid !== undefined ? o.onSpawn?.(child.pid) : undefined;
    const chunks: Buffer[] = [];
    for (const from of ['stdout', 'stderr'] as const) {
      child[from].on('data', (d: Buffer) => {
        chunks.push(d);
        o.onOutput?.(d, from);
      });
    }
    child.on('error', reject);
    child.on('close', (code, signal) => {
      onClose?.();
      // killed by a signal: 128 + its number, as a shell reports it (SIGINT 130, SIGTRAP from a V8 fatal error 133)
      resolve({
        code: code ?? 128 + ((signal && constants.signals[signal]) || 0),
        ...(signal ? { signal } : {}),
        output: Buffer.concat(chunks),
      });
    });
  });
}

/** The processes `pid` started (from any of its threads), as each thread's /proc children file lists them; none once it has exited. */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children; // exited
  }
  for (const task of tasks) {
    try {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
      children.push(...listed.map(Number));
    } catch {
      /* the thread ended */
    }
  }
  return children;
}

/** The processes started by `pid`, their children and so on (Linux /proc; none where /proc is missing). */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  for (let queue = [pid]; queue.length;) {
    const fresh = childrenOf(queue.shift()!).filter((c) => !found.includes(c));
    found.push(...fresh);
    queue.push(...fresh);
  }
  return found;
}

/** The command line of a process, as its arguments (empty when it has exited). */
export function commandLineOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses): [0] the state (R, S, Z
 * ...), [19] the start time (field 22). Undefined once the process has gone.
 */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The state of process `pid` (R running, S sleeping, Z zombie ...); undefined once it has gone. */
export function processState(pid: number): string | undefined {
  return statFields(pid)?.[0];
}

/** When process `pid` started (/proc/PID/stat field 22, in clock ticks since boot); undefined once it has gone. */
export function processStart(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/**
 * A process to signal later: its id, and when it started. Process ids are reused, and soon on a busy machine
 * (pid_max is 32768 on many, and threads take ids too): a signal sent by id alone after the process ended may hit
 * whatever process got the number next.
 */
export interface ProcessRef {
  pid: number;
  start?: string;
}

export function processRef(pid: number): ProcessRef {
  return { pid, start: processStart(pid) };
}

/** Sends `signal` to the process `ref` names, if it is still that process; true when sent. */
export function signalProcess(ref: ProcessRef, signal: NodeJS.Signals): boolean {
  if (ref.start === undefined || processStart(ref.pid) !== ref.start) return false;
  try {
    process.kill(ref.pid, signal);
    return true;
  } catch {
    return false; // it has just ended
  }
}

/**
 * One turn of the event loop (setImmediate runs after the poll phase, where signals are delivered): a loop whose
 * awaits all resolve at once (OpenCV DNN runs synchronously) would otherwise never hear Ctrl-C, SIGTERM or SIGHUP.
 */
export function turnEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
