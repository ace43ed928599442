/**
 * The IoU tracker of `--interval K` (DeepStream's IOU tracker, simplest form): the model runs on every (K+1)-th frame;
 * there, each class's tracks take the detections of highest IoU, greedily (pairs in IoU order, at least `minIou`),
 * unmatched detections start tracks and a track unmatched more than `maxMisses` times in a row ends. On the frames between, the
 * tracks' boxes are carried forward as they were. Every box out of it carries its track's id. Pure.
 */
import { iou } from './nms.ts';
import type { Detection } from './types.ts';

interface Track {
  id: number;
  box: Detection;
  misses: number;
}

export class IouTracker {
  private tracks: Track[] = [];
  private nextId = 1;

  constructor(
    private readonly minIou = 0.3,
    private readonly maxMisses = 2,
  ) {}

  /** A frame the model ran on: its detections matched to the tracks; returns them with their track ids. */
  update(detections: Detection[]): Detection[] {
    const pairs: { t: number; d: number; v: number }[] = [];
    this.tracks.forEach((tr, t) =>
      detections.forEach((det, d) => {
        if (det.classId !== tr.box.classId) return;
        const v = iou(tr.box, det);
        if (v >= this.minIou) pairs.push({ t, d, v });
      }),
    );
    pairs.sort((a, b) => b.v - a.v || a.t - b.t || a.d - b.d);
    const trackOf = new Map<number, number>();
    const takenTracks = new Set<number>();
    for (const p of pairs) {
      if (takenTracks.has(p.t) || trackOf.has(p.d)) continue;
      takenTracks.add(p.t);
      trackOf.set(p.d, p.t);
    }
    const kept: Track[] = [];
    this.tracks.forEach((tr, t) => {
      if (takenTracks.has(t)) return;
      tr.misses++;
      if (tr.misses <= this.maxMisses) kept.push(tr);
    });
    const out = detections.map((det, d) => {
      const t = trackOf.get(d);
      const track = t !== undefined ? this.tracks[t] : { id: this.nextId++, box: det, misses: 0 };
      track.box = det;
      track.misses = 0;
      kept.push(track);
      return { ...det, trackId: track.id };
    });
    this.tracks = kept;
    return out;
  }

  /** A frame between inferences: the boxes of the tracks seen at the last inference, carried forward. */
  carried(): Detection[] {
    return this.tracks.filter((t) => t.misses === 0).map((t) => ({ ...t.box, trackId: t.id }));
  }
}
