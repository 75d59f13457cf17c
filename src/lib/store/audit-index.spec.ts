import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../machine/types';
import { AuditIndex, AuditSelection } from './audit-index';
import { NONE_KEY, auditTotals, queryAudit, type AuditQuery } from './audit-query';
import { runLog } from '../sim/run-log.testing';

const log = runLog('reconnect-bypass.json', 60);

function indexOf(records: readonly AuditRecord[]): AuditIndex {
  const ix = new AuditIndex();
  for (const r of records) ix.append(r);
  return ix;
}

describe('the audit index (the audit log in columns)', () => {
  it('holds every row in 36 bytes while each string column has at most 256 values', () => {
    const ix = indexOf(log);
    expect(log.length).toBeGreaterThan(100);
    expect(ix.size).toBe(log.length);
    // 8 (time) + 4 (seq) + 4 + 4 (tokens) + 8 (cost) + 1 (flags) + 7 × 1 (string columns) bytes,
    // for every row the arrays have room for: at least the rows, fewer than twice as many.
    expect(ix.bytes % 36).toBe(0);
    expect(ix.bytes / 36).toBeGreaterThanOrEqual(ix.size);
    expect(ix.bytes / 36).toBeLessThan(2 * Math.max(1024, ix.size));
    expect(ix.firstTime).toBe(log[0]!.time);
  });

  it('widens a string column past 256 and 65,536 values without losing any row', () => {
    const ix = new AuditIndex();
    const n = 70_000;
    const base = log[0]!;
    for (let i = 0; i < n; i++)
      ix.append({ ...base, seq: i + 1, server: `s${i}`, model: `m${i % 300}` });
    // 8 + 4 + 4 + 4 + 8 + 1 + server 4 + model 2 + 5 × 1 bytes.
    expect(ix.bytes % 40).toBe(0);
    expect(ix.options().server).toHaveLength(n);
    for (const i of [0, 255, 256, 65_535, 65_536, n - 1]) {
      const sel = new AuditSelection(ix, { server: `s${i}` });
      expect(sel.length).toBe(1);
      expect(ix.facts(sel.at(0)).seq).toBe(i + 1);
    }
    expect(new AuditSelection(ix, { model: 'm299' }).length).toBe(Math.ceil((n - 299) / 300));
    expect(new AuditSelection(ix, { model: 'm0', server: 's300' }).length).toBe(1);
  });

  it('offers the values each filter can take, sorted, as the log has them', () => {
    const opts = indexOf(log).options();
    const values = (f: (r: AuditRecord) => string) => [...new Set(log.map(f))].sort();
    expect(opts.server).toEqual(values((r) => r.server));
    expect(opts.outcome).toEqual(values((r) => r.outcome));
    expect(opts.reason).toEqual(values((r) => r.reason ?? NONE_KEY));
    expect(opts.lane).toEqual(['A', 'B']);
  });

  it('answers every filter with the rows and totals queryAudit/auditTotals give', () => {
    const ix = indexOf(log);
    const t0 = log[0]!.t;
    const queries: AuditQuery[] = [
      {},
      { lane: 'A' },
      { lane: 'B', outcome: 'denied' },
      { outcome: log.at(-1)!.outcome },
      { server: log[0]!.server, from: t0 + 5 * 60_000, to: t0 + 30 * 60_000 },
      { reason: NONE_KEY },
      { model: NONE_KEY },
      { server: 'no-such-server' }
    ];
    for (const q of queries) {
      const sel = new AuditSelection(ix, q);
      const want = queryAudit(log, q);
      expect(sel.length, JSON.stringify(q)).toBe(want.length);
      expect(Array.from(sel.slice(0, sel.length), (i) => log[i])).toEqual(want);
      expect(sel.totals(), JSON.stringify(q)).toEqual(auditTotals(want));
    }
  });

  it('keeps a selection exact as rows are appended, a few at a time', () => {
    const ix = new AuditIndex();
    const q: AuditQuery = { lane: 'A' };
    // Built before any row: values the filter names appear later.
    const sel = new AuditSelection(ix, q);
    for (let i = 0; i < log.length; i += 7) {
      for (const r of log.slice(i, i + 7)) ix.append(r);
      sel.update();
      const want = queryAudit(log.slice(0, ix.size), q);
      expect(sel.length).toBe(want.length);
    }
    expect(sel.totals()).toEqual(auditTotals(queryAudit(log, q)));
  });

  it('counts an unreadable cost as zero and says how many, as auditTotals does', () => {
    const odd = [...log.slice(0, 3), { ...log[3]!, cost: 'twelve' }];
    const sel = new AuditSelection(indexOf(odd), {});
    expect(sel.totals().invalidCosts).toBe(1);
    expect(sel.totals()).toEqual(auditTotals(odd));
  });

  it('rebuilds the facts a guarantee reads from a row', () => {
    const ix = indexOf(log);
    log.forEach((r, i) => {
      const f = ix.facts(i);
      expect(f).toMatchObject({
        seq: r.seq,
        lane: r.lane ?? null,
        outcome: r.outcome,
        consent: r.consent,
        consentShown: r.consentShown,
        replayed: r.replayed,
        alert: r.alert,
        silenced: r.silenced,
        tokensOut: r.tokensOut,
        hasActualCost: r.budgetDecision?.actualCost !== undefined
      });
    });
  });
});
