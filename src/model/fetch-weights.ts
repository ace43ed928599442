/**
 * The public YOLOv4-Tiny weights, fetched on a connected machine (`jetprof fetch-weights`, run by scripts/setup.sh):
 * AlexeyAB/darknet's release asset, the file tensorrt_demos and the lab use, for the cfg jetprof ships. The bytes are
 * checked against the cfg (the exporter's exact size check) before they are written under the final name, atomically;
 * a failed or cut download leaves nothing behind. jetprof never downloads at run time: this is the only fetch.
 */
import { JetprofError, messageOf } from '../util/errors.ts';
import { writeOutput } from '../output/output.ts';
import { loadCfg } from './export-file.ts';
import { expectedWeightsBytes, parseWeights } from './weights.ts';

/** AlexeyAB/darknet's release asset for cfg/yolov4-tiny.cfg (24,251,276 bytes). */
export const YOLOV4_TINY_WEIGHTS_URL =
  'https://github.com/AlexeyAB/darknet/releases/download/darknet_yolo_v4_pre/yolov4-tiny.weights';

interface FetchWeightsOptions {
  url: string;
  cfgPath: string;
  outPath: string;
  /** The whole download ends after this long (ms). */
  timeoutMs: number;
  /** ...and after this long without a byte (ms): a server that hangs. */
  idleMs: number;
  onProgress?: (received: number, total: number) => void;
}

/** Downloads, checks against the cfg, writes atomically; returns the byte count. One-line errors, nothing left behind. */
export async function fetchWeights(o: FetchWeightsOptions): Promise<number> {
  const cfg = loadCfg(o.cfgPath);
  const need = expectedWeightsBytes(cfg);
  const fail = (
    why: string,
    suggestion = `download it on a connected machine and copy it to ${o.outPath} (README: real weights)`,
  ) => new JetprofError('TOOL_FAILED', `${o.url}: ${why}; nothing was written`, { suggestion });
  const controller = new AbortController();
  let idle: NodeJS.Timeout | undefined;
  let why = '';
  const abort = (reason: string) => {
    why = reason;
    controller.abort();
  };
  const total = setTimeout(() => abort(`no complete file after ${Math.round(o.timeoutMs / 1000)} s`), o.timeoutMs);
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => abort(`the server sent nothing for ${Math.round(o.idleMs / 1000)} s`), o.idleMs);
  };
  try {
    touch();
    let res: Response;
    try {
      res = await fetch(o.url, { signal: controller.signal, redirect: 'follow' });
    } catch (e) {
      throw fail(why || `cannot be reached (${messageOf((e as { cause?: unknown }).cause ?? e)})`);
    }
    if (!res.ok || !res.body) throw fail(`the server answered ${res.status} ${res.statusText}`.trim());
    const chunks: Uint8Array[] = [];
    let received = 0;
    try {
      for await (const chunk of res.body) {
        touch();
        received += chunk.byteLength;
        if (received > need)
          throw fail(`more than the ${need} bytes ${cfg.path.split('/').pop()} needs: not these weights`);
        chunks.push(chunk);
        o.onProgress?.(received, need);
      }
    } catch (e) {
      if (e instanceof JetprofError) throw e;
      throw fail(why || `the download broke after ${received} bytes (${messageOf(e)})`);
    }
    if (received !== need)
      throw fail(
        `${received} bytes arrived where ${cfg.path.split('/').pop()} needs ${need} (a cut download, or weights for another cfg)`,
      );
    const bytes = Buffer.concat(chunks);
    parseWeights(bytes, cfg, o.outPath); // the exporter's own checks: size, NaN and Inf
    writeOutput(o.outPath, bytes);
    return received;
  } finally {
    clearTimeout(total);
    clearTimeout(idle);
  }
}
