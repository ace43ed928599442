/** Runs a commander program with jetprof's error handling (one line, exit 2 for bad usage). */
import type { Command } from 'commander';
import { handleError } from './handle-error.ts';

/** Applies jetprof's output and exit-code rules to a command and every subcommand (addCommand does not inherit them). */
function configure(cmd: Command): void {
  cmd.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  cmd.exitOverride((err) => {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') process.exit(0);
    process.exit(2);
  });
  for (const sub of cmd.commands) configure(sub);
}

export async function runProgram(program: Command, argv = process.argv): Promise<void> {
  configure(program);
  try {
    await program.parseAsync(argv);
  } catch (e) {
    process.exitCode = handleError(e, program.name());
  }
}
