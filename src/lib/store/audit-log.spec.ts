import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import type { AuditRecord, BudgetDecision } from '../machine/types';
import {
  AUDIT_FIELDS,
  CSV_COLUMNS,
  csvCell,
  parseAuditJsonl,
  toCsv,
  toJsonl
} from './audit-export';
import { CHUNK_ROWS } from './audit-chunks';
import { AUDIT_STORE, DurableAuditLog, MemoryAuditLog } from './audit-log';
import { openIdbStore } from './idb';
import { NONE_KEY, auditTotals, groupAudit, mergeTotals, queryAudit } from './audit-query';

let dbSeq = 0;
const uniqueDb = (label: string) => `audit-spec-${label}-${++dbSeq}`;

function rec(over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    seq: 1,
    t: 0,
    time: '2026-03-10T00:00:00.000Z',
    server: 'release-notes',
    connection: 'c1',
    requestId: 47,
    identity: 'release-notes:0123456789abcdef0123456789abcdef',
    outcome: 'allowed',
    reason: null,
    retryable: null,
    replayed: false,
    represented: 0,
    consentShown: true,
    consent: 'approved',
    model: 'example-model-v2',
    tokensIn: 100,
    tokensOut: 50,
    cost: '0.1000',
    currency: 'USD',
    durationMs: 1200,
    contextRequested: 'thisServer',
    contextApplied: 'thisServer',
    budgetDecision: null,
    silenced: false,
    alert: false,
    ...over
  };
}

const BUDGET: BudgetDecision = {
  estimatedCost: { amount: '0.1027', currency: 'USD' },
  limitApplied: { amount: '0.05', currency: 'USD' },
  limitSource: 'host_policy',
  meterBasis: 'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok',
  estimatedTokens: { input: 24_000, output: 2_048 },
  actualCost: { amount: '0.0498', currency: 'USD' },
  actualTokens: { input: 24_000, output: 1_000 },
  requestHonored: false
};

/** A dialog skipped by the policy's askAbove: the estimate and the threshold it was under. */
const SKIPPED: NonNullable<AuditRecord['consentSkipped']> = {
  estimatedCost: { amount: '0.0012', currency: 'USD' },
  askAbove: { amount: '0.002', currency: 'USD' }
};

/** A minimal RFC 4180 reader, to check what a spreadsheet would see. */
function readCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return rows;
}

