/**
 * Runs `tegrastats --interval <ms>` beside a job and keeps each line with the time it arrived (hrtime ns), so the
 * samples can be placed on the run's clock next to the per-frame records. On a Jetson tegrastats is in /usr/bin
 * (root shows a few more fields); elsewhere it is absent and nothing runs.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { findExecutable } from '../util/executables.ts';

/** The tegrastats on PATH (or /usr/bin/tegrastats), or undefined. */
export function findTegrastats(): string | undefined {
  return findExecutable('tegrastats', ['/usr/bin/tegrastats']);
}

interface TegrastatsLine {
  tNs: bigint;
  line: string;
}

interface RunningTegrastats {
  command: string[];
  /** Ends tegrastats and returns every line it printed. */
  stop(): Promise<TegrastatsLine[]>;
}

export function startTegrastats(bin: string, intervalMs: number): RunningTegrastats {
  const command = [bin, '--interval', String(intervalMs)];
  const child = spawn(bin, command.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
  const lines: TegrastatsLine[] = [];
  const closed = new Promise<void>((resolve) => {
    child.on('close', () => resolve());
    child.on('error', () => resolve()); // not startable: no samples, the run goes on
  });
  createInterface({ input: child.stdout }).on('line', (line) => lines.push({ tNs: process.hrtime.bigint(), line }));
  return {
    command,
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000))]);
      return lines;
    },
  };
}
