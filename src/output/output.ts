/**
 * The one way jetprof writes a file. Every command's outputs come through here, so none of them can destroy an
 * input, replace a device file, or leave half a file under its final name:
 *
 * - `claimOutputs` refuses an output that is the same file as an input of the run (realpath, or device + inode) or
 *   as another output, before anything runs.
 * - `writeOutput`: a regular file is written under a temporary name beside it, fsynced, and renamed over the old one;
 *   character devices, FIFOs, sockets and `-` (stdout) are written straight through; a symlink is followed to its
 *   target. Free space is checked first where the file system says. Any failure removes the temporary file, leaves
 *   the old file untouched and throws one line with the path and the errno.
 * - Temporary names cannot be aimed: every file on its way out, whether jetprof writes it or a library opens it by
 *   name (a video writer, trtexec), is made in a folder this process created, 0700 (`.jetprof-out-<pid>-XXXXXX`,
 *   mkdtemp: `StagingFolder`), exclusively and never through a link (O_EXCL|O_NOFOLLOW), so nobody can have placed a
 *   link there; a parse's spill files too.
 * - Stale staging folders of processes that no longer run are removed, and the temporary files older jetprofs left
 *   beside their outputs (`.<name>.partial-<pid>-<hex>.<ext>`): only names of those two forms, owned by this user (a
 *   user's `.thesis.partial-999998.tex` is not jetprof's).
 *
 * A full disk is simulated by the tests in their own process (`injectWriteFault`), never through the environment.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { JetprofError } from '../util/errors.ts';
import { makeDirs, readTextOr } from '../util/files.ts';

type OutputKind = 'file' | 'stream' | 'stdout';

interface OutputTarget {
  /** As the user gave it. */
  requested: string;
  /** Where the bytes go: the symlink's target, resolved; '-' for stdout. */
  path: string;
  /** 'stream' for character devices, FIFOs and sockets: written straight through, never renamed over. */
  kind: OutputKind;
}

/** Where `path` really writes: stdout, a device/FIFO (written in place), or a regular file (written atomically). */
export function resolveTarget(path: string): OutputTarget {
  if (path === '-' || path === '/dev/stdout') return { requested: path, path: '-', kind: 'stdout' };
  let real = resolve(path);
  try {
    real = realpathSync(path); // follows symlinks (to /proc/self/fd/1 too)
  } catch {
    // does not exist yet: its folder may still be a symlink
    try {
      real = join(realpathSync(dirname(resolve(path))), basename(path));
    } catch {
      /* the folder does not exist either: the write says so */
    }
  }
  try {
    const st = statSync(real);
    if (st.isCharacterDevice() || st.isFIFO() || st.isSocket() || st.isBlockDevice())
      return { requested: path, path: real, kind: 'stream' };
    if (st.isDirectory()) {
      throw new JetprofError('BAD_OUTPUT', `${path}: is a folder, not a file`, {
        suggestion: 'give a file name inside it',
      });
    }
  } catch (e) {
    if (e instanceof JetprofError) throw e;
  }
  return { requested: path, path: real, kind: 'file' };
}

