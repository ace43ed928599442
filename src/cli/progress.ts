/** A one-line progress display on a TTY stderr (frames, FPS, ETA); silent otherwise. */
export interface Progress {
  update(p: { frame: number; totalFrames: number; measured: number; wallMs: number; inferenceMs: number }): void;
  done(): void;
}

export function createProgress(enabled: boolean, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!enabled || !stream.isTTY) return { update() {}, done() {} };
  let last = 0;
  let shown = false;
  const start = Date.now();
  return {
    update(p) {
      const now = Date.now();
      if (now - last < 250) return;
      last = now;
      const fps = p.measured > 0 && p.wallMs > 0 ? p.measured / (p.wallMs / 1000) : p.frame / ((now - start) / 1000);
      const inf = p.measured > 0 && p.inferenceMs > 0 ? p.measured / (p.inferenceMs / 1000) : 0;
      const width = 24;
      const frac = p.totalFrames > 0 ? Math.min(1, p.frame / p.totalFrames) : 0;
      const bar = p.totalFrames > 0 ? `[${'#'.repeat(Math.round(frac * width)).padEnd(width, '.')}] ` : '';
      const eta = p.totalFrames > 0 && fps > 0 ? ` ETA ${Math.ceil((p.totalFrames - p.frame) / fps)}s` : '';
      const total = p.totalFrames > 0 ? `/${p.totalFrames}` : '';
      stream.write(`\r${bar}frame ${p.frame}${total}  end-to-end ${fps.toFixed(1)} FPS  inference ${inf.toFixed(1)} FPS${eta}   `);
      shown = true;
    },
    done() {
      if (shown) stream.write('\n');
    },
  };
}
