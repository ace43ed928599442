/**
 * `infer --heads F`: the model's raw head outputs on a run's first frames, so `jetprof selftest` can hold one backend
 * against another on the same inputs (the same clip, decoder and preprocessing). The file is one JSON line, the
 * header (schema, the frames and each head's name and length), then every head's float32 values, little-endian, in
 * the header's order. Pure but for the copy it keeps (a backend may reuse its output buffers).
 */
const HEADS_SCHEMA = 'jetprof.heads/1';

/** Frames recorded by default: enough to see a difference, few enough to keep the file small (about 1 MB a frame). */
const HEADS_FRAMES = 4;

interface HeadsFrame {
  /** The frame's index in stream 0, warm-up frames included. */
  index: number;
  heads: Map<string, Float32Array>;
}

/** Keeps copies of stream 0's outputs for its first `maxFrames` frames. */
export function headsRecorder(maxFrames = HEADS_FRAMES) {
  const frames: HeadsFrame[] = [];
  return {
    frames,
    add(stream: number, index: number, outputs: Map<string, Float32Array>): void {
      if (stream !== 0 || frames.length >= maxFrames) return;
      const names = [...outputs.keys()].sort();
      frames.push({ index, heads: new Map(names.map((n) => [n, outputs.get(n)!.slice()])) });
    },
    bytes(): Buffer {
      const header = {
        schema: HEADS_SCHEMA,
        frames: frames.map((f) => ({
          index: f.index,
          heads: [...f.heads].map(([name, data]) => ({ name, length: data.length })),
        })),
      };
      const data = frames.flatMap((f) =>
        [...f.heads.values()].map((d) => Buffer.from(d.buffer, d.byteOffset, d.byteLength)),
      );
      return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), ...data]);
    },
  };
}

/** The frames of a heads file; throws a RangeError naming what is wrong with it. */
export function parseHeadsFile(bytes: Buffer): HeadsFrame[] {
  const end = bytes.indexOf(0x0a);
  if (end < 0) throw new RangeError('no header line');
  const header = JSON.parse(bytes.subarray(0, end).toString('utf8')) as {
    schema?: string;
    frames?: { index: number; heads: { name: string; length: number }[] }[];
  };
  if (header.schema !== HEADS_SCHEMA || !Array.isArray(header.frames)) throw new RangeError(`not ${HEADS_SCHEMA}`);
  let offset = end + 1;
  return header.frames.map((f) => ({
    index: f.index,
    heads: new Map(
      f.heads.map(({ name, length }) => {
        const slice = bytes.subarray(offset, offset + length * 4);
        if (slice.length !== length * 4) throw new RangeError(`${name} of frame ${f.index} is cut short`);
        offset += length * 4;
        // copied into an aligned buffer: the slice may start at any byte
        return [name, new Float32Array(new Uint8Array(slice).buffer)];
      }),
    ),
  }));
}
