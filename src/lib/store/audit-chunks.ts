/**
 * How the durable audit log lays its rows out in IndexedDB: consecutive rows packed into one
 * record, a "chunk" — one string, the JSON array of its rows, each row the array of its values in
 * AUDIT_FIELDS order (audit-row.ts) — keyed `[...namespace, first, count]`.
 *
 * Why chunks: Chromium's IndexedDB costs about the same per record whatever it holds, and cloning
 * thousands of nested objects costs more again. One row a record wrote 2,000–6,000 rows/s, a run
 * at 1000× makes ~23,000 a second; a chunk of rows as one string a record writes ~70,000–110,000
 * (scripts/bench-idb-audit.mjs). A string is the cheapest value to clone.
 *
 * Why values, not the JSONL export's line: the keys were half of each row's ~520 bytes, and the
 * line a string of its own, made at append and joined at commit: ~260 bytes a row now, one
 * JSON.stringify a chunk made when it is written, and the records queued until then (the audit
 * table holds them until they are on disk anyway): the sim worker's CPU a request of live play
 * at 2 lanes × 50 servers went down by a tenth (bench:ui, 9 pairs against the build before: −1.3
 * to −3.8 µs of 14.5–18.4). The export re-encodes the rows read back, so its bytes are unchanged. A chunk the builds before wrote (its rows' export lines, one a line,
 * first character `{`) still reads: the first character tells the two apart.
 *
 * Why the row count in the key: counting the rows on disk (what "saved" is checked against after
 * a loss, what a reload resumes from) reads keys only, never the rows.
 *
 * A transaction writes whole chunks, so a crash leaves whole chunks: the rows on disk are the
 * batches committed. Reads decode after the transaction, so a damaged chunk is an error that says
 * which rows of which run, not a transaction aborted without a word.
 */
import type { AuditRecord } from '../machine/types';
import { rowRecord, rowValues } from './audit-row';
import { inTransaction, type Namespace, type UseStore } from './idb';

/**
 * Rows a chunk holds at most (a read looks this far back for the chunk holding its first row, so
 * a larger value reads what a smaller one wrote; a smaller value needs a new database name).
 *
 * Why 320 (~83 KB at ~260 bytes a row): Chromium stores a value over ~64 KB as a blob file beside
 * its LevelDB, and that is far cheaper for the browser's IndexedDB threads than a value inside
 * it. Measured in `npm run bench:ui` on a profile on disk, 2 lanes × 50 servers at 1000×: 128
 * rows (~33 KB) cost those threads 227–264 ms a second of play, 320 rows 75–78, and live play went
 * from 987–992× to 998–1000× (3 interleaved pairs); the sim worker's own cost a request did not
 * rise (12.0–12.6 µs against 12.7–13.1). All sizes write far faster than live play makes rows
 * (bench-idb-audit.mjs). The table's scattered reads (a filter's rows spread over a day) fetch
 * a chunk per row they need, ~0.15 ms of JSON.parse each at this size (Node, a 72 KB chunk).
 */
export const CHUNK_ROWS = 320;

/** A chunk's key: rows `first` … `first + count − 1` of the namespace. */
export function chunkKey(ns: Namespace, first: number, count: number): IDBValidKey {
  return [...ns, first, count];
}

/** First row and row count of a chunk key, or null for a key that is not one. */
function rowsOfKey(ns: Namespace, key: IDBValidKey): [number, number] | null {
  if (!Array.isArray(key) || key.length !== ns.length + 2) return null;
  const first = key[ns.length];
  const count = key[ns.length + 1];
  return typeof first === 'number' && typeof count === 'number' ? [first, count] : null;
}

/** Every key of the namespace's rows (the probe's key and other namespaces excluded). */
function range(ns: Namespace, lo = -Infinity, hi = Infinity): IDBKeyRange {
  // [...ns, x, c] sorts after [...ns] and, for any number c, before [...ns, x, []].
  return IDBKeyRange.bound([...ns, lo], [...ns, hi, []]);
}

/**
 * Put `records` (rows `first`, `first + 1`, …) in chunks of at most CHUNK_ROWS, within the
 * transaction of `s`: each chunk one JSON array of its rows' values (audit-row.ts).
 */
export function putRows(
  s: IDBObjectStore,
  ns: Namespace,
  first: number,
  records: readonly AuditRecord[]
): void {
  for (let i = 0; i < records.length; i += CHUNK_ROWS) {
    const count = Math.min(CHUNK_ROWS, records.length - i);
    const rows = new Array<unknown[]>(count);
    for (let j = 0; j < count; j++) rows[j] = rowValues(records[i + j]!);
    s.put(JSON.stringify(rows), chunkKey(ns, first + i, count));
  }
}

