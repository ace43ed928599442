/**
 * `jetprof profile --tool nsys`: Nsight Systems around the entry script, one run at a time on a machine (a lock), tried
 * again when its agent hangs or leaves no report; a stream it could not import is imported with QdstrmImporter; then
 * `nsys stats` and its parse.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { BACKENDS } from '../backends/types.ts';
import { parseNsysStats } from '../parsers/nsys.ts';
import { JetprofError } from '../util/errors.ts';
import { NSYS_STATS_REPORTS, NSYS_STATS_REPORTS_OLD, nsysProfileArgv, nsysStatsArgv } from './argv.ts';
import { endAgentsOf, sleep, watchNsys, withNsysLock } from './nsys-agents.ts';
import { findQdstrmImporter, requireProfiler } from './tools.ts';
import { NsysEcho } from './nsys-echo.ts';
import { forwardTo, type ProfileRequest, type ProfileResult, readRun, type RunJson, runLogged } from './profile-run.ts';

/** How long a stuck nsys agent may spin after an interrupted application ended before it is ended. */
const INTERRUPTED_STALL_MS = 10_000;

/** QdstrmImporter on a stream nsys left: true when the report is there, else the importer's last words. */
function importStream(nsys: string, qdstrm: string, rep: string): true | string {
  const importer = findQdstrmImporter(nsys);
  if (!importer) return 'no QdstrmImporter beside this nsys';
  const r = spawnSync(importer, ['-i', qdstrm], { encoding: 'utf8', timeout: 600_000 });
  if (r.status === 0 && existsSync(rep)) {
    unlinkSync(qdstrm);
    return true;
  }
  const said = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').pop();
  return `QdstrmImporter exit ${r.status ?? r.signal}${said ? `: ${said}` : ''}`;
}

/**
 * After a try: a raw stream nsys left (Debian's nsys cannot find its importer; a hung try leaves what it recorded) is
 * imported before the application runs again. nsys's own words about it are said with what happened, or as nsys wrote
 * them when the import failed. Returns the note for the profile, if any.
 */
function importLeftStream(t: {
  nsys: string;
  base: string;
  attempt: number;
  stalled: boolean;
  echo: NsysEcho;
  onLog: (m: string) => void;
}): string | undefined {
  const [rep, qdstrm] = [`${t.base}.nsys-rep`, `${t.base}.qdstrm`];
  const held = t.echo.held.length ? `${t.echo.held.join('\n')}\n` : '';
  if (existsSync(rep) || !existsSync(qdstrm)) {
    if (held) process.stderr.write(held);
    return undefined;
  }
  const imported = importStream(t.nsys, qdstrm, rep);
  if (imported !== true) {
    if (held) process.stderr.write(held);
    const kept = `${t.base}.try${t.attempt}.qdstrm`;
    renameSync(qdstrm, kept);
    return `try ${t.attempt}: the stream nsys left could not be imported (${imported}); kept as ${kept}`;
  }
  if (held)
    t.onLog(
      `nsys could not import its stream itself (${t.echo.reason() ?? 'no importer'}) and left ${qdstrm}; jetprof imported it with QdstrmImporter: the report is ${rep}`,
    );
  return t.stalled
    ? `try ${t.attempt}: jetprof imported the stream the hung nsys left (QdstrmImporter), so the application was not run again`
    : "nsys left its stream to be imported (as Debian's nsys 2022.4 does); jetprof imported it with QdstrmImporter, and the report is complete";
}

/** The `nsys-report-XXXX.qdstrm` files in the temporary folder. */
function tmpStreams(): string[] {
  try {
    return readdirSync(tmpdir()).filter((f) => /^nsys-report-[0-9a-f]+\.qdstrm$/.test(f));
  } catch {
    return [];
  }
}

/**
 * nsys 2022.4 leaves a small `nsys-report-XXXX.qdstrm` in the temporary folder after every run (its report is the
 * one in the out-dir): those that appeared during this try are removed, so profiling does not fill /tmp.
 */
function removeTmpStreams(before: readonly string[]): void {
  for (const f of tmpStreams()) {
    if (before.includes(f)) continue;
    try {
      unlinkSync(join(tmpdir(), f));
    } catch {
      /* gone already */
    }
  }
}

export async function profileWithNsys(
  req: ProfileRequest,
  command: string[],
  runJson: RunJson,
): Promise<ProfileResult> {
  const nsys = requireProfiler('nsys');
  return withNsysLock(
    (owner) => req.onLog(`waiting for another jetprof nsys run (pid ${owner}) to finish`),
    () => profileWithNsysLocked(nsys, req, command, runJson),
    { shouldStop: req.shouldStop },
  );
}

