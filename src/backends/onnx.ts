/**
 * ONNX Runtime backend (onnxruntime-node), loaded on first use.
 * Execution providers: 'cpu' always; 'cuda' and 'tensorrt' only where the provider libraries exist (a custom ORT
 * build on Jetson, the cuda12 install on x64). Asking for a missing one does not fall back inside ORT, it throws;
 * jetprof then retries with 'cpu' and reports a one-line warning.
 */
import { createRequire } from 'node:module';
import { JetprofError, messageOf } from '../util/errors.ts';
import { type DetectorSession, type ImageBatch, type InferenceResult, padBatch, unpadBatch } from './types.ts';

export type OnnxExecutionProvider = 'cpu' | 'cuda' | 'tensorrt';

export interface OnnxSessionOptions {
  /** Default 'cpu'. */
  executionProvider?: OnnxExecutionProvider;
  /** ORT intra-op threads; default: ORT's own choice (one per core). */
  threads?: number;
  /** Called with one-line warnings (fallback to CPU). */
  onWarning?: (message: string) => void;
}

type Ort = typeof import('onnxruntime-node');

/**
 * onnxruntime-node 1.30's Linux library starts a telemetry client when it loads: it reads /etc/machine-id, writes
 * mat-debug-<pid>.log in $TMPDIR (else /tmp) and /tmp/.ses, and costs a process time at start-up (docs/MEASUREMENTS.md,
 * "Small choices and what they measured"). The library leaves it off by itself under CI (CI,
 * GITHUB_ACTIONS and the like in the environment), so a user's runs differed from CI's. A measuring tool keeps it off
 * (ORT_DISABLE_TELEMETRY=1) unless the user set the variable. Set from the main thread before the library loads in
 * any thread: the library reads the C environment, which a worker's process.env (a copy of its own) does not change.
 */
export function disableOrtTelemetry(): void {
  process.env.ORT_DISABLE_TELEMETRY ??= '1';
}

function loadOrt(): Ort {
  disableOrtTelemetry();
  try {
    return createRequire(import.meta.url)('onnxruntime-node') as Ort;
  } catch (e) {
    throw new JetprofError('TOOL_MISSING', `onnxruntime-node could not be loaded: ${messageOf(e).split('\n')[0]}`, {
      suggestion: 'run scripts/setup.sh (npm ci with onnxruntime-node-install=skip in .npmrc)',
    });
  }
}

function onnxRuntimeVersion(): string {
  try {
    const require = createRequire(import.meta.url);
    return (require('onnxruntime-node/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * Why a GPU provider is not used, in one line. onnxruntime-node ships its CUDA and TensorRT providers for linux x64
 * only: on a Jetson (linux arm64) ONNX Runtime from Node always runs on the CPU, and the line says what would use the GPU.
 */
export function unavailableProviderMessage(
  ep: string,
  error: string,
  platform: string = process.platform,
  arch: string = process.arch,
): string {
  if (platform === 'linux' && arch === 'arm64') {
    return `ONNX Runtime execution provider '${ep}' cannot work here: onnxruntime-node ships CUDA and TensorRT providers for linux x64 only, so on a Jetson (arm64) it runs on the CPU; using 'cpu'. For the GPU use --backend trt (a TensorRT engine) or --backend opencv --ep cuda (an OpenCV built with CUDA)`;
  }
  return `ONNX Runtime execution provider '${ep}' is not available here (${error.split('\n')[0].slice(0, 120)}); using 'cpu'`;
}

export async function createOnnxSession(modelPath: string, options: OnnxSessionOptions = {}): Promise<DetectorSession> {
  const ort = loadOrt();
  const ep = options.executionProvider ?? 'cpu';
  const base = {
    graphOptimizationLevel: 'all' as const,
    // ORT's intra-op threads spin after each run by default, taking the CPU that decoding, drawing and encoding
    // need between frames (what it cost: docs/MEASUREMENTS.md, "Small choices and what they measured").
    extra: { session: { intra_op: { allow_spinning: '0' } } },
    ...(options.threads ? { intraOpNumThreads: options.threads } : {}),
  };
  let session: Awaited<ReturnType<Ort['InferenceSession']['create']>>;
  let used: OnnxExecutionProvider = ep;
  try {
    // ORT's own logger would print the failed provider load as raw red lines before jetprof's one-line warning
    if (ep !== 'cpu') ort.env.logLevel = 'fatal';
    session = await ort.InferenceSession.create(modelPath, {
      ...base,
      executionProviders: [ep],
      ...(ep !== 'cpu' ? { logSeverityLevel: 4 as const } : {}),
    });
  } catch (e) {
    if (ep === 'cpu') {
      throw new JetprofError(
        'BAD_MODEL',
        `${modelPath}: ONNX Runtime cannot load this model (${messageOf(e).split('\n')[0]})`,
        {
          suggestion: 'export it again with `jetprof export`',
        },
      );
    }
    options.onWarning?.(unavailableProviderMessage(ep, messageOf(e)));
    used = 'cpu';
    session = await ort.InferenceSession.create(modelPath, { ...base, executionProviders: ['cpu'] });
  }
  const inputName = session.inputNames[0];
  const outputNames = [...session.outputNames];
  const dims =
    session.inputMetadata?.[0] && 'shape' in session.inputMetadata[0]
      ? (session.inputMetadata[0].shape as readonly (number | string)[])
      : undefined;
  if (!dims || dims.length !== 4) {
    throw new JetprofError(
      'BAD_MODEL',
      `${modelPath}: model input must be [batch,3,H,W] float32 (or [batch,H,W,3] uint8 from export --frame-input)`,
      {
        suggestion: 'export it again with `jetprof export`',
      },
    );
  }
  // a symbolic batch dimension takes any number of images; a fixed one exactly that many (a shorter batch is padded)
  const fixed = typeof dims[0] === 'number' && dims[0] > 0 ? dims[0] : undefined;
  const perImage = Number(dims[1]) * Number(dims[2]) * Number(dims[3]);
  return {
    backend: 'onnx',
    description: `onnxruntime-node ${onnxRuntimeVersion()} (${used})`,
    precision: 'fp32',
    runtime: { onnxruntime: onnxRuntimeVersion() },
    executionProvider: used,
    inputName,
    outputNames,
    batchSize: fixed ?? 'dynamic',
    async run(input: ImageBatch): Promise<InferenceResult> {
      const n = input.length / perImage;
      const batch = fixed ?? n;
      const type = input instanceof Uint8Array ? 'uint8' : 'float32';
      const feeds = {
        [inputName]: new ort.Tensor(type, padBatch(input, n, batch), [
          batch,
          Number(dims[1]),
          Number(dims[2]),
          Number(dims[3]),
        ]),
      };
      const results = await session.run(feeds);
      const outputs = new Map<string, Float32Array>();
      for (const name of outputNames) outputs.set(name, unpadBatch(results[name].data as Float32Array, n, batch));
      return { outputs };
    },
    async dispose() {
      await session.release();
    },
  };
}