/** `[`: a chunk as one JSON array of rows; else (`{`) the lines the builds before wrote. */
const ROWS_ARRAY = 0x5b;

/** The first `keep` rows of a chunk's text, in the chunk's own form. */
function cutChunk(text: string, keep: number): string {
  if (text.charCodeAt(0) === ROWS_ARRAY) {
    try {
      return JSON.stringify((JSON.parse(text) as unknown[]).slice(0, keep));
    } catch {
      // Damaged: kept as it is, so a read still says which rows are.
      return text;
    }
  }
  let end = -1;
  for (let i = 0; i < keep; i++) end = text.indexOf('\n', end + 1);
  return text.slice(0, end + 1);
}

/**
 * Within the transaction of `s`: delete every row from `n` on (a chunk holding rows on both sides
 * is cut and put back under its shorter key), then `then()`. Requests run in the order placed, so
 * whatever `then` places runs after the cut.
 */
export function cutRows(s: IDBObjectStore, ns: Namespace, n: number, then: () => void): void {
  s.delete(range(ns, n));
  const before = s.openCursor(IDBKeyRange.bound([...ns], [...ns, n], true, true), 'prev');
  before.onsuccess = () => {
    const cursor = before.result;
    const at = cursor ? rowsOfKey(ns, cursor.key) : null;
    if (cursor && at && at[0] + at[1] > n) {
      const keep = n - at[0];
      cursor.delete();
      s.put(cutChunk(String(cursor.value), keep), chunkKey(ns, at[0], keep));
    }
    then();
  };
}

/** Within a transaction: `done(rows)`, the rows of the namespace on disk (keys read, not rows). */
export function countRows(s: IDBObjectStore, ns: Namespace, done: (rows: number) => void): void {
  const keys = s.getAllKeys(range(ns));
  keys.onsuccess = () => {
    let rows = 0;
    for (const k of keys.result) rows += rowsOfKey(ns, k)?.[1] ?? 0;
    done(rows);
  };
}

/**
 * Within a transaction: `done(next, rows)`: the row after the namespace's last one on disk (0 when
 * it has none) and how many rows it holds.
 */
export function lastAndCount(
  s: IDBObjectStore,
  ns: Namespace,
  done: (next: number, rows: number) => void
): void {
  const last = s.openKeyCursor(range(ns), 'prev');
  last.onsuccess = () => {
    const at = last.result ? rowsOfKey(ns, last.result.key) : null;
    countRows(s, ns, (rows) => done(at ? at[0] + at[1] : 0, rows));
  };
}

/** A chunk as read: its rows' numbers and its text, not yet decoded. */
interface RawChunk {
  first: number;
  count: number;
  text: unknown;
}

/**
 * Within a transaction: the chunks holding any of `rows` (ascending row numbers), in order. Dense
 * rows are read as one range (`getAll`); rows spread far apart, chunk by chunk (`get`), so a
 * filter's few rows over a day do not read the whole day. The range starts a chunk's length
 * before the first row, where the chunk holding it may start: its requests are placed at once,
 * not after a first look for that chunk (a transaction's reads then are all asked together).
 */
function chunksHolding(
  s: IDBObjectStore,
  ns: Namespace,
  rows: ArrayLike<number>,
  done: (chunks: RawChunk[]) => void
): void {
  const n = rows.length;
  if (n === 0) return done([]);
  const lo = rows[0]!;
  const hi = rows[n - 1]!;
  const whole = range(ns, lo - CHUNK_ROWS + 1, hi);
  /** The chunks (of `keys`) that hold one of `rows`, with where they are in `keys`. */
  const holding = (keys: IDBValidKey[]) => {
    const out: { first: number; count: number; key: IDBValidKey; i: number }[] = [];
    let j = 0;
    keys.forEach((key, i) => {
      const r = rowsOfKey(ns, key);
      if (!r) return;
      while (j < n && rows[j]! < r[0]) j++;
      if (j < n && rows[j]! < r[0] + r[1]) out.push({ first: r[0], count: r[1], key, i });
    });
    return out;
  };
  const keys = s.getAllKeys(whole);
  if (hi - lo + 1 <= 4 * n) {
    const values = s.getAll(whole);
    values.onsuccess = () =>
      done(
        holding(keys.result).map((c) => ({
          first: c.first,
          count: c.count,
          text: values.result[c.i]
        }))
      );
    return;
  }
  keys.onsuccess = () => {
    const wanted = holding(keys.result);
    const out: RawChunk[] = wanted.map((w) => ({ first: w.first, count: w.count, text: '' }));
    let left = wanted.length;
    if (left === 0) return done(out);
    wanted.forEach((w, i) => {
      const got = s.get(w.key);
      got.onsuccess = () => {
        out[i]!.text = got.result;
        if (--left === 0) done(out);
      };
    });
  };
}

