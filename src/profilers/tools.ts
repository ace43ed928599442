/** Finding NVIDIA's profilers where Debian, Ubuntu and JetPack put them. */
import { readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { JetprofError } from '../util/errors.ts';
import { findExecutable, isExecutable } from '../util/executables.ts';

export type ProfilerTool = 'nvprof' | 'nsys';

/** JetPack and NVIDIA installers put nsys under /opt/nvidia/nsight-systems/<version>/ (target-linux-tegra-armv8 on Jetson). */
function optNsysCandidates(): string[] {
  const root = '/opt/nvidia/nsight-systems';
  try {
    return readdirSync(root)
      .sort()
      .reverse()
      .flatMap((v) => [
        join(root, v, 'bin/nsys'),
        join(root, v, 'target-linux-tegra-armv8/nsys'),
        join(root, v, 'target-linux-sbsa-armv8/nsys'),
      ]);
  } catch {
    return [];
  }
}

const INSTALL_HINT: Record<ProfilerTool, string> = {
  nvprof:
    'on JetPack 4.x it is /usr/local/cuda/bin/nvprof (add it to PATH); on Debian run scripts/setup.sh --profilers; on Orin and Ampere or newer GPUs nvprof does not work, use --tool nsys',
  nsys: 'on JetPack install Nsight Systems (sudo apt install nsight-systems-<version>) or add /opt/nvidia/nsight-systems/<version>/bin to PATH; on Debian run scripts/setup.sh --profilers',
};

/** The profiler's path, or a JetprofError with the install hint. Honours JETPROF_NVPROF / JETPROF_NSYS. */
export function requireProfiler(tool: ProfilerTool): string {
  const fromEnv = process.env[tool === 'nvprof' ? 'JETPROF_NVPROF' : 'JETPROF_NSYS'];
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new JetprofError(
      'TOOL_MISSING',
      `${fromEnv}: ${tool} (from ${tool === 'nvprof' ? 'JETPROF_NVPROF' : 'JETPROF_NSYS'}) is not an executable file`,
      { suggestion: INSTALL_HINT[tool] },
    );
  }
  const extra =
    tool === 'nvprof' ? ['/usr/local/cuda/bin/nvprof'] : ['/usr/local/cuda/bin/nsys', ...optNsysCandidates()];
  const found = findExecutable(tool, extra);
  if (!found)
    throw new JetprofError('TOOL_MISSING', `${tool} is not installed (not on PATH nor in the usual places)`, {
      suggestion: INSTALL_HINT[tool],
    });
  return found;
}

/**
 * nsys leaves a .qdstrm when it cannot find its importer (Debian's packaging): QdstrmImporter sits in the
 * host-linux-* folder of the same installation.
 */
export function findQdstrmImporter(nsysPath: string): string | undefined {
  let real = nsysPath;
  try {
    real = realpathSync(nsysPath);
  } catch {
    /* keep the given path */
  }
  const base = dirname(dirname(real));
  const candidates = ['host-linux-x64', 'host-linux-armv8', 'host-linux-aarch64'].flatMap((h) => [
    join(base, h, 'QdstrmImporter'),
    join(dirname(real), '..', h, 'QdstrmImporter'),
  ]);
  candidates.push(
    '/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter',
    '/usr/lib/x86_64-linux-gnu/nsight-systems/host-linux-x64/QdstrmImporter',
  );
  return candidates.find(isExecutable);
}
