/**
 * What the worker's replies do to the playground's state (playground.svelte.ts): every reply the
 * page's client hears comes through {@link PlaygroundReplies.handle}; a snapshot is shown by
 * {@link PlaygroundReplies.show}, at once or, while playing, at its frame (live-play.svelte.ts).
 */
import type { Reply, Snapshot } from '$lib/sim/session/protocol';
import { downloadBlob } from '../download';
import type { Playground } from '../playground.svelte';
import type { RunMemory } from '../run-memory';
import type { SimClient } from '../worker/client';
import type { LivePlay } from './live-play.svelte';

/** The part of the playground's state the replies change. */
export type ReplyTarget = Pick<
  Playground,
  | 'snapshot'
  | 'panelSnapshot'
  | 'chartSnapshot'
  | 'auditTable'
  | 'playing'
  | 'pause'
  | 'storage'
  | 'human'
  | 'restarted'
  | 'clamped'
  | 'ff'
  | 'notice'
  | 'inspection'
  | 'inspecting'
  | 'timeline'
>;

export class PlaygroundReplies {
  readonly #pg: ReplyTarget;
  readonly #client: () => SimClient | null;
  readonly #live: LivePlay;
  /** What this tab remembers of its run for a reload (run-memory.ts). */
  readonly #runs: RunMemory;

  constructor(pg: ReplyTarget, client: () => SimClient | null, live: LivePlay, runs: RunMemory) {
    this.#pg = pg;
    this.#client = client;
    this.#live = live;
    this.#runs = runs;
  }

  handle(r: Reply, re: number | null): void {
    switch (r.type) {
      case 'snapshot':
        // Play's news waits for its frame, or is stale (live-play.svelte.ts).
        if (this.#live.news(r, re)) break;
        this.show(r);
        break;
      // ---- issue #10: restarts, the timeline a reload re-applies, the run's end ----
      case 'restarted':
        this.#pg.restarted = { report: r.report, notice: r.notice };
        this.#client()?.send({ type: 'timeline' });
        break;
      case 'timeline':
        this.#pg.timeline = r;
        this.#runs.timeline(r.t, [...r.actions, ...r.ahead], r.fork);
        break;
      case 'fastForwardClamped':
        this.#pg.clamped = { message: r.message, extendTo: r.extendTo };
        break;
      case 'policyApplied':
      case 'extended':
      case 'seeked':
      case 'forked':
        this.#client()?.send({ type: 'timeline' });
        break;
      case 'storage':
        this.#pg.storage = { run: r.run, lanes: r.lanes, audit: r.audit, auditError: r.auditError };
        break;
      case 'progress': {
        const at = performance.now();
        this.#pg.ff = { done: r.done, total: r.total, started: this.#pg.ff?.started ?? at, at };
        break;
      }
      case 'fastForwardDone':
        this.#pg.ff = null;
        this.#pg.notice = r.error
          ? `Fast-forward stopped: ${r.error}`
          : r.cancelled
            ? 'Fast-forward cancelled.'
            : '';
        break;
      case 'inspection':
        this.#pg.inspection = r;
        this.#pg.inspecting = false;
        break;
      case 'error':
        this.#live.failed(re);
        this.#pg.notice = r.message;
        break;
      case 'auditView':
        this.#live.auditAnswer(r.view);
        break;
      case 'auditRows':
        // Asked for by the table, so its rows part is there (audit-rows.svelte.ts).
        this.#pg.auditTable.rows?.onRows(r.queryId, r.start, r.rows);
        break;
      case 'auditError':
        this.#pg.auditTable.onError(r.id, r.message);
        break;
      case 'auditExportProgress':
        this.#pg.auditTable.rows?.onExportProgress(r.id, r.done, r.of);
        break;
      case 'auditExport': {
        const rows = this.#pg.auditTable.rows;
        const blob = rows?.onExportDone(r.id, r);
        if (rows && blob) downloadBlob(rows.exportName, blob);
        break;
      }
    }
  }

  /** Show a snapshot: the clock and lanes at once; the panels and the table unless playing. */
  show(r: Snapshot): void {
    const pg = this.#pg;
    if (r.auditView) this.#live.auditView(r.auditView);
    pg.snapshot = r;
    if (!pg.playing) pg.panelSnapshot = pg.chartSnapshot = r;
    pg.storage = r.storage;
    if (r.done) this.#live.stopped();
    // Who answers the dialogs is the run's (a reload brings it back with the timeline).
    pg.human = r.human.length > 0;
    // A breakpoint held: the run stays where it stopped until Resume (time-travel.svelte.ts).
    if (r.paused) pg.pause();
    // Where a reload resumes: at the end too, as a client restart there (run-memory.ts).
    this.#runs.at(r.now);
  }
}
