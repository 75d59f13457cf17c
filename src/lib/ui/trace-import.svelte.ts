/**
 * The page's side of `lab import` (issue #22): logs an MCP client wrote, dropped or picked, read
 * by the same importers (`$lib/sim/import`), replayed against the current scenario's lanes, and
 * what the policy would have done beside what the log shows (`$lib/sim/report/whatif`). This is
 * the state the page shows; the work (importing, replaying, the what-if) is trace-import-run.ts,
 * loaded with the first log, and the what-if's links into the audit log traces/replay-focus.ts,
 * loaded with the replay's panel (issue #24, first load).
 */
import type { ImportReport } from '$lib/sim/import';
import type { LinkedRun } from '$lib/sim/timeline/link-timeline';
import type { TraceEvent } from '$lib/sim/input/trace';
import type { WhatIfAuditRows, WhatIfReport } from '$lib/sim/report/whatif';
import type { Playground } from './playground.svelte';
import type { LogFile, TraceRef } from './traces/trace-link';

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
  generation = 0;

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
    const { importReady } = await import('./trace-import-run');
    return importReady(this, name, opts);
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
   * message, or null. The importer and the what-if load with the first log (trace-import-run.ts).
   */
  async importFiles(raw: LogFile[], opts: ImportLoad = {}): Promise<string | null> {
    if (raw.length === 0) return null;
    const { importLog } = await import('./trace-import-run');
    return importLog(this, raw, opts);
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
    if (!i || !this.pg.scenario || !this.active) return null;
    const { replayAgain } = await import('./trace-import-run');
    return replayAgain(this, i);
  }
}