/** 1 … n. */
const range1 = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('MemoryAuditLog', () => {
  it('appends synchronously in order, counts, snapshots and clears', () => {
    const log = new MemoryAuditLog();
    for (let i = 1; i <= 3; i++) expect(log.append(rec({ seq: i }))).toBeUndefined();
    const all = log.all();
    expect(all.map((r) => r.seq)).toEqual([1, 2, 3]);
    all.reverse();
    expect(log.all().map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(log.count()).toBe(3);
    log.clear();
    expect(log.count()).toBe(0);
  });
});

describe('DurableAuditLog', () => {
  it('keeps append order across reloads, even when seq restarts in a new run', async () => {
    const dbName = uniqueDb('order');
    const a = await DurableAuditLog.open({ dbName });
    if (!a.ok) throw new Error(a.error);
    for (let i = 1; i <= 3; i++) a.store.append(rec({ seq: i, lane: 'A' }));
    expect(a.store.pendingWrites).toBe(3);
    await a.store.flush();
    expect(a.store.pendingWrites).toBe(0);

    const b = await DurableAuditLog.open({ dbName });
    if (!b.ok) throw new Error(b.error);
    b.store.append(rec({ seq: 1, lane: 'B' })); // a new run: seq starts again
    const all = await b.store.all(); // flushes first
    expect(all.map((r) => `${r.lane}${r.seq}`)).toEqual(['A1', 'A2', 'A3', 'B1']);
    expect(await b.store.count()).toBe(4);
    await b.store.clear();
    expect(await b.store.count()).toBe(0);
  });

  it('abandon() forgets what is not written yet; a fresh attach reads nothing and starts at 0', async () => {
    const dbName = uniqueDb('abandon');
    const opened = await openIdbStore(dbName, AUDIT_STORE);
    if (!opened.ok) throw new Error(opened.error);
    const old = await DurableAuditLog.attach(opened.store, dbName, ['old']);
    if (!old.ok) throw new Error(old.error);
    old.store.append(rec({ seq: 1 }));
    await old.store.flush();
    for (let i = 2; i <= 4; i++) old.store.append(rec({ seq: i }));
    old.store.abandon();
    expect(old.store.status()).toMatchObject({ saved: 1, heldInMemory: 0 });
    await old.store.flush();
    expect((await old.store.all()).map((r) => r.seq)).toEqual([1]);

    const fresh = await DurableAuditLog.attach(opened.store, dbName, ['new'], true);
    if (!fresh.ok) throw new Error(fresh.error);
    expect(fresh.store.nextKey).toBe(0);
    fresh.store.append(rec({ seq: 9 }));
    expect((await fresh.store.all()).map((r) => r.seq)).toEqual([9]);
  });

  it('open() without IndexedDB gives { ok: false } in plain words', async () => {
    const g = globalThis as { indexedDB?: IDBFactory };
    const saved = g.indexedDB;
    delete g.indexedDB;
    try {
      const r = await DurableAuditLog.open({ dbName: uniqueDb('none') });
      expect(r).toMatchObject({ ok: false, kind: 'unavailable' });
      if (!r.ok) expect(r.error).toMatch(/no IndexedDB/);
    } finally {
      g.indexedDB = saved;
    }
  });

  it('a failed flush loses nothing and keeps order on the retry', async () => {
    const log = await DurableAuditLog.open({ dbName: uniqueDb('fail') });
    if (!log.ok) throw new Error(log.error);
    log.store.append(rec({ seq: 1 }));
    await log.store.flush();
    log.store.append(rec({ seq: 2 }));
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('quota', 'QuotaExceededError');
    });
    expect(await log.store.flush()).toBe(false);
    expect(log.store.status()).toMatchObject({ saved: 1, heldInMemory: 1 });
    expect(log.store.status().failure?.error).toMatch(/Could not write 1 audit record\(s\)/);
    put.mockRestore();
    log.store.append(rec({ seq: 3 }));
    // Held until the learner retries: nothing lands ahead of the failed batch.
    expect((await log.store.all()).map((r) => r.seq)).toEqual([1]);
    expect(await log.store.retry()).toBe(true);
    expect((await log.store.all()).map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(log.store.status()).toMatchObject({ saved: 3, heldInMemory: 0, failure: null });
  });

  it('rows queued in chunks: cuts across queued and filling chunks, flushes between, against a list (generated)', async () => {
    // The log queues a chunk of rows an op and fills the last one until a flush; a seek back cuts
    // queued chunks, the one being filled, and rows already on disk alike.
    type Step = { append: number } | { cut: number } | { flush: true };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ append: fc.integer({ min: 0, max: 2 * CHUNK_ROWS + 40 }) }),
      // Where, in thousandths of the log (a double would mostly be a vanishing fraction: row 0).
      fc.record({ cut: fc.integer({ min: 0, max: 1000 }) }),
      fc.constant({ flush: true as const })
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const log = await DurableAuditLog.open({ dbName: uniqueDb('generated') });
        if (!log.ok) throw new Error(log.error);
        const want: number[] = [];
        let unsaved = 0;
        let seq = 0;
        for (const x of steps) {
          if ('append' in x) {
            for (let i = 0; i < x.append; i++) {
              log.store.append(rec({ seq: ++seq }));
              want.push(seq);
            }
            unsaved += x.append;
          } else if ('cut' in x) {
            const rows = Math.floor((x.cut * want.length) / 1000);
            log.store.truncate(rows);
            unsaved = Math.max(0, Math.min(unsaved, rows - (want.length - unsaved)));
            want.length = Math.min(want.length, rows);
          } else {
            expect(await log.store.flush()).toBe(true);
            unsaved = 0;
          }
          expect(log.store.pendingWrites).toBe(unsaved);
          expect(log.store.nextKey).toBe(want.length);
        }
        expect((await log.store.all()).map((r) => r.seq)).toEqual(want);
        expect(log.store.status()).toMatchObject({ saved: want.length, heldInMemory: 0 });
        expect(await log.store.count()).toBe(want.length);
      }),
      { numRuns: 40 }
    );
  });

  it('a failed flush of several chunks counts its rows, not its chunks', async () => {
    const log = await DurableAuditLog.open({ dbName: uniqueDb('fail-chunks') });
    if (!log.ok) throw new Error(log.error);
    const n = 2 * CHUNK_ROWS + 5;
    for (let i = 1; i <= n; i++) log.store.append(rec({ seq: i }));
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('quota', 'QuotaExceededError');
    });
    expect(await log.store.flush()).toBe(false);
    expect(log.store.status()).toMatchObject({ saved: 0, heldInMemory: n });
    expect(log.store.status().failure?.error).toMatch(new RegExp(`Could not write ${n} audit`));
    put.mockRestore();
    expect(await log.store.retry()).toBe(true);
    expect((await log.store.all()).map((r) => r.seq)).toEqual(range1(n));
  });

  it('clear() after a failed flush does not bring the failed batch back', async () => {
    const log = await DurableAuditLog.open({ dbName: uniqueDb('clear-fail') });
    if (!log.ok) throw new Error(log.error);
    log.store.append(rec({ seq: 1 }));
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('quota', 'QuotaExceededError');
    });
    const failing = log.store.flush();
    // Let the flush take its batch (it starts one microtask later), then clear while it is in flight.
    await Promise.resolve();
    await Promise.resolve();
    const cleared = log.store.clear();
    expect(await failing).toBe(false);
    expect(log.store.status().failure?.words).toMatch(/storage for this site is full/);
    await cleared;
    put.mockRestore();
    log.store.append(rec({ seq: 2 }));
    await log.store.retry();
    expect((await log.store.all()).map((r) => r.seq)).toEqual([2]);
  });
});

