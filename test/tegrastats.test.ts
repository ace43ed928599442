/**
 * tegrastats: real lines of each JetPack generation (test/fixtures/tegrastats, sources in its README) parsed field by
 * field, the summary arithmetic, garbage as diagnostics, and a fake tegrastats on PATH replaying the real lines beside
 * a real `infer` run, through to the report.
 */
import test from 'ava';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import {
  addLine,
  emptySeries,
  inputPowerMw,
  parseTegrastatsLine,
  summarizeSeries,
} from '../src/platform/tegrastats.ts';
import { makeModel, makeVideo, PERSON_VEHICLE_CFG, ROOT, runCli, scratchDir } from './helpers/fixtures.ts';

const FIX = join(ROOT, 'test/fixtures/tegrastats');
const lines = (f: string) => readFileSync(join(FIX, f), 'utf8').split('\n').filter(Boolean);

test('JetPack 3 (TX1): lowercase cpu [..]@MHz, EMC and GR3D without _FREQ', (t) => {
  const s = parseTegrastatsLine(lines('jp3-tx1.txt')[1])!;
  t.like(s, {
    ramUsedMb: 3607,
    ramTotalMb: 3983,
    swapUsedMb: 873,
    emcLoadPct: 1,
    emcMhz: 1600,
    gpuLoadPct: 39,
    gpuMhz: 76,
  });
  t.deepEqual(s.cpu, [
    { loadPct: 17, mhz: 1734 },
    { loadPct: 11, mhz: 1734 },
    { loadPct: 65, mhz: 1734 },
    { loadPct: 0, mhz: 1734 },
  ]);
  t.is(inputPowerMw(s), undefined, 'no power rails on the TX1 line');
});

test('JetPack 4 (Nano): per-core %@MHz, temperatures, POM_5V_* rails without units (POM_5V_IN is the input)', (t) => {
  const s = parseTegrastatsLine(lines('jp4-nano.txt')[0])!;
  t.like(s, { ramUsedMb: 1180, gpuLoadPct: 0, gpuMhz: 76, emcLoadPct: 10, emcMhz: 1600 });
  t.is(s.cpu!.length, 4);
  t.deepEqual(s.cpu![0], { loadPct: 30, mhz: 1036 });
  t.deepEqual(s.temps, { PLL: 57, CPU: 60.5, PMIC: 100, GPU: 59, AO: 65, thermal: 59.75 });
  t.deepEqual(s.rails, {
    POM_5V_IN: { mw: 4520, avgMw: 4680 },
    POM_5V_GPU: { mw: 0, avgMw: 0 },
    POM_5V_CPU: { mw: 1078, avgMw: 1205 },
  });
  t.is(inputPowerMw(s), 4520, 'POM_5V_IN already includes the other rails');
});

test('JetPack 4 (AGX Xavier): VDD_IN a/b, negative readings, rails named VDD_SYS_*', (t) => {
  const [a, b] = lines('jp4-xavier.txt').map((l) => parseTegrastatsLine(l)!);
  t.like(a, { gpuLoadPct: 61, gpuMhz: 1300, emcLoadPct: 2, emcMhz: 1866 });
  t.is(a.temps.BCPU, -45);
  t.is(a.temps.GPU, -51);
  t.is(inputPowerMw(a), 14025);
  t.deepEqual(a.rails.VDD_DDR, { mw: 2702, avgMw: 2702 });
  t.is(b.rails.VDD_SYS_GPU.mw, 182);
  t.is(inputPowerMw(b), 5297);
  t.is(b.cpu!.length, 6);
});

test('JetPack 7 (AGX Orin): a timestamp, GR3D_FREQ x%@[a,b], cur/max temperatures, amW/bmW/cmW rails summed without VDD_IN', (t) => {
  const s = parseTegrastatsLine(lines('jp7-orin.txt')[0])!;
  t.like(s, { ramUsedMb: 20642, ramTotalMb: 62817, gpuLoadPct: 12, gpuMhz: 1300, emcLoadPct: 3, emcMhz: 3199 });
  t.is(s.cpu!.length, 12);
  t.deepEqual(s.temps, { cpu: 52.968, soc2: 48.406, soc0: 49.531, gpu: 47.625 });
  t.deepEqual(s.rails, {
    VDD_GPU_SOC: { mw: 5139, avgMw: 5139 },
    VDD_CPU_CV: { mw: 3268, avgMw: 3268 },
    VIN_SYS_5V0: { mw: 5500, avgMw: 5500 },
  });
  t.is(inputPowerMw(s), 5139 + 3268 + 5500);
});

test('JetPack 6 (Orin Nano): a timestamp, GR3D_FREQ with and without its clock, plain temperatures, mW rails with VDD_IN', (t) => {
  const [busy, idle] = lines('jp6-orin-nano.txt').map((l) => parseTegrastatsLine(l)!);
  t.like(busy, { ramUsedMb: 6185, ramTotalMb: 7620, gpuLoadPct: 63, gpuMhz: 621, emcLoadPct: 43, emcMhz: 2133 });
  t.is(busy.cpu!.length, 6);
  t.deepEqual(busy.temps, { cpu: 53.968, soc2: 52.437, soc0: 50.75, gpu: 53.343, tj: 53.968, soc1: 51.656 });
  t.deepEqual(busy.rails, {
    VDD_IN: { mw: 12479, avgMw: 12479 },
    VDD_CPU_GPU_CV: { mw: 4667, avgMw: 4667 },
    VDD_SOC: { mw: 2817, avgMw: 2817 },
  });
  t.is(inputPowerMw(busy), 12479, 'VDD_IN is the board input: the other rails are inside it');
  t.like(idle, { ramUsedMb: 3452, gpuLoadPct: 0, swapUsedMb: 1518 });
  t.is(idle.gpuMhz, undefined, 'GR3D_FREQ 0% prints no clock');
  t.is(inputPowerMw(idle), 4824);
});

