import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { AuditRecord } from '../machine/types';
import { runLog } from '../sim/session/run-log.testing';
import { CHUNK_ROWS, chunkKey, putRows, readAllRows, readRows } from './audit-chunks';
import { toCsv, toJsonl } from './audit-export';
import { AUDIT_FIELDS, orderRecord, recordJson } from './audit-format';
import { rowRecord, rowValues } from './audit-row';
import { AUDIT_STORE, DurableAuditLog } from './audit-log';
import { inTransaction, openIdbStore, type IdbStore } from './idb';

/** A real run's rows (every field the engine fills, budgets and consent included), twice over. */
const base = runLog('reconnect-bypass.json', 60);
const log = [...base, ...base.map((r) => ({ ...r, seq: r.seq + base.length }))];

let dbSeq = 0;
async function freshDb(): Promise<{ db: IdbStore; dbName: string }> {
  const dbName = `audit-chunks-spec-${++dbSeq}`;
  const opened = await openIdbStore(dbName, AUDIT_STORE);
  if (!opened.ok) throw new Error(opened.error);
  return { db: opened.store, dbName };
}

async function logOn(db: IdbStore, dbName: string, run = 'run') {
  const r = await DurableAuditLog.attach(db, dbName, [run]);
  if (!r.ok) throw new Error(r.error);
  return r.store;
}

const range = (lo: number, hi: number) => Array.from({ length: hi - lo }, (_, i) => lo + i);

/** A row's JSON as it is stored (one element of its chunk's array). */
const rowJson = (r: AuditRecord) => JSON.stringify(rowValues(r));
/** A stored row read back. */
const readBack = (json: string) => rowRecord(JSON.parse(json));

/** Rows a chunk held at most in the builds before (a read looks back CHUNK_ROWS, more than this). */
const BEFORE_CHUNK_ROWS = 128;

/**
 * Rows as the builds before stored them: each its JSONL export line, a chunk their lines (what a
 * database written then holds).
 */
function putObjectLines(s: IDBObjectStore, ns: string[], first: number, lines: string[]): void {
  for (let i = 0; i < lines.length; i += BEFORE_CHUNK_ROWS) {
    const part = lines.slice(i, i + BEFORE_CHUNK_ROWS);
    s.put(part.join('\n') + '\n', chunkKey(ns, first + i, part.length));
  }
}

/**
 * A record stored and read back: it must be the record (keys in export order, nothing added or
 * lost) and export as the same line, whatever of it JSON keeps (NaN is null there, -0 is 0).
 */
function expectStoredAsIs(r: AuditRecord): void {
  const line = JSON.stringify(orderRecord(r));
  const back = readBack(rowJson(r));
  expect(back).toStrictEqual(JSON.parse(line));
  expect(Object.keys(back)).toEqual(Object.keys(orderRecord(r)));
  expect(recordJson(back)).toBe(line);
}

