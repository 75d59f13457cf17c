import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '$lib/machine/types';
import type { AuditView, AuditViewQuery } from '$lib/sim/session/protocol';
import { AuditRows, CACHE_PAGES, PAGE_ROWS } from './audit-rows.svelte';
import { AuditTableState } from './audit-table.svelte';
import type { AuditFocus } from './guarantees';

type Sent =
  | { kind: 'query'; id: number; query: AuditViewQuery }
  | { kind: 'rows'; id: number; start: number; count: number }
  | { kind: 'export'; id: number; what: 'jsonl' | 'csv' };

function table() {
  const sent: Sent[] = [];
  const t = new AuditTableState({
    query: (id, query) => sent.push({ kind: 'query', id, query }),
    rows: (id, start, count) => sent.push({ kind: 'rows', id, start, count }),
    exportFile: (id, what) => sent.push({ kind: 'export', id, what })
  });
  // The table's part (the row pages, the export), as the table attaches it when it shows.
  const r = (t.rows = new AuditRows(t));
  const lastQuery = () =>
    sent.filter((s) => s.kind === 'query').at(-1) as Extract<Sent, { kind: 'query' }>;
  return { t, r, sent, lastQuery };
}

const row = (seq: number) => ({ seq, lane: 'A', server: 's' }) as AuditRecord;

function view(queryId: number, matching: number, tail = 10, extra: Partial<AuditView> = {}) {
  const tailStart = Math.max(0, matching - tail);
  return {
    queryId,
    logSize: matching,
    matching,
    totals: { count: matching } as AuditView['totals'],
    options: {
      server: ['s'],
      reason: [],
      model: [],
      outcome: ['allowed', 'denied'],
      lane: ['A'],
      currency: ['USD']
    },
    firstTime: null,
    spanMin: 0,
    tail: Array.from({ length: matching - tailStart }, (_, k) => row(tailStart + k)),
    tailStart,
    ...extra
  } satisfies AuditView;
}

