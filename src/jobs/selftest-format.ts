/**
 * `jetprof selftest`'s result (`jetprof.selftest/1`, DIR/selftest.json) and its words: the answer the console prints
 * and DIR/SELFTEST.md, as blocks (report/markdown.ts draws them). Pure.
 */
import type { Block } from '../report/blocks.ts';
import type { Cell } from '../report/tables.ts';

type ComponentStatus = 'ok' | 'fail' | 'absent';

export interface SelftestEntry {
  /** "backend: TensorRT", "video: GStreamer software", "profiler: nsys", "board: tegrastats". */
  component: string;
  status: ComponentStatus;
  /** What it measured, in one line: FPS, head differences, frame counts, a sample. */
  figure?: string;
  /** For fail or absent: the one-line fix. */
  fix?: string;
  /** Why it failed or is absent, when the fix alone does not say. */
  detail?: string;
  /** The figures behind `figure`, for machines (FPS, differences, counts). */
  figures?: Record<string, number | string | boolean>;
  /** The command it ran, when it ran one. */
  command?: string;
  /** For fail: the last lines the command printed (what a maintainer reads first). */
  log?: string[];
  seconds: number;
}

export interface SelftestResult {
  schema: 'jetprof.selftest/1';
  startedAt: string;
  /** The machine: board (or CPU), OS, Node. */
  machine: { board?: string; l4t?: string; cpu?: string; os?: string; node: string; arch: string };
  /** What ran: jetprof, Node, ONNX Runtime, OpenCV, GStreamer, TensorRT, CUDA, L4T, nsys, nvprof (where each is). */
  versions?: Record<string, string>;
  /** `jetprof doctor`'s table on this machine: what is installed, and the fix for each gap. */
  doctor?: { check: string; status: string; value: string; fix?: string }[];
  clip: { path: string; frames: number; made: boolean };
  model: { path: string; made: boolean };
  entries: SelftestEntry[];
  /** Every present component works (absent ones are not failures). */
  ok: boolean;
  interrupted?: boolean;
  seconds: number;
}

const MARK: Record<ComponentStatus, string> = { ok: 'ok', fail: 'FAIL', absent: 'absent' };

/** The table the console and SELFTEST.md print, one row per component. */
function selftestTable(r: SelftestResult): Block {
  return {
    kind: 'table',
    headers: ['Component', 'Status', 'What it showed', 'Fix'],
    rows: r.entries.map((e) => [
      e.component,
      MARK[e.status],
      [e.figure, e.detail].filter(Boolean).join('; '),
      e.fix ?? '',
    ]),
    align: ['l', 'l', 'l', 'l'],
  };
}

/** The sentence under the table: how many work, which failed. */
function selftestVerdict(r: SelftestResult): string {
  const count = (s: ComponentStatus) => r.entries.filter((e) => e.status === s).length;
  const failed = r.entries.filter((e) => e.status === 'fail').map((e) => e.component);
  const head = `${count('ok')} component(s) work, ${count('fail')} failed, ${count('absent')} absent (not a failure) in ${r.seconds.toFixed(0)} s`;
  if (r.interrupted) return `${head}; interrupted: the components not run say so.`;
  return failed.length ? `${head}: ${failed.join(', ')}.` : `${head}: every component present works.`;
}

/** The answer on the console: the table and its verdict. */
export function selftestAnswer(r: SelftestResult): Block[] {
  return [selftestTable(r), { kind: 'paragraph', text: selftestVerdict(r) }];
}

/** SELFTEST.md: the machine, the answer, how it was found, the failures' output, versions and doctor's checks. */
export function selftestDocument(r: SelftestResult): Block[] {
  const m = r.machine;
  const failed = r.entries.filter((e) => e.status === 'fail' && e.log?.length);
  const para = (text: string): Block => ({ kind: 'paragraph', text });
  const table = (headers: string[], rows: Cell[][]): Block => ({ kind: 'table', headers, rows, align: [] });
  return [
    { kind: 'heading', level: 1, text: 'jetprof selftest' },
    para(
      `${m.board ?? m.cpu ?? 'this machine'}${m.l4t ? ` (L4T ${m.l4t})` : ''}, ${m.os ?? 'unknown OS'}, ${m.arch}, Node ${m.node}; ${r.startedAt}.`,
    ),
    para(
      `Clip: ${r.clip.path} (${r.clip.frames} frames${r.clip.made ? ', made for the test' : ''}); model: ${r.model.path}${r.model.made ? ' (seeded random weights that fire on every frame: its boxes are meaningless, the same on every backend)' : ''}.`,
    ),
    ...selftestAnswer(r),
    para(
      'Each backend ran the same frames through `infer` (sequential loop, not writing: end-to-end FPS is read to boxes); its raw head outputs are held against ONNX Runtime on the CPU on the same inputs, and its boxes matched at IoU 0.5. Each video path decoded the clip and encoded it again, and the written file was counted frame by frame. Attach this file and selftest.json to a bug report.',
    ),
    ...failed.flatMap((e): Block[] => [
      { kind: 'heading', level: 2, text: `${e.component}: the end of its output` },
      { kind: 'code', lines: e.log! },
    ]),
    ...(r.versions
      ? [
          { kind: 'heading', level: 2, text: 'Versions' } as const,
          table(['Component', 'Version'], Object.entries(r.versions)),
        ]
      : []),
    ...(r.doctor
      ? [
          { kind: 'heading', level: 2, text: 'jetprof doctor' } as const,
          table(
            ['Check', 'Status', 'Value', 'Fix'],
            r.doctor.map((d) => [d.check, d.status, d.value, d.fix]),
          ),
        ]
      : []),
  ];
}
