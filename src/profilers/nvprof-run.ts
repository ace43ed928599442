/**
 * `jetprof profile --tool nvprof`: nvprof around the entry script with the lab's flags, its log parsed; without a
 * usable GPU it says so in nvprof's own words and what to do instead.
 */
import { existsSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BACKENDS } from '../backends/types.ts';
import { parseNvprof } from '../parsers/nvprof.ts';
import { JetprofError } from '../util/errors.ts';
import { nvprofArgv } from './argv.ts';
import { detectComputeCapability } from './device.ts';
import { requireProfiler } from './tools.ts';
import { forwardTo, type ProfileRequest, type ProfileResult, readRun, type RunJson, runLogged } from './profile-run.ts';

export async function profileWithNvprof(
  req: ProfileRequest,
  command: string[],
  runJson: RunJson,
): Promise<ProfileResult> {
  const cc = detectComputeCapability();
  if (cc !== undefined && cc >= 8) {
    throw new JetprofError(
      'BAD_OPTION',
      `nvprof does not support this GPU (compute capability ${cc}; nvprof stops at 7.x, Orin is 8.7)`,
      {
        suggestion: 'use --tool nsys',
      },
    );
  }
  const nvprof = requireProfiler('nvprof');
  const logFile = join(req.outDir, `profiling_${BACKENDS[req.backend].tag}_log.txt`);
  const consoleLog = join(req.outDir, `profiling_${BACKENDS[req.backend].tag}_console.txt`);
  if (existsSync(logFile)) unlinkSync(logFile);
  req.onLog(`nvprof: ${command.join(' ')}`);
  const exitCode = await runLogged(
    nvprof,
    nvprofArgv({ logFile, metrics: req.metrics, command }),
    consoleLog,
    true,
    forwardTo(req),
    req.relayProgress,
  );
  // Without a GPU nvprof prints its verdict on the console, not in the log file: keep whichever exists.
  const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : readFileSync(consoleLog, 'utf8');
  if (!existsSync(logFile)) renameSync(consoleLog, logFile);
  const parsed = parseNvprof(text);
  const notes: string[] = [];
  const procs = parsed.value.processes;
  const hasData = procs.some((p) => p.summary.length > 0 || p.dependency.length > 0 || p.metrics.length > 0);
  if (!hasData) {
    // nvprof's own words only (a line of the application's command can land among the warnings)
    // (the application's output can also run into nvprof's line: a sentence of nvprof's ends at its full stop)
    const said = [
      ...new Set(
        procs
          .flatMap((p) => p.warnings)
          .filter((w) => /CUDA|GPU|device|driver|profil/i.test(w))
          .map((w) => w.replace(/^(.*?[.!])\s.*$/, '$1')),
      ),
    ];
    const why = said.join('; ').slice(0, 160) || 'no profile data collected';
    const instead =
      req.backend === 'tensorrt'
        ? 'run it on the Jetson (TensorRT needs the GPU)'
        : 'run it on the Jetson, or use --tool nsys, which records the NVTX ranges of the CPU pipeline without a GPU';
    notes.push(`nvprof collected no GPU data (${why}): no usable NVIDIA GPU or driver here; ${instead}`);
  }
  const run = readRun(runJson.path, runJson.before);
  if (!run)
    notes.push(
      `the profiled run did not finish (it wrote no ${runJson.path}; nvprof exit code ${exitCode}); its output is in ${logFile}`,
    );
  return {
    schema: 'jetprof.profile/1',
    tool: 'nvprof',
    ...(hasData ? {} : { noGpu: true }),
    backend: req.backend,
    command,
    exitCode,
    files: { log: logFile, run: runJson.path },
    nvprof: parsed.value,
    diagnostics: parsed.diagnostics,
    run,
    notes,
  };
}
