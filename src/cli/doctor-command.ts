/** `jetprof doctor`: what this machine (or a board's file tree, with --root) can run, and the fix for each gap. */
import { Command } from '@commander-js/extra-typings';
import { asCommand, type Program } from './options.ts';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { disableOrtTelemetry } from '../backends/onnx.ts';
import { readBoard } from '../platform/board.ts';
import { doctor, doctorMarkdown, type LiveProbes } from '../platform/doctor.ts';
import { messageOf } from '../util/errors.ts';
import { powerMode } from '../platform/env.ts';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';

/** Probes only this machine can answer: libraries that load, OpenCV's build, the GPU, the power mode. */
export async function liveProbes(): Promise<LiveProbes> {
  const require = createRequire(import.meta.url);
  const probes: LiveProbes = { node: process.version };
  try {
    disableOrtTelemetry();
    const ort = require('onnxruntime-node') as { listSupportedBackends?: () => { name: string; bundled: boolean }[] };
    probes.ort = {
      loads: true,
      providers: (ort.listSupportedBackends?.() ?? [{ name: 'cpu', bundled: true }])
        .filter((b) => b.bundled)
        .map((b) => b.name),
    };
  } catch (e) {
    probes.ort = { loads: false, error: messageOf(e).split('\n')[0], providers: [] };
  }
  try {
    const { loadOpenCv } = await import('../video/opencv.ts');
    const info = loadOpenCv().getBuildInformation();
    const videoIo = ['FFMPEG', 'GStreamer', 'v4l/v4l2'].filter((b) =>
      new RegExp(`${b.replace('/', '\\/')}:\\s+YES`).test(info),
    );
    probes.opencv = { loads: true, videoIo, cuda: /NVIDIA CUDA:\s*YES/.test(info) };
    const { autoReader } = await import('../video/reader.ts');
    const { autoWriter } = await import('../video/writer.ts');
    probes.videoWriter = autoWriter(loadOpenCv());
    probes.videoReader = autoReader(loadOpenCv());
  } catch (e) {
    probes.opencv = { loads: false, error: messageOf(e).split('\n')[0], videoIo: [], cuda: false };
  }
  const shim = fileURLToPath(
    new URL('../../native/build/libjetprof_trt.so', import.meta.url).href.replace('/dist/src/', '/src/'),
  );
  probes.shim = { built: existsSync(shim), path: shim };
  const smi = spawnSync('nvidia-smi', ['--query-gpu=name,compute_cap', '--format=csv,noheader'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (smi.status === 0 && smi.stdout.trim())
    probes.gpu = smi.stdout
      .trim()
      .split('\n')[0]
      .replace(/, ([\d.]+)$/, ' (compute capability $1)');
  const mode = powerMode();
  if (mode) probes.powerMode = mode;
  return probes;
}

export function doctorCommand(): Program {
  const command = new Command('doctor')
    .summary(
      'what this machine can run (board, JetPack, glibc, Node, ONNX Runtime, OpenCV, TensorRT, profilers) and the fix for each gap',
    )
    .description(
      'One table: the Jetson model and L4T/JetPack release, glibc (official Node 18+ builds and onnxruntime-node need\n' +
        '2.28; JetPack 4.6 has 2.27), Node, ONNX Runtime and its providers, OpenCV with its video I/O and CUDA, TensorRT\n' +
        'and the shim, CUDA, nvprof (not on Orin) and nsys, tegrastats, power mode, free disk.\n' +
        'Exit code 0 when the main job (infer) can run here, 1 otherwise.',
    )
    .option(
      '--root <dir>',
      "read a board's file tree instead of this machine (/etc/nv_tegra_release, /proc/device-tree/model, ...)",
      '/',
    )
    .option('--json', 'print the result as JSON (jetprof.doctor/1)', false)
    .addHelpText('after', helpAfter([{ cmd: 'jetprof doctor' }, { cmd: 'jetprof doctor --json > doctor.json' }]))
    .action(async (o) => {
      try {
        const facts = readBoard(o.root);
        const report = doctor(facts, o.root === '/' ? await liveProbes() : undefined);
        process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : doctorMarkdown(report));
        process.exitCode = report.canRun ? 0 : 1;
      } catch (e) {
        process.exitCode = handleError(e);
      }
    });
  return asCommand(command);
}
