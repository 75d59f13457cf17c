/**
 * The audit log (SPEC §7): one record per decision, kept in memory for the simulation and durable
 * in IndexedDB for the browser. Querying and totals live in audit-query.ts; field order, JSONL and
 * CSV export and import in audit-export.ts.
 */
import type { AuditRecord } from '../machine/types';
import { CHUNK_ROWS, countRows, cutRows, lastAndCount, putRows, readAllRows } from './audit-chunks';
import type { MaybePromise } from './decision-store';
import {
  inTransaction,
  openIdbStore,
  prefixRange,
  storageError,
  type Namespace,
  type OpenResult,
  type UseStore
} from './idb';
import { WrittenBehind, type StorageFailure } from './write-behind';

export interface AuditLog {
  /** Append one record; order of appends is the order of `all()`. */
  append(r: AuditRecord): MaybePromise<void>;
  all(): MaybePromise<AuditRecord[]>;
  clear(): MaybePromise<void>;
  count(): MaybePromise<number>;
}

/**
 * The in-memory log the simulation writes to: synchronous, no copies (the engine hands over a
 * fresh record per decision and never mutates it afterwards).
 */
export class MemoryAuditLog implements AuditLog {
  private records: AuditRecord[] = [];

  append(r: AuditRecord): void {
    this.records.push(r);
  }

  /** A snapshot array: callers may sort or filter it without disturbing the log's order. */
  all(): AuditRecord[] {
    return this.records.slice();
  }

  clear(): void {
    this.records = [];
  }

  count(): number {
    return this.records.length;
  }
}

/**
 * The default database; separate from the decisions database (one object store per database).
 * Named for its layout (audit-chunks.ts: rows packed in chunks), so a database of the earlier
 * layout, one row a record, is never read as this one.
 */
const DEFAULT_AUDIT_DB = 'sampling-policy-lab-audit-chunks';
/** The object store name inside the audit database. */
export const AUDIT_STORE = 'audit';

export interface DurableAuditOptions {
  dbName?: string;
  /**
   * The key prefix of this log's records (the playground's `[runId]`): rows are numbered by an
   * append counter and stored in chunks keyed `[...namespace, first, count]` (audit-chunks.ts), so
   * one run's log is one contiguous range.
   */
  namespace?: Namespace;
  /** Bounds the wait for a blocked or unresponsive IndexedDB (e.g. `AbortSignal.timeout(3000)`). */
  signal?: AbortSignal;
}

/** Where a durable log stands: how many records are on disk and how many only in memory. */
export interface AuditStatus {
  /** Records of this namespace on disk, as of the last committed batch. */
  saved: number;
  /** Records appended but not on disk (queued, being written, or held after a failure). */
  heldInMemory: number;
  /** Saved records found gone from disk (the database deleted or cleared from outside). */
  lost: number;
  failure: StorageFailure | null;
}

/**
 * The audit log in IndexedDB, appended through the shared write-behind (write-behind.ts):
 * `append` is synchronous and `flush()` writes every queued record in one transaction, packed in
 * chunks of consecutive rows (audit-chunks.ts).
 *
 * Row number `n` is an append counter continued from the namespace's last row at `open()`,
 * rather than the record's `seq`: seq restarts with every run and lane, so a seq key would let a
 * second run silently overwrite the first — the record that would have explained last month's
 * bill.
 *
 * `all()` and `count()` flush first, so they include every append made before the call that could
 * be written.
 */
/**
 * A queued write: one chunk's rows, consecutive from row `first` (at most CHUNK_ROWS), or (null)
 * the cut of every row from `first` on. The records themselves, encoded when their chunk is
 * written: the audit table holds them in memory until they are on disk anyway
 * (audit-service.ts), so queuing them costs nothing, where an encoded row, made at once, was
 * garbage that outlived the young generation (a group commit every 100 ms of live play).
 *
 * A chunk an op, not a row: at 2 lanes × 50 servers at 1000× the log takes ~60,000 rows a
 * second, which were as many pairs queued, and a group commit of more than MAX_BATCH rows took
 * two transactions. `pendingWrites` counts the rows the ops hold, so a queued cut is no record
 * held in memory (it was counted as one). In `bench:ui` the sim worker's cost a request did not
 * move beyond the noise (12.7–13.8 µs against 13.1–13.8, 2 pairs of 60 s).
 */
interface AuditOp {
  first: number;
  records: AuditRecord[] | null;
}

/** Chunks written in one transaction at most: ~10,000 rows, ~15 ms of encoding in the worker. */
const MAX_BATCH_CHUNKS = 32;

export class DurableAuditLog extends WrittenBehind<AuditOp> implements AuditLog {
  readonly dbName: string;
  readonly namespace: Namespace;
  #next: number;
  #saved: number;
  /** The chunk being filled: rows from `#next − #open.length`, queued once full or flushed. */
  #open: AuditRecord[] = [];

  private constructor(store: UseStore, dbName: string, ns: Namespace, next: number, saved: number) {
    super(store, {
      noun: 'audit record(s)',
      storeName: AUDIT_STORE,
      maxBatch: MAX_BATCH_CHUNKS,
      weightOf: (op) => op.records?.length ?? 0
    });
    this.dbName = dbName;
    this.namespace = ns;
    this.#next = next;
    this.#saved = saved;
  }