test('garbage lines are no samples: they become diagnostics, never a crash', (t) => {
  for (const l of lines('garbage.txt')) t.is(parseTegrastatsLine(l), undefined, l);
  const series = emptySeries(100);
  for (const [i, l] of [...lines('garbage.txt'), lines('jp4-nano.txt')[0]].entries()) addLine(series, i * 100, l);
  t.is(series.tMs.length, 1);
  t.is(series.diagnostics.length, lines('garbage.txt').length);
});

test('the summary: means over the measured window only, peak temperature, and energy per frame by hand', (t) => {
  const series = emptySeries(100);
  const nano = lines('jp4-nano.txt')[0];
  const xavier = lines('jp4-xavier.txt')[0];
  addLine(series, -50, xavier); // before the first measured frame: left out
  addLine(series, 0, nano);
  addLine(series, 100, xavier);
  addLine(series, 500, xavier); // after the last write: left out
  const s = summarizeSeries(series, { startMs: 0, endMs: 200, frames: 4 });
  t.is(s.samples, 2);
  t.is(s.meanGpuLoadPct, (0 + 61) / 2);
  t.is(s.meanInputMw, (4520 + 14025) / 2);
  t.is(s.peakTempC, 100, 'PMIC@100C on both');
  // 9272.5 mW x (200 ms / 4 frames) = 463,625 uJ = 463.625 mJ per frame
  t.is(s.energyPerFrameMj, (9272.5 * 50) / 1000);
});

test('a fake tegrastats on PATH replays real lines beside a real infer run: samples on the run clock, summary, report', async (t) => {
  const dir = join(scratchDir(), 'fake-tegrastats');
  mkdirSync(dir, { recursive: true });
  const replay = join(dir, 'lines.txt');
  writeFileSync(
    replay,
    [...lines('jp4-nano.txt'), 'not a tegrastats line', ...lines('jp4-xavier.txt')].join('\n') + '\n',
  );
  const fake = join(dir, 'tegrastats');
  // prints one line per --interval, cycling through the replay file, as the real tool does until it is killed
  writeFileSync(
    fake,
    `#!/bin/bash\nms=1000\n[ "$1" = --interval ] && ms=$2\ns=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))\nwhile true; do while IFS= read -r l; do echo "$l"; sleep "$s"; done < ${JSON.stringify(replay)}; done\n`,
  );
  chmodSync(fake, 0o755);
  const model = makeModel('tegra', PERSON_VEHICLE_CFG, 5);
  const video = makeVideo('tegra.mp4', 30, 160, 120);
  const json = join(dir, 'run.json');
  const env = { PATH: `${dir}${delimiter}${process.env.PATH}` };
  const r = await runCli(
    'infer',
    [video, '--model', model.onnxPath, '--no-write', '--warmup', '2', '--tegrastats-interval', '50', '--json', json],
    { env },
  );
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /recording .*fake-tegrastats\/tegrastats every 50 ms beside the run/);
  t.regex(r.stderr, /tegrastats printed \d+ line\(s\) that are not its statistics .*not a tegrastats line/);
  const run = JSON.parse(readFileSync(json, 'utf8'));
  const ts = run.tegrastats;
  t.deepEqual(ts.command.slice(1), ['--interval', '50']);
  t.true(ts.series.tMs.length >= 3, `${ts.series.tMs.length} samples`);
  t.true(
    ts.series.tMs.every((x: number, i: number) => i === 0 || x >= ts.series.tMs[i - 1]),
    'in time order',
  );
  t.true(
    ts.series.inputMw.every((v: number) => [4520, 14025, 5297].includes(v)),
    `${ts.series.inputMw}`,
  );
  // the summary equals the means of the samples inside the measured window
  const pf = run.perFrame;
  const inside = ts.series.tMs
    .map((x: number, i: number) => [x, i])
    .filter(([x]: number[]) => x >= pf.startMs[0] && x <= pf.endMs[pf.endMs.length - 1])
    .map(([, i]: number[]) => i);
  t.is(ts.summary.samples, inside.length);
  if (inside.length)
    t.is(ts.summary.meanInputMw, inside.reduce((a: number, i: number) => a + ts.series.inputMw[i], 0) / inside.length);
  const rep = await runCli('jetprof', ['report', '--run', json]);
  t.is(rep.code, 0, rep.stderr);
  t.regex(rep.stdout, /## On the board \(tegrastats\)/);
  t.regex(rep.stdout, /\| ONNX Runtime \(CPU, FP32\) \| [\d.]+ % \| \d+ MHz \|/);
  const off = await runCli(
    'infer',
    [video, '--model', model.onnxPath, '--no-write', '--no-tegrastats', '--json', '-', '-q'],
    { env },
  );
  t.is(off.code, 0, off.stderr);
  t.is(JSON.parse(off.stdout).tegrastats, undefined, '--no-tegrastats records nothing');
});
