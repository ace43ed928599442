#!/usr/bin/env node
import { inferCommand } from './infer-command.ts';
import { runProgram } from './run-program.ts';

await runProgram(inferCommand('infer-opencv', 'opencv'));
