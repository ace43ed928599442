/** Each of jetprof's scripts (package.json `bin`) as a new commander program, for jetprof.ts and the tests. */
import { Command } from 'commander';
import { agreeCommand } from './agree-command.ts';
import { mapCommand } from './map-command.ts';
import { doctorCommand } from './doctor-command.ts';
import { inferCommand, inferScript } from './infer-command.ts';
import { VERSION } from '../platform/env.ts';
import { compareCommand } from './compare-command.ts';
import { capacityCommand } from './capacity-command.ts';
import { buildEngineCommand } from './build-engine-command.ts';
import { exportCommand } from './export-command.ts';
import { fetchWeightsCommand, makeWeightsCommand } from './weights-commands.ts';
import { parseCommand } from './parse-command.ts';
import { profileCommand } from './profile-command.ts';
import { reportCommand } from './report-command.ts';
import { selftestCommand } from './selftest-command.ts';

export type Script = 'jetprof' | 'infer' | 'infer-onnx' | 'infer-trt' | 'infer-opencv';

export function programFor(script: Script): Command {
  if (script !== 'jetprof') return inferScript(script);
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
