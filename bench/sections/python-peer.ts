/** bench section 3: see bench/run.ts for what each section measures. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CFG, FRAMES, ROOT, THREADS, VIDEO, WORK, log, results, row, runInfer, state, weights } from '../common.ts';

export function benchPython(pipe: Record<string, any> | undefined) {
  state.section = 3;
  log('3. the Python peer (cv2.dnn darknet, sequential, as the lab)');
  const py = '/usr/bin/python3';
  const check = spawnSync(py, ['-c', 'import cv2'], { encoding: 'utf8' });
  if (check.status !== 0) {
    results.pythonPeer = { skipped: 'python3-opencv is not installed (scripts/setup.sh installs it)' };
    row('Python peer', 'skipped: no python3-opencv', '', undefined);
    return;
  }
  const r = spawnSync(
    py,
    [
      join(ROOT, 'bench/peer_lab.py'),
      CFG,
      weights,
      VIDEO,
      join(WORK, 'vtest-python.mp4'),
      '--frame-size',
      '960x540',
      '--threads',
      String(THREADS),
      ...(FRAMES ? ['--max-frames', String(FRAMES)] : []),
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`peer_lab.py failed: ${r.stderr}`);
  const peer = JSON.parse(r.stdout.trim().split('\n').pop()!);
  const jet = pipe ?? runInfer('on');
  results.pythonPeer = { ...peer, jetprofEndToEndFps: jet.endToEndFps, ratio: jet.endToEndFps / peer.endToEndFps };
  row('Python peer end-to-end FPS', peer.endToEndFps.toFixed(2), '', undefined);
  row(
    'jetprof / Python end-to-end',
    (jet.endToEndFps / peer.endToEndFps).toFixed(2),
    '>= 1.5',
    jet.endToEndFps / peer.endToEndFps >= 1.5,
  );
}
