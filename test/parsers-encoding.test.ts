/**
 * Logs as users pass them around (#16): a UTF-8 byte-order mark, UTF-16 from PowerShell's `>` (with a BOM) or
 * without one, CRLF and lone-CR line ends must give the same rows as the plain file; a log from which nothing can be
 * read is an error, not an empty success.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keptAnyTable, parseProfileFile, requireTables } from '../src/parsers/parse-file.ts';
import { decodeText, detectEncoding } from '../src/util/text-input.ts';
import { requires, ROOT, scratchDir, SHARED_FIXTURES } from './helpers/fixtures.ts';
import { cliCommand } from '../src/util/process.ts';

const NVPROF = join(ROOT, 'test/fixtures/profiles/nvprof-two-processes.txt');
const NSYS = join(ROOT, 'test/fixtures/profiles/nsys-2022-column.txt');

function jetprof(args: string[]) {
  const [node, ...entry] = cliCommand('jetprof');
  const r = spawnSync(node, [...entry, ...args], {
    encoding: 'utf8',
    cwd: scratchDir(),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function utf16be(text: string): Buffer {
  const le = Buffer.from(text, 'utf16le');
  const be = Buffer.alloc(le.length);
  for (let i = 0; i < le.length; i += 2) {
    be[i] = le[i + 1];
    be[i + 1] = le[i];
  }
  return be;
}

/** Every form a user may hand us, as bytes, from one plain UTF-8 text. */
function variants(text: string): Record<string, Buffer> {
  const lf = text.replace(/\r\n/g, '\n');
  return {
    'utf8-bom': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lf)]),
    'utf16le-bom-crlf': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(lf.replace(/\n/g, '\r\n'), 'utf16le')]),
    'utf16be-bom': Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(lf)]),
    'utf16le-no-bom': Buffer.from(lf, 'utf16le'),
    'utf16be-no-bom': utf16be(lf),
    crlf: Buffer.from(lf.replace(/\n/g, '\r\n')),
    'lone-cr': Buffer.from(lf.replace(/\n/g, '\r')),
  };
}

test('detectEncoding: BOMs, UTF-16 without a BOM by its NUL bytes, and plain UTF-8 (also with non-ASCII text)', (t) => {
  t.deepEqual(detectEncoding(Buffer.from([0xef, 0xbb, 0xbf, 0x3d])), { encoding: 'utf8', bomBytes: 3 });
  t.deepEqual(detectEncoding(Buffer.from([0xff, 0xfe, 0x3d, 0])), { encoding: 'utf16le', bomBytes: 2 });
  t.deepEqual(detectEncoding(Buffer.from([0xfe, 0xff, 0, 0x3d])), { encoding: 'utf16be', bomBytes: 2 });
  t.deepEqual(detectEncoding(Buffer.from('==12== Profiling', 'utf16le')), { encoding: 'utf16le', bomBytes: 0 });
  t.deepEqual(detectEncoding(utf16be('==12== Profiling')), { encoding: 'utf16be', bomBytes: 0 });
  t.deepEqual(detectEncoding(Buffer.from('==12== Profiling résultat µs')), { encoding: 'utf8', bomBytes: 0 });
  t.deepEqual(detectEncoding(Buffer.from('')), { encoding: 'utf8', bomBytes: 0 });
  t.is(decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('µs ok', 'utf16le')])), 'µs ok');
});

for (const [name, path] of [
  ['nvprof', NVPROF],
  ['nsys', NSYS],
] as const) {
  test(`${name}: a BOM, UTF-16 LE/BE with and without a BOM, CRLF and lone CR give exactly the rows of the plain file`, async (t) => {
    const plain = await parseProfileFile(path);
    t.true(keptAnyTable(plain));
    for (const [form, bytes] of Object.entries(variants(readFileSync(path, 'utf8')))) {
      const file = join(scratchDir(), `${name}-${form}.txt`);
      writeFileSync(file, bytes);
      const parsed = await parseProfileFile(file);
      t.is(parsed.kind, plain.kind, form);
      t.deepEqual(parsed.result.value, plain.result.value, form);
      t.deepEqual(
        parsed.result.diagnostics.map((d) => d.message),
        plain.result.diagnostics.map((d) => d.message),
        form,
      );
    }
  });
}