describe('the audit table state (the page keeps a screenful)', () => {
  it('sends only the filters set, and each change asks again with a new id', () => {
    const { t, lastQuery } = table();
    t.requery();
    expect(lastQuery().query).toEqual({});
    const first = lastQuery().id;
    t.outcome = 'denied';
    t.fromMin = 5;
    t.toMin = Number.NaN;
    expect(lastQuery().query).toEqual({ outcome: 'denied', fromMin: 5 });
    expect(lastQuery().id).toBeGreaterThan(first);
    expect(t.filtersActive).toBe(true);
    t.resetFilters();
    expect(lastQuery().query).toEqual({});
    expect(t.filtersActive).toBe(false);
  });

  it('carries a guarantee’s focus as data for the worker', () => {
    const { t, lastQuery } = table();
    const focus: AuditFocus = {
      id: 'one-consent',
      label: 'one consent',
      match: () => true,
      spec: { id: 'one-consent', kind: 'behind', status: 'held' }
    };
    t.focus = focus;
    expect(lastQuery().query.focus).toEqual(focus.spec);
    t.focus = null;
    expect(lastQuery().query.focus).toBeUndefined();
  });

  it('shows totals only for the query in force, and ignores answers to a replaced one', () => {
    const { t, lastQuery } = table();
    t.requery();
    const old = lastQuery().id;
    t.lane = 'A';
    expect(t.busy).toBe(true);
    t.onView(view(old, 500));
    expect(t.busy).toBe(true);
    expect(t.count).toBe(0);
    t.onView(view(lastQuery().id, 120));
    expect(t.busy).toBe(false);
    expect(t.count).toBe(120);
    expect(t.view?.totals.count).toBe(120);
  });

  it('serves the end of the table from the view and fetches other pages once each', () => {
    const { t, r, sent, lastQuery } = table();
    t.requery();
    const q = lastQuery().id;
    t.onView(view(q, 1000, 10));
    expect(r.rowAt(995)?.seq).toBe(995);
    expect(r.rowAt(500)).toBeUndefined();
    r.want(480, 520);
    r.want(480, 520);
    const asks = sent.filter((s) => s.kind === 'rows');
    expect(asks.map((s) => s.kind === 'rows' && s.start)).toEqual([400, 500]);
    const ask = asks[1] as Extract<Sent, { kind: 'rows' }>;
    r.onRows(
      q,
      500,
      Array.from({ length: PAGE_ROWS }, (_, k) => row(500 + k))
    );
    expect(r.rowAt(512)?.seq).toBe(512);
    expect(ask.count).toBe(PAGE_ROWS);
    // Rows for an older query never land.
    t.server = 's';
    t.onView(view(lastQuery().id, 1000, 10));
    r.onRows(q, 600, [row(-1)]);
    expect(r.rowAt(600)).toBeUndefined();
  });

  it('fetches nothing for a window the tail holds, even when its page starts before the tail', () => {
    const { t, r, sent, lastQuery } = table();
    t.requery();
    // The table following the end: rows 1,030–1,050 on screen, the tail from 1,010 on.
    t.onView(view(lastQuery().id, 1050, 40));
    r.want(1030, 1050);
    expect(sent.filter((s) => s.kind === 'rows')).toEqual([]);
    expect(r.rowAt(1030)?.seq).toBe(1030);
    // A window reaching above the tail still asks for the page it lacks.
    r.want(1000, 1050);
    expect(sent.filter((s) => s.kind === 'rows').map((s) => s.kind === 'rows' && s.start)).toEqual([
      1000
    ]);
  });

  it('keeps at most a few pages however far the learner scrolls', () => {
    const { t, r, lastQuery } = table();
    t.requery();
    const q = lastQuery().id;
    t.onView(view(q, 1_000_000, 10));
    for (let p = 0; p < 50; p++) {
      r.want(p * PAGE_ROWS, p * PAGE_ROWS + 20);
      r.onRows(
        q,
        p * PAGE_ROWS,
        Array.from({ length: PAGE_ROWS }, (_, k) => row(p * 100 + k))
      );
    }
    const held = Array.from({ length: 50 }, (_, p) => r.rowAt(p * PAGE_ROWS)).filter(Boolean);
    expect(held).toHaveLength(CACHE_PAGES);
    expect(r.rowAt(49 * PAGE_ROWS)?.seq).toBe(49 * PAGE_ROWS);
  });

  // Issue #19: a filter over a long run reads the index's chunks back; one gone is said.
  it('says why a filter has no answer', () => {
    const { t, lastQuery } = table();
    t.requery();
    t.onError(lastQuery().id, "the audit table's index of rows 1–65,536 could not be read back");
    expect(t.rowsError).toBe(
      "This filter cannot be answered: the audit table's index of rows 1–65,536 could not be read back."
    );
    t.requery();
    expect(t.rowsError).toBe('');
  });

  it('asks again for a page that failed, and for the last page once it grew', () => {
    const { t, r, sent, lastQuery } = table();
    t.requery();
    const q = lastQuery().id;
    t.onView(view(q, 150, 10));
    r.want(100, 130);
    const ask = sent.at(-1) as Extract<Sent, { kind: 'rows' }>;
    t.onError(ask.id, 'storage went away');
    expect(t.rowsError).toBe('These rows cannot be shown: storage went away.');
    r.want(100, 130);
    expect(sent.filter((s) => s.kind === 'rows')).toHaveLength(2);
    r.onRows(
      q,
      100,
      Array.from({ length: 50 }, (_, k) => row(100 + k))
    );
    expect(t.rowsError).toBe('');
    t.onView(view(q, 400, 10));
    r.want(100, 200);
    expect(sent.filter((s) => s.kind === 'rows' && s.start === 100)).toHaveLength(3);
  });

  it('offers a filter value the new log lacks, so the select still shows it', () => {
    const { t, lastQuery } = table();
    t.server = 'gone';
    t.onView(view(lastQuery().id, 3));
    expect(t.options('server')).toEqual(['gone', 's']);
    expect(t.options('currency')).toEqual(['USD']);
  });

  it('runs one export at a time, reports progress and says why one failed', () => {
    const { r, sent } = table();
    r.download('csv');
    r.download('jsonl');
    const exports = sent.filter((s) => s.kind === 'export');
    expect(exports).toHaveLength(1);
    const id = exports[0]!.id;
    expect(r.exporting).toBe('csv');
    r.onExportProgress(id, 5000, 12000);
    expect([r.exportDone, r.exportOf]).toEqual([5000, 12000]);
    expect(r.onExportDone(id + 99, { ok: false, error: 'x' })).toBeNull();
    expect(r.exporting).toBe('csv');
    expect(r.onExportDone(id, { ok: false, error: 'the disk is full' })).toBeNull();
    expect(r.exporting).toBeNull();
    expect(r.exportError).toBe('The export failed: the disk is full');
    r.download('jsonl');
    const again = sent.filter((s) => s.kind === 'export').at(-1)!;
    const blob = new Blob(['{}\n']);
    expect(r.onExportDone(again.id, { ok: true, blob, rows: 1, missing: 0, why: null })).toBe(blob);
    expect(r.exportError).toBe('');
    expect(r.exportNote).toBe('');
  });

  it('says what a file holds when rows were no longer in storage', () => {
    const { r, sent } = table();
    r.download('jsonl');
    const { id } = sent.filter((s) => s.kind === 'export').at(-1)!;
    const blob = new Blob(['{}\n']);
    const why = "they were lost with this browser's storage: another tab deleted it";
    expect(r.onExportDone(id, { ok: true, blob, rows: 5000, missing: 11282, why })).toBe(blob);
    expect(r.exportError).toBe('');
    expect(r.exportNote).toBe(`The file has 5,000 of 16,282 rows: 11,282 are not in it — ${why}.`);
  });
});
