/**
 * The audit table's state (issue #8: bounded memory at a million rows; DESIGN: logic out of the
 * component). The page holds no log: the worker keeps it (ui/audit-service.ts) and answers the
 * table's query with a view — matching count, exact totals, filter options and the last rows —
 * after every change of filter and with every snapshot. The rows on screen elsewhere are fetched
 * in pages and kept in a small cache, so the page's memory does not grow with the log.
 */
import type { AuditRecord } from '$lib/machine/types';
import type { AuditView, AuditViewQuery } from '$lib/sim/session/protocol';
import type { AuditOptions } from '$lib/store/audit-index';
import { auditFileName } from './download-name';
import type { AuditFocus } from './guarantees';

/** How the state talks to the worker; replies come back through the `on…` methods. */
export interface AuditTransport {
  query(id: number, query: AuditViewQuery): void;
  rows(id: number, start: number, count: number): void;
  exportFile(id: number, kind: 'jsonl' | 'csv'): void;
  /** The scenario's name, for the downloaded file's (download-name.ts). */
  scenario?: () => string;
}

/** Rows per fetched page, and how many pages the page keeps (the rest are asked for again). */
export const PAGE_ROWS = 100;
export const CACHE_PAGES = 12;

const EMPTY_OPTIONS: AuditOptions = {
  server: [],
  reason: [],
  model: [],
  outcome: [],
  lane: [],
  currency: []
};

type Filter = 'server' | 'reason' | 'model' | 'outcome' | 'lane';

