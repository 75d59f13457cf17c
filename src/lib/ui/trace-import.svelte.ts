/**
 * The page's side of `lab import` (issue #22): logs an MCP client wrote, dropped or picked, read
 * by the same importers (`$lib/sim/import`), replayed against the current scenario's lanes, and
 * what the policy would have done beside what the log shows (`$lib/sim/report/whatif`).
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
import type { ImportReport } from '$lib/sim/import';
import type { LinkedRun } from '$lib/sim/timeline/link-timeline';
import type { TraceEvent } from '$lib/sim/input/trace';
import type { WhatIfAuditRows, WhatIfReport } from '$lib/sim/report/whatif';
import type { AuditFocus } from './guarantees';
import { LIMITS } from '$lib/sim/input/limits';
import type { Playground } from './playground.svelte';
import { readyLog, shownName, type LogFile, type TraceRef } from './traces/trace-link';

/**
 * The most sampling requests the page works the what-if out for. Measured in Node on the
 * project's loaded 2-core machine, a 20,000-request Claude log against reconnect-bypass took
 * 19 s (5,000 took 9 s cold), with both lanes' audit records held until the report is made:
 * past this, minutes of work beside the playground's own run, which `lab replay` does better.
 */
export const MAX_WHATIF_REQUESTS = 20_000;

export interface ImportedLog {
  /** The file's name, or "N files". */
  name: string;
  report: ImportReport;
  events: TraceEvent[];
  /** The scenario data the replay was loaded with (longer when the log is). */
  scenario: Record<string, unknown>;
  whatIf: WhatIfReport | null;
  /** The lanes (as JSON) the what-if is worked out for: the replay's as it was loaded. */
  whatIfLanes: string;
  /** The run's audit rows behind each of its measures (whatif.ts `whatIfAuditRows`). */
  auditRows: WhatIfAuditRows | null;
  /** Why there is no what-if, when there is none. */
  note: string;
  /** Where the log came from: what a link needs to open it again. */
  source: TraceRef;
  /** How a link carries it: the `&t=` value, or null and why not. */
  link: { value: TraceRef | null; words: string };
  /** The files of a folder that were not imported, in words ('' for none). */
  skipped: string;
}

/** How to load an import: against which scenario, with a share link's timeline. */
export interface ImportLoad {
  /** The scenario the log replays against (default: the playground's current one). */
  base?: Record<string, unknown>;
  /** A share link's run: the sender's changes (sim/timeline/link-timeline.ts), and what could not be read. */
  link?: LinkedRun;
  note?: string;
  /** A ready-made log by name: the link names it instead of carrying it. */
  ready?: string;
  /** A folder's logs: the folder's name (the heading's "Replaying <folder> (N files)"). */
  folder?: string;
  /** What the page says the folder held besides its logs (folder.ts `skippedLine`). */
  skipped?: string;
}

export class TraceImport {
  imported = $state.raw<ImportedLog | null>(null);
  busy = $state(false);
  /** How far the what-if is worked out (0 to 1), while it is; null otherwise. */
  working = $state<number | null>(null);
  /** Bumped by every new what-if: one still being worked out for an older one stops. */
  #generation = 0;

  /**
   * Told when a log has been loaded into the playground (the page writes it into the URL); an
   * import resolves once what it returns has (the page loads the link codec for it).
   */
  onReplay: (() => void | Promise<void>) | null = null;

  constructor(
    readonly pg: Pick<Playground, 'scenario' | 'trace' | 'load' | 'auditFocus' | 'seed'>,
    /** A ready-made log's file (static/traces/logs/<file>). */
    readonly fetchLog: (
      file: string
    ) => Promise<{ ok: boolean; status: number; text(): Promise<string> }> = () =>
      Promise.resolve({ ok: false, status: 404, text: () => Promise.resolve('') })
  ) {}

