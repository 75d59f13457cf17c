/**
 * The page's side of `lab import` (issue #22): logs an MCP client wrote, dropped or picked, read
 * by the same importers (`$lib/sim/import`), replayed against the current scenario's lanes, and
 * what the policy would have done beside what the log shows (`$lib/sim/whatif`).
 *
 * The what-if is computed here, by a second run of the same engine on the main thread (the
 * worker's run is the one the playground shows): a run of the scenario's lanes as loaded, so a
 * policy edited during the replay is not in it. It is computed for an import of at most
 * {@link MAX_WHATIF_REQUESTS} sampling requests; a larger one replays without it (`lab replay`
 * reports it at any size).
 */
import type { ImportReport } from '$lib/sim/import';
import type { LinkedRun } from '$lib/sim/link-timeline';
import type { TraceEvent } from '$lib/sim/trace';
import type { WhatIfAuditRows, WhatIfReport } from '$lib/sim/whatif';
import type { AuditFocus } from './guarantees';
import { LIMITS } from '$lib/sim/limits';
import type { Playground } from './playground.svelte';
import { readyLog, shownName, traceLinkOf, type LogFile, type TraceRef } from './traces/trace-link';

export const MAX_WHATIF_REQUESTS = 5_000;

export interface ImportedLog {
  /** The file's name, or "N files". */
  name: string;
  report: ImportReport;
  events: TraceEvent[];
  /** The scenario data the replay was loaded with (longer when the log is). */
  scenario: Record<string, unknown>;
  whatIf: WhatIfReport | null;
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
  /** A share link's run: the sender's changes (sim/link-timeline.ts), and what could not be read. */
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

  /** Told when a log has been loaded into the playground (the page writes it into the URL). */
  onReplay: (() => void) | null = null;

  constructor(
    readonly pg: Pick<Playground, 'scenario' | 'trace' | 'load' | 'auditFocus'>,
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
      const { importTexts } = await import('$lib/sim/import');
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
      const { whatIf, auditRows, note } = await this.#whatIf(scenario, r.events, r.report.sampling);
      const ready = opts.ready ? readyLog(opts.ready) : undefined;
      const source: TraceRef = ready
        ? { ready: ready.name }
        : { files: sorted, ...(opts.folder ? { folder: opts.folder } : {}) };
      this.imported = {
        name,
        report: r.report,
        events: r.events,
        scenario,
        whatIf,
        auditRows,
        note,
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
      this.onReplay?.();
      return null;
    } finally {
      this.busy = false;
    }
  }

  async #whatIf(
    data: Record<string, unknown>,
    trace: TraceEvent[],
    requests: number
  ): Promise<{ whatIf: WhatIfReport | null; auditRows: WhatIfAuditRows | null; note: string }> {
    if (requests > MAX_WHATIF_REQUESTS)
      return {
        whatIf: null,
        auditRows: null,
        note: `The log holds ${requests.toLocaleString('en-US')} sampling requests: the page compares at most ${MAX_WHATIF_REQUESTS.toLocaleString('en-US')} with the lanes (lab replay compares any number).`
      };
    const [{ parseScenario }, { Simulation }, { WhatIfCollector, whatIfAuditRows }] =
      await Promise.all([
        import('$lib/sim/scenario'),
        import('$lib/sim/engine'),
        import('$lib/sim/whatif')
      ]);
    const parsed = parseScenario(data);
    if (!parsed.ok) return { whatIf: null, auditRows: null, note: '' };
    const w = new WhatIfCollector();
    const sim = new Simulation(parsed.scenario, {
      trace,
      onAudit: w.onAudit,
      onTraceRequest: w.onTraceRequest
    });
    sim.advanceTo(sim.end);
    return {
      whatIf: w.report(trace, { A: sim.lanes.A.label, B: sim.lanes.B.label }),
      auditRows: whatIfAuditRows(w.rows(trace)),
      note: ''
    };
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