describe('queryAudit / auditTotals / groupAudit', () => {
  const records = [
    rec({ seq: 1, t: 0, server: 'a', model: 'm1', cost: '0.1000', lane: 'A' }),
    rec({ seq: 2, t: 1_000, server: 'a', model: 'm1', cost: '0.2000', lane: 'A', alert: true }),
    rec({
      seq: 3,
      t: 2_000,
      server: 'b',
      outcome: 'denied',
      reason: 'user.denied',
      retryable: false,
      model: null,
      tokensIn: 0,
      tokensOut: 0,
      cost: '0',
      consentShown: false,
      consent: 'not-asked',
      replayed: true,
      lane: 'B'
    }),
    rec({ seq: 4, t: 3_000, server: 'b', model: 'm2', cost: '0.000001', silenced: true })
  ];

  it('merges totals of consecutive slices into the totals of the whole', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: records.length }), (cut) => {
        const merged = mergeTotals(
          auditTotals(records.slice(0, cut)),
          auditTotals(records.slice(cut))
        );
        expect(merged).toEqual(auditTotals(records));
      })
    );
  });

  it('filters by server, reason, model, outcome, lane and a half-open time window', () => {
    const seqs = (q: Parameters<typeof queryAudit>[1]) => queryAudit(records, q).map((r) => r.seq);
    expect(seqs({ server: 'a' })).toEqual([1, 2]);
    expect(seqs({ reason: 'user.denied' })).toEqual([3]);
    expect(seqs({ reason: NONE_KEY })).toEqual([1, 2, 4]);
    expect(seqs({ model: 'm1' })).toEqual([1, 2]);
    expect(seqs({ model: NONE_KEY })).toEqual([3]);
    expect(seqs({ outcome: 'denied' })).toEqual([3]);
    expect(seqs({ lane: 'A' })).toEqual([1, 2]);
    expect(seqs({ lane: NONE_KEY })).toEqual([4]);
    expect(seqs({ from: 1_000, to: 3_000 })).toEqual([2, 3]);
    expect(seqs({ server: 'b', from: 2_500 })).toEqual([4]);
    expect(seqs({})).toEqual([1, 2, 3, 4]);
  });

  it('sums costs as integer micro-units (0.1 + 0.2 is exactly 0.3)', () => {
    const t = auditTotals(records);
    expect(t).toMatchObject({
      count: 4,
      tokensIn: 300,
      tokensOut: 150,
      costMicros: 300_001,
      cost: '0.3000',
      currencies: ['USD'],
      byOutcome: { allowed: 3, denied: 1 },
      byReason: { [NONE_KEY]: 3, 'user.denied': 1 },
      consentPrompts: 3,
      replays: 1,
      alerts: 1,
      silenced: 1,
      invalidCosts: 0
    });
  });

  it('counts a malformed cost instead of throwing or summing it', () => {
    const t = auditTotals([rec({ cost: '1e-3' }), rec({ cost: '0.5' })]);
    expect(t.costMicros).toBe(500_000);
    expect(t.invalidCosts).toBe(1);
  });

  it('groups by server and by reason, keys sorted, with totals per group', () => {
    const byServer = groupAudit(records, 'server');
    expect(byServer.map((g) => [g.key, g.totals.count, g.totals.cost])).toEqual([
      ['a', 2, '0.3000'],
      ['b', 2, '0.0000']
    ]);
    const byReason = groupAudit(records, 'reason');
    expect(byReason.map((g) => [g.key, g.totals.count])).toEqual([
      [NONE_KEY, 3],
      ['user.denied', 1]
    ]);
    expect(groupAudit(records, 'model').map((g) => g.key)).toEqual([NONE_KEY, 'm1', 'm2']);
    expect(groupAudit([], 'lane')).toEqual([]);
  });
});

