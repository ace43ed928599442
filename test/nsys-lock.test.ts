/**
 * The one-nsys-run-at-a-time lock cannot be held by anyone who writes a pid into it: the file holds its owner's pid
 * and start time, a lock naming another process (pid 1 written by hand, an id reused) is taken over at once, and a wait
 * for a real owner hears Ctrl-C and has a limit. Its own process (a file of its own) with its own TMPDIR, so no real
 * profile of another test file meets these locks.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withNsysLock } from '../src/profilers/nsys-agents.ts';
import { processStart } from '../src/util/process.ts';
import { freshDir } from './helpers/fixtures.ts';

const tmp = freshDir('lock-tmp');
process.env.TMPDIR = tmp;
const lock = join(tmp, 'jetprof-nsys.lock');

test.serial(
  'a pid written by hand (echo 1 > the lock) is not an owner: the lock is taken over at once, and holds pid and start time while held',
  async (t) => {
    writeFileSync(lock, '1\n');
    let waited = false;
    const inside = await withNsysLock(
      () => (waited = true),
      async () => readFileSync(lock, 'utf8'),
    );
    t.false(waited);
    t.is(inside, `${process.pid} ${processStart(process.pid)}`);
    t.false(existsSync(lock), 'released');
  },
);

test.serial(
  'a live owner is waited for; Ctrl-C while waiting ends the wait (exit 130), and so does the limit, each with one line',
  async (t) => {
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await new Promise<void>((resolve) => holder.once('spawn', () => resolve()));
      const owner = `${holder.pid} ${processStart(holder.pid!)}`;
      writeFileSync(lock, owner);
      let stop = false;
      const interrupted = await t.throwsAsync(
        withNsysLock(
          () => (stop = true), // the user presses Ctrl-C once the wait is announced
          async () => 'ran',
          { shouldStop: () => stop },
        ),
      );
      t.regex(interrupted!.message, new RegExp(`stopped while waiting for the jetprof nsys run of pid ${holder.pid}`));
      t.is((interrupted as { exitCode?: number }).exitCode, 130);
      const limited = await t.throwsAsync(
        withNsysLock(
          () => undefined,
          async () => 'ran',
          { maxWaitMs: 0 },
        ),
      );
      t.regex(limited!.message, /still holds .*jetprof-nsys\.lock/);
      t.is(readFileSync(lock, 'utf8'), owner, "a waiter never removes a live owner's lock");
    } finally {
      holder.kill('SIGKILL');
    }
  },
);
