/** `jetprof parse <file>`: nvprof logs and nsys statistics to JSON, Markdown or CSV. Loads no native module. */
import { escapeControls } from '../util/text-input.ts';
import { Command, Option } from '@commander-js/extra-typings';
import { asCommand, parseIntInRange, type Program } from './options.ts';
import { parseProfileFile, requireTables } from '../parsers/parse-file.ts';
import {
  NVPROF_SECTIONS,
  type NvprofSection,
  nsysFindingsMarkdown,
  nsysTables,
  nvprofTables,
  tablesToCsv,
  tablesToMarkdown,
} from '../report/profile-tables.ts';
import { JetprofError } from '../util/errors.ts';
import { claimOutputs, SpillStore, writeOutput, writeOutputChunks } from '../output/output.ts';
import type { NvprofLog, NvprofProcess, TraceRow, TraceSpill } from '../parsers/nvprof.ts';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { handleError } from './handle-error.ts';
import { helpAfter } from './help-text.ts';

function parseDeclaration() {
  return new Command('parse')
    .summary('nvprof logs and nsys statistics -> typed JSON (or Markdown / CSV tables)')
    .description(
      'Reads an nvprof log (summary, NVTX, dependency analysis, metrics, traces, unified memory, system profiling,\n' +
        'OpenACC/OpenMP, any -u time unit, CSV mode) or the output of `nsys stats` / `nsys profile --stats=true`\n' +
        '(table or CSV, old and new report names, stdout and stderr in one file), detecting which.\n' +
        'Times are exact integer nanoseconds. Lines it does not understand are listed on stderr with their line numbers.\n' +
        "Files may be UTF-8 (with or without a byte-order mark) or UTF-16 (PowerShell's `>`), with LF, CRLF or CR line ends;\n" +
        'a log kept in a Markdown file (.md) is read from inside its fenced code blocks.',
    )
    .argument('<file>', 'profiler output (e.g. profiling_trt_log.txt)')
    .addOption(
      new Option(
        '-f, --format <format>',
        'json (jetprof.nvprof/1 or jetprof.nsys/1), md or csv (default: md tables on a terminal, as nvprof and nsys stats print; json when piped or with --out)',
      ).choices(['json', 'md', 'csv']),
    )
    .option(
      '-s, --section <name>',
      `for md/csv: nvprof ${NVPROF_SECTIONS.join(', ')} (default: summary, or the first section the log has); nsys a report name such as nvtx_sum (default all)`,
    )
    .addOption(new Option('--kind <kind>', 'skip detection').choices(['nvprof', 'nsys']))
    .option('-o, --out <file>', 'write here instead of stdout')
    .option(
      '--trace-rows <n|all>',
      'nvprof --print-gpu-trace/--print-api-trace rows kept per process (the rest are counted)',
      (v: string) => (v === 'all' ? Infinity : parseIntInRange('--trace-rows', 0)(v)),
      20_000,
    )
    .option('--strict', 'exit 1 when any line was not understood', false)
    .option(
      '--all-runs',
      "a log holding the same process's run twice (a file concatenated with itself) keeps each as its own process (default: the first)",
      false,
    )
    .option(
      '--allow-empty',
      'a log from which no table can be read is written as an empty result (exit 0) instead of an error (exit 2)',
      false,
    )
    .addHelpText(
      'after',
      helpAfter([
        { cmd: 'jetprof parse profiling_trt_log.txt > trt.json' },
        {
          cmd: 'jetprof parse profiling_trt_log.txt --format md --section dependency',
          note: 'the critical path as a Markdown table',
        },
        { cmd: 'jetprof parse nsys_stats.txt --format csv --section nvtx_sum' },
      ]),
    );
}

/** parse's options, typed from its declaration. */
type ParseOptions = ReturnType<ReturnType<typeof parseDeclaration>['opts']>;

export function parseCommand(): Program {
  return asCommand(
    parseDeclaration().action(async (file, given) => {
      // tables for a person at a terminal, JSON for a program reading a pipe or a file
      const o = { ...given, format: given.format ?? (!given.out && process.stdout.isTTY ? 'md' : 'json') } as const;
      if (!given.format && o.format === 'md')
        process.stderr.write(
          'jetprof parse: tables, as on a terminal (--section picks another, --format json gives everything)\n',
        );
      try {
        claimOutputs({ log: file }, { output: o.out });
        // every trace row as JSON: the rows go to scratch files as they are read and are streamed into the output,
        // so memory stays bounded whatever the log's size (a 300 MB trace is millions of rows)
        const streamRows = o.format === 'json' && o.traceRows === Infinity;
        const store = streamRows ? new SpillStore(o.out ? dirname(resolve(o.out)) : tmpdir()) : undefined;
        const keys = new Map<NvprofProcess, number>();
        const spill: TraceSpill | undefined = store
          ? (proc, table, rows) => {
              if (!keys.has(proc)) keys.set(proc, keys.size);
              store.append(
                `${keys.get(proc)}:${table}`,
                rows.map((r) => JSON.stringify(r)),
              );
            }
          : undefined;
        try {
          await parseAndWrite(file, o, spill, store, keys);
        } finally {
          store?.dispose();
        }
      } catch (e) {
        process.exitCode = handleError(e);
      }
    }),
  );
}

