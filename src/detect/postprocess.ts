/**
 * Postprocess of one frame: decode every head into the reusable candidate buffer, keep the top `maxCandidates` by
 * score (linear-time selection), per-class greedy NMS, then at most `maxDet` boxes, highest score first. The two
 * caps bound the work of a frame where the model fires everywhere (a model early in training, --conf 0.001 for
 * mAP); on a normal frame neither binds, and the result is exactly greedy NMS over all candidates.
 */
import { PLUGIN_DETECTIONS_OUTPUT, type YoloHead, type YoloModelInfo } from '../model/metadata.ts';
import { JetprofError } from '../util/errors.ts';
import { type CallReply, startWorker, WorkerCalls } from '../util/worker.ts';
import { Candidates, SortScratch, topByScore } from './candidates.ts';
import { candidateFloor, type ClassMode, decodeHead, decodePluginDetections } from './decode.ts';
import { type NmsKind, nmsCandidates } from './nms.ts';
import type { Detection, Geometry } from './types.ts';

/**
 * The postprocess settings, under one set of names from infer's options (--conf, --nms, --nms-kind, --class-mode,
 * --max-candidates, --max-det) through the postprocessor to the run JSON's `postprocess`.
 */
export interface PostprocessOptions {
  conf: number;
  nms: number;
  nmsKind: NmsKind;
  classMode: ClassMode;
  /** Candidates entering NMS, the highest scores first. */
  maxCandidates: number;
  /** Boxes kept per frame after NMS. */
  maxDet: number;
}

/** Just the postprocess settings of a larger options object (infer's, parsed by the CLI). */
export function postprocessOf(o: PostprocessOptions): PostprocessOptions {
  const { conf, nms, nmsKind, classMode, maxCandidates, maxDet } = o;
  return { conf, nms, nmsKind, classMode, maxCandidates, maxDet };
}

/**
 * Defaults. 30000 candidates: Ultralytics' max_nms; far above a normal frame (a crowded vtest frame at --conf 0.3
 * has about 3000) and cheap for the NMS here. 300 boxes: Ultralytics' max_det, three times COCO's maxDets of 100.
 */
export const DEFAULT_MAX_CANDIDATES = 30000;
export const DEFAULT_MAX_DET = 300;

/**
 * NMS stops once `maxDet + 1` boxes are kept, and on a frame firing everywhere those come from the first few hundred
 * of the best candidates (the seeded dense model's vtest frames: within the best 500 of 30000). So such a frame
 * decodes and sorts the best LOOK_AHEAD x that many first, and all --max-candidates only where NMS runs out of them.
 */
const LOOK_AHEAD = 8;

export interface FramePostprocess {
  detections: Detection[];
  /** Candidates above the threshold, before the cap. */
  candidates: number;
  /** More candidates than maxCandidates: only the top ones entered NMS. */
  candidatesCapped: boolean;
  /** More boxes than maxDet survived NMS: the lowest scores were dropped. */
  detectionsCapped: boolean;
}

export class Postprocessor {
  private readonly buffer = new Candidates(4096);
  private readonly sortScratch = new SortScratch();

  constructor(
    private readonly model: YoloModelInfo,
    private readonly geometry: Geometry,
    private readonly o: PostprocessOptions,
    /** Names the model in errors. */
    private readonly modelName = 'the model',
  ) {}

  /** What it was made with: PostprocessThread makes its twin on a worker thread from them. */
  get settings(): ConstructorParameters<typeof Postprocessor> {
    return [this.model, this.geometry, this.o, this.modelName];
  }

