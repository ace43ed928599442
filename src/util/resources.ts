/**
 * What the machine is short of when an open fails for no reason of the file's own: file descriptors (`ulimit -n`)
 * or memory (`ulimit -v`, or little free). Read from /proc (Linux); elsewhere nothing is said.
 */
import { freemem } from 'node:os';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { JetprofError } from './errors.ts';

/** A soft limit from /proc/self/limits ("Max open files", "Max address space"), or undefined when unlimited. */
function softLimit(name: string): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(name));
    const v = line?.slice(name.length).trim().split(/\s+/)[0];
    return v && /^\d+$/.test(v) ? Number(v) : undefined;
  } catch {
    return undefined;
  }
}

function openFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

function virtualBytes(): number | undefined {
  try {
    const kb = /VmSize:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The real cause of a failed open of `path`, when it is a resource: EMFILE (the descriptors in use are at the
 * limit) or ENOMEM (the address space is at `ulimit -v`, or the machine has under 64 MB free). Undefined otherwise.
 */
export function resourceShortage(path: string): JetprofError | undefined {
  // at the limit, even reading /proc needs a descriptor it cannot have: that failure is the answer
  let noFd = false;
  try {
    closeSync(openSync('/proc/self/limits', 'r'));
  } catch (e) {
    noFd = (e as NodeJS.ErrnoException).code === 'EMFILE' || (e as NodeJS.ErrnoException).code === 'ENFILE';
  }
  if (noFd)
    return new JetprofError(
      'RESOURCE',
      `${path}: cannot be opened: this process has as many files open as it may (EMFILE: too many open files, ulimit -n)`,
      { suggestion: 'raise the limit (e.g. ulimit -n 4096) or run fewer streams' },
    );
  const fdLimit = softLimit('Max open files');
  const fds = openFds();
  if (fdLimit !== undefined && fds !== undefined && fds >= fdLimit - 8)
    return new JetprofError(
      'RESOURCE',
      `${path}: cannot be opened: ${fds} of the ${fdLimit} files this process may open are in use (EMFILE: too many open files)`,
      { suggestion: `raise the limit (ulimit -n ${Math.max(4096, fdLimit * 4)}) or run fewer streams` },
    );
  const asLimit = softLimit('Max address space');
  const vm = virtualBytes();
  if ((asLimit !== undefined && vm !== undefined && vm >= asLimit * 0.9) || freemem() < 64 * 1024 * 1024)
    return new JetprofError(
      'RESOURCE',
      `${path}: cannot be opened: out of memory (ENOMEM: ${asLimit !== undefined && vm !== undefined ? `${(vm / 2 ** 30).toFixed(1)} of the ${(asLimit / 2 ** 30).toFixed(1)} GiB ulimit -v allows are mapped` : `${(freemem() / 2 ** 20).toFixed(0)} MiB free`})`,
      { suggestion: 'run fewer streams, a smaller --frame-size, or --no-write (the encoders hold most of the memory)' },
    );
  return undefined;
}

/**
 * What this process can still take: memory, counting what it holds now (the machine's MemAvailable from /proc/meminfo
 * plus its RSS), and under `ulimit -v` the address space left (the limit less VmSize). Undefined without /proc.
 */
export function memoryRoom(): { memoryBytes: number; addressRoomBytes?: number } | undefined {
  try {
    const kb = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
    if (!kb) return undefined;
    const asLimit = softLimit('Max address space');
    const vm = virtualBytes();
    return {
      memoryBytes: Number(kb) * 1024 + process.memoryUsage().rss,
      ...(asLimit !== undefined && vm !== undefined ? { addressRoomBytes: Math.max(0, asLimit - vm) } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Refuses, in one line naming `path`, work that needs `neededBytes` of memory where this process has less room
 * (memoryRoom: the machine's available memory, or what `ulimit -v` leaves); `room` stands in for it in tests.
 */
export function requireRoom(
  path: string,
  what: string,
  neededBytes: number,
  o: { suggestion: string; room?: ReturnType<typeof memoryRoom> },
): void {
  const room = 'room' in o ? o.room : memoryRoom();
  const have = Math.min(room?.memoryBytes ?? Infinity, room?.addressRoomBytes ?? Infinity);
  if (neededBytes <= have) return;
  const gb = (b: number) => `${(b / 2 ** 30).toFixed(1)} GB`;
  throw new JetprofError(
    'BAD_INPUT',
    `${path}: ${what} takes about ${gb(neededBytes)} of memory, and this machine has ${gb(have)} to spare`,
    {
      suggestion: o.suggestion,
    },
  );
}