/** The parse itself and what it writes; `spill`/`store`: trace rows streamed through scratch files. */
async function parseAndWrite(
  file: string,
  o: ParseOptions,
  spill: TraceSpill | undefined,
  store: SpillStore | undefined,
  keys: Map<NvprofProcess, number>,
): Promise<void> {
  const parsed = await parseProfileFile(file, o.kind, {
    maxTraceRows: o.traceRows,
    allRuns: o.allRuns,
    kindOption: true,
    spill,
  });
  if (!o.allowEmpty) requireTables(file, parsed, '--allow-empty');
  let text = '';
  if (o.format === 'json' && store && parsed.kind === 'nvprof') {
    writeJsonWithSpilledRows(o.out ?? '-', parsed.result.value, store, keys);
  } else if (o.format === 'json') {
    text = `${JSON.stringify(parsed.result.value, null, 2)}\n`;
  } else {
    let tables;
    if (parsed.kind === 'nvprof') {
      if (o.section !== undefined && !NVPROF_SECTIONS.includes(o.section as NvprofSection)) {
        throw new JetprofError('BAD_OPTION', `--section ${o.section} is not an nvprof section`, {
          suggestion: `use one of: ${NVPROF_SECTIONS.join(', ')}`,
        });
      }
      // without --section: the summary, or else the first section the log has (a trace-only log has no summary)
      const log = parsed.result.value;
      tables = nvprofTables(log, (o.section as NvprofSection | undefined) ?? 'summary');
      if (o.section === undefined && tables.length === 0) {
        for (const other of NVPROF_SECTIONS) {
          const found = nvprofTables(log, other);
          if (found.length === 0) continue;
          process.stderr.write(`jetprof parse: ${file} has no summary table; showing --section ${other}\n`);
          tables = found;
          break;
        }
      }
    } else {
      // a report this log does not hold is a mistyped name or the wrong log: one line with the ones it has, exit 2
      const reports = [...new Set(parsed.result.value.tables.map((t) => t.report))];
      if (o.section !== undefined && !reports.includes(o.section))
        throw new JetprofError('BAD_OPTION', `--section ${o.section}: ${file} has no such nsys report`, {
          suggestion: `use one of: ${reports.join(', ') || '(none: the log has no table)'}`,
        });
      tables = nsysTables(parsed.result.value, o.section);
    }
    if (tables.length === 0) process.stderr.write(`jetprof parse: ${file} has no ${o.section ?? 'summary'} table\n`);
    text = o.format === 'md' ? tablesToMarkdown(tables) : tablesToCsv(tables);
    // the expert system's advice beside its tables (Markdown only: the CSV stays one table of rows)
    const findings =
      parsed.kind === 'nsys' && o.format === 'md' ? nsysFindingsMarkdown(parsed.result.value, o.section) : '';
    if (findings)
      text = text ? `${text}\n## nsys expert system\n\n${findings}` : `## nsys expert system\n\n${findings}`;
  }
  if (text) {
    if (o.out) writeOutput(o.out, text);
    else process.stdout.write(text);
  }
  const diags = parsed.result.diagnostics;
  // a log's text, shown and not obeyed (a terminal escape or a bare CR in it)
  for (const d of diags.slice(0, 20))
    process.stderr.write(`${escapeControls(`${file}:${d.line}: ${d.severity}: ${d.message}`, true)}\n`);
  if (diags.length > 20) process.stderr.write(`${file}: ... and ${diags.length - 20} more lines not understood\n`);
  // notes (a Markdown file read from its fences, a compiler's report skipped) lose nothing: --strict passes them
  if (o.strict && diags.some((d) => d.severity !== 'note')) process.exitCode = 1;
}

/**
 * The parsed log as JSON with every trace row: the structure as JSON.stringify writes it, each trace array streamed
 * from the scratch rows (one JSON object a line) followed by the rows still in memory.
 */
function writeJsonWithSpilledRows(
  out: string,
  log: NvprofLog,
  store: SpillStore,
  keys: Map<NvprofProcess, number>,
): void {
  const MARK = '\u0001rows:';
  const tails = new Map<string, TraceRow[]>();
  const shell: NvprofLog = {
    ...log,
    processes: log.processes.map((p) => {
      const copy = { ...p } as NvprofProcess & Record<string, unknown>;
      for (const table of ['gpuTrace', 'apiTrace'] as const) {
        if (!p[table]) continue;
        const key = `${keys.get(p) ?? -1}:${table}`;
        tails.set(key, p[table]!);
        copy[table] = `${MARK}${key}` as unknown as TraceRow[];
      }
      return copy;
    }),
  };
  const text = `${JSON.stringify(shell, null, 2)}\n`;
  writeOutputChunks(out, (write) => {
    const re = /"\\u0001rows:([^"]+)"/g;
    let at = 0;
    for (const m of text.matchAll(re)) {
      write(text.slice(at, m.index));
      at = m.index! + m[0].length;
      let first = true;
      let block: string[] = [];
      const flush = () => {
        if (block.length) write(block.join(''));
        block = [];
      };
      write('[');
      const rows = function* () {
        yield* store.read(m[1]);
        for (const r of tails.get(m[1]) ?? []) yield JSON.stringify(r);
      };
      for (const line of rows()) {
        block.push(`${first ? '' : ','}\n${line}`);
        first = false;
        if (block.length >= 4096) flush();
      }
      flush();
      write(first ? ']' : '\n]');
    }
    write(text.slice(at));
  });
}
