/**
 * A busy machine says so: every run records how busy the machine was while it measured (load average, busy and stolen
 * shares, other processes' cores, its own CPU time and peak memory), and the console, the report, the model-alone
 * sentence and capacity's answer say when it was busier than its cores. The busy case is made by the test itself
 * (three spinning processes on this machine's cores), so it holds however loaded the machine already is.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { modelAloneLine } from '../src/pipeline/figures.ts';
import {
  busyMachineSentence,
  type MachineLoad,
  parseProcStat,
  mainThreadCpuNs,
  onCpuNs,
  watchMachineLoad,
} from '../src/platform/machine-load.ts';
import { makeModel, makeVideo, runCli, scratchDir, SMALL_LAB_CFG } from './helpers/fixtures.ts';

const quiet: MachineLoad = {
  cores: 2,
  loadAvg: [0.4, 0.6],
  busyShare: 0.5,
  stealShare: 0,
  cpuMs: 900,
  otherCores: 0.1,
  peakRssMb: 300,
  wallMs: 1000,
};

test('/proc/stat read by hand: busy = user + nice + system + irq + softirq; steal apart; the total counts every column', (t) => {
  t.deepEqual(parseProcStat('cpu  100 5 50 800 10 2 3 30 0 0\ncpu0 1 2 3 4\n'), { busy: 160, total: 1000, steal: 30 });
  t.is(parseProcStat('nothing here'), undefined);
});

test('the busy sentence: other processes on a core or more over the run, or a hypervisor taking over 10%; the lagging load average only where /proc/stat is not read; none on a quiet machine', (t) => {
  t.is(busyMachineSentence(quiet), undefined);
  // a run started just after a heavy job: the one-minute load average still says 3.4, the run's own window is quiet
  t.is(busyMachineSentence({ ...quiet, loadAvg: [3.4, 1.2] }), undefined);
  const { busyShare, stealShare, otherCores, ...noProcStat } = quiet;
  t.truthy(busyShare !== undefined && stealShare !== undefined && otherCores !== undefined);
  t.regex(busyMachineSentence({ ...noProcStat, loadAvg: [1.2, 3.4] })!, /load average 3\.4 on 2 cores/);
  t.regex(busyMachineSentence({ ...quiet, otherCores: 1.3 })!, /other processes kept 1\.3 cores busy on average/);
  t.regex(busyMachineSentence({ ...quiet, stealShare: 0.12 })!, /the hypervisor took 12% of the CPU time/);
  t.is(busyMachineSentence({ ...quiet, stealShare: 0.053 }), undefined, 'a 5% steal is within the noise');
});

test('the model-alone sentence blames no encoder in a run that wrote no video, names a busy machine, and hedges on few runs', (t) => {
  const alone = { runs: 5, batch: 1, meanMs: 10, p50Ms: 10, p99Ms: 11, perFrameMs: 10 };
  const written = modelAloneLine(alone, 13, { wroteVideo: true, busyMachine: false });
  t.regex(written, /30% slower: other stages competing for the cores and memory, or a video encoder still working/);
  const notWritten = modelAloneLine(alone, 13, { wroteVideo: false, busyMachine: true });
  t.notRegex(notWritten, /encoder/);
  t.regex(notWritten, /or other processes on this busy machine/);
  t.regex(notWritten, /only 5 runs, so a rough figure/);
  // faster in the loop than alone is said, with why it can be: two measurements at different times
  const faster = modelAloneLine(alone, 6.5, { wroteVideo: true, busyMachine: true });
  t.regex(faster, /in the loop 6\.50 ms, 35% faster: the model alone is 5 runs on one frame just after the loop/);
  t.regex(faster, /the other processes of this busy machine\) differs between them; repeats \(--repeat\) tell/);
  t.regex(
    modelAloneLine({ ...alone, runs: 30 }, 10, { wroteVideo: true, busyMachine: false, ofRuns: 3 }),
    /^Model alone \(the first of 3 runs\) 10\.00 ms .*, the same\.$/,
  );
});

test("watching this process: its CPU time, its main thread's, its peak memory and this machine's cores", (t) => {
  const w = watchMachineLoad();
  let x = 0;
  for (let i = 0; i < 2e7; i++) x += i % 7;
  const half = mainThreadCpuNs();
  for (let i = 0; i < 2e7; i++) x += i % 7;
  const l = w.stop(half);
  t.true(x > 0);
  t.is(l.cores, availableParallelism());
  t.true(l.cpuMs > 0 && l.peakRssMb > 10 && l.wallMs > 0, JSON.stringify(l));
  t.is(l.loadAvg.length, 2);
  // the loops ran on this thread: its own time is most of the process's, the second loop's about half of it
  t.true(l.mainThreadCpuMs! > 0 && l.mainThreadCpuMs! <= l.cpuMs + 10, JSON.stringify(l));
  t.true(l.mainThreadMeasuredCpuMs! > 0 && l.mainThreadMeasuredCpuMs! < l.mainThreadCpuMs!, JSON.stringify(l));
  t.is(onCpuNs('/proc/self/task/0/schedstat'), undefined, 'a thread that is not there: no figure');
});

test('a run beside three spinning processes records a busy machine, and its console summary and the report say so', async (t) => {
  const model = makeModel('busy', SMALL_LAB_CFG, 2);
  const video = makeVideo('busy.mp4', 40, 320, 240);
  const json = join(scratchDir(), 'busy.json');
  const spinners = Array.from({ length: 3 }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  try {
    const r = await runCli('infer', [video, '--model', model.onnxPath, '--no-write', '--warmup', '2', '--json', json]);
    t.is(r.code, 0, r.stderr);
    const run = JSON.parse(readFileSync(json, 'utf8'));
    t.is(run.machineLoad.cores, availableParallelism());
    t.true(run.machineLoad.otherCores >= 1, JSON.stringify(run.machineLoad));
    // the summary is on stdout, wrapped to the terminal's width
    t.regex(
      r.stdout.replace(/\s+/g, ' '),
      /This run was measured on a busy machine \(.*other processes kept [\d.]+ cores busy/,
    );
  } finally {
    for (const s of spinners) s.kill('SIGKILL');
  }
  const rep = await runCli('jetprof', ['report', '--run', json]);
  t.is(rep.code, 0, rep.stderr);
  t.regex(rep.stdout, /- onnx-fp32-cpu-sequential: measured on a busy machine \(/);
});