describe('JSONL export and import', () => {
  it('writes one object per line in fixed key order with a trailing newline', () => {
    // Keys deliberately scrambled: the export must not depend on construction order.
    const scrambled = Object.fromEntries(
      Object.entries(rec({ budgetDecision: BUDGET, lane: 'A', consentSkipped: SKIPPED })).reverse()
    ) as unknown as AuditRecord;
    const text = toJsonl([scrambled, rec({ seq: 2 })]);
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(Object.keys(JSON.parse(lines[0] ?? '{}'))).toEqual(AUDIT_FIELDS);
    expect(Object.keys(JSON.parse(lines[0] ?? '{}').budgetDecision)).toEqual([
      'estimatedCost',
      'limitApplied',
      'limitSource',
      'meterBasis',
      'estimatedTokens',
      'actualCost',
      'actualTokens',
      'requestHonored'
    ]);
    // A record without the optional members writes none of them (no nulls that were not there).
    expect(Object.keys(JSON.parse(lines[1] ?? '{}'))).not.toContain('consentSkipped');
    expect(toJsonl([])).toBe('');
  });

  it('round-trips: parse(toJsonl(x)) equals x and re-exports byte-identically', () => {
    const records = [
      rec({ seq: 1, budgetDecision: BUDGET, lane: 'A', consentSkipped: SKIPPED }),
      rec({ seq: 2, requestId: 'req-"2"', server: 'x,"=cmd\ny', reason: 'policy.rate_limit' })
    ];
    const text = toJsonl(records);
    const parsed = parseAuditJsonl(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.records).toEqual(records);
    expect(toJsonl(parsed.records)).toBe(text);
  });

  it('round-trips arbitrary untrusted text (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.nat(), (server, model, tokens) => {
        const r = rec({ server, model, tokensIn: tokens, requestId: server });
        const p = parseAuditJsonl(toJsonl([r]));
        return p.ok && JSON.stringify(p.records[0]) === JSON.stringify(r);
      })
    );
  });

  it('names the line number of a bad line and skips blank lines', () => {
    const good = JSON.stringify(rec());
    const notJson = parseAuditJsonl(`${good}\n\n{oops\n`);
    expect(notJson).toMatchObject({ ok: false, line: 3 });
    if (!notJson.ok) expect(notJson.error).toMatch(/^line 3: not valid JSON/);

    const badField = parseAuditJsonl(`${good}\r\n${JSON.stringify({ ...rec(), tokensIn: '12' })}`);
    expect(badField).toMatchObject({ ok: false, line: 2 });
    if (!badField.ok)
      expect(badField.error).toBe(`line 2: field 'tokensIn' must be a number (got "12")`);

    const badBudget = parseAuditJsonl(
      JSON.stringify({
        ...rec(),
        budgetDecision: { ...BUDGET, limitApplied: { amount: '-1', currency: 'USD' } }
      })
    );
    expect(badBudget.ok).toBe(false);
    if (!badBudget.ok)
      expect(badBudget.error).toMatch(
        /^line 1: field 'budgetDecision\.limitApplied\.amount' is not a valid amount: amount "-1" has a sign/
      );

    const notObject = parseAuditJsonl('[1,2]\n');
    expect(notObject).toMatchObject({ ok: false, line: 1 });
    if (!notObject.ok)
      expect(notObject.error).toBe('line 1: the line must be a JSON object (got [1,2])');
    const missing = parseAuditJsonl(JSON.stringify({ ...rec(), outcome: undefined }));
    if (!missing.ok)
      expect(missing.error).toMatch(/^line 1: field 'outcome' must be one of allowed, trimmed/);
    expect(missing.ok).toBe(false);
    expect(parseAuditJsonl('\n\n')).toEqual({ ok: true, records: [] });
  });
});

