/**
 * The work behind TraceImport (trace-import.svelte.ts): import a client's log files and replay
 * them, replay them again with the lanes as they are, and work the what-if out — loaded with the
 * first log, not with the page (issue #24, first load).
 *
 * The what-if is worked out here, by a second run of the same engine on the main thread (the
 * worker's run is the one the playground shows), in slices between which the page stays
 * responsive, after the replay has loaded. It is a run of the whole log with the lanes as the
 * replay was loaded: a lane edited during the replay is not in it, and the page says so and
 * offers to replay the log again with the lanes as they are now (which works it out again, and
 * keeps the audit rows it names the playground's own). It is worked out for an import of at
 * most {@link MAX_WHATIF_REQUESTS} sampling requests; past that the page says how to get it from
 * `lab replay`, which reports any size.
 */
import { LIMITS } from '$lib/sim/input/limits';
import type { ImportedLog, ImportLoad, TraceImport } from './trace-import.svelte';
import { readyLog, type LogFile, type TraceRef } from './traces/trace-link';
import { shownName } from './traces/trace-ref';

/**
 * The most sampling requests the page works the what-if out for. Measured in Node on the
 * project's loaded 2-core machine, a 20,000-request Claude log against reconnect-bypass took
 * 19 s (5,000 took 9 s cold), with both lanes' audit records held until the report is made:
 * past this, minutes of work beside the playground's own run, which `lab replay` does better.
 */
export const MAX_WHATIF_REQUESTS = 20_000;

