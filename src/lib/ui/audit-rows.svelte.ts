/**
 * The audit table's rows and its export (issue #8): the matching rows past the view's tail are
 * fetched from the worker in pages and kept in a small cache, so the page's memory does not grow
 * with the log; an export is built by the worker and handed over as a file. The table's own part
 * of its state: loaded with the table (AuditTable.svelte), not with the page (issue #24, first
 * load) — the query and its answer are audit-table.svelte.ts's.
 */
import type { AuditRecord } from '$lib/machine/types';
import type { AuditTableState } from './audit-table.svelte';
import { auditFileName } from './download-name';

/** Rows per fetched page, and how many pages the page keeps (the rest are asked for again). */
export const PAGE_ROWS = 100;
export const CACHE_PAGES = 12;

export class AuditRows {
  readonly #t: AuditTableState;
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
  /** What the last file holds when it is not every matching row, in words. */
  exportNote = $state('');
  /** What the file being prepared is called: the scenario and the filters (download-name.ts). */
  exportName = 'audit-log';
  #exportId = 0;

  constructor(table: AuditTableState) {
    this.#t = table;
  }

  /** A new query: the pages fetched for the last one are stale. */
  clear(): void {
    this.#pages.clear();
    this.#asked.clear();
    this.#pagesVersion++;
  }

  /** The matching count moved: the page past the previous end may have been partial. */
  resized(prev: number, now: number): void {
    if (now === prev) return;
    // It is asked for again when shown.
    const last = Math.floor(prev / PAGE_ROWS);
    this.#pages.delete(last);
    this.#asked.delete(last);
  }

  onRows(queryId: number, start: number, rows: AuditRecord[]): void {
    if (queryId !== this.#t.queryId) return;
    const page = Math.floor(start / PAGE_ROWS);
    this.#asked.delete(page);
    this.#pages.set(page, rows);
    this.#t.rowsError = '';
    // Least recently fetched out first: the cache stays a few screenfuls, whatever the log.
    while (this.#pages.size > CACHE_PAGES) this.#pages.delete(this.#pages.keys().next().value!);
    this.#pagesVersion++;
  }

  /** A question failed: a row page may be asked for again; an export says why it stopped. */
  onError(id: number, message: string): void {
    for (const [p, asked] of this.#asked)
      if (asked === id) {
        this.#asked.delete(p);
        this.#t.rowsError = `These rows cannot be shown: ${message}.`;
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
    const lost = this.#t.view?.lostOnReload ?? 0;
    if (lost > 0)
      notes.push(
        `Not in the file: the ${n(lost)} audit ${lost === 1 ? 'record' : 'records'} of this run that the reload lost (${lost === 1 ? 'it had' : 'they had'} not been written to this browser's storage).`
      );
    this.exportNote = notes.join(' ');
    return r.blob;
  }

  /** Matching row `i`, or undefined while it is being fetched. */
  rowAt(i: number): AuditRecord | undefined {
    void this.#pagesVersion;
    const v = this.#t.view;
    if (!v || this.#t.busy) return undefined;
    if (i >= v.tailStart && i < v.tailStart + v.tail.length) return v.tail[i - v.tailStart];
    const page = this.#pages.get(Math.floor(i / PAGE_ROWS));
    return page?.[i % PAGE_ROWS];
  }

  /** The table shows rows `start..end`: fetch the pages it lacks (each once at a time). */
  want(start: number, end: number): void {
    const v = this.#t.view;
    if (!v || this.#t.busy) return;
    const stop = Math.min(end, v.matching, v.tailStart);
    // Rows the view's tail holds are not fetched: a window that starts inside the tail (the
    // table following the end while playing) wants no page, even when the page it starts in
    // begins before the tail. Asking for it anyway fetched 100 rows (~65 KB) from the worker
    // about once a second of play, and drew the table again when they came (bench:ui).
    if (start >= stop) return;
    for (let p = Math.floor(start / PAGE_ROWS); p * PAGE_ROWS < stop; p++) {
      const have = this.#pages.get(p);
      const need = Math.min(PAGE_ROWS, v.matching - p * PAGE_ROWS);
      if ((have && have.length >= need) || this.#asked.has(p)) continue;
      const id = this.#t.nextId();
      this.#asked.set(p, id);
      this.#t.send.rows(id, p * PAGE_ROWS, PAGE_ROWS);
    }
  }

  /** Export every matching row; the worker builds the file (see `onExportDone`). */
  download(kind: 'jsonl' | 'csv'): void {
    if (this.exporting) return;
    const t = this.#t;
    // Nothing matches: say so, rather than hand over an empty file without a word.
    if (!t.busy && t.count === 0) {
      this.exportError = '';
      this.exportNote = this.#nothing();
      return;
    }
    this.exporting = kind;
    this.exportDone = 0;
    this.exportOf = t.count;
    this.exportError = '';
    this.exportNote = '';
    this.exportName = auditFileName(t.send.scenario?.() ?? '', t.query(), kind);
    this.#exportId = t.nextId();
    t.send.exportFile(this.#exportId, kind);
  }

  #nothing(): string {
    return this.#t.filtersActive || this.#t.focus
      ? 'No rows match these filters, so there is nothing to download: change or reset them.'
      : 'The audit log has no rows yet, so there is nothing to download.';
  }
}