  /** A ready-made log (static/traces/logs/) by its name, replayed; an error message, or null. */
  async importReady(name: string, opts: ImportLoad = {}): Promise<string | null> {
    const log = readyLog(name);
    if (!log) return `there is no ready-made log called ${JSON.stringify(name).slice(0, 60)}`;
    this.busy = true;
    let files: LogFile[];
    try {
      files = await Promise.all(
        log.files.map(async (f) => {
          const res = await this.fetchLog(f);
          if (!res.ok) throw new Error(`${f} could not be fetched (HTTP ${res.status})`);
          return { name: f, text: await res.text() };
        })
      );
    } catch (e) {
      return `The ready-made log ${name}: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      this.busy = false;
    }
    return this.importFiles(files, { ...opts, ready: name });
  }

  /** The playground is replaying the imported log (not a scenario, nor another trace). */
  get active(): boolean {
    const i = this.imported;
    // The scenario is read for its signal (a new load replaces it); the trace says which run.
    return i !== null && this.pg.scenario !== null && this.pg.trace === i.events;
  }

  /** Another run was loaded: the page is no longer in trace mode. */
  clear(): void {
    this.imported = null;
  }

  /**
   * Import the files (their names as the user's disk has them) and replay them; an error
   * message, or null.
   */
  async importFiles(raw: LogFile[], opts: ImportLoad = {}): Promise<string | null> {
    if (raw.length === 0) return null;
    const base = opts.base ?? this.pg.scenario;
    if (!base) return 'Load a scenario first: the log replays against its two lanes.';
    // Claude's per-server logs before mcp.log, which repeats them (the importer reads a server
    // from the first file naming it).
    const last = (f: LogFile) => Number(f.name.split('/').pop() === 'mcp.log');
    const sorted = [...raw].sort((a, b) => last(a) - last(b));
    const files = sorted.map((f) => ({ name: shownName(f.name), text: f.text }));
    this.busy = true;
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
      this.imported = {
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
      const errors = await this.pg.load(scenario, {
        trace: r.events,
        ...(opts.link ? { link: opts.link } : {}),
        ...(opts.note ? { note: opts.note } : {})
      });
      if (errors.length) {
        this.imported = null;
        return `Log not replayed: ${errors[0]!.path}: ${errors[0]!.message}`;
      }
      const replayed = this.onReplay?.();
      void this.#work(this.imported);
      await replayed;
      return null;
    } finally {
      this.busy = false;
    }
  }

  /**
   * The lanes have been edited since the what-if was worked out (live edits, or a share link's
   * timeline): it describes the lanes as the replay was loaded, not as they are.
   */
  get stale(): boolean {
    const i = this.imported;
    const cur = this.pg.scenario;
    if (!this.active || !i || !cur) return false;
    return JSON.stringify(cur.lanes) !== i.whatIfLanes;
  }

  /**
   * Replay the log again from its start with the lanes as they are now, and work the what-if out
   * for them: the table, the audit rows it names and the playground's run are one run again.
   * An error message, or null.
   */
  async recompute(): Promise<string | null> {
    const i = this.imported;
    const cur = this.pg.scenario;
    if (!i || !cur || !this.active) return null;
    const scenario: Record<string, unknown> = { ...cur, seed: this.pg.seed };
    this.imported = {
      ...i,
      scenario,
      whatIf: null,
      whatIfLanes: JSON.stringify(scenario.lanes),
      auditRows: null,
      note: ''
    };
    this.busy = true;
    try {
      const errors = await this.pg.load(scenario, { trace: i.events });
      if (errors.length) {
        this.imported = i;
        return `The log could not be replayed again: ${errors[0]!.path}: ${errors[0]!.message}`;
      }
    } finally {
      this.busy = false;
    }
    const replayed = this.onReplay?.();
    void this.#work(this.imported);
    await replayed;
    return null;
  }

  /** Work the what-if out for `of` (the import in force), in slices; it lands in `imported`. */
  async #work(of: ImportedLog): Promise<void> {
    const generation = ++this.#generation;
    const current = () => generation === this.#generation && this.imported?.events === of.events;
    const done = (patch: Partial<ImportedLog>) => {
      if (!current()) return;
      this.working = null;
      this.imported = { ...this.imported!, ...patch };
    };
    const requests = of.report.sampling;
    if (requests > MAX_WHATIF_REQUESTS) {
      const n = (v: number) => v.toLocaleString('en-US');
      return done({
        note: `What-if skipped: ${n(requests)} sampling requests > ${n(MAX_WHATIF_REQUESTS)}, more than the page works out in reasonable time and memory (it replays the log all the same). For the table: download the scenario (below), then run lab import on your log files with --out trace.jsonl, and lab replay trace.jsonl --scenario <the scenario file> --out whatif/ (whatif.json and whatif.csv, at any size).`
      });
    }
    this.working = 0;
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
        if (current()) this.working = (sim.now - sim.start) / span;
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

  /**
   * The audit log filtered to the rows behind one what-if measure of `group` (a server, or ''
   * for all), or behind every changed request (`measure` null); again to show every row. They
   * are the replay's rows as it ran from the start with the lanes it was loaded with (the
   * engine is deterministic): the playground's own run, once it has run that far.
   */
  showInAudit(group: string, measure: string | null, label: string): void {
    const i = this.imported;
    if (!i?.auditRows) return;
    const id = `whatif:${group}:${measure ?? 'changed'}`;
    if (this.pg.auditFocus?.id === id) {
      this.pg.auditFocus = null;
      return;
    }
    const keys =
      measure === null
        ? i.auditRows.changed
        : (i.auditRows.measures.get(group)?.get(measure) ?? []);
    // Built once and only read: nothing reacts to it.
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    const rows = new Set(keys);
    const focus: AuditFocus = {
      id,
      label: `${label}: ${keys.length.toLocaleString('en-US')} audit ${keys.length === 1 ? 'row' : 'rows'} once the replay has run to its end`,
      match: (r) => rows.has(`${r.lane ?? ''}\u0000${r.seq}`),
      spec: { id, kind: 'rows', rows: keys }
    };
    this.pg.auditFocus = focus;
  }

  /** Which what-if filter the audit log shows (its id), if any. */
  get shown(): string | null {
    const id = this.pg.auditFocus?.id;
    return id?.startsWith('whatif:') ? id : null;
  }
}
