/**
 * `jetprof selftest`'s result (`jetprof.selftest/1`, DIR/selftest.json) and its words: the table the console and
 * DIR/SELFTEST.md print, one row per component. Pure.
 */
import { escapeControls } from '../util/text-input.ts';
import { markdownTable, mdInline } from '../report/tables.ts';

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

export function selftestTable(r: SelftestResult): string {
  return markdownTable(
    ['Component', 'Status', 'What it showed', 'Fix'],
    r.entries.map((e) => [e.component, MARK[e.status], [e.figure, e.detail].filter(Boolean).join('; '), e.fix ?? '']),
  );
}

/** The sentence under the table: how many work, which failed. */
export function selftestVerdict(r: SelftestResult): string {
  const count = (s: ComponentStatus) => r.entries.filter((e) => e.status === s).length;
  const failed = r.entries.filter((e) => e.status === 'fail').map((e) => e.component);
  const head = `${count('ok')} component(s) work, ${count('fail')} failed, ${count('absent')} absent (not a failure) in ${r.seconds.toFixed(0)} s`;
  if (r.interrupted) return `${head}; interrupted: the components not run say so.`;
  return failed.length ? `${head}: ${failed.join(', ')}.` : `${head}: every component present works.`;
}

/** A fenced block that no line of `lines` can close: a fence longer than any run of backticks in them. */
function fenced(lines: string[]): string[] {
  const longest = Math.max(2, ...lines.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((run) => run.length))));
  const fence = '`'.repeat(longest + 1);
  return [fence, ...lines.map((l) => escapeControls(l, true)), fence];
}

export function selftestMarkdown(r: SelftestResult): string {
  const m = r.machine;
  const failed = r.entries.filter((e) => e.status === 'fail' && e.log?.length);
  return [
    '# jetprof selftest',
    '',
    mdInline(
      `${m.board ?? m.cpu ?? 'this machine'}${m.l4t ? ` (L4T ${m.l4t})` : ''}, ${m.os ?? 'unknown OS'}, ${m.arch}, Node ${m.node}; ${r.startedAt}.`,
    ),
    mdInline(
      `Clip: ${r.clip.path} (${r.clip.frames} frames${r.clip.made ? ', made for the test' : ''}); model: ${r.model.path}${r.model.made ? ' (seeded random weights that fire on every frame: its boxes are meaningless, the same on every backend)' : ''}.`,
    ),
    '',
    selftestTable(r),
    '',
    selftestVerdict(r),
    '',
    'Each backend ran the same frames through `infer` (sequential loop, not writing: end-to-end FPS is read to boxes); its raw head outputs are held against ONNX Runtime on the CPU on the same inputs, and its boxes matched at IoU 0.5. Each video path decoded the clip and encoded it again, and the written file was counted frame by frame. Attach this file and selftest.json to a bug report.',
    '',
    ...failed.flatMap((e) => [`## ${mdInline(e.component)}: the end of its output`, '', ...fenced(e.log!), '']),
    ...(r.versions ? ['## Versions', '', markdownTable(['Component', 'Version'], Object.entries(r.versions)), ''] : []),
    ...(r.doctor
      ? [
          '## jetprof doctor',
          '',
          markdownTable(
            ['Check', 'Status', 'Value', 'Fix'],
            r.doctor.map((d) => [d.check, d.status, d.value, d.fix]),
          ),
          '',
        ]
      : []),
  ].join('\n');
}
