/**
 * What the commands that launch infer (compare, capacity, profile) need to know of the infer arguments a user gave
 * them. Infer's own parser reads them (cli/infer-options.ts `inferArgFacts`, from infer's one declaration of its
 * options) and the CLI hands these facts down, so no job reads infer's argv by hand.
 */
import type { VideoIo } from '../video/gstreamer.ts';
import type { PipelineMode } from './loop-choice.ts';

export interface InferArgFacts {
  /** The sources (files, folders, URLs, cameras) among the arguments. */
  videos: string[];
  model?: string;
  cfg?: string;
  weights?: string;
  labels?: string;
  engine?: string;
  /** --pipeline when the user gave it (undefined: infer's default, auto). */
  pipeline?: PipelineMode;
  threads?: number;
  /** --ep (default cpu). */
  ep: string;
  /** --batch when given. */
  batch?: number;
  /** --json when given (`-`: stdout). */
  json?: string;
  /** --video-io: how infer opens a file (the profiler's check opens it the same way). */
  videoIo: VideoIo;
  /** Whether --output (or -o) or --no-write says where the video goes. */
  outputGiven: boolean;
  /** The long names of the options the user gave (`--streams`), defaults left out. */
  given: string[];
}

/** The ONNX the infer arguments name: --model, else the export cached beside --weights, else the usual path. */
export function onnxOfInferArgs(f: Pick<InferArgFacts, 'model' | 'weights'>): string {
  if (f.model) return f.model;
  return f.weights ? `${f.weights}.onnx` : 'weights/yolov4-tiny.onnx';
}

/**
 * infer's flags that the jobs set when they launch it, by the name infer's declaration gives each option's value
 * (commander's attribute name: `--source-fps` is `sourceFps`, `--no-write` is `write`). cli/infer-options.ts declares
 * these options from this table, so a flag renamed here is renamed there, and a job that names one the table lacks
 * does not compile; house-order checks every entry against the declaration.
 */
export const INFER_FLAGS = {
  model: '--model',
  engine: '--engine',
  plugin: '--plugin',
  streams: '--streams',
  batch: '--batch',
  realtime: '--realtime',
  stagger: '--stagger',
  sourceFps: '--source-fps',
  duration: '--duration',
  warmup: '--warmup',
  maxFrames: '--max-frames',
  output: '--output',
  write: '--no-write',
  outputDir: '--output-dir',
  json: '--json',
  videoIo: '--video-io',
  detections: '--detections',
  heads: '--heads',
  label: '--label',
  pipeline: '--pipeline',
  repeat: '--repeat',
  modelAlone: '--model-alone',
  ep: '--ep',
  quiet: '--quiet',
} as const;

/** The table's switches: given as `true`. */
type Switch = 'realtime' | 'stagger' | 'quiet';

/** What a job sets: a switch true (`write: false` for --no-write), a value, or a repeatable option's values. */
export type InferFlags = {
  [K in keyof typeof INFER_FLAGS]?: K extends 'write'
    ? false
    : K extends 'plugin'
      ? readonly string[]
      : K extends Switch
        ? true
        : string | number;
};

/** infer's argument list for these settings, in the table's order (a value after its flag; `--plugin` once per file). */
export function inferArgv(flags: InferFlags): string[] {
  return (Object.keys(INFER_FLAGS) as (keyof typeof INFER_FLAGS)[]).flatMap((key) => {
    const value = flags[key];
    const flag = INFER_FLAGS[key];
    if (value === undefined) return [];
    if (Array.isArray(value)) return value.flatMap((v) => [flag, v]);
    return value === true || value === false ? [flag] : [flag, String(value)];
  });
}
