/** What the run ran on, for the run JSON and the report's environment block. Reads files only; never fails. */
import { spawnSync } from 'node:child_process';
import { cpus, hostname } from 'node:os';
import { isJetsonModel, readJetsonIdentity } from './board.ts';

/** jetprof's version, as package.json gives it (test/help-and-hints.test.ts holds them equal). */
export const VERSION = '0.1.0';

export interface EnvInfo {
  node: string;
  /** The machine's host name: runs from two machines are never compared. */
  host?: string;
  onnxruntime?: string;
  opencv?: string;
  tensorrt?: string;
  cpu: string;
  gpu?: string;
  jetson?: { model?: string; l4t?: string };
  /** Jetson power mode as `nvpmodel -q` names it (e.g. MAXN, 5W), when readable. */
  powerMode?: string;
}

/** Jetson boards: /proc/device-tree/model names the board, /etc/nv_tegra_release the L4T (JetPack) release. */
export function jetsonInfo(): EnvInfo['jetson'] {
  const { model, l4tLine, l4t } = readJetsonIdentity();
  if (!l4tLine && !isJetsonModel(model)) return undefined;
  return { model, l4t: l4t ?? l4tLine };
}

export function baseEnv(): EnvInfo {
  const env: EnvInfo = {
    node: process.version,
    host: hostname(),
    cpu: `${cpus()[0]?.model ?? 'unknown'} x${cpus().length}`,
  };
  const jetson = jetsonInfo();
  if (jetson) {
    env.jetson = jetson;
    env.gpu = jetson.model;
    const mode = powerMode();
    if (mode) env.powerMode = mode;
  }
  return env;
}

/** The current power mode from `nvpmodel -q`; undefined where nvpmodel is absent or says nothing readable. */
export function powerMode(): string | undefined {
  const r = spawnSync('nvpmodel', ['-q'], { encoding: 'utf8', timeout: 3000 });
  return r.status === 0 ? parsePowerMode(r.stdout) : undefined;
}

/**
 * `nvpmodel -q` output -> `MODE_15W_6CORE (mode 2)`. It prints `NV Power Mode: <name>` and the mode number on the next
 * line, after an `NV Fan Mode:quiet` line on some boards, and behind `NVPM VERB: Current mode: ` with --verbose. Pure.
 */
export function parsePowerMode(stdout: string): string | undefined {
  const lines = stdout.split(/\r?\n/);
  const i = lines.findIndex((l) => /NV Power Mode:/.test(l));
  if (i < 0) return undefined;
  const name = /NV Power Mode:\s*(\S.*?)\s*$/.exec(lines[i])?.[1];
  if (!name) return undefined;
  const id = /^\s*(\d+)\s*$/.exec(lines[i + 1] ?? '')?.[1];
  return id === undefined ? name : `${name} (mode ${id})`;
}
