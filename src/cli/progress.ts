/**
 * A one-line progress display on a TTY stderr (frames, FPS, ETA); silent otherwise. The line is cut to the
 * terminal's width (a wrapped line would print a new line at every update) and its last state is always drawn, so
 * it ends at N/N.
 */
import type { FrameProgress } from '../pipeline/loop-options.ts';

type ProgressState = FrameProgress;

interface Progress {
  update(p: ProgressState): void;
  done(): void;
}

/**
 * The progress line for a terminal `columns` wide (pure, for tests). What does not fit is left out, least needed
 * first (per-stream counts, then the time left, then inference FPS), so the frame count, the FPS and the drops stay on
 * an 80-column terminal. Under --duration (`durationS`) the run ends on time, not at the source's last frame: the bar
 * and the count say seconds of the duration, not frames of a file the run will not finish.
 */
export function progressLine(p: ProgressState, columns: number, elapsedMs: number, durationS?: number): string {
  const fps =
    p.measured > 0 && p.wallMs > 0 ? p.measured / (p.wallMs / 1000) : elapsedMs > 0 ? p.frame / (elapsedMs / 1000) : 0;
  const inf = p.measured > 0 && p.inferenceMs > 0 ? p.measured / (p.inferenceMs / 1000) : 0;
  const timed = durationS !== undefined;
  const total = p.totalFrames > 0 && !timed ? `/${p.totalFrames}` : '';
  const left = timed
    ? `${Math.min(durationS, Math.floor(elapsedMs / 1000))} of ${durationS} s`
    : p.totalFrames > 0 && fps > 0 && p.frame < p.totalFrames
      ? `ETA ${Math.ceil((p.totalFrames - p.frame) / fps)}s`
      : '';
  const several = (p.streams?.length ?? 0) > 1;
  // [text, rank]: the highest rank is left out first when the line is too long
  const parts: [string, number][] = [
    [`frame ${p.frame}${total}`, 0],
    [`${several ? 'aggregate' : 'end-to-end'} ${fps.toFixed(1)} FPS`, 0],
    [`inference ${inf.toFixed(1)} FPS`, 3],
    [several ? `per stream ${p.streams!.join('/')}` : '', 5],
    [p.dropped !== undefined ? `dropped ${p.dropped}` : '', 1],
    [left, 4],
  ];
  const width = Math.max(10, columns - 1); // the last column would wrap on some terminals
  let kept = parts.filter(([text]) => text);
  const line = () => kept.map(([text]) => text).join('  ');
  while (line().length > width && kept.some(([, rank]) => rank > 0)) {
    const worst = Math.max(...kept.map(([, rank]) => rank));
    kept = kept.filter(([, rank]) => rank !== worst);
  }
  const text = line();
  const barWidth = Math.min(24, width - text.length - 3);
  const frac = timed ? elapsedMs / 1000 / durationS : p.totalFrames > 0 ? p.frame / p.totalFrames : undefined;
  if (frac !== undefined && barWidth >= 8)
    return `[${'#'.repeat(Math.round(Math.min(1, frac) * barWidth)).padEnd(barWidth, '.')}] ${text}`;
  return text.length > width ? text.slice(0, width) : text;
}

export function createProgress(
  enabled: boolean,
  stream: NodeJS.WriteStream = process.stderr,
  durationS?: number,
): Progress {
  // JETPROF_PROGRESS=lines: a plain `progress: frame N/M ...` line per frame, TTY or not, --quiet or not (for a
  // parent that waits on frames having run: jetprof's own tests, a script that watches a long run)
  const mode = process.env.JETPROF_PROGRESS;
  if (mode === 'lines')
    return {
      update: (p) => void stream.write(`progress: ${progressLine(p, 1000, 0, durationS)}\n`),
      done() {},
    };
  // JETPROF_PROGRESS=every:S: a plain line every S seconds and at the end (set by `jetprof profile` and `compare` for
  // the infer they run, whose stderr is a pipe they relay; compare runs it with -q for the rest)
  const every = /^every:(\d+(?:\.\d+)?)$/.exec(mode ?? '');
  if (every) {
    const periodMs = Number(every[1]) * 1000;
    let last = Date.now();
    let latest: ProgressState | undefined;
    let start: number | undefined;
    const write = (p: ProgressState) =>
      void stream.write(`progress: ${progressLine(p, 1000, Date.now() - (start ?? Date.now()), durationS)}\n`);
    return {
      update(p) {
        latest = p;
        start ??= Date.now();
        if (Date.now() - last < periodMs) return;
        last = Date.now();
        write(p);
        latest = undefined;
      },
      done() {
        if (latest) write(latest);
      },
    };
  }
  if (!enabled || !stream.isTTY) return { update() {}, done() {} };
  let last = 0;
  let latest: ProgressState | undefined;
  let drawn: ProgressState | undefined;
  // from the first frame, as --duration counts (not from the model's load)
  let start: number | undefined;
  const draw = (p: ProgressState) => {
    const columns = stream.columns || process.stdout.columns || 80;
    const line = progressLine(p, columns, Date.now() - (start ?? Date.now()), durationS);
    stream.write(`\r${line.padEnd(Math.min(columns - 1, line.length + 3))}`);
    drawn = p;
  };
  return {
    update(p) {
      latest = p;
      start ??= Date.now();
      const now = Date.now();
      if (now - last < 250) return;
      last = now;
      draw(p);
    },
    done() {
      if (latest && latest !== drawn) draw(latest);
      if (drawn) stream.write('\n');
    },
  };
}
