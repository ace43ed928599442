/** Running an external command (nsys, nvprof, trtexec, an entry script) and collecting what it prints. */
import { spawn } from 'node:child_process';

export interface RunCommandOptions {
  /** Each chunk as it arrives, with the stream it came from. */
  onOutput?: (chunk: Buffer, from: 'stdout' | 'stderr') => void;
  /** Called with the child's pid once started; may return a function called when it closes. */
  onSpawn?: (pid: number) => (() => void) | void;
}

/** Resolves with the exit code (130 after SIGINT, 1 for other signals) and stdout + stderr in arrival order. */
export function runCommand(cmd: string, args: string[], o: RunCommandOptions = {}): Promise<{ code: number; output: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
      resolve({ code: code ?? (signal === 'SIGINT' ? 130 : 1), output: Buffer.concat(chunks) });
    });
  });
}
