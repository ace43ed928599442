/** Runs a commander program with jetprof's error handling (one line, exit 2 for bad usage). */
import type { Command } from 'commander';
import { handleError } from './handle-error.ts';

export async function runProgram(program: Command, argv = process.argv): Promise<void> {
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  program.exitOverride((err) => {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') process.exit(0);
    process.exit(2);
  });
  try {
    await program.parseAsync(argv);
  } catch (e) {
    process.exitCode = handleError(e, program.name());
  }
}
