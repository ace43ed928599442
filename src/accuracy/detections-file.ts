/**
 * Reading and writing detection files: `infer --detections` writes COCO results (every box of every frame, warm-up
 * frames marked); `agree` and `map` read them, directly or through the run JSON that names them (which also says
 * which frames were processed: a frame without boxes is absent from COCO results).
 */
import { existsSync, realpathSync } from 'node:fs';
import { sha256File } from '../util/files.ts';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { FrameBoxes } from '../detect/types.ts';
import { readJsonFile } from '../util/text-input.ts';
import { JetprofError } from '../util/errors.ts';
import { type CocoDetection, type CocoGroundTruth, parseCocoDetections, parseCocoGroundTruth } from './coco.ts';

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;

/** COCO results text: bbox [x, y, w, h] to 1/100 px, scores to 6 digits; one box a line. */
export function cocoResultsJson(frames: readonly FrameBoxes[], categoryIds?: readonly number[]): string {
  const lines: string[] = [];
  for (const f of frames) {
    for (const d of f.detections) {
      const entry: CocoDetection = {
        image_id: f.index,
        category_id: categoryIds ? (categoryIds[d.classId] ?? d.classId) : d.classId,
        ...(d.trackId !== undefined ? { track_id: d.trackId } : {}),
        bbox: [round(d.x1, 2), round(d.y1, 2), round(d.x2 - d.x1, 2), round(d.y2 - d.y1, 2)],
        score: round(d.score, 6),
        ...(f.warmup ? { warmup: true } : {}),
      };
      lines.push(JSON.stringify(entry));
    }
  }
  return `[\n${lines.join(',\n')}\n]\n`;
}

export interface DetectionSource {
  path: string;
  detections: CocoDetection[];
  /** The frames the run processed (from its run JSON), or undefined for a bare COCO file. */
  frames?: number[];
  label?: string;
  /** Class names by category id (from the run's model), when known. */
  names?: Map<number, string>;
}

/** COCO ground truth ({images, annotations, categories}) from a file: `map --gt` and `report --gt`. */
export function loadGroundTruth(path: string): CocoGroundTruth {
  return parseCocoGroundTruth(readJsonFile(path, 'ground truth', 'pass COCO annotations with --gt'), path);
}

/**
 * The file a run JSON's `detectionsFile` names, resolved against the run's folder. A run file comes from other
 * people: a path outside its folder (`../../etc/passwd`, an absolute path, a symlink out) is refused; a file outside
 * it can still be given on the command line itself.
 */
function confinedDetectionsFile(runPath: string, named: string): string {
  const folder = dirname(resolve(runPath));
  const file = resolve(folder, named);
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const rel = relative(real(folder), real(file));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    throw new JetprofError(
      'BAD_INPUT',
      `${runPath}: its detectionsFile names ${JSON.stringify(named)}, outside the run's folder`,
      { suggestion: 'pass the detections file itself on the command line' },
    );
  return file;
}

/**
 * Several streams in one run: stream i's frames are numbered from 0 in its own file; read together, its frame k is
 * i * STREAM_FRAME_STRIDE + k, so two runs' boxes are held stream against stream.
 */
const STREAM_FRAME_STRIDE = 1_000_000_000;

/** The measured frames of a run, stream by stream where it ran several (as loadDetections numbers them). */
export function measuredFrames(run: { perFrame?: { index: number[]; stream?: number[] } }): number[] {
  const p = run.perFrame;
  if (!p) return [];
  return p.stream ? p.index.map((k, i) => p.stream![i] * STREAM_FRAME_STRIDE + k) : p.index;
}

/** Whether a run kept its boxes: one file, or one per stream. */
export function keptDetections(run: { detectionsFile?: string; streams?: { detectionsFile?: string }[] }): boolean {
  return !!run.detectionsFile || (!!run.streams?.length && run.streams.every((s) => !!s.detectionsFile));
}

/** The boxes of one file a run JSON names: confined to its folder, as the run wrote it, a COCO results list. */
function namedBoxes(
  path: string,
  named: string,
  sha256: string | undefined,
): { file: string; detections: CocoDetection[] } {
  const file = confinedDetectionsFile(path, named);
  // the file as this run wrote it, not one another run wrote over since (two compares into one --out-dir)
  if (sha256 && existsSync(file) && sha256File(file) !== sha256)
    throw new JetprofError(
      'BAD_INPUT',
      `${file}: not the detections ${path} wrote (the file changed since: another run wrote it, e.g. two compares into one --out-dir?)`,
      { suggestion: 'run again, each run into a folder of its own (compare --out-dir)' },
    );
  // the file a run names holds the boxes themselves (a run naming a run, or itself, is not followed)
  const boxes = readJsonFile(file, 'detections file', 'write one with `infer --detections F.json`');
  if (!Array.isArray(boxes))
    throw new JetprofError('BAD_INPUT', `${file}: named by ${path} as its detections, but not a COCO results list`, {
      suggestion: 'pass the detections file itself, as infer --detections wrote it',
    });
  return { file, detections: parseCocoDetections(boxes, file) };
}

/**
 * A COCO results file, or a run JSON (jetprof.run/2) whose `detectionsFile` (or whose streams' files) names one;
 * `loaded`: the file's content where the caller read it already (the report has its runs), so it is not read again.
 */
export function loadDetections(path: string, loaded?: unknown): DetectionSource {
  const v = (loaded ?? readJsonFile(path, 'detections file', 'write one with `infer --detections F.json`')) as {
    schema?: string;
    detectionsFile?: string;
    detectionsSha256?: string;
    streams?: { detectionsFile?: string; detectionsSha256?: string }[];
    perFrame?: { index: number[]; stream?: number[] };
    warmup?: { index: number[]; stream?: number[] };
    setup?: { label?: string };
    model?: { labels?: string[] };
  };
  if (Array.isArray(v)) return { path, detections: parseCocoDetections(v, path) };
  if (v?.schema === 'jetprof.run/2') {
    if (!keptDetections(v)) {
      throw new JetprofError('BAD_INPUT', `${path}: this run kept no detections`, {
        suggestion: 'run infer again with --detections F.json (compare keeps them for every backend)',
      });
    }
    const names = v.model?.labels ? new Map(v.model.labels.map((name, i) => [i, name])) : undefined;
    const frames = [...measuredFrames({ perFrame: v.warmup }), ...measuredFrames(v)].sort((a, b) => a - b);
    if (v.detectionsFile) {
      const { file, detections } = namedBoxes(path, v.detectionsFile, v.detectionsSha256);
      return { path: file, detections, frames, label: v.setup?.label, names };
    }
    // one file per stream, each in its own frame numbers: read together, stream by stream
    const parts = v.streams!.map((s, i) => {
      const { file, detections } = namedBoxes(path, s.detectionsFile!, s.detectionsSha256);
      return { file, detections: detections.map((d) => ({ ...d, image_id: i * STREAM_FRAME_STRIDE + d.image_id })) };
    });
    return {
      path: parts.map((x) => x.file).join(', '),
      detections: parts.flatMap((x) => x.detections),
      frames,
      label: v.setup?.label,
      names,
    };
  }
  return { path, detections: parseCocoDetections(v, path) };
}