/** Why no report came: interrupted (exit 130), or nsys failed every try (its log named). */
function noReport(interrupted: boolean, tries: number, exitCode: number, logPath: string): JetprofError {
  if (interrupted)
    return new JetprofError('INTERRUPTED', `interrupted before nsys wrote a report; its output is in ${logPath}`, {
      suggestion: 'run it again, with --max-frames N for a shorter run',
      exitCode: 130,
    });
  return new JetprofError(
    'TOOL_FAILED',
    `nsys produced no report after ${tries} tries (last exit code ${exitCode}); its output is in ${logPath}`,
    {
      suggestion:
        'check the log; on Debian nsys 2022.4 this is a known intermittent agent failure with Node, try again',
      exitCode: exitCode || 1,
    },
  );
}

/** `nsys stats` of the report (the older report names where this nsys lacks the newer), kept beside it and parsed. */
function writeStats(nsys: string, rep: string, base: string) {
  const statsPath = `${base}_stats.txt`;
  let stats = spawnSync(nsys, nsysStatsArgv(rep, NSYS_STATS_REPORTS), { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (/could not be found/.test(stats.stderr ?? ''))
    stats = spawnSync(nsys, nsysStatsArgv(rep, NSYS_STATS_REPORTS_OLD), { encoding: 'utf8', maxBuffer: 1 << 28 });
  writeFileSync(statsPath, stats.stdout ?? '');
  const parsed = parseNsysStats(stats.stdout ?? '');
  return { statsPath, parsed };
}

async function profileWithNsysLocked(
  nsys: string,
  req: ProfileRequest,
  command: string[],
  runJson: RunJson,
): Promise<ProfileResult> {
  const base = join(req.outDir, `profile_${BACKENDS[req.backend].tag}`);
  const rep = `${base}.nsys-rep`;
  const qdstrm = `${base}.qdstrm`;
  const logPath = `${base}.nsys.log`;
  const notes: string[] = [];
  const tries = req.tries ?? 3;
  let exitCode = 0;
  let ok = false;
  // how long nsys may write nothing after the application ended before its agent counts as stuck: 60 s on an idle
  // machine, longer on a busy one (its agent finishes slower there), at most 180 s
  const stallMs = req.stallMs ?? Math.round(60_000 * Math.min(3, Math.max(1, loadavg()[0] / availableParallelism())));
  const stopped = () => req.shouldStop?.() === true;
  for (let attempt = 1; attempt <= tries && !ok && !stopped(); attempt++) {
    for (const f of [rep, qdstrm]) if (existsSync(f)) unlinkSync(f);
    let nsysPid = 0;
    req.onLog(`nsys profile (try ${attempt}/${tries}): ${command.join(' ')}`);
    let stalled = false;
    const tmpBefore = tmpStreams();
    const echo = new NsysEcho();
    exitCode = await runLogged(
      nsys,
      nsysProfileArgv({ output: base, command }),
      logPath,
      echo,
      [
        (pid) =>
          // after Ctrl-C the user waits: a stuck agent is ended after 10 s, not a minute
          watchNsys(
            (nsysPid = pid),
            base,
            () => (stopped() ? Math.min(stallMs, INTERRUPTED_STALL_MS) : stallMs),
            (waited) => {
              stalled = true;
              req.onLog(
                `nsys wrote nothing for ${(waited / 1000).toFixed(0)} s after the application ended: ending its stuck agent`,
              );
            },
            () =>
              req.onLog(
                'the application ended; nsys is writing its report, which for a Node program takes several seconds',
              ),
          ),
        ...forwardTo(req),
      ],
      req.relayProgress,
    );
    if (stalled)
      notes.push(`try ${attempt}: nsys hung after the application ended (its agent spinning); jetprof ended it`);
    // the agents first: a stream is imported only once nothing writes to it any more
    await sleep(300);
    const ended = nsysPid ? endAgentsOf(nsysPid) : [];
    if (ended.length) notes.push(`ended ${ended.length} nsys agent(s) left running by try ${attempt}`);
    const note = importLeftStream({ nsys, base, attempt, stalled, echo, onLog: req.onLog });
    if (note) notes.push(note);
    removeTmpStreams(tmpBefore);
    ok = existsSync(rep);
    if (!ok) req.onLog(`nsys produced no report on try ${attempt} (exit code ${exitCode}); see ${logPath}`);
  }
  if (!ok) throw noReport(stopped(), tries, exitCode, logPath);
  const { statsPath, parsed } = writeStats(nsys, rep, base);
  const run = readRun(runJson.path, runJson.before);
  if (!run) {
    notes.push(`the profiled run did not finish (it wrote no ${runJson.path}); its messages are in ${logPath}`);
    exitCode ||= 1;
  }
  return {
    schema: 'jetprof.profile/1',
    tool: 'nsys',
    backend: req.backend,
    command,
    exitCode,
    files: { log: logPath, report: rep, stats: statsPath, run: runJson.path },
    nsys: parsed.value,
    diagnostics: parsed.diagnostics,
    run,
    notes,
  };
}