const SHARED_LOGS = join(SHARED_FIXTURES, 'profiler-logs');
requires(existsSync(SHARED_LOGS), `${SHARED_LOGS} is not beside this checkout (CI has it)`)(
  'the real logs in ../shared parse to the same JSON when saved as UTF-16 with a BOM (PowerShell) or with a UTF-8 BOM',
  async (t) => {
    const { readdirSync } = await import('node:fs');
    const dir = SHARED_LOGS;
    let files = 0;
    for (const sub of ['nvprof', 'nsys']) {
      for (const f of readdirSync(join(dir, sub)).filter((n) => n.endsWith('.txt'))) {
        const path = join(dir, sub, f);
        const text = readFileSync(path, 'utf8');
        if (text.includes('\uFFFD')) continue; // not valid UTF-8 to begin with: no faithful UTF-16 copy exists
        const plain = await parseProfileFile(path);
        const v = variants(text);
        for (const form of ['utf8-bom', 'utf16le-bom-crlf'] as const) {
          const file = join(scratchDir(), `${sub}-${f}-${form}`);
          writeFileSync(file, v[form]);
          t.deepEqual((await parseProfileFile(file)).result.value, plain.result.value, `${f} ${form}`);
        }
        files++;
      }
    }
    t.true(files >= 10, `${files} real logs compared`);
  },
);

test('jetprof parse: a log with a BOM prints the same JSON as without; one that yields no table exits 2 naming the file and why, unless --allow-empty', (t) => {
  const bom = join(scratchDir(), 'bom.txt');
  writeFileSync(bom, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(NVPROF)]));
  const plain = jetprof(['parse', NVPROF]);
  const withBom = jetprof(['parse', bom]);
  t.is(withBom.code, 0, withBom.stderr);
  t.is(withBom.stdout, plain.stdout);

  const noTable = join(scratchDir(), 'no-table.txt');
  writeFileSync(
    noTable,
    '==42== NVPROF is profiling process 42, command: ./yolo\n==42== Error: unified memory profiling failed.\n',
  );
  const r = jetprof(['parse', noTable]);
  t.is(r.code, 2);
  t.is(r.stdout, '');
  const line = r.stderr.trim().split('\n').at(-1)!;
  t.regex(
    line,
    /no-table\.txt: no table could be read from this nvprof log \(nvprof said: Error: unified memory profiling failed\.\).*--allow-empty/,
  );
  const allowed = jetprof(['parse', noTable, '--allow-empty']);
  t.is(allowed.code, 0, allowed.stderr);
  t.deepEqual(
    JSON.parse(allowed.stdout).processes.map((p: { pid: number }) => p.pid),
    [42],
  );

  const blank = join(scratchDir(), 'blank.txt');
  writeFileSync(blank, Buffer.from('\n\n  \n', 'utf16le'));
  const b = jetprof(['parse', blank]);
  t.is(b.code, 2);
  t.regex(b.stderr, /blank\.txt: holds only blank lines or NUL bytes/);
});

test('keptAnyTable and requireTables on nsys output whose every report was skipped', async (t) => {
  const file = join(scratchDir(), 'nsys-skipped.txt');
  writeFileSync(
    file,
    'Processing [report.sqlite] with [/opt/nvidia/nsight-systems/2022.4.2/host-linux-x64/reports/nvtxsum.py]... \n\n ** NVTX Range Summary (nvtxsum):\n\nSKIPPED: report.sqlite does not contain NV Tools Extension (NVTX) data.\n\n',
  );
  const parsed = await parseProfileFile(file, 'nsys');
  t.false(keptAnyTable(parsed));
  const e = t.throws(() => requireTables(file, parsed));
  t.regex(
    e.message,
    /nsys-skipped\.txt: no table could be read from this nsys log \(nsys skipped every report \(nvtx\w* does not contain NV Tools Extension \(NVTX\) data\.\)\)/,
  );
});