describe('a row as stored', () => {
  it('reads back as the record, its export line byte-identical, for every row of a run', () => {
    for (const r of log) {
      expectStoredAsIs(r);
      expect(readBack(rowJson(r))).toStrictEqual(orderRecord(r));
    }
  });

  it('is the values of the fields in export order, not their keys', () => {
    const r = log.find((x) => x.budgetDecision && x.lane)!;
    const stored = JSON.parse(rowJson(r)) as unknown[];
    expect(stored.length).toBe(AUDIT_FIELDS.length);
    expect(stored[0]).toBe(r.seq);
    expect(stored.at(-1)).toBe(r.lane);
    // Less than half the bytes of the export line.
    expect(rowJson(r).length).toBeLessThan(recordJson(r).length / 2);
  });

  it('reads back as the record whatever its optional parts and key order (property)', () => {
    const money = fc.record({ amount: fc.string(), currency: fc.string() });
    const tokens = fc.record({ input: fc.nat(), output: fc.nat() });
    const budget = fc.record(
      {
        estimatedCost: money,
        limitApplied: money,
        limitSource: fc.constantFrom('host_policy', 'budget_window', 'session_pool', 'token_meter'),
        meterBasis: fc.string(),
        estimatedTokens: tokens,
        actualCost: money,
        actualTokens: tokens,
        requestHonored: fc.boolean()
      },
      {
        requiredKeys: [
          'estimatedCost',
          'limitApplied',
          'limitSource',
          'meterBasis',
          'estimatedTokens'
        ]
      }
    );
    const skipped = fc.record({ estimatedCost: money, askAbove: money });
    fc.assert(
      fc.property(
        fc.option(budget),
        fc.option(skipped, { nil: undefined }),
        fc.option(fc.string(), { nil: undefined }),
        fc.string(),
        fc.boolean(),
        (budgetDecision, consentSkipped, lane, server, reversed) => {
          const r = { ...log[0]!, budgetDecision, consentSkipped, lane, server } as AuditRecord;
          const shuffled = (
            reversed ? Object.fromEntries(Object.entries(r).reverse()) : r
          ) as AuditRecord;
          expectStoredAsIs(shuffled);
        }
      )
    );
  });

  // Whatever writes the row (audit-row.ts) and the export line (audit-format.ts recordJson; a
  // version that wrote text and numbers by hand was tried and measured slower in the browser):
  // any text (quotes, backslashes, control characters, non-ASCII, lone surrogates), any number
  // (-0, fractions, exponents, NaN, ±Infinity) and any field missing must read back as the record
  // and export as JSON.stringify's bytes of the ordered record.
  it('reads back as the record and its export line for any text, any number and any field left out (property, fixed seed)', () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('', '"', '\\', '\u0000', '\u007f', 'é', '\ud800', 'a\udc00b', '\u2028')
    );
    const num = fc.oneof(
      fc.double(),
      fc.integer(),
      fc.constantFrom(-0, NaN, Infinity, -Infinity, 1e21, 5e-7, 0.1 + 0.2)
    );
    const value = fc.oneof(text, num, fc.boolean(), fc.constant(null), fc.constant(undefined));
    const keys = AUDIT_FIELDS.filter((f) => f !== 'budgetDecision' && f !== 'consentSkipped');
    fc.assert(
      fc.property(fc.array(value, { minLength: keys.length, maxLength: keys.length }), (values) => {
        const r = { ...log[0]! } as Record<string, unknown>;
        keys.forEach((k, i) => {
          if (values[i] === undefined) delete r[k];
          else r[k] = values[i];
        });
        const rec = r as unknown as AuditRecord;
        expect(recordJson(rec)).toBe(JSON.stringify(orderRecord(rec)));
        expectStoredAsIs(rec);
      }),
      { seed: 20261203, numRuns: 2_000 }
    );
  });
});