  run(outputs: Map<string, Float32Array>): FramePostprocess {
    const { model, geometry: g, o } = this;
    const c = this.buffer.reset();
    // One box more than shown: enough to know whether --max-det bound, and NMS stops there (exactly).
    const limit = o.maxDet + 1;
    const nms = (order: Int32Array) => nmsCandidates(c, order, o.nms, o.nmsKind, limit);
    let kept: Int32Array | undefined;
    // an engine whose plugin gives boxes, not heads (TensorRT's YOLO plugins)
    const pluginBoxes = outputs.has(model.heads[0].output) ? undefined : outputs.get(PLUGIN_DETECTIONS_OUTPUT);
    if (pluginBoxes) {
      decodePluginDetections(pluginBoxes, g, o.conf, model.classes, c);
      kept = nms(topByScore(c, Math.min(c.count, o.maxCandidates), this.sortScratch));
    } else {
      const heads = model.heads.map((head) => ({ head, data: this.output(outputs, head.output) }));
      // a frame firing everywhere: only the candidates that can be among the --max-candidates best are decoded
      const dense = o.classMode === 'multi' ? candidateFloor(heads, model.classes, o.conf, o.maxCandidates) : undefined;
      // exact either way: unless every candidate came out, or `room` of them did (every one above the floor is
      // stored, and the first `room` at it in decode order, the ones ties prefer), the frame is decoded again
      const exact = (room: number) => c.count === c.passing || c.count >= room;
      const look = limit * LOOK_AHEAD;
      // (where it saves most of the work: the floor's margin stores about twice `look`, and a miss decodes twice)
      const lookFloor = dense && look * 4 <= o.maxCandidates ? dense.floorFor(look) : undefined;
      if (dense && lookFloor !== undefined) {
        // the best `look` in order are the first `look` of the best --max-candidates: where NMS keeps `limit` boxes
        // among them, the rest cannot change what it keeps
        const order = this.decode(heads, lookFloor, look);
        if (exact(look)) kept = nms(order);
        if (kept && kept.length < limit) kept = undefined;
      }
      if (!kept) {
        let order = this.decode(heads, dense?.floor ?? 0, o.maxCandidates);
        if (dense && !exact(o.maxCandidates)) order = this.decode(heads, 0, o.maxCandidates);
        kept = nms(order);
      }
    }
    if (c.nonFinite > 0) {
      throw new JetprofError(
        'BAD_MODEL',
        `${this.modelName}: the model's outputs hold NaN (${c.nonFinite} of the values decode read in this frame): every box would be lost`,
        {
          suggestion:
            'the weights or the engine are broken (NaN/Inf in the weights, or an FP16/INT8 engine that overflows): export or build it again from good weights',
        },
      );
    }
    // every candidate above conf, counted by decode whether stored or not
    const candidates = pluginBoxes ? c.count : c.passing;
    const shown = kept.length > o.maxDet ? kept.subarray(0, o.maxDet) : kept;
    return {
      detections: c.toDetections(shown),
      candidates,
      candidatesCapped: candidates > o.maxCandidates,
      detectionsCapped: kept.length > o.maxDet,
    };
  }

  /**
   * Every head into the candidate buffer (those at or above `floor`, and at most `room` at it), then the best `room`
   * in order.
   */
  private decode(heads: { head: YoloHead; data: Float32Array }[], floor: number, room: number): Int32Array {
    const { model, geometry: g, o } = this;
    const c = this.buffer.reset();
    const settings = { classes: model.classes, conf: o.conf, classMode: o.classMode, floor, floorRoom: room };
    for (const { head, data } of heads) decodeHead(data, head, g, settings, c);
    return topByScore(c, Math.min(c.count, room), this.sortScratch);
  }

  private output(outputs: Map<string, Float32Array>, name: string): Float32Array {
    const data = outputs.get(name);
    if (!data)
      throw new JetprofError('BAD_MODEL', `the model has no output ${name}`, {
        suggestion: 'export the model again with `jetprof export`',
      });
    return data;
  }
}

export type PostprocessRequest = { type: 'run'; heads: [string, Float32Array][] } | { type: 'close' };
export type PostprocessReply = { type: 'ready' } | CallReply<FramePostprocess>;

/**
 * The same postprocess on a worker thread (postprocess-thread.ts): the pipelined loop hands a frame's heads over and
 * draws the boxes that come back, so decoding and NMS (a dense frame's 202,800 candidates) run beside the main
 * thread, on another core, while it reads, preprocesses and draws other frames. Frames are answered in order.
 */
export class PostprocessThread {
  /** Resolves once the thread runs (the loop waits for it before its first frame, so no frame holds its start-up). */
  readonly ready: Promise<void>;
  private calls!: WorkerCalls<FramePostprocess>;

  /** `like`: the stream's Postprocessor, whose settings the thread's takes. */
  constructor(like: Postprocessor) {
    const worker = startWorker(import.meta.url, './postprocess-thread', like.settings);
    this.ready = new Promise((resolve, reject) => {
      this.calls = new WorkerCalls(worker, (m) => m.type === 'ready' && resolve(), reject);
    });
    this.ready.catch(() => undefined); // a thread that never starts fails its runs too; a caller need not wait
  }

  /** The frame's boxes. Its heads are copied over: the loop's outputs stay as they are (--heads writes them). */
  run(outputs: Map<string, Float32Array>): Promise<FramePostprocess> {
    const heads = [...outputs].map(([name, data]): [string, Float32Array] => [name, data.slice()]);
    const request: PostprocessRequest = { type: 'run', heads };
    return this.calls.call(
      request,
      heads.map(([, d]) => d.buffer as ArrayBuffer),
    );
  }

  /** Ends the thread once the frames handed over are answered (it leaves on its own: WorkerCalls.close). */
  close(): Promise<void> {
    return this.calls.close({ type: 'close' } satisfies PostprocessRequest);
  }
}