function codeUnitSort(values: string[]): string[] {
  return values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export class AuditTableState {
  readonly #send: AuditTransport;
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
  /** Bumped when a fetched page arrives, so the rows on screen are read again. */
  #pagesVersion = $state(0);
  // Plain maps on purpose: `#pagesVersion` says when they changed, one signal instead of one per
  // entry. Pages fetched (by page number), and pages asked for (page → request id).
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  #pages = new Map<number, AuditRecord[]>();
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  #asked = new Map<number, number>();

  exporting = $state<'jsonl' | 'csv' | null>(null);
  exportDone = $state(0);
  exportOf = $state(0);
  exportError = $state('');
  /** Why rows the table asked for could not be shown (lost with storage, say), in words. */
  rowsError = $state('');
  /** What the last file holds when it is not every matching row, in words. */
  exportNote = $state('');
  /** What the file being prepared is called: the scenario and the filters (download-name.ts). */
  exportName = 'audit-log';
  #exportId = 0;

  constructor(transport: AuditTransport) {
    this.#send = transport;
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
    this.#pages.clear();
    this.#asked.clear();
    this.rowsError = '';
    this.#pagesVersion++;
    this.#send.query(this.#queryId, this.query());
  }

  // ───────────── what the worker says ─────────────

  /** A view: the answer to a query, or the one every snapshot carries. */
  onView(v: AuditView): void {
    if (v.queryId !== this.#queryId) return;
    const prev = this.view;
    this.view = v;
    // Pages past the previous end may have been partial; they are asked for again when shown.
    if (prev && v.matching !== prev.matching) {
      const last = Math.floor(prev.matching / PAGE_ROWS);
      this.#pages.delete(last);
      this.#asked.delete(last);
    }
    const o = v.options;
    const cur = this.#options;
    const same = (Object.keys(o) as (keyof AuditOptions)[]).every(
      (k) => o[k].join('\u0000') === cur[k].join('\u0000')
    );
    if (!same) this.#options = o;
  }

  onRows(queryId: number, start: number, rows: AuditRecord[]): void {
    if (queryId !== this.#queryId) return;
    const page = Math.floor(start / PAGE_ROWS);
    this.#asked.delete(page);
    this.#pages.set(page, rows);
    this.rowsError = '';
    // Least recently fetched out first: the cache stays a few screenfuls, whatever the log.
    while (this.#pages.size > CACHE_PAGES) this.#pages.delete(this.#pages.keys().next().value!);
    this.#pagesVersion++;
  }

  /**
   * A question failed: a filter says why it has no answer (its index could not be read back); a
   * row page may be asked for again; an export says why it stopped.
   */
  onError(id: number, message: string): void {
    if (id === this.#queryId) this.rowsError = `This filter cannot be answered: ${message}.`;
    for (const [p, asked] of this.#asked)
      if (asked === id) {
        this.#asked.delete(p);
        this.rowsError = `These rows cannot be shown: ${message}.`;
      }
    if (id === this.#exportId && this.exporting) {
      this.exporting = null;
      this.exportError = `The export failed: ${message}`;
    }
  }

  onExportProgress(id: number, done: number, of: number): void {
    if (id !== this.#exportId) return;
    this.exportDone = done;
    this.exportOf = of;
  }

  onExportDone(
    id: number,
    r:
      | { ok: true; blob: Blob; rows: number; missing: number; why: string | null }
      | { ok: false; error: string }
  ): Blob | null {
    if (id !== this.#exportId) return null;
    this.exporting = null;
    if (!r.ok) {
      this.exportError = `The export failed: ${r.error}`;
      return null;
    }
    if (r.rows === 0) {
      this.exportNote = this.#nothing();
      return null;
    }
    const n = (v: number) => v.toLocaleString('en-US');
    const notes: string[] = [];
    if (r.missing > 0)
      notes.push(
        `The file has ${n(r.rows)} of ${n(r.rows + r.missing)} rows: ${n(r.missing)} ${r.missing === 1 ? 'is' : 'are'} not in it — ${r.why ?? 'they could not be read back'}.`
      );
    // Rows a reload lost are in no index, so no export counts them as missing: said here.
    const lost = this.view?.lostOnReload ?? 0;
    if (lost > 0)
      notes.push(
        `Not in the file: the ${n(lost)} audit ${lost === 1 ? 'record' : 'records'} of this run that the reload lost (${lost === 1 ? 'it had' : 'they had'} not been written to this browser's storage).`
      );
    this.exportNote = notes.join(' ');
    return r.blob;
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

  /** Matching row `i`, or undefined while it is being fetched. */
  rowAt(i: number): AuditRecord | undefined {
    void this.#pagesVersion;
    const v = this.view;
    if (!v || this.busy) return undefined;
    if (i >= v.tailStart && i < v.tailStart + v.tail.length) return v.tail[i - v.tailStart];
    const page = this.#pages.get(Math.floor(i / PAGE_ROWS));
    return page?.[i % PAGE_ROWS];
  }

  /** The table shows rows `start..end`: fetch the pages it lacks (each once at a time). */
  want(start: number, end: number): void {
    const v = this.view;
    if (!v || this.busy) return;
    const stop = Math.min(end, v.matching, v.tailStart);
    for (let p = Math.floor(start / PAGE_ROWS); p * PAGE_ROWS < stop; p++) {
      const have = this.#pages.get(p);
      const need = Math.min(PAGE_ROWS, v.matching - p * PAGE_ROWS);
      if ((have && have.length >= need) || this.#asked.has(p)) continue;
      const id = this.#nextId++;
      this.#asked.set(p, id);
      this.#send.rows(id, p * PAGE_ROWS, PAGE_ROWS);
    }
  }

  /** Export every matching row; the worker builds the file (see `onExportDone`). */
  download(kind: 'jsonl' | 'csv'): void {
    if (this.exporting) return;
    // Nothing matches: say so, rather than hand over an empty file without a word.
    if (!this.busy && this.count === 0) {
      this.exportError = '';
      this.exportNote = this.#nothing();
      return;
    }
    this.exporting = kind;
    this.exportDone = 0;
    this.exportOf = this.count;
    this.exportError = '';
    this.exportNote = '';
    this.exportName = auditFileName(this.#send.scenario?.() ?? '', this.query(), kind);
    this.#exportId = this.#nextId++;
    this.#send.exportFile(this.#exportId, kind);
  }

  #nothing(): string {
    return this.filtersActive || this.#focus
      ? 'No rows match these filters, so there is nothing to download: change or reset them.'
      : 'The audit log has no rows yet, so there is nothing to download.';
  }
}