  protected writeBatch(batch: readonly AuditOp[]): Promise<void> {
    const ns = this.namespace;
    return inTransaction<void>(this.store, 'readwrite', (s, done) => {
      let i = 0;
      // In order: a run of consecutive rows goes in chunks; a cut reads the chunk it splits, and
      // what follows is placed once it has (so it runs after the cut).
      const go = (): void => {
        while (i < batch.length) {
          const { first, records } = batch[i++]!;
          if (records === null) return cutRows(s, ns, first, go);
          putRows(s, ns, first, records);
        }
        done(undefined);
      };
      go();
    });
  }

  protected committedBatch(batch: readonly AuditOp[]): void {
    // Rows land in key order from 0, so the rows on disk are keys 0 … saved − 1.
    for (const { first, records } of batch)
      this.#saved = records ? this.#saved + records.length : Math.min(this.#saved, first);
  }

  protected async compareWithDisk(disk: UseStore | null): Promise<number> {
    let found = 0;
    if (disk)
      try {
        found = await inTransaction<number>(disk, 'readonly', (s, done) =>
          countRows(s, this.namespace, done)
        );
      } catch {
        // Unreadable: nothing on it can be counted as saved.
      }
    const lost = Math.max(0, this.#saved - found);
    this.#saved -= lost;
    return lost;
  }

  /** Open (or create) the audit database; `{ ok: false, error }` in plain words when unavailable. */
  static async open(opts: DurableAuditOptions = {}): Promise<OpenResult<DurableAuditLog>> {
    const dbName = opts.dbName ?? DEFAULT_AUDIT_DB;
    const opened = await openIdbStore(dbName, AUDIT_STORE, opts.signal);
    if (!opened.ok) return opened;
    return DurableAuditLog.attach(opened.store, dbName, opts.namespace ?? []);
  }

  /** A log over an already-open database (the worker opens it once and keeps one log per run). */
  static async attach(
    store: UseStore,
    dbName: string,
    ns: Namespace,
    /** The namespace is new (a fresh run id): it holds no rows, so nothing is read. */
    fresh = false
  ): Promise<OpenResult<DurableAuditLog>> {
    if (fresh) return { ok: true, store: new DurableAuditLog(store, dbName, ns, 0, 0) };
    try {
      const [next, count] = await inTransaction<[number, number]>(store, 'readonly', (s, done) =>
        lastAndCount(s, ns, (next, rows) => done([next, rows]))
      );
      return { ok: true, store: new DurableAuditLog(store, dbName, ns, next, count) };
    } catch (err) {
      return {
        ok: false,
        kind: 'failed',
        error: storageError(`read the audit log in '${dbName}'`, err, AUDIT_STORE).message
      };
    }
  }

  /** The row number the next append gets: rows appended from here on are `nextKey + i`. */
  get nextKey(): number {
    return this.#next;
  }

  /** Records appended but not yet committed to IndexedDB (including a batch being written now). */
  get pendingWrites(): number {
    return this.writer.pendingWeight + this.#open.length;
  }

  status(): AuditStatus {
    return {
      saved: this.#saved,
      heldInMemory: this.pendingWrites,
      lost: this.lostCount,
      failure: this.writer.failure
    };
  }

  /**
   * Queue one record. It is kept, not copied, until its chunk is written: the engine hands over a
   * fresh record per decision and never changes it afterwards.
   */
  append(r: AuditRecord): void {
    this.#open.push(r);
    this.#next += 1;
    if (this.#open.length === CHUNK_ROWS) this.#seal();
  }

  /** Queue the chunk being filled, if it holds any rows. */
  #seal(): void {
    const records = this.#open;
    if (records.length === 0) return;
    this.writer.enqueue({ first: this.#next - records.length, records });
    this.#open = [];
  }

  override flush(): Promise<boolean> {
    this.#seal();
    return super.flush();
  }

  override retry(): Promise<boolean> {
    this.#seal();
    return super.retry();
  }

  override abandon(): void {
    this.#open = [];
    super.abandon();
  }

  /**
   * Keep the first `rows` rows only: queued rows beyond them are dropped, stored ones deleted in
   * order with the writes (a seek back restored in place: the rows after it were another future).
   * The next append is row `rows`.
   */
  truncate(rows: number): void {
    if (rows >= this.#next) return;
    this.#seal();
    this.writer.discardWhere(
      (op) => {
        if (op.records === null) return false;
        if (op.first >= rows) return true;
        // A chunk across the cut keeps its rows before it (a queued op is this log's own: no
        // batch being written holds it).
        if (op.first + op.records.length > rows) op.records = op.records.slice(0, rows - op.first);
        return false;
      },
      { first: rows, records: null }
    );
    this.#next = rows;
  }

  async all(): Promise<AuditRecord[]> {
    await this.flush();
    try {
      return await readAllRows(this.store, this.namespace);
    } catch (err) {
      throw storageError(`read the audit log in '${this.dbName}'`, err, AUDIT_STORE);
    }
  }

  async count(): Promise<number> {
    await this.flush();
    try {
      return await inTransaction<number>(this.store, 'readonly', (s, done) =>
        countRows(s, this.namespace, done)
      );
    } catch (err) {
      throw storageError(`count the audit log in '${this.dbName}'`, err, AUDIT_STORE);
    }
  }

  /** Drop every record of this namespace, queued or stored. Keys keep counting up, never reused. */
  async clear(): Promise<void> {
    this.#open = [];
    this.writer.discardAll();
    await this.writer.flush();
    try {
      await inTransaction<void>(this.store, 'readwrite', (s, done) => {
        const range = prefixRange(this.namespace);
        if (range === undefined) s.clear();
        else s.delete(range);
        done(undefined);
      });
      this.#saved = 0;
    } catch (err) {
      throw storageError(`clear the audit log in '${this.dbName}'`, err, AUDIT_STORE);
    }
  }
}