describe('the audit log stored in chunks', () => {
  it('has rows enough for several chunks', () => {
    expect(log.length).toBeGreaterThan(2 * CHUNK_ROWS + 10);
  });

  it('round trip: every row reads back byte-identical, one by one, in ranges and as exports', async () => {
    const { db, dbName } = await freshDb();
    const audit = await logOn(db, dbName);
    // Two group commits: chunks never span a commit, so the second starts mid-way.
    const half = CHUNK_ROWS + 17;
    for (const r of log.slice(0, half)) audit.append(r);
    await audit.flush();
    for (const r of log.slice(half)) audit.append(r);
    await audit.flush();
    expect(audit.status()).toMatchObject({ saved: log.length, heldInMemory: 0 });
    expect(await audit.count()).toBe(log.length);

    const all = await audit.all();
    expect(all.map(recordJson)).toEqual(log.map(recordJson));
    expect(toJsonl(all)).toBe(toJsonl(log));
    expect(toCsv(all)).toBe(toCsv(log));

    // Dense, across chunk edges, and scattered (one row from each end).
    const dense = range(CHUNK_ROWS - 3, half + 5);
    expect((await readRows(db, ['run'], dense)).map((r) => r && recordJson(r))).toEqual(
      dense.map((n) => recordJson(log[n]!))
    );
    const far = [0, 1, log.length - 1];
    expect((await readRows(db, ['run'], far)).map((r) => r && recordJson(r))).toEqual(
      far.map((n) => recordJson(log[n]!))
    );
    // Rows past the end are not there: undefined, never a short answer.
    const past = await readRows(db, ['run'], [log.length - 1, log.length, log.length + 900]);
    expect(past.length).toBe(3);
    expect(past.slice(1)).toEqual([undefined, undefined]);

    // A reload finds where the log goes on and what is on disk from the keys alone.
    const again = await logOn(db, dbName);
    expect(again.nextKey).toBe(log.length);
    expect(again.status().saved).toBe(log.length);
  });

  it('a database the build before wrote (rows as their export lines) reads on, its rows and new ones side by side', async () => {
    const { db, dbName } = await freshDb();
    const old = CHUNK_ROWS + 40;
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      // As that build stored them: each row its JSONL export line, a chunk of lines.
      putObjectLines(s, ['run'], 0, log.slice(0, old).map(recordJson));
      done(undefined);
    });
    const audit = await logOn(db, dbName);
    expect(audit.nextKey).toBe(old);
    for (const r of log.slice(old)) audit.append(r);
    await audit.flush();
    const all = await audit.all();
    expect(all).toStrictEqual(log.map(orderRecord));
    expect(toJsonl(all)).toBe(toJsonl(log));
    expect(toCsv(all)).toBe(toCsv(log));
    const across = range(old - 5, old + 5);
    expect(await readRows(db, ['run'], across)).toStrictEqual(
      across.map((n) => orderRecord(log[n]!))
    );
    // A cut inside an old chunk keeps its rows before the cut; the log goes on in the new form.
    audit.truncate(CHUNK_ROWS + 3);
    for (const r of log.slice(0, 4)) audit.append(r);
    await audit.flush();
    expect(toJsonl(await audit.all())).toBe(
      toJsonl([...log.slice(0, CHUNK_ROWS + 3), ...log.slice(0, 4)])
    );
  });

  it('a database of the row arrays in chunks of 128 (the build before) reads on beside chunks of CHUNK_ROWS', async () => {
    expect(CHUNK_ROWS).toBeGreaterThan(BEFORE_CHUNK_ROWS);
    const { db, dbName } = await freshDb();
    const old = 3 * BEFORE_CHUNK_ROWS + 7;
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      for (let i = 0; i < old; i += BEFORE_CHUNK_ROWS) {
        const part = log.slice(i, Math.min(old, i + BEFORE_CHUNK_ROWS));
        s.put(JSON.stringify(part.map(rowValues)), chunkKey(['run'], i, part.length));
      }
      done(undefined);
    });
    const audit = await logOn(db, dbName);
    expect(audit.nextKey).toBe(old);
    for (const r of log.slice(old)) audit.append(r);
    await audit.flush();
    expect(await audit.count()).toBe(log.length);
    expect(toJsonl(await audit.all())).toBe(toJsonl(log));
    // Rows far apart (a get a chunk; the first the last of its chunk), and a dense range
    // across the last old chunk into the first new one.
    const far = [2 * BEFORE_CHUNK_ROWS - 1, 3 * BEFORE_CHUNK_ROWS + 6, old, log.length - 1];
    expect(await readRows(db, ['run'], far)).toStrictEqual(far.map((n) => orderRecord(log[n]!)));
    const across = range(old - 140, old + 20);
    expect(await readRows(db, ['run'], across)).toStrictEqual(
      across.map((n) => orderRecord(log[n]!))
    );
  });

  it('a cut inside a chunk keeps the rows before it, byte-identical, and the log goes on from there', async () => {
    const { db, dbName } = await freshDb();
    const audit = await logOn(db, dbName);
    for (const r of log) audit.append(r);
    await audit.flush();
    const cut = CHUNK_ROWS + 100;
    audit.truncate(cut);
    // Rows after the cut, queued in the same batch as the cut.
    for (const r of log.slice(0, 5)) audit.append(r);
    await audit.flush();
    const want = [...log.slice(0, cut), ...log.slice(0, 5)];
    expect((await audit.all()).map(recordJson)).toEqual(want.map(recordJson));
    expect(audit.status()).toMatchObject({ saved: cut + 5, heldInMemory: 0 });
    expect((await logOn(db, dbName)).nextKey).toBe(cut + 5);
    // Two cuts in one batch, the second below the first: the lower one wins.
    audit.truncate(CHUNK_ROWS + 50);
    audit.truncate(10);
    await audit.flush();
    expect((await audit.all()).map(recordJson)).toEqual(log.slice(0, 10).map(recordJson));
    expect(await audit.count()).toBe(10);
  });

  it('after a crash only whole group commits are on disk: a reload reads them and goes on after them', async () => {
    const { db, dbName } = await freshDb();
    const audit = await logOn(db, dbName);
    for (const r of log.slice(0, 300)) audit.append(r);
    await audit.flush();
    // Appended but never committed: the tab died before its group commit.
    for (const r of log.slice(300)) audit.append(r);
    const reloaded = await logOn(db, dbName);
    expect(reloaded.nextKey).toBe(300);
    expect(reloaded.status()).toMatchObject({ saved: 300, heldInMemory: 0 });
    const back = await readRows(db, ['run'], range(290, 310));
    expect(back.filter((r) => r !== undefined).length).toBe(10);
    expect(back.slice(0, 10).map((r) => r && recordJson(r))).toEqual(
      log.slice(290, 300).map(recordJson)
    );
  });

  it('a chunk holding fewer rows than its key says is an error naming its rows and run', async () => {
    const { db } = await freshDb();
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      putRows(s, ['r1'], 0, log.slice(0, 10));
      // Rows 11–20 as 4 rows, whole and well-formed.
      s.put(JSON.stringify(log.slice(10, 14).map(rowValues)), chunkKey(['r1'], 10, 10));
      // Rows 21–30 cut short: the write of a damaged value (4 whole rows and half of one).
      const cut = JSON.stringify(log.slice(20, 25).map(rowValues));
      s.put(cut.slice(0, -100), chunkKey(['r1'], 20, 10));
      done(undefined);
    });
    // The rows before them are still read.
    expect((await readRows(db, ['r1'], range(0, 10))).every((r) => r !== undefined)).toBe(true);
    await expect(readRows(db, ['r1'], [12])).rejects.toThrow(
      "the audit log's rows 11–20 (run r1) are damaged in this browser's storage: 4 rows where its key says 10"
    );
    await expect(readRows(db, ['r1'], [25])).rejects.toThrow(
      /^the audit log's rows 21–30 \(run r1\) are damaged in this browser's storage: its rows do not read back \(/
    );
    await expect(readAllRows(db, ['r1'])).rejects.toThrow(/rows 11–20 \(run r1\) are damaged/);
  });

  it('a chunk the build before wrote holding fewer rows than its key says is an error naming its rows and run', async () => {
    const { db } = await freshDb();
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      putObjectLines(s, ['r1'], 0, log.slice(0, 10).map(recordJson));
      // Rows 11–20 cut short: the write of a damaged value (4 whole rows and half of one).
      const lines = log.slice(10, 14).map(recordJson).join('\n') + '\n{"seq":1';
      s.put(lines, chunkKey(['r1'], 10, 10));
      done(undefined);
    });
    // The rows before it are still read.
    expect((await readRows(db, ['r1'], range(0, 10))).every((r) => r !== undefined)).toBe(true);
    await expect(readRows(db, ['r1'], [12])).rejects.toThrow(
      "the audit log's rows 11–20 (run r1) are damaged in this browser's storage: 4 whole rows where its key says 10"
    );
    await expect(readAllRows(db, ['r1'])).rejects.toThrow(/rows 11–20 \(run r1\) are damaged/);
  });

  it('a row that is not a row is an error naming the row', async () => {
    const { db, dbName } = await freshDb();
    const rows: unknown[] = log.slice(0, 3).map(rowValues);
    rows[1] = (rows[1] as unknown[]).slice(0, 20);
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      s.put(JSON.stringify(rows), chunkKey(['run'], 0, 3));
      done(undefined);
    });
    await expect(readRows(db, ['run'], [0])).resolves.toStrictEqual([orderRecord(log[0]!)]);
    await expect(readRows(db, ['run'], [0, 1, 2])).rejects.toThrow(
      "the audit log's rows 1–3 (run run) are damaged in this browser's storage: row 2 does not read back (the row is not 27 values)"
    );
    await expect((await logOn(db, dbName)).all()).rejects.toThrow(
      /Could not read the audit log in 'audit-chunks-spec-\d+'.*row 2 does not read back/
    );
  });

  it('a row the build before wrote that is not JSON is an error naming the row', async () => {
    const { db, dbName } = await freshDb();
    const lines = log.slice(0, 3).map(recordJson);
    lines[1] = lines[1]!.slice(0, 40);
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      putObjectLines(s, ['run'], 0, lines);
      done(undefined);
    });
    await expect(readRows(db, ['run'], [0, 1, 2])).rejects.toThrow(
      /rows 1–3 \(run run\) are damaged in this browser's storage: row 2 does not read back \(/
    );
    await expect((await logOn(db, dbName)).all()).rejects.toThrow(
      /Could not read the audit log in 'audit-chunks-spec-\d+'.*row 2 does not read back/
    );
  });

  it('a value that is not text is damaged, not misread', async () => {
    const { db } = await freshDb();
    await inTransaction<void>(db, 'readwrite', (s, done) => {
      s.put(log.slice(0, 2), chunkKey(['run'], 0, 2));
      done(undefined);
    });
    await expect(readRows(db, ['run'], [0])).rejects.toThrow(
      "the audit log's rows 1–2 (run run) are damaged in this browser's storage: the stored value is not text"
    );
  });

  it('writes in chunks of at most CHUNK_ROWS rows, keyed by first row and count', async () => {
    const { db, dbName } = await freshDb();
    const audit = await logOn(db, dbName);
    for (const r of log.slice(0, CHUNK_ROWS + 3)) audit.append(r);
    await audit.flush();
    const keys = await inTransaction<IDBValidKey[]>(db, 'readonly', (s, done) => {
      const req = s.getAllKeys();
      req.onsuccess = () => done(req.result);
    });
    expect(keys).toEqual([
      ['run', 0, CHUNK_ROWS],
      ['run', CHUNK_ROWS, 3]
    ]);
  });
});
