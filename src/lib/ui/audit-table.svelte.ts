/**
 * The audit table's state (issue #8: bounded memory at a million rows; DESIGN: logic out of the
 * component). The page holds no log: the worker keeps it (ui/audit-service.ts) and answers the
 * table's query with a view — matching count, exact totals, filter options and the last rows —
 * after every change of filter and with every snapshot. The rows on screen elsewhere are fetched
 * in pages and kept in a small cache, so the page's memory does not grow with the log.
 *
 * This is the query and its answer, which the page keeps from its first load (the guarantees
 * focus the table, the storage notice reads the view); the row pages and the export are the
 * table's own part, loaded with it (audit-rows.svelte.ts; issue #24, first load).
 */
import type { AuditView, AuditViewQuery } from '$lib/sim/session/protocol';
import type { AuditOptions } from '$lib/store/audit-index';
import type { AuditRows } from './audit-rows.svelte';
import type { AuditFocus } from './guarantees';

/** How the state talks to the worker; replies come back through the `on…` methods. */
export interface AuditTransport {
  query(id: number, query: AuditViewQuery): void;
  rows(id: number, start: number, count: number): void;
  exportFile(id: number, kind: 'jsonl' | 'csv'): void;
  /** The scenario's name, for the downloaded file's (download-name.ts). */
  scenario?: () => string;
}

const EMPTY_OPTIONS: AuditOptions = {
  server: [],
  reason: [],
  model: [],
  outcome: [],
  lane: [],
  currency: []
};

export type Filter = 'server' | 'reason' | 'model' | 'outcome' | 'lane';

function codeUnitSort(values: string[]): string[] {
  return values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export class AuditTableState {
  /** How the table reaches the worker (the row pages and the export send through it too). */
  readonly send: AuditTransport;
  #nextId = 1;
  /** The id of the query in force: views and rows for any other are stale. */
  #queryId = 0;

  #filters = $state<Record<Filter, string>>({
    server: '',
    reason: '',
    model: '',
    outcome: '',
    lane: ''
  });
  #fromMin = $state<number | null>(null);
  #toMin = $state<number | null>(null);
  #focus = $state.raw<AuditFocus | null>(null);
  /** The worker's answer to the query in force (null until the first one). */
  view = $state.raw<AuditView | null>(null);
  #options = $state.raw<AuditOptions>(EMPTY_OPTIONS);
  /** Why rows the table asked for could not be shown (lost with storage, say), in words. */
  rowsError = $state('');
  /**
   * The row pages and the export (audit-rows.svelte.ts): the table attaches them when it first
   * shows (null until then: nothing has asked for a row or a file yet).
   */
  rows = $state.raw<AuditRows | null>(null);

  constructor(transport: AuditTransport) {
    this.send = transport;
  }

  /** A fresh id for a request to the worker. */
  nextId(): number {
    return this.#nextId++;
  }

  /** The query in force. */
  get queryId(): number {
    return this.#queryId;
  }

  // ───────────── filters: each change asks the worker at once ─────────────

  get server(): string {
    return this.#filters.server;
  }
  set server(v: string) {
    this.#set('server', v);
  }
  get reason(): string {
    return this.#filters.reason;
  }
  set reason(v: string) {
    this.#set('reason', v);
  }
  get model(): string {
    return this.#filters.model;
  }
  set model(v: string) {
    this.#set('model', v);
  }
  get outcome(): string {
    return this.#filters.outcome;
  }
  set outcome(v: string) {
    this.#set('outcome', v);
  }
  get lane(): string {
    return this.#filters.lane;
  }
  set lane(v: string) {
    this.#set('lane', v);
  }
  get fromMin(): number | null {
    return this.#fromMin;
  }
  set fromMin(v: number | null | undefined) {
    this.#fromMin = typeof v === 'number' && Number.isFinite(v) ? v : null;
    this.requery();
  }
  get toMin(): number | null {
    return this.#toMin;
  }
  set toMin(v: number | null | undefined) {
    this.#toMin = typeof v === 'number' && Number.isFinite(v) ? v : null;
    this.requery();
  }
  /** Only the rows behind a guarantee (the Guarantees panel's links), on top of the filters. */
  get focus(): AuditFocus | null {
    return this.#focus;
  }
  set focus(f: AuditFocus | null) {
    this.#focus = f;
    this.requery();
  }

  #set(k: Filter, v: string): void {
    this.#filters[k] = v;
    this.requery();
  }

  get filtersActive(): boolean {
    const f = this.#filters;
    const window = this.#fromMin !== null || this.#toMin !== null;
    return !!(f.server || f.reason || f.model || f.outcome || f.lane) || window;
  }

  resetFilters(): void {
    this.#filters = { server: '', reason: '', model: '', outcome: '', lane: '' };
    this.#fromMin = this.#toMin = null;
    this.requery();
  }

  /** The query as the worker takes it: only the filters set. */
  query(): AuditViewQuery {
    const q: AuditViewQuery = {};
    for (const [k, v] of Object.entries(this.#filters) as [Filter, string][]) if (v) q[k] = v;
    if (this.#fromMin !== null) q.fromMin = this.#fromMin;
    if (this.#toMin !== null) q.toMin = this.#toMin;
    if (this.#focus) q.focus = this.#focus.spec;
    return q;
  }

  /** Ask again (a filter changed, or a new run replaced the log): earlier answers are stale. */
  requery(): void {
    this.#queryId = this.#nextId++;
    this.rows?.clear();
    this.rowsError = '';
    this.send.query(this.#queryId, this.query());
  }

  // ───────────── what the worker says ─────────────

  /** A view: the answer to a query, or the one every snapshot carries. */
  onView(v: AuditView): void {
    if (v.queryId !== this.#queryId) return;
    const prev = this.view;
    this.view = v;
    if (prev) this.rows?.resized(prev.matching, v.matching);
    const o = v.options;
    const cur = this.#options;
    const same = (Object.keys(o) as (keyof AuditOptions)[]).every(
      (k) => o[k].join('\u0000') === cur[k].join('\u0000')
    );
    if (!same) this.#options = o;
  }

  /**
   * A question failed: a filter says why it has no answer (its index could not be read back); a
   * row page or an export, theirs (audit-rows.svelte.ts).
   */
  onError(id: number, message: string): void {
    if (id === this.#queryId) this.rowsError = `This filter cannot be answered: ${message}.`;
    this.rows?.onError(id, message);
  }

  // ───────────── what the table reads ─────────────

  /** Matching rows (the table's length). */
  get count(): number {
    return this.view?.matching ?? 0;
  }

  get logSize(): number {
    return this.view?.logSize ?? 0;
  }

  /** Totals are being worked out for a new query (shown as "…"). */
  get busy(): boolean {
    return this.view === null || this.view.queryId !== this.#queryId;
  }

  /** The values each filter offers, plus its current value (a new run may lack it). */
  options(k: Filter | 'currency'): string[] {
    const values = this.#options[k];
    const current = k === 'currency' ? '' : this.#filters[k];
    return current && !values.includes(current) ? codeUnitSort([...values, current]) : values;
  }
}
