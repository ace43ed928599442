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
