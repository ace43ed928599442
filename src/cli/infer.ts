#!/usr/bin/env node
import { inferScript } from './infer-command.ts';
import { runProgram } from './run-program.ts';

await runProgram(inferScript('infer'));