function identity(path: string): string | undefined {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** True when the two paths name the same file (the same real path, or the same device and inode). */
export function sameFile(a: string, b: string): boolean {
  const ta = resolveTarget(a);
  const tb = resolveTarget(b);
  if (ta.kind === 'stdout' || tb.kind === 'stdout') return false;
  if (ta.path === tb.path) return true;
  const ia = identity(ta.path);
  return ia !== undefined && ia === identity(tb.path);
}

/**
 * Checks a run's outputs before it starts: none may be the same file as an input, nor as another output. Undefined
 * entries are skipped. Stdout ('-') and devices may be named more than once.
 */
export function claimOutputs(
  inputs: Record<string, string | undefined>,
  outputs: Record<string, string | undefined>,
): void {
  const given = (r: Record<string, string | undefined>) =>
    Object.entries(r).filter((e): e is [string, string] => !!e[1]);
  const outs = given(outputs);
  for (const [what, out] of outs) {
    const target = resolveTarget(out);
    if (target.kind !== 'file') continue;
    for (const [inWhat, input] of given(inputs)) {
      // a folder (of images) is never the same file as an output
      if (isFolder(input)) continue;
      if (sameFile(out, input)) {
        throw new JetprofError('BAD_OUTPUT', `${out}: the ${what} would overwrite the ${inWhat} (${input})`, {
          suggestion: `choose another path for the ${what}`,
        });
      }
    }
  }
  for (let i = 0; i < outs.length; i++) {
    for (let j = i + 1; j < outs.length; j++) {
      const [wa, a] = outs[i];
      const [wb, b] = outs[j];
      if (resolveTarget(a).kind === 'file' && sameFile(a, b)) {
        throw new JetprofError('BAD_OUTPUT', `${b}: the ${wb} and the ${wa} are the same file`, {
          suggestion: `give the ${wb} a path of its own`,
        });
      }
    }
  }
}

let placeOfThis: string | undefined;

/**
 * Where this process runs, as 8 hex digits of the machine's boot, host name and PID namespace: a process id means this
 * process only there. Another machine (NFS), another container or the host beside one see the same folder with other
 * processes under the same ids, so the sweep judges only its own place's names. Worked out at the first output.
 */
export function place(): string {
  if (placeOfThis) return placeOfThis;
  let pidNamespace = '';
  try {
    pidNamespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    /* not Linux: the boot id is missing too, and the host name decides */
  }
  const boot = readTextOr('/proc/sys/kernel/random/boot_id').trim();
  placeOfThis = createHash('sha256').update(`${boot}:${pidNamespace}:${hostname()}`).digest('hex').slice(0, 8);
  return placeOfThis;
}

/** The names StagingFolder makes and older jetprofs' temporary files (the sweep removes nothing else); the oldest lack the place. */
const OUR_PARTIAL = /^\..+\.partial-(\d+)(?:-([0-9a-f]{8}))?-[0-9a-f]{12}(\.[^.]*)?$/;
const OUR_STAGING = /^\.jetprof-out-(\d+)(?:-([0-9a-f]{8}))?-[A-Za-z0-9]{6}$/;
/** A name without its place is swept only this long after it was last written (no run stays that long without a write). */
const UNPLACED_AGE_MS = 24 * 3600 * 1000;

/**
 * A folder of this process's own beside outputs (mkdtemp: a new name, mode 0700, where nobody else can have put a
 * link), for files a library or a tool opens by name and files written one by one: each is complete there before it
 * takes its own name in `into` (`commit`). What runs that are gone left in `into` is swept first; the folder goes with
 * `commit` or `drop`, and on every way out (a signal, process.exit). `shown`: the path a failure names.
 */
export class StagingFolder {
  readonly dir: string;

  constructor(
    readonly into: string,
    private readonly shown = into,
  ) {
    removeStalePartials(into);
    try {
      this.dir = mkdtempSync(join(into, `.jetprof-out-${process.pid}-${place()}-`));
    } catch (e) {
      throw writeError(shown, e);
    }
    inFlight.add(this.dir);
  }

  /** Where `name` is written before its commit. */
  path(name: string): string {
    return join(this.dir, name);
  }

  /** Each of `names` (default: all it holds) renamed to the same name in `into`, then the folder removed. */
  commit(names: readonly string[] = readdirSync(this.dir)): void {
    try {
      for (const name of names) renameSync(join(this.dir, name), join(this.into, name));
    } catch (e) {
      throw writeError(this.shown, e);
    } finally {
      this.drop();
    }
  }

  /** Removed with whatever it holds. */
  drop(): void {
    rmSync(this.dir, { recursive: true, force: true });
    inFlight.delete(this.dir);
  }
}

/** Free bytes for an unprivileged writer in `dir`, or undefined where the file system does not say. */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** A file-system error as jetprof raises one itself: its code, and what it knows beyond it (writeError shows it). */
type FaultWithDetail = NodeJS.ErrnoException & { detail?: string };

let faultyPath: ((path: string) => boolean) | undefined;

/** For the tests: writes to a path `faulty` accepts fail with ENOSPC until it is called again without one. */
export function injectWriteFault(faulty?: (path: string) => boolean): void {
  faultyPath = faulty;
}

/** The injected fault for a write to `path`, as the file system gives one, saying it is simulated. */
export function simulatedFault(path: string): FaultWithDetail | undefined {
  if (!faultyPath?.(path)) return undefined;
  const detail = 'simulated by a test, the disk is not full';
  return Object.assign(new Error(`ENOSPC (${detail})`), {
    code: 'ENOSPC',
    detail,
    errno: -28,
    syscall: 'write',
    path,
  });
}

/** One line for a failed write: the path, the errno and what to do. */
export function writeError(path: string, e: unknown): JetprofError {
  const err = e as FaultWithDetail;
  // what jetprof knows of a full disk beyond its code (`the encoder wrote 10 of the 30 frames`) is kept
  const detail = err.code === 'ENOSPC' ? err.detail : undefined;
  const why = err.code
    ? `${err.code}: ${err.code === 'ENOSPC' ? `no space left on device${detail ? ` (${detail})` : ''}` : err.code === 'EACCES' || err.code === 'EPERM' ? 'permission denied' : err.code === 'ENOENT' ? 'no such folder' : err.code === 'ENXIO' ? 'a FIFO no process is reading' : (err.message ?? '').split(',')[0].replace(/^\w+: /, '')}`
    : String(err?.message ?? e);
  const fix =
    err.code === 'ENOSPC'
      ? 'free some space or write elsewhere; the previous file, if any, is untouched'
      : err.code === 'ENXIO'
        ? `start its reader first (e.g. cat ${path}), or give a file name`
        : 'choose a writable output path';
  return new JetprofError('BAD_OUTPUT', `${path}: cannot write (${why})`, { suggestion: fix });
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** While a command runs in-process (runInProcess), '-' goes through process.stdout, which the caller may redirect. */
let stdoutInProcess = false;
export function writeStdoutThroughStream(on: boolean): void {
  stdoutInProcess = on;
}

/**
 * Writes all of `data`. A pipe Node has made non-blocking (stdout, once process.stdout is used) answers EAGAIN while
 * the reader is behind: wait a millisecond and go on, as a blocking write would have waited.
 */
function writeAll(fd: number, data: Uint8Array): void {
  for (let off = 0; off < data.length;) {
    try {
      off += writeSync(fd, data, off, data.length - off);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // the reader of stdout has gone (`jetprof parse LOG | head`): stop quietly, as Unix tools do
      if (code === 'EPIPE' && fd === 1) process.exit(0);
      if (code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

/**
 * The mode of a new file: rw for all less the umask, as usual; but a process started by a profiler may run with umask
 * 0 (nsys does), where that would make every output world-writable, so then the common 022.
 */
export function newFileMode(): number {
  const mask = process.umask();
  return 0o666 & ~(mask === 0 ? 0o022 : mask);
}

/** Writes `data` to `path` as the module comment says. Throws BAD_OUTPUT (exit 2) with the path and the errno. */
export function writeOutput(path: string, data: string | Uint8Array): void {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  writeOutputChunks(path, (write) => write(bytes), bytes.length);
}

/** Temporary files being written now: removed by `removeFilesInFlight` on every way out (Ctrl-C, SIGTERM). */
const inFlight = new Set<string>();

const EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Removes every temporary file still being written (a signal ends the process before it is complete). */
export function removeFilesInFlight(): void {
  for (const tmp of inFlight) rmSync(tmp, { recursive: true, force: true });
  inFlight.clear();
}

/**
 * The same as writeOutput for output made piece by piece (a JSON too large to hold as one string): `produce` calls
 * `write` with each piece, in order. A regular file gets the temporary name, fsync and rename; stdout, devices and
 * FIFOs are written straight through.
 */
export function writeOutputChunks(
  path: string,
  produce: (write: (chunk: string | Uint8Array) => void) => void,
  /** The size when known in advance: a disk without room for it is refused before anything is written. */
  knownBytes?: number,
): void {
  stageOutputChunks(path, produce, knownBytes).commit();
}

/** An output written in full under its temporary name: `commit` renames it to its own, `abort` deletes it. */
export interface StagedOutput {
  commit(): void;
  abort(): void;
}

/** writeOutput's write without its rename: the files of one run are renamed together, once all are written. */
export function stageOutput(path: string, data: string | Uint8Array): StagedOutput {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  return stageOutputChunks(path, (write) => write(bytes), bytes.length);
}

/** writeOutputChunks up to the rename (stdout, devices and FIFOs are written through: nothing is left to commit). */
function stageOutputChunks(
  path: string,
  produce: (write: (chunk: string | Uint8Array) => void) => void,
  knownBytes?: number,
): StagedOutput {
  const done = { commit() {}, abort() {} };
  const target = resolveTarget(path);
  const toBytes = (c: string | Uint8Array) => (typeof c === 'string' ? Buffer.from(c) : c);
  if (target.kind === 'stdout') {
    produce((c) => (stdoutInProcess ? process.stdout.write(toBytes(c)) : writeAll(1, toBytes(c))));
    return done;
  }
  if (target.kind === 'stream') {
    let fd: number | undefined;
    try {
      // a FIFO opened without a reader would block here, signals unheard: refused at once (ENXIO) instead
      const fifo = statSync(target.path).isFIFO();
      fd = openSync(target.path, constants.O_WRONLY | constants.O_APPEND | (fifo ? constants.O_NONBLOCK : 0));
      const f = fd;
      produce((c) => writeAll(f, toBytes(c)));
    } catch (e) {
      throw e instanceof JetprofError ? e : writeError(path, e);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    return done;
  }
  try {
    makeDirs(dirname(target.path)); // a folder the output names is made, as `mkdir -p` (EROFS said as such)
  } catch (e) {
    throw writeError(path, e);
  }
  // written complete in a folder of this process's own beside it, then renamed to its own name (StagingFolder)
  const folder = new StagingFolder(dirname(target.path), path);
  const free = freeBytes(dirname(target.path));
  if (knownBytes !== undefined && free !== undefined && knownBytes > free) {
    folder.drop();
    throw writeError(path, Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }));
  }
  const name = basename(target.path);
  const tmp = folder.path(name);
  let fd: number | undefined;
  try {
    // a new file or nothing: never one that exists, never through a link planted under the name
    fd = openSync(tmp, EXCLUSIVE, newFileMode());
    const fault = simulatedFault(path);
    if (fault) throw fault;
    const f = fd;
    produce((c) => writeAll(f, toBytes(c)));
    fsyncSync(fd);
    // keep the mode of the file it replaces
    try {
      const old = statSync(target.path);
      if (fstatSync(fd).mode !== old.mode) fchmodSync(fd, old.mode & 0o7777);
    } catch {
      /* a new file */
    }
    closeSync(fd);
    fd = undefined;
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    folder.drop();
    throw e instanceof JetprofError ? e : writeError(path, e);
  }
  // until then its folder is in flight: a signal removes it, as it removes a file still being written
  return { commit: () => folder.commit([name]), abort: () => folder.drop() };
}

/**
 * Scratch lines kept on disk under keys while a long job runs (a parse's trace rows), read back in order: memory stays
 * bounded whatever the input's size. The folder is removed with `dispose()`, and on every way out (`inFlight`).
 */
export class SpillStore {
  private readonly folder: StagingFolder;
  private readonly dir: string;
  private readonly files = new Map<string, { path: string; fd: number; pending: string[]; pendingBytes: number }>();

  constructor(near: string) {
    this.folder = new StagingFolder(near);
    this.dir = this.folder.dir;
  }

  append(key: string, lines: string[]): void {
    let f = this.files.get(key);
    if (!f) {
      const path = join(this.dir, String(this.files.size));
      f = { path, fd: openSync(path, 'w'), pending: [], pendingBytes: 0 };
      this.files.set(key, f);
    }
    for (const l of lines) {
      f.pending.push(l);
      f.pendingBytes += l.length + 1;
    }
    if (f.pendingBytes > 1 << 20) this.flush(f);
  }

  private flush(f: { fd: number; pending: string[]; pendingBytes: number }): void {
    if (f.pending.length === 0) return;
    writeAll(f.fd, Buffer.from(`${f.pending.join('\n')}\n`));
    f.pending = [];
    f.pendingBytes = 0;
  }

  /** The lines under `key`, in order, a block at a time (a line holds no newline). */
  *read(key: string): Generator<string> {
    const f = this.files.get(key);
    if (!f) return;
    this.flush(f);
    const fd = openSync(f.path, 'r');
    try {
      const buf = Buffer.alloc(1 << 20);
      let rest = '';
      for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) {
        const text = rest + buf.toString('utf8', 0, n);
        const lines = text.split('\n');
        rest = lines.pop() ?? '';
        yield* lines;
      }
      if (rest) yield rest;
    } finally {
      closeSync(fd);
    }
  }

  dispose(): void {
    for (const f of this.files.values()) closeSync(f.fd);
    this.files.clear();
    this.folder.drop();
  }
}

export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by someone else
  }
}

/**
 * Removes the temporary files (`.<name>.partial-<pid>-<hex>.<ext>`) and staging folders (`.jetprof-out-<pid>-XXXXXX`)
 * in `dir` left by processes that are gone (a SIGKILL, a power cut): only those names, only this user's, never
 * through a link. Returns what it removed. Those of running processes (another jetprof writing there now) stay.
 */
export function removeStalePartials(dir: string): string[] {
  const removed: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of entries) {
    const file = OUR_PARTIAL.exec(name);
    const folder = file ? undefined : OUR_STAGING.exec(name);
    const pid = Number((file ?? folder)?.[1]);
    const where = (file ?? folder)?.[2];
    // only a process of this place can be proven gone: another machine's or namespace's names are never swept
    if (!(file || folder) || (where !== undefined && where !== place())) continue;
    if (pid === process.pid || processAlive(pid)) continue;
    const p = join(dir, name);
    try {
      const st = lstatSync(p);
      if (uid !== undefined && st.uid !== uid) continue;
      if (where === undefined && Date.now() - st.mtimeMs < UNPLACED_AGE_MS) continue;
      if (file && st.isFile()) unlinkSync(p);
      else if (folder && st.isDirectory()) rmSync(p, { recursive: true, force: true });
      else continue;
      removed.push(p);
    } catch {
      /* raced with someone */
    }
  }
  return removed;
}