/** A ready-made log (static/traces/logs/) by its name, replayed; an error message, or null. */
export async function importReady(
  t: TraceImport,
  name: string,
  opts: ImportLoad
): Promise<string | null> {
  const log = readyLog(name);
  if (!log) return `there is no ready-made log called ${JSON.stringify(name).slice(0, 60)}`;
  t.busy = true;
  let files: LogFile[];
  try {
    files = await Promise.all(
      log.files.map(async (f) => {
        const res = await t.fetchLog(f);
        if (!res.ok) throw new Error(`${f} could not be fetched (HTTP ${res.status})`);
        return { name: f, text: await res.text() };
      })
    );
  } catch (e) {
    return `The ready-made log ${name}: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    t.busy = false;
  }
  return t.importFiles(files, { ...opts, ready: name });
}

/**
 * Import the files (their names as the user's disk has them) and replay them; an error
 * message, or null.
 */
export async function importLog(
  t: TraceImport,
  raw: LogFile[],
  opts: ImportLoad
): Promise<string | null> {
  const base = opts.base ?? t.pg.scenario;
  if (!base) return 'Load a scenario first: the log replays against its two lanes.';
  // Claude's per-server logs before mcp.log, which repeats them (the importer reads a server
  // from the first file naming it).
  const last = (f: LogFile) => Number(f.name.split('/').pop() === 'mcp.log');
  const sorted = [...raw].sort((a, b) => last(a) - last(b));
  const files = sorted.map((f) => ({ name: shownName(f.name), text: f.text }));
  t.busy = true;
  try {
    // The importer, and the link-size check (it compresses), load with the first log.
    const [{ importTexts }, { traceLinkOf }] = await Promise.all([
      import('$lib/sim/import'),
      import('./traces/trace-link-size')
    ]);
    const r = importTexts(files.map((f) => [f.name, f.text]));
    if (!r.ok) return `Log not imported: ${r.error}`;
    // The run is made as long as the log (and a minute for the last answers), within a run's bound.
    const duration = typeof base.durationMs === 'number' ? base.durationMs : 0;
    const scenario =
      r.report.spanMs + 60_000 > duration
        ? { ...base, durationMs: Math.min(LIMITS.durationMs, r.report.spanMs + 60_000) }
        : base;
    const n = `${files.length} ${files.length === 1 ? 'file' : 'files'}`;
    const name = opts.folder
      ? `${shownName(opts.folder)} (${n})`
      : files.length === 1
        ? files[0]!.name
        : n;
    const ready = opts.ready ? readyLog(opts.ready) : undefined;
    const source: TraceRef = ready
      ? { ready: ready.name }
      : { files: sorted, ...(opts.folder ? { folder: opts.folder } : {}) };
    t.imported = {
      name,
      report: r.report,
      events: r.events,
      scenario,
      whatIf: null,
      whatIfLanes: JSON.stringify(scenario.lanes),
      auditRows: null,
      note: '',
      source,
      link: traceLinkOf(source),
      skipped: opts.skipped ?? ''
    };
    const errors = await t.pg.load(scenario, {
      trace: r.events,
      ...(opts.link ? { link: opts.link } : {}),
      ...(opts.note ? { note: opts.note } : {})
    });
    if (errors.length) {
      t.imported = null;
      return `Log not replayed: ${errors[0]!.path}: ${errors[0]!.message}`;
    }
    const replayed = t.onReplay?.();
    void workWhatIf(t, t.imported);
    await replayed;
    return null;
  } finally {
    t.busy = false;
  }
}

/**
 * Replay the log again from its start with the lanes as they are now, and work the what-if out
 * for them: the table, the audit rows it names and the playground's run are one run again.
 * An error message, or null.
 */
export async function replayAgain(t: TraceImport, i: ImportedLog): Promise<string | null> {
  const cur = t.pg.scenario;
  if (!cur) return null;
  const scenario: Record<string, unknown> = { ...cur, seed: t.pg.seed };
  t.imported = {
    ...i,
    scenario,
    whatIf: null,
    whatIfLanes: JSON.stringify(scenario.lanes),
    auditRows: null,
    note: ''
  };
  t.busy = true;
  try {
    const errors = await t.pg.load(scenario, { trace: i.events });
    if (errors.length) {
      t.imported = i;
      return `The log could not be replayed again: ${errors[0]!.path}: ${errors[0]!.message}`;
    }
  } finally {
    t.busy = false;
  }
  const replayed = t.onReplay?.();
  void workWhatIf(t, t.imported);
  await replayed;
  return null;
}

/** Work the what-if out for `of` (the import in force), in slices; it lands in `imported`. */
async function workWhatIf(t: TraceImport, of: ImportedLog): Promise<void> {
  const generation = ++t.generation;
  const current = () => generation === t.generation && t.imported?.events === of.events;
  const done = (patch: Partial<ImportedLog>) => {
    if (!current()) return;
    t.working = null;
    t.imported = { ...t.imported!, ...patch };
  };
  const requests = of.report.sampling;
  if (requests > MAX_WHATIF_REQUESTS) {
    const n = (v: number) => v.toLocaleString('en-US');
    return done({
      note: `What-if skipped: ${n(requests)} sampling requests > ${n(MAX_WHATIF_REQUESTS)}, more than the page works out in reasonable time and memory (it replays the log all the same). For the table: download the scenario (below), then run lab import on your log files with --out trace.jsonl, and lab replay trace.jsonl --scenario <the scenario file> --out whatif/ (whatif.json and whatif.csv, at any size).`
    });
  }
  t.working = 0;
  const [{ parseScenario }, { Simulation }, { WhatIfCollector, whatIfAuditRows }] =
    await Promise.all([
      import('$lib/sim/input/scenario'),
      import('$lib/sim/engine/engine'),
      import('$lib/sim/report/whatif')
    ]);
  const parsed = parseScenario(of.scenario);
  if (!parsed.ok) {
    const e = parsed.errors[0]!;
    return done({ note: `What-if not worked out: the scenario: ${e.path}: ${e.message}` });
  }
  const w = new WhatIfCollector();
  const sim = new Simulation(parsed.scenario, {
    trace: of.events,
    onAudit: w.onAudit,
    onTraceRequest: w.onTraceRequest
  });
  const span = Math.max(1, sim.end - sim.start);
  let slice = performance.now();
  while (!sim.done) {
    if (sim.advanceTo(sim.end, 500) === 0 && !sim.done) break;
    // A frame's worth of work at a time, then the page has its turn (and may start another).
    if (performance.now() - slice > 30) {
      if (current()) t.working = (sim.now - sim.start) / span;
      await new Promise((r) => setTimeout(r, 0));
      if (!current()) return;
      slice = performance.now();
    }
  }
  done({
    whatIf: w.report(of.events, { A: sim.lanes.A.label, B: sim.lanes.B.label }),
    auditRows: whatIfAuditRows(w.rows(of.events))
  });
}
