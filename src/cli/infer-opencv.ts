#!/usr/bin/env node
import { programFor } from './programs.ts';
import { runProgram } from './run-program.ts';

await runProgram(programFor('infer-opencv'));