/** Rows of the namespace `where` names ("run r1") in error messages: 1-based, as the table shows. */
function damaged(where: string, c: RawChunk, why: string): Error {
  return new Error(
    `the audit log's rows ${c.first + 1}–${c.first + c.count} (${where}) are damaged in this browser's storage: ${why}`
  );
}

/** Why a thrown value was thrown, in a few words. */
function why(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A chunk's rows, checked against its key: row `i` of the chunk, decoded when asked for. */
type ChunkRows = (i: number) => AuditRecord;

function rowsOf(where: string, c: RawChunk): ChunkRows {
  if (typeof c.text !== 'string') throw damaged(where, c, 'the stored value is not text');
  const text = c.text;
  const row = (i: number, decode: () => AuditRecord): AuditRecord => {
    try {
      return decode();
    } catch (err) {
      throw damaged(where, c, `row ${c.first + i + 1} does not read back (${why(err)})`);
    }
  };
  if (text.charCodeAt(0) === ROWS_ARRAY) {
    let rows: unknown;
    try {
      rows = JSON.parse(text);
    } catch (err) {
      throw damaged(where, c, `its rows do not read back (${why(err)})`);
    }
    if (!Array.isArray(rows) || rows.length !== c.count)
      throw damaged(
        where,
        c,
        `${Array.isArray(rows) ? rows.length : 0} rows where its key says ${c.count}`
      );
    return (i) => row(i, () => rowRecord(rows[i]));
  }
  // As the builds before wrote it: a line a row, each its JSONL export line.
  const lines = text.split('\n');
  if (lines.pop() !== '' || lines.length !== c.count)
    throw damaged(where, c, `${lines.length} whole rows where its key says ${c.count}`);
  return (i) => row(i, () => objectRow(lines[i]!));
}

/** A row as the builds before stored it: its JSONL export line, keys in AUDIT_FIELDS order. */
function objectRow(line: string): AuditRecord {
  const r = JSON.parse(line) as unknown;
  if (typeof r === 'object' && r !== null && !Array.isArray(r)) return r as AuditRecord;
  throw new Error('not a record');
}

/** `where` for messages: the namespace's run. */
function describe(ns: Namespace): string {
  return ns.length > 0 ? `run ${ns.join('/')}` : 'the whole log';
}

/**
 * Rows `rows` (ascending row numbers) of the namespace, read in one transaction: each the record,
 * or undefined when it is not on disk. Throws, naming the rows and the run, when a chunk holding
 * one of them is damaged.
 */
export async function readRows(
  store: UseStore,
  ns: Namespace,
  rows: ArrayLike<number>
): Promise<(AuditRecord | undefined)[]> {
  const chunks = await inTransaction<RawChunk[]>(store, 'readonly', (s, done) =>
    chunksHolding(s, ns, rows, done)
  );
  const where = describe(ns);
  const out = new Array<AuditRecord | undefined>(rows.length);
  let c = 0;
  let at: ChunkRows | null = null;
  for (let j = 0; j < rows.length; j++) {
    const row = rows[j]!;
    while (c < chunks.length && chunks[c]!.first + chunks[c]!.count <= row) {
      c++;
      at = null;
    }
    const chunk = chunks[c];
    if (!chunk || chunk.first > row) continue;
    at ??= rowsOf(where, chunk);
    out[j] = at(row - chunk.first);
  }
  return out;
}

/**
 * Every row of the namespace on disk, in row order (a gap is skipped: the rows there are not on
 * disk). Throws, naming them, when a chunk is damaged.
 */
export async function readAllRows(store: UseStore, ns: Namespace): Promise<AuditRecord[]> {
  const chunks = await inTransaction<RawChunk[]>(store, 'readonly', (s, done) => {
    const whole = range(ns);
    const keys = s.getAllKeys(whole);
    const values = s.getAll(whole);
    values.onsuccess = () =>
      done(
        keys.result.flatMap((k, i) => {
          const r = rowsOfKey(ns, k);
          return r ? [{ first: r[0], count: r[1], text: values.result[i] }] : [];
        })
      );
  });
  const where = describe(ns);
  const out: AuditRecord[] = [];
  for (const c of chunks) {
    const at = rowsOf(where, c);
    for (let i = 0; i < c.count; i++) out.push(at(i));
  }
  return out;
}
