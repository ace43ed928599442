/** Runs a commander program with jetprof's error handling (one line, exit 2 for bad usage). */
import { type Command, CommanderError } from 'commander';
import { removeFilesInFlight, writeStdoutThroughStream } from '../output/output.ts';
import { handleError } from './handle-error.ts';
import { escapeControls } from '../util/text-input.ts';
import { helpWidth, wrapProse } from './help-text.ts';

/**
 * Descriptions are written with line breaks for the source's sake: join the lines of a paragraph so that it is
 * wrapped to the terminal (80 columns, or wider) instead of keeping hand-made breaks mid-sentence. A line that starts
 * with a space (an indented item), or follows one, or follows a line ending a sentence or a list (`.` `:`), stays on
 * a line of its own.
 */
export function reflow(text: string): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const prev = out[out.length - 1];
    if (
      prev !== undefined &&
      prev !== '' &&
      line !== '' &&
      !/^\s/.test(line) &&
      !/^\s/.test(prev) &&
      !/[.:]$/.test(prev)
    )
      out[out.length - 1] = `${prev} ${line}`;
    else out.push(line);
  }
  return out.join('\n');
}

/** commander's ends as exit codes: help and --version 0, a usage error 2. */
function commanderExitCode(err: CommanderError): number {
  const done = ['commander.helpDisplayed', 'commander.version', 'commander.help'];
  return done.includes(err.code) ? 0 : 2;
}

/** Applies jetprof's output, help and exit-code rules to a command and every subcommand (addCommand does not inherit them). */
function configure(cmd: Command, inProcess = false): void {
  cmd.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  // the subcommand list shows names only: with their arguments the column left too little room to wrap summaries
  cmd.configureHelp({ subcommandTerm: (c) => c.name() });
  if (cmd.description()) cmd.description(wrapProse(reflow(cmd.description()), helpWidth()));
  cmd.exitOverride((err) => {
    if (inProcess) throw err;
    process.exit(commanderExitCode(err));
  });
  for (const sub of cmd.commands) configure(sub, inProcess);
}

/** `jetprof parse LOG | head`: when the reader closes the pipe, stop quietly (no EPIPE stack), as Unix tools do. */
function quietOnClosedStdout(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

/**
 * Ctrl-C, SIGTERM, SIGHUP in a command that does not finalize work of its own (export, parse, report): no temporary
 * file is left behind, exit 128 + the signal. A command that handles the signal itself (infer finishes the frame in
 * flight and finalizes its files) has its own listener, and this one then steps aside.
 */
function cleanExitOnSignals(): void {
  for (const [signal, n] of [
    ['SIGINT', 2],
    ['SIGTERM', 15],
    ['SIGHUP', 1],
  ] as const) {
    const handler = () => {
      if (process.listenerCount(signal) > 1) return;
      removeFilesInFlight();
      process.stderr.write(`\ninterrupted (${signal}): nothing was written\n`);
      process.exit(128 + n);
    };
    process.on(signal, handler);
  }
}

/**
 * Everything printed to a terminal shows control characters instead of obeying them (a shared log's ESC sequences,
 * a bare CR in a name). A CR that starts a write stays: it is the progress line redrawing itself.
 */
function guardTerminal(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (!stream.isTTY) continue;
    const raw = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : undefined;
      if (text === undefined) return raw(chunk, ...rest);
      const lead = text.startsWith('\r') ? '\r' : '';
      return raw(lead + escapeControls(text.slice(lead.length)), ...rest);
    }) as typeof stream.write;
  }
}

/**
 * Rule (native memory). Once the event loop is empty the process leaves through process.exit() ('exit' handlers run), not Node's teardown:
 * there V8 may finalize OpenCV Mats still alive, and opencv4nodejs's allocator then reports their memory to an isolate
 * being disposed and dies of SIGSEGV (Isolate::AdjustAmountOfExternalAllocatedMemory) after the work was written.
 * test/signals.test.ts checks that a command leaves this way.
 */
export function exitBeforeTeardown(): void {
  process.once('beforeExit', () => process.exit());
}

export async function runProgram(program: Command, argv = process.argv): Promise<void> {
  configure(program);
  guardTerminal();
  quietOnClosedStdout();
  cleanExitOnSignals();
  process.on('exit', removeFilesInFlight); // process.exit() skips finally blocks: no scratch or partial file stays
  exitBeforeTeardown();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    process.exitCode = handleError(e, program.name());
  }
}

/**
 * Runs a program in this process (the tests) and returns the exit code a process of its own would exit with. No
 * signal handler, terminal guard or exit hook; the output goes to process.stdout/stderr, which the caller may redirect.
 */
export async function runInProcess(program: Command, args: string[]): Promise<number> {
  configure(program, true);
  const before = process.exitCode;
  process.exitCode = undefined;
  writeStdoutThroughStream(true);
  try {
    await program.parseAsync(args, { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (e) {
    return e instanceof CommanderError ? commanderExitCode(e) : handleError(e, program.name());
  } finally {
    process.exitCode = before;
    writeStdoutThroughStream(false);
  }
}