describe('CSV export', () => {
  it('has a header naming every field, with the budget decision flattened', () => {
    const rows = readCsv(toCsv([rec({ budgetDecision: BUDGET, consentSkipped: SKIPPED }), rec()]));
    const [header, withBudget, without] = rows;
    expect(header).toEqual([...CSV_COLUMNS]);
    for (const f of AUDIT_FIELDS.filter((f) => f !== 'budgetDecision' && f !== 'consentSkipped'))
      expect(header).toContain(f);
    for (const c of [
      'budget_estimatedCost',
      'budget_limitApplied',
      'budget_limitSource',
      'budget_meterBasis',
      'budget_actualCost'
    ])
      expect(header).toContain(c);
    const col = (row: string[] | undefined, name: string) =>
      row?.[CSV_COLUMNS.indexOf(name as never)];
    expect(col(withBudget, 'budget_estimatedCost')).toBe('0.1027');
    expect(col(withBudget, 'budget_limitApplied')).toBe('0.05');
    expect(col(withBudget, 'budget_currency')).toBe('USD');
    expect(col(withBudget, 'budget_meterBasis')).toBe(BUDGET.meterBasis);
    expect(col(withBudget, 'budget_actualTokensOut')).toBe('1000');
    expect(col(withBudget, 'budget_requestHonored')).toBe('false');
    expect(col(withBudget, 'consentSkipped_estimatedCost')).toBe('0.0012');
    expect(col(withBudget, 'consentSkipped_askAbove')).toBe('0.002');
    expect(col(without, 'consentSkipped_estimatedCost')).toBe('');
    expect(col(without, 'budget_estimatedCost')).toBe('');
    expect(col(without, 'reason')).toBe('');
    expect(col(without, 'requestId')).toBe('47');
    expect(rows).toHaveLength(3);
  });

  it('quotes and guards an untrusted server name containing ,"=cmd and a newline', () => {
    const server = '=cmd|\' /C calc\'!A0,"x"\nnext';
    const csv = toCsv([rec({ server, requestId: '@SUM(A1)' })]);
    const line = csv.split('\r\n')[1] ?? '';
    expect(line).toContain(`"'=cmd|' /C calc'!A0,""x""\nnext"`);
    const [, row] = readCsv(csv);
    expect(row?.[CSV_COLUMNS.indexOf('server')]).toBe(`'${server}`);
    expect(row?.[CSV_COLUMNS.indexOf('requestId')]).toBe("'@SUM(A1)");
    expect(row).toHaveLength(CSV_COLUMNS.length);
    expect(csv.endsWith('\r\n')).toBe(true);
  });

  it('guards formula starts on strings only, never on numbers or decimal text', () => {
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('+cmd')).toBe("'+cmd");
    expect(csvCell('@x')).toBe("'@x");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell('-1')).toBe('-1');
    expect(csvCell('0.0123')).toBe('0.0123');
    expect(csvCell('a "b"')).toBe('"a ""b"""');
    expect(csvCell(null)).toBe('');
    expect(csvCell(true)).toBe('true');
  });

  it('survives arbitrary server names: every row reads back with the right column count (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii' }), (server) => {
        const rows = readCsv(toCsv([rec({ server })]));
        const cell = rows[1]?.[CSV_COLUMNS.indexOf('server')];
        const expected =
          /^[=+\-@\t\r]/.test(server) && !/^[+-]?\d+(\.\d+)?$/.test(server) ? `'${server}` : server;
        return rows.length === 2 && rows[1]?.length === CSV_COLUMNS.length && cell === expected;
      })
    );
  });
});
