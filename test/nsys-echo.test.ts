/**
 * nsys's own output as it reaches the user: the lines about a stream it left to import are held back (to be said
 * with what happened to the stream), everything else passes through, whatever the chunks it arrives in. The lines are
 * Debian's nsys 2022.4's, as `nsys profile -o t1 true` printed them here.
 */
import test from 'ava';
import { NsysEcho } from '../src/profilers/nsys-echo.ts';

const NSYS_TAIL = [
  'Collecting data...',
  'Importer error status: The importer binary and its dependencies were not found.',
  'Unable to retrieve the importer version: skipping importation of the QDSTRM file.',
  "Generating '/tmp/nsys-report-9cdf.qdstrm'",
  'Generated:',
  '    /tmp/sw/t1.qdstrm',
  'Generated:',
  '    /tmp/sw/t2.nsys-rep',
  'done',
].join('\n');

test('the importer lines and a Generated: naming a raw stream are held; a Generated: naming a report and the rest pass, in any chunks', (t) => {
  for (const size of [1, 3, 7, 64, 10_000]) {
    const echo = new NsysEcho();
    let shown = '';
    for (let i = 0; i < NSYS_TAIL.length; i += size) shown += echo.feed(NSYS_TAIL.slice(i, i + size));
    shown += echo.flush();
    t.is(shown, 'Collecting data...\nGenerated:\n    /tmp/sw/t2.nsys-rep\ndone', `chunks of ${size}`);
    t.deepEqual(echo.held, [
      'Importer error status: The importer binary and its dependencies were not found.',
      'Unable to retrieve the importer version: skipping importation of the QDSTRM file.',
      "Generating '/tmp/nsys-report-9cdf.qdstrm'",
      'Generated:',
      '    /tmp/sw/t1.qdstrm',
    ]);
    t.is(echo.reason(), 'The importer binary and its dependencies were not found');
  }
});

test('a "Generated:" at the very end is shown, not lost; output without importer lines passes whole', (t) => {
  const echo = new NsysEcho();
  t.is(echo.feed('a\nGenerated:\n'), 'a\n');
  t.is(echo.flush(), 'Generated:\n');
  const plain = new NsysEcho();
  t.is(plain.feed('x\ny\n') + plain.flush(), 'x\ny\n');
  t.deepEqual(plain.held, []);
  t.is(plain.reason(), undefined);
});
