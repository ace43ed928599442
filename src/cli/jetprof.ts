#!/usr/bin/env node
/** `jetprof`: wires the subcommands; each lives in its own file and loads heavy modules only when it runs. */
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
import { runProgram } from './run-program.ts';
import { selftestCommand } from './selftest-command.ts';

const program = new Command('jetprof')
  .description(
    'YOLOv4-Tiny on Jetson: honest inference and end-to-end FPS, profiler runs (nvprof, nsys) and lab reports',
  )
  .version('0.1.0')
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

await runProgram(program);
