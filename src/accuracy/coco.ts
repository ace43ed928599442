/**
 * COCO formats: detection results (`[{image_id, category_id, bbox: [x, y, w, h], score}]`, what `infer --detections`
 * writes and COCO's evaluators read) and ground-truth annotations (`{images, annotations, categories}`). Pure
 * validation: a value that is not in the format gives one message that says what is wrong and where.
 */
import { JetprofError } from '../util/errors.ts';

export interface CocoDetection {
  image_id: number;
  category_id: number;
  /** [x, y, width, height] in frame pixels. */
  bbox: [number, number, number, number];
  score: number;
  /** jetprof's mark on warm-up frames (evaluators ignore unknown fields). */
  warmup?: boolean;
  /** --interval: the IoU tracker's id for the object. */
  track_id?: number;
}

export interface CocoAnnotation {
  id: number;
  image_id: number;
  category_id: number;
  bbox: [number, number, number, number];
  /** Segment area in COCO; bbox area when absent. */
  area?: number;
  iscrowd?: 0 | 1;
}

export interface CocoGroundTruth {
  images: { id: number; width?: number; height?: number; file_name?: string }[];
  annotations: CocoAnnotation[];
  categories: { id: number; name: string }[];
}

const isBox = (b: unknown): b is [number, number, number, number] =>
  Array.isArray(b) && b.length === 4 && b.every((v) => typeof v === 'number' && Number.isFinite(v));

/** Validates COCO results; throws one line naming the file, the first bad entry and the fix. */
export function parseCocoDetections(value: unknown, path: string): CocoDetection[] {
  const fix =
    'pass the file written by `infer --detections F.json` (COCO results: [{image_id, category_id, bbox: [x, y, w, h], score}])';
  if (!Array.isArray(value))
    throw new JetprofError('BAD_INPUT', `${path}: not COCO detection results (expected a JSON array)`, {
      suggestion: fix,
    });
  value.forEach((d, i) => {
    const e = d as Record<string, unknown>;
    const bad =
      typeof e !== 'object' || e === null
        ? 'not an object'
        : !Number.isInteger(e.image_id)
          ? 'image_id is not an integer'
          : !Number.isInteger(e.category_id)
            ? 'category_id is not an integer'
            : !isBox(e.bbox)
              ? 'bbox is not [x, y, w, h]'
              : typeof e.score !== 'number' || !Number.isFinite(e.score)
                ? 'score is not a number'
                : undefined;
    if (bad)
      throw new JetprofError('BAD_INPUT', `${path}: entry ${i} is not a COCO detection (${bad})`, { suggestion: fix });
  });
  return value as CocoDetection[];
}

/** Validates COCO ground truth (images, annotations, categories); throws one line naming the file and the gap. */
export function parseCocoGroundTruth(value: unknown, path: string): CocoGroundTruth {
  const fix =
    'pass COCO annotations: {"images": [{"id"}], "annotations": [{"id", "image_id", "category_id", "bbox"}], "categories": [{"id", "name"}]}';
  const v = value as Record<string, unknown>;
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new JetprofError('BAD_INPUT', `${path}: not COCO annotations (expected a JSON object)`, { suggestion: fix });
  for (const key of ['images', 'annotations', 'categories']) {
    if (!Array.isArray(v[key]))
      throw new JetprofError('BAD_INPUT', `${path}: COCO annotations without "${key}"`, { suggestion: fix });
  }
  const images = v.images as Record<string, unknown>[];
  const badImage = images.findIndex((im) => !Number.isInteger(im?.id));
  if (badImage >= 0)
    throw new JetprofError('BAD_INPUT', `${path}: images[${badImage}] has no integer id`, { suggestion: fix });
  const categories = v.categories as Record<string, unknown>[];
  const badCat = categories.findIndex((c) => !Number.isInteger(c?.id));
  if (badCat >= 0)
    throw new JetprofError('BAD_INPUT', `${path}: categories[${badCat}] has no integer id`, { suggestion: fix });
  const anns = v.annotations as Record<string, unknown>[];
  anns.forEach((a, i) => {
    if (!Number.isInteger(a?.image_id) || !Number.isInteger(a?.category_id) || !isBox(a?.bbox)) {
      throw new JetprofError(
        'BAD_INPUT',
        `${path}: annotations[${i}] needs an integer image_id and category_id and a bbox [x, y, w, h]`,
        { suggestion: fix },
      );
    }
  });
  // the evaluator keys its matches by annotation id: two annotations with one id would share one match, and neither
  // pycocotools' answer nor a meaningful one comes out
  const seen = new Map<number, number>();
  anns.forEach((a, i) => {
    if (!Number.isInteger(a.id)) return;
    const first = seen.get(a.id as number);
    if (first !== undefined)
      throw new JetprofError(
        'BAD_INPUT',
        `${path}: annotations[${first}] and annotations[${i}] have the same id ${String(a.id)}: each annotation needs an id of its own`,
        { suggestion: 'renumber the annotations (or drop their ids: jetprof then numbers them in order)' },
      );
    seen.set(a.id as number, i);
  });
  return {
    images: images as CocoGroundTruth['images'],
    categories: categories as CocoGroundTruth['categories'],
    annotations: anns.map((a, i) => ({
      ...(a as unknown as CocoAnnotation),
      id: Number.isInteger(a.id) ? (a.id as number) : i + 1,
    })),
  };
}

/**
 * darknet's 80 COCO classes (coco.names order) to COCO's category ids (1..90 with gaps), for `--coco-category-ids`:
 * detections of a COCO-trained model can then be scored against COCO's own annotations.
 */
export const COCO80_TO_COCO91 = [
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27, 28, 31, 32, 33, 34, 35, 36,
  37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 67,
  70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90,
];

/**
 * IoU of two COCO boxes [x, y, w, h]. Against a crowd region (`crowd`) the union is the detection's own area, as in
 * COCOeval, so a detection inside a crowd counts as covered.
 */
export function cocoIou(d: readonly number[], g: readonly number[], crowd = false): number {
  const [dx, dy, dw, dh] = d;
  const [gx, gy, gw, gh] = g;
  const iw = Math.min(dx + dw, gx + gw) - Math.max(dx, gx);
  const ih = Math.min(dy + dh, gy + gh) - Math.max(dy, gy);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = crowd ? dw * dh : dw * dh + gw * gh - inter;
  return union > 0 ? inter / union : 0;
}
