/**
 * trtexec's stand-in (board-standins.ts trtexecStandIn writes the command that runs this): prints trtexec's banner
 * and writes, at --saveEngine, an engine of the CPU ABI library for the ONNX at --onnx, as board.ts boardEngine does.
 */
import { writeFileSync } from 'node:fs';
import { engineText, recordHeads } from './board.ts';
import type { TrtexecStandInOptions } from './board-standins.ts';

const o = JSON.parse(process.env.JETPROF_TRTEXEC_STANDIN ?? '{}') as Required<Pick<TrtexecStandInOptions, 'tensorrt'>> &
  TrtexecStandInOptions;
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const [major, minor, patch] = o.tensorrt.split('.').map(Number);
console.log(
  `&&&& RUNNING TensorRT.trtexec [TensorRT v${major * 1000 + minor * 100 + patch}] # trtexec ${process.argv.slice(2).join(' ')}`,
);
if (process.argv.includes('--help')) {
  console.log('  --onnx=<file>  --saveEngine=<file>  --fp16  --int8  --shapes=spec  --memPoolSize=poolspec');
  process.exit(0);
}
const onnx = arg('onnx');
const engine = arg('saveEngine');
if (!onnx || !engine) {
  console.log('&&&& FAILED TensorRT.trtexec: --onnx and --saveEngine are needed (stand-in)');
  process.exit(1);
}
const replay = o.replay ? await recordHeads({ ...o.replay, model: onnx }) : undefined;
writeFileSync(engine, engineText(onnx, { gpuMs: o.gpuMs, replay, tensorrt: o.tensorrt }));
console.log(`&&&& PASSED TensorRT.trtexec [TensorRT v${major * 1000 + minor * 100 + patch}]`);
