/** bench section ortpeer (12): see bench/run.ts for what each section measures. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  benchModel,
  FRAMES,
  log,
  median,
  onnx,
  results,
  ROOT,
  row,
  runInfer,
  state,
  THREADS,
  VIDEO,
  WORK,
} from '../common.ts';

/**
 * Python's onnxruntime, the version package.json pins for Node, in a virtual environment over Debian's python3-opencv
 * and numpy (--no-deps: inference needs numpy only). Undefined, with the reason, when it cannot be made (no network).
 */
function ortPython(): { python?: string; why?: string } {
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).dependencies['onnxruntime-node'];
  const venv = join(WORK, 'ort-venv');
  const python = join(venv, 'bin', 'python');
  const has = () =>
    spawnSync(python, ['-c', `import onnxruntime, cv2; assert onnxruntime.__version__ == '${version}'`]).status === 0;
  if (existsSync(python) && has()) return { python };
  const made = spawnSync('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', venv], { encoding: 'utf8' });
  if (made.status !== 0)
    return { why: `python3 -m venv failed (python3-venv installed?): ${made.stderr.trim().split('\n').pop()}` };
  const pip = spawnSync(python, ['-m', 'pip', 'install', '-q', '--no-deps', `onnxruntime==${version}`], {
    encoding: 'utf8',
  });
  if (pip.status !== 0 || !has())
    return { why: `pip install onnxruntime==${version} failed: ${pip.stderr.trim().split('\n').pop()}` };
  return { python };
}

/**
 * What jetprof's own engineering buys: its end-to-end FPS against the lab's script structure in Python on the same
 * runtime (bench/peer_ort.py: Python's onnxruntime on jetprof's .onnx, numpy decode, per-class NMSBoxes, cv2 video),
 * sequential loop on both sides, the demo model and the dense one, alternating over three rounds.
 */
export function benchOrtPeer() {
  state.section = 12;
  const ROUNDS = 3;
  const frames = FRAMES ?? 200;
  log(`ortpeer. jetprof vs the same-runtime Python peer, sequential, ${frames} frames, ${ROUNDS} alternating rounds`);
  const { python, why } = ortPython();
  if (!python) {
    results.ortPeer = { skipped: why };
    row('same-runtime Python peer', `skipped: ${why}`, '', undefined);
    return;
  }
  const models = { demo: onnx, dense: benchModel(join(WORK, 'yolov4-tiny-seed1-dense.weights'), 2) };
  const out: Record<string, unknown> = {};
  for (const [name, model] of Object.entries(models)) {
    // the dense model keeps 30000 candidates a frame for NMS on both sides (jetprof's --max-candidates, the peer's
    // top scores): the peer's NMSBoxes then takes seconds a frame, so that model runs 12 frames (5 warm-up)
    const n = name === 'dense' ? Math.min(frames, 12) : frames;
    const jet: number[] = [];
    const peer: number[] = [];
    const runPeer = () => {
      const r = spawnSync(
        python,
        [
          join(ROOT, 'bench/peer_ort.py'),
          model,
          VIDEO,
          join(WORK, `vtest-ort-peer-${name}.mp4`),
          '--frame-size',
          '960x540',
          '--threads',
          String(THREADS),
          '--max-frames',
          String(n),
          '--conf',
          '0.3',
        ],
        { encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(`peer_ort.py failed: ${r.stderr}`);
      peer.push(JSON.parse(r.stdout.trim().split('\n').pop()!).endToEndFps);
    };
    const runJet = () => jet.push(runInfer('off', { model, tag: `ortpeer-${name}`, frames: n, conf: 0.3 }).endToEndFps);
    for (let k = 0; k < ROUNDS; k++) for (const run of k % 2 === 0 ? [runJet, runPeer] : [runPeer, runJet]) run();
    const ratio = median(jet) / median(peer);
    out[name] = { frames: n, jetprofEndToEndFps: jet, peerEndToEndFps: peer, ratioOfMedians: ratio };
    row(
      `${name}: jetprof / same-runtime Python peer, end-to-end FPS (sequential)`,
      `${median(jet).toFixed(2)} / ${median(peer).toFixed(2)} = ${ratio.toFixed(2)}`,
      name === 'demo' ? '>= 1.0' : '> 1.0',
      name === 'demo' ? ratio >= 1 : ratio > 1,
    );
  }
  results.ortPeer = { frames, rounds: ROUNDS, frameSize: '960x540', conf: 0.3, threads: THREADS, models: out };
}
