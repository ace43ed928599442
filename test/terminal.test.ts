/**
 * What the commands print, fitted to a terminal: a long note wraps at word boundaries (never mid-word) with a hanging
 * indent, and stays one line in a pipe; the lab table keeps its headings and fits 80 columns with tight pipes.
 */
import test from 'ava';
import { fitText, wrapNote } from '../src/cli/terminal.ts';
import { markdownTable } from '../src/report/tables.ts';
import { escapeControls } from '../src/util/text-input.ts';
import { right } from '../src/report/blocks.ts';
import { LAB_HEADERS } from '../src/report/run-lines.ts';

const NOTE =
  'infer: note: --video-io auto: GStreamer cannot write 961x541 (x264enc takes even sizes only), so FFmpeg writes it one pixel smaller: 960x540, named in the run JSON';

test('a note wraps at word boundaries to the terminal, continuing two spaces in; in a pipe it stays one line', (t) => {
  for (const columns of [40, 80, 120]) {
    const wrapped = wrapNote(NOTE, columns);
    const lines = wrapped.split('\n');
    t.true(lines.length > 1, `${columns} columns`);
    for (const l of lines) t.true(l.length <= columns - 1, `${columns} columns: ${l.length}: ${l}`);
    for (const l of lines.slice(1)) t.regex(l, /^ {2}\S/);
    // nothing cut: the words are the note's, in order
    t.deepEqual(wrapped.split(/\s+/).filter(Boolean), NOTE.split(' '));
  }
  t.is(wrapNote(NOTE, undefined), NOTE, 'a pipe or a file: the note whole, greppable');
  t.is(wrapNote('short', 80), 'short');
});

test("the lab table's header is 82 characters: on an 80-column terminal the table is written with tight pipes, still Markdown; wider, or in a pipe, as it is", (t) => {
  const text = markdownTable(
    LAB_HEADERS,
    [['ONNX Runtime (CPU, FP32)', '(960,540,3)', '20.23', '18.63']],
    right(4, [0, 1]),
  );
  t.true(text.split('\n')[0].length > 80);
  const fitted = fitText(text, 80, 80).split('\n');
  for (const l of fitted) t.true(l.length <= 79, `${l.length}: ${l}`);
  t.is(fitted[0], '|Model Type|Model Input Size|Inference Speed (FPS)|End-to-end speed (FPS)|');
  t.is(fitted[1], '|---|---|---:|---:|');
  t.is(fitted[2], '|ONNX Runtime (CPU, FP32)|(960,540,3)|20.23|18.63|');
  t.is(fitText(text, 120, 120), text);
  t.is(fitText(text, undefined, 80), text);
});

test('control characters from outside are shown, not obeyed: terminal escapes, CR and the bidi controls that turn a label round (U+202E)', (t) => {
  t.is(escapeControls('onnx\u202e61pf-trt \x1b[2J\r\n', true), 'onnx\\u202e61pf-trt \\x1b[2J\\r\\n');
  t.is(escapeControls('a\u2066b\u2069c\u200fd\u061ce\tf\n'), 'a\\u2066b\\u2069c\\u200fd\\u061ce\tf\n');
  // in a Markdown table cell (REPORT.md, SELFTEST.md) as on the terminal
  t.regex(markdownTable(['label'], [['onnx\u202e61pf-trt']]), /\| onnx\\u202e61pf-trt \|/);
});
