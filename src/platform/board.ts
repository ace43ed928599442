/**
 * What a machine is, read from files under a root folder ("/" for this machine; a fixture tree in tests):
 * the Jetson model (/proc/device-tree/model), the L4T release (/etc/nv_tegra_release) and the JetPack it means, the
 * OS (/etc/os-release) and so its glibc, the CPU, and the CUDA, TensorRT and OpenCV versions and NVIDIA tools
 * installed. Reads files only; never fails (what is absent is undefined).
 */
import { existsSync, readdirSync, readFileSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

export interface BoardFacts {
  root: string;
  jetsonModel?: string;
  /** e.g. "32.7.6" */
  l4t?: string;
  jetpack?: string;
  os?: { id?: string; versionId?: string; prettyName?: string };
  glibc?: string;
  arch?: 'arm64' | 'x64';
  cpu?: string;
  cuda?: string;
  tensorrt?: string;
  opencv?: string;
  tools: { nvprof?: string; nsys?: string; tegrastats?: string; nvpmodel?: string; trtexec?: string };
  freeDiskBytes?: number;
  /**
   * Inside jetprof's JetPack 4 image (`jetpack4`: /etc/jetprof-container, or JETPROF_CONTAINER on this machine):
   * which of the board's paths the container runtime and run.sh were to mount are there.
   */
  container?: { kind: string; present: Record<ContainerPath, boolean> };
}

/** The board's paths a JetPack 4 container needs mounted (board/jetpack4/csv-mounts.txt and run.sh). */
export const CONTAINER_PATHS = {
  cuda: 'usr/local/cuda-10.2',
  tensorrt: 'usr/lib/aarch64-linux-gnu/libnvinfer.so.8',
  tensorrtHeaders: 'usr/include/aarch64-linux-gnu/NvInfer.h',
  tegra: 'usr/lib/aarch64-linux-gnu/tegra',
  gstreamer: 'usr/lib/aarch64-linux-gnu/gstreamer-1.0/libgstnvvideo4linux2.so',
  l4tRelease: 'etc/nv_tegra_release',
  tegrastats: 'usr/bin/tegrastats',
  argus: 'tmp/argus_socket',
} as const;
type ContainerPath = keyof typeof CONTAINER_PATHS;

const read = (root: string, path: string): string | undefined => {
  try {
    return readFileSync(join(root, path), 'utf8').replace(/\0/g, '').trim();
  } catch {
    return undefined;
  }
};

/** L4T release to JetPack, as NVIDIA's release tables pair them. */
export function jetpackOf(l4t: string | undefined): string | undefined {
  if (!l4t) return undefined;
  const table: [RegExp, string][] = [
    [/^32\.7\.[1-6]$/, '4.6.1+'],
    [/^32\.6\.1$/, '4.6'],
    [/^32\.5/, '4.5'],
    [/^32\.4/, '4.4'],
    [/^32\./, '4.x'],
    [/^35\.[3-6]/, '5.1.x'],
    [/^35\.2/, '5.1'],
    [/^35\./, '5.0'],
    [/^36\.2/, '6.0 DP'],
    [/^36\.3/, '6.0'],
    [/^36\.4/, '6.1/6.2'],
    [/^36\./, '6.x'],
    [/^38\./, '7.0'],
  ];
  return table.find(([re]) => re.test(l4t))?.[1];
}

/** glibc of an OS release (Ubuntu's and Debian's own): what official Node builds and onnxruntime-node need >= 2.28. */
export function glibcOfOs(id: string | undefined, versionId: string | undefined): string | undefined {
  const known: Record<string, string> = {
    'ubuntu 18.04': '2.27',
    'ubuntu 20.04': '2.31',
    'ubuntu 22.04': '2.35',
    'ubuntu 24.04': '2.39',
    'debian 10': '2.28',
    'debian 11': '2.31',
    'debian 12': '2.36',
  };
  return known[`${id} ${versionId}`];
}

function osRelease(root: string): BoardFacts['os'] {
  const text = read(root, 'etc/os-release');
  if (!text) return undefined;
  const field = (k: string) => new RegExp(`^${k}="?([^"\\n]*)"?$`, 'm').exec(text)?.[1];
  return { id: field('ID'), versionId: field('VERSION_ID'), prettyName: field('PRETTY_NAME') };
}

function firstExisting(root: string, paths: string[]): string | undefined {
  for (const p of paths) if (existsSync(join(root, p))) return `/${p}`;
  return undefined;
}

function nsysPath(root: string): string | undefined {
  const direct = firstExisting(root, ['usr/bin/nsys', 'usr/local/bin/nsys', 'usr/local/cuda/bin/nsys']);
  if (direct) return direct;
  try {
    const base = 'opt/nvidia/nsight-systems';
    for (const v of readdirSync(join(root, base)).sort().reverse())
      if (existsSync(join(root, base, v, 'bin/nsys'))) return `/${base}/${v}/bin/nsys`;
  } catch {
    /* none */
  }
  return undefined;
}

function defines(text: string | undefined, names: string[]): string | undefined {
  if (!text) return undefined;
  const parts = names.map((n) => new RegExp(`#define\\s+${n}\\s+(\\d+)`).exec(text)?.[1]);
  return parts.every((p) => p !== undefined) ? parts.join('.') : undefined;
}

/** The board's identity files: the device-tree model string and the L4T release line with its number ("32.7.6"). */
export function readJetsonIdentity(root = '/'): { model?: string; l4tLine?: string; l4t?: string } {
  const l4tLine = read(root, 'etc/nv_tegra_release');
  const m = l4tLine ? /R(\d+) \(release\), REVISION: ([\d.]+)/.exec(l4tLine) : null;
  // in a container /proc/device-tree is the host's masked one: board/jetpack4/run.sh passes the board's model in
  // JETPROF_BOARD_MODEL, trusted inside jetprof's container only (no file in a shared folder decides the board)
  const passed = containerKind(root) ? process.env.JETPROF_BOARD_MODEL?.replace(/[\x00-\x1f\x7f]/g, '').trim() : '';
  const model = read(root, 'proc/device-tree/model') || passed || undefined;
  return { model, l4tLine, l4t: m ? `${m[1]}.${m[2]}` : undefined };
}

/** jetprof's image this runs in (`jetpack4`: /etc/jetprof-container, or JETPROF_CONTAINER on this machine), if any. */
const containerKind = (root: string) =>
  read(root, 'etc/jetprof-container') || (root === '/' ? process.env.JETPROF_CONTAINER : undefined);

function containerFacts(root: string): BoardFacts['container'] {
  const kind = containerKind(root);
  if (!kind) return undefined;
  const present = Object.fromEntries(
    Object.entries(CONTAINER_PATHS).map(([k, p]) => [k, existsSync(join(root, p))]),
  ) as Record<ContainerPath, boolean>;
  return { kind, present };
}

/** A device-tree model string that names a Jetson (or another NVIDIA board). */
export const isJetsonModel = (model: string | undefined): model is string => !!model && /jetson|nvidia/i.test(model);

export function readBoard(root = '/'): BoardFacts {
  const { model, l4tLine, l4t } = readJetsonIdentity(root);
  const container = containerFacts(root);
  const os = osRelease(root);
  const live = root === '/';
  const arch = live
    ? process.arch === 'arm64'
      ? 'arm64'
      : process.arch === 'x64'
        ? 'x64'
        : undefined
    : existsSync(join(root, 'usr/lib/aarch64-linux-gnu')) || /aarch64/.test(l4tLine ?? '')
      ? 'arm64'
      : existsSync(join(root, 'usr/lib/x86_64-linux-gnu'))
        ? 'x64'
        : undefined;
  const triple = arch === 'arm64' ? 'aarch64-linux-gnu' : 'x86_64-linux-gnu';
  const glibcLive = live
    ? (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
        ?.glibcVersionRuntime
    : undefined;
  const cpuinfo = read(root, 'proc/cpuinfo');
  const cudaJson = read(root, 'usr/local/cuda/version.json');
  const cuda = cudaJson
    ? /"cuda"\s*:\s*\{[^}]*"version"\s*:\s*"([\d.]+)"/.exec(cudaJson)?.[1]
    : /CUDA Version ([\d.]+)/.exec(read(root, 'usr/local/cuda/version.txt') ?? '')?.[1];
  let free: number | undefined;
  try {
    const s = statfsSync(root);
    free = s.bavail * s.bsize;
  } catch {
    /* unknown */
  }
  return {
    root,
    ...(isJetsonModel(model) ? { jetsonModel: model } : {}),
    ...(l4t ? { l4t, jetpack: jetpackOf(l4t) } : {}),
    os,
    glibc: glibcLive ?? glibcOfOs(os?.id, os?.versionId),
    arch,
    cpu: cpuinfo
      ? (/^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ??
        /^Hardware\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ??
        (/CPU part/.test(cpuinfo) ? 'ARMv8 (aarch64)' : undefined))
      : undefined,
    cuda,
    tensorrt: defines(
      read(root, `usr/include/${triple}/NvInferVersion.h`) ?? read(root, 'usr/include/NvInferVersion.h'),
      ['NV_TENSORRT_MAJOR', 'NV_TENSORRT_MINOR', 'NV_TENSORRT_PATCH'],
    ),
    opencv: defines(read(root, 'usr/include/opencv4/opencv2/core/version.hpp'), [
      'CV_VERSION_MAJOR',
      'CV_VERSION_MINOR',
      'CV_VERSION_REVISION',
    ]),
    tools: {
      nvprof: firstExisting(root, ['usr/local/cuda/bin/nvprof', 'usr/bin/nvprof']),
      nsys: nsysPath(root),
      tegrastats: firstExisting(root, ['usr/bin/tegrastats']),
      nvpmodel: firstExisting(root, ['usr/sbin/nvpmodel', 'usr/bin/nvpmodel']),
      trtexec: firstExisting(root, ['usr/src/tensorrt/bin/trtexec', 'usr/bin/trtexec']),
    },
    freeDiskBytes: free,
    ...(container ? { container } : {}),
  };
}

/** Compute capability of Jetson modules by board name (/proc/device-tree/model). */
const JETSON_CC: [RegExp, number][] = [
  [/Orin/i, 8.7],
  [/Xavier/i, 7.2],
  [/TX2/i, 6.2],
  [/Nano|TX1/i, 5.3],
];

export function jetsonComputeCapability(model: string | undefined): number | undefined {
  if (!model) return undefined;
  return JETSON_CC.find(([re]) => re.test(model))?.[1];
}
