/**
 * Each of jetprof's scripts (package.json `bin`) as a commander program, built afresh on each call: the entry files
 * run one in a process of its own (runProgram), the tests run any of them in theirs (runInProcess).
 */
import { Command } from 'commander';
import { agreeCommand, mapCommand } from './accuracy-commands.ts';
import { doctorCommand } from './doctor-command.ts';
import { inferCommand } from './infer-command.ts';
import { compareCommand } from './compare-command.ts';
import { capacityCommand } from './capacity-command.ts';
import { buildEngineCommand, exportCommand, fetchWeightsCommand, makeWeightsCommand } from './model-commands.ts';
import { parseCommand } from './parse-command.ts';
import { profileCommand } from './profile-command.ts';
import { reportCommand } from './report-command.ts';
import { selftestCommand } from './selftest-command.ts';

export type Script = 'jetprof' | 'infer' | 'infer-onnx' | 'infer-trt' | 'infer-opencv';

export const VERSION = '0.1.0';

/** The backend each entry script fixes (`infer` takes --backend). */
const INFER_BACKENDS = {
  infer: undefined,
  'infer-onnx': 'onnx',
  'infer-trt': 'tensorrt',
  'infer-opencv': 'opencv',
} as const;

export function programFor(script: Script): Command {
  if (script !== 'jetprof') return inferCommand(script, INFER_BACKENDS[script]).version(VERSION);
  return new Command('jetprof')
    .description(
      'YOLOv4-Tiny on Jetson: honest inference and end-to-end FPS, profiler runs (nvprof, nsys) and lab reports',
    )
    .version(VERSION)
    .addCommand(inferCommand('infer'))
    .addCommand(exportCommand())
    .addCommand(fetchWeightsCommand())
    .addCommand(makeWeightsCommand())
    .addCommand(buildEngineCommand())
    .addCommand(parseCommand())
    .addCommand(profileCommand())
    .addCommand(reportCommand())
    .addCommand(compareCommand())
    .addCommand(capacityCommand())
    .addCommand(agreeCommand())
    .addCommand(mapCommand())
    .addCommand(doctorCommand())
    .addCommand(selftestCommand());
}
