/**
 * The audit table's questions, answered in the simulation worker (issue #8: a bounded page at a
 * million rows). The worker keeps the whole log as a compact column index (36 bytes a row, see
 * store/audit-index.ts), whose older chunks go to IndexedDB too (issue #19: a week's run), and only
 * the most recent records in full; older records are read back from the run's audit log in
 * IndexedDB when a row is shown or exported. The page keeps a screenful of rows and asks for the
 * rest.
 *
 * The records it reads back are the ones written by the durable log; a record not yet on disk
 * (queued, or held after a storage failure) is never dropped from memory. What is only on disk can
 * still go missing from outside (site data cleared, the database deleted by another tab): a row
 * read back is checked against the index, the table says in words which rows are gone, and an
 * export holds every row that is really there and counts the rest. Plain logic: the worker plugs
 * in the IndexedDB reader, the unit tests an array.
 *
 * Just over 400 lines: the table's queries, its pages and the export read the same records the same
 * way (memory first, then disk, checked against the index); split, each would repeat that.
 */
import type { AuditRecord } from '$lib/machine/types';
import {
  AuditIndex,
  AuditSelection,
  type AuditIndexOptions,
  type ChunkStore,
  type RowPredicate
} from '$lib/store/audit-index';
import { toCsv, toJsonl } from '$lib/store/audit-format';
import type { AuditQuery } from '$lib/store/audit-query';
import { rowsBehind, type InvariantId } from '$lib/sim/checks/invariants';
import type { AuditFocusSpec, AuditView, AuditViewQuery } from '$lib/sim/session/protocol';

/**
 * Reads records back by row number (position in the log), in the order asked: one entry per row,
 * `undefined` for a row storage does not have.
 */
export type RecordReader = (rows: Uint32Array) => Promise<(AuditRecord | undefined)[]>;

/** Why rows read back were not there, when nothing more is known. */
const MISSING =
  "are no longer in this browser's storage (its site data was cleared, or a write failed)";

/** "rows 3–7" (1-based, as the table numbers them), or "4 rows between rows 3 and 90". */
function rowsText(rows: readonly number[]): string {
  const lo = rows[0]! + 1;
  const hi = rows[rows.length - 1]! + 1;
  if (rows.length === 1) return `row ${lo}`;
  if (hi - lo + 1 === rows.length) return `rows ${lo}–${hi}`;
  return `${rows.length} rows between rows ${lo} and ${hi}`;
}

export interface AuditServiceOptions {
  /** Full records kept in memory besides those not yet on disk. */
  window?: number;
  /** Rows sent with every view, for the end of the table. */
  tail?: number;
  /** The column index's chunks (rows each, chunks read back kept in memory). */
  index?: Omit<AuditIndexOptions, 'store'>;
  /**
   * Where the index's full chunks go for each run (null: they stay in memory). Called by every
   * reset with a new run's store; the previous one is not used again.
   */
  chunkStore?: (() => ChunkStore | null) | null;
}

export const DEFAULT_WINDOW = 5_000;
export const DEFAULT_TAIL = 64;
/** Rows serialised per export step (a Blob part each). */
const EXPORT_CHUNK = 5_000;

function focusPredicate(index: AuditIndex, f: AuditFocusSpec): RowPredicate {
  if (f.kind === 'rows') {
    const rows = new Set(f.rows);
    return (d, j) => {
      const x = index.facts(d, j);
      return rows.has(`${x.lane ?? ''}\u0000${x.seq}`);
    };
  }
  const id = f.id as InvariantId;
  return (d, j) => {
    const x = index.facts(d, j);
    // The fields rowsBehind reads, rebuilt from the columns.
    const r = {
      ...x,
      cost: x.costMicros > 0 ? '1' : '0',
      budgetDecision: x.hasActualCost ? { actualCost: {} } : null
    } as unknown as AuditRecord;
    return rowsBehind(id, f.status, r);
  };
}

export class AuditService {
  window: number;
  readonly tailSize: number;
  readonly #indexOptions: Omit<AuditIndexOptions, 'store'>;
  readonly #chunkStore: (() => ChunkStore | null) | null;
  #index: AuditIndex;
  /** Full records of rows `#recentFrom..`: the newest, and every one not yet on disk. */
  #recent: AuditRecord[] = [];
  #recentFrom = 0;
  #reader: RecordReader | null = null;
  #query: AuditViewQuery = {};
  #queryId = 0;
  #selection: AuditSelection;
  /** The selection's query had a time window but no first row to measure it from. */
  #windowPending = false;
  /** Bumped by every reset: an export or a read that spans one gives up instead of mixing runs. */
  #generation = 0;
  /** Rows below this were on disk only when the disk was lost: nowhere now. */
  #lostBelow = 0;
  /** Why: the loss in words (null: nothing was lost). Rows in memory then stay there. */
  #lostWhy: string | null = null;
  /** Told how many rows a read found missing from storage (the worker then checks the rest). */
  onMissing: ((rows: number) => void) | null = null;

  constructor(opts: AuditServiceOptions = {}) {
    this.window = Math.max(1, opts.window ?? DEFAULT_WINDOW);
    this.tailSize = Math.max(1, opts.tail ?? DEFAULT_TAIL);
    this.#indexOptions = opts.index ?? {};
    this.#chunkStore = opts.chunkStore ?? null;
    this.#index = this.#newIndex();
    this.#selection = AuditSelection.now(this.#index, {});
  }

  #newIndex(): AuditIndex {
    return new AuditIndex({ ...this.#indexOptions, store: this.#chunkStore?.() ?? null });
  }

  /** A new run: an empty log, read back through `reader` (null: nothing is on disk). */
  reset(reader: RecordReader | null): void {
    this.#generation += 1;
    this.#index = this.#newIndex();
    this.#recent = [];
    this.#recentFrom = 0;
    this.#reader = reader;
    this.#lostBelow = 0;
    this.#lostWhy = null;
    this.#windowPending = false;
    this.#selection = AuditSelection.now(this.#index, {});
    // The table's filters stay as they were: an empty log answers any of them at once.
    this.#selectNow();
  }

  /**
   * The log's storage was lost from outside (`why`, in words): rows held only there are gone, and
   * rows still in memory stay in memory for the rest of the run (nothing else holds them).
   */
  markLost(why: string): void {
    this.#lostBelow = Math.max(this.#lostBelow, this.#recentFrom);
    this.#lostWhy = why;
  }

  get size(): number {
    return this.#index.size;
  }

  /**
   * Keep the first `rows` rows (a seek back restored in place: the run's log was cut to them).
   * Reads under way answer for the old rows, so they are dropped (the generation moves on).
   */
  async truncate(rows: number): Promise<void> {
    if (rows >= this.#index.size) return;
    this.#generation += 1;
    await this.#index.truncate(rows);
    this.#lostBelow = Math.min(this.#lostBelow, rows);
    if (rows <= this.#recentFrom) {
      this.#recent = [];
      this.#recentFrom = rows;
    } else this.#recent.length = rows - this.#recentFrom;
    await this.#select();
  }

  /**
   * Bytes of the column index in memory, its chunks (in memory, written to storage), and how
   * many full records are held (benchmark figures and the bound's tests).
   */
  get memory(): {
    indexBytes: number;
    indexChunks: number;
    indexChunksInMemory: number;
    indexChunksStored: number;
    recordsHeld: number;
  } {
    const ix = this.#index;
    return {
      indexBytes: ix.bytes,
      indexChunks: ix.chunkCount,
      indexChunksInMemory: ix.residentChunks,
      indexChunksStored: ix.storedChunks,
      recordsHeld: this.#recent.length
    };
  }

  /** Why the column index could not leave memory (its chunks failed to be written), or null. */
  get indexSpillFailure(): string | null {
    return this.#index.spillFailure;
  }

  /**
   * Take in new records. `notOnDisk` is how many of the newest rows (these included) are not on
   * disk yet: queued, or held after a storage failure. They stay in memory; with no reader, every
   * row does.
   */
  append(records: readonly AuditRecord[], notOnDisk: number): void {
    if (records.length > 0) {
      for (const r of records) this.#index.append(r);
      for (const r of records) this.#recent.push(r);
      // A time window waiting for the first row: every row is still in memory now.
      if (this.#windowPending) this.#selectNow();
      else this.#selection.update();
    }
    this.#evict(this.#index.size - notOnDisk);
  }

  /** Drop full records beyond the window once on disk (in batches, so not on every append). */
  #evict(onDisk: number): void {
    if (!this.#reader || this.#lostWhy !== null || this.#recent.length < 2 * this.window) return;
    const keepFrom = Math.min(onDisk, this.#index.size - this.window);
    const drop = keepFrom - this.#recentFrom;
    if (drop <= 0) return;
    this.#recent = this.#recent.slice(drop);
    this.#recentFrom = keepFrom;
  }

  /**
   * Replace the query; the answer is the view (with `id` as its query id). Chunks of the index
   * that left memory are read back for it; until then the view answers the previous query.
   */
  async setQuery(id: number, q: AuditViewQuery): Promise<AuditView> {
    const generation = this.#generation;
    const [abs, extra, pending] = this.#selectionArgs(q);
    const sel = await AuditSelection.over(this.#index, abs, extra);
    if (generation === this.#generation) {
      this.#query = q;
      this.#queryId = id;
      this.#selection = sel;
      this.#windowPending = pending;
    }
    return this.view();
  }

  /** The selection of the current query over the whole log (chunks read back as needed). */
  async #select(): Promise<void> {
    const generation = this.#generation;
    const [abs, extra, pending] = this.#selectionArgs(this.#query);
    const sel = await AuditSelection.over(this.#index, abs, extra);
    if (generation === this.#generation) {
      this.#selection = sel;
      this.#windowPending = pending;
    }
  }

  /** The same, when every row is in memory (an empty log, or the first rows of one). */
  #selectNow(): void {
    const [abs, extra, pending] = this.#selectionArgs(this.#query);
    this.#selection = AuditSelection.now(this.#index, abs, extra);
    this.#windowPending = pending;
  }

  /** The query in the index's terms; `pending`: it has a time window but no first row yet. */
  #selectionArgs(q: AuditViewQuery): [AuditQuery, RowPredicate | undefined, boolean] {
    const abs: AuditQuery = {};
    if (q.server !== undefined) abs.server = q.server;
    if (q.reason !== undefined) abs.reason = q.reason;
    if (q.model !== undefined) abs.model = q.model;
    if (q.outcome !== undefined) abs.outcome = q.outcome;
    if (q.lane !== undefined) abs.lane = q.lane;
    const hasWindow = q.fromMin !== undefined || q.toMin !== undefined;
    const index = this.#index;
    const pending = hasWindow && index.size === 0;
    if (index.size > 0) {
      const t0 = index.firstT;
      if (q.fromMin !== undefined) abs.from = t0 + q.fromMin * 60_000;
      if (q.toMin !== undefined) abs.to = t0 + q.toMin * 60_000;
    }
    const extra = q.focus ? focusPredicate(index, q.focus) : undefined;
    return [abs, extra, pending];
  }

  view(): AuditView {
    const sel = this.#selection;
    const index = this.#index;
    const last = sel.tail(this.tailSize, this.#recentFrom);
    const tail = last.rows.map((row) => this.#recent[row - this.#recentFrom]!);
    const n = index.size;
    return {
      queryId: this.#queryId,
      logSize: n,
      matching: sel.length,
      totals: sel.totals(),
      options: index.options(),
      firstTime: index.firstTime,
      spanMin: n > 0 ? Math.ceil((index.lastT - index.firstT) / 60_000) : 0,
      tail,
      tailStart: last.start
    };
  }

  /**
   * The full records of log rows `rows` (ascending), from memory or read back; `undefined` for a
   * row that is nowhere any more, with the rows it was and why.
   */
  async #records(
    rows: Uint32Array
  ): Promise<{ records: (AuditRecord | undefined)[]; missing: number[]; why: string }> {
    // `why` is said of the rows: "rows 3–7 of the audit log <why>", "they <why>".
    const generation = this.#generation;
    let cut = 0;
    while (cut < rows.length && rows[cut]! < this.#recentFrom) cut++;
    const recent = this.#recent;
    const from = this.#recentFrom;
    const lostBelow = this.#lostBelow;
    let why =
      this.#lostWhy === null ? MISSING : `were lost with this browser's storage: ${this.#lostWhy}`;
    let lost = 0;
    while (lost < cut && rows[lost]! < lostBelow) lost++;
    const out: (AuditRecord | undefined)[] = new Array<undefined>(lost);
    let failed: string | null = null;
    if (cut > lost) {
      const old = rows.subarray(lost, cut);
      try {
        out.push(...(await this.#readOld(old)));
      } catch (err) {
        // Storage refused the read (lost, say, before the worker heard of it): those rows are
        // not to be had now, which is said, not thrown.
        failed = err instanceof Error ? err.message.replace(/\.$/, '') : String(err);
        for (let j = 0; j < old.length; j++) out.push(undefined);
      }
    }
    if (generation !== this.#generation) throw new Error('a new run replaced the audit log');
    for (let j = cut; j < rows.length; j++) out.push(recent[rows[j]! - from]!);
    const missing: number[] = [];
    for (let j = 0; j < cut; j++) if (out[j] === undefined) missing.push(rows[j]!);
    if (failed !== null) why = `could not be read back from this browser's storage (${failed})`;
    else if (missing.length > lost) {
      this.onMissing?.(missing.length - lost);
      if (lost === 0) why = MISSING;
    }
    return { records: out, missing, why };
  }

  /** Rows read back, each checked against the index: a row of another timeline is not this one. */
  async #readOld(rows: Uint32Array): Promise<(AuditRecord | undefined)[]> {
    if (!this.#reader) throw new Error('the older audit records are not stored anywhere');
    const got = await this.#reader(rows);
    const index = this.#index;
    const out: (AuditRecord | undefined)[] = [];
    for (let j = 0; j < rows.length;) {
      const k = Math.floor(rows[j]! / index.chunkRows);
      const [lo, hi] = index.chunkRange(k);
      const d = index.resident(k) ?? (await index.load(k));
      for (; j < rows.length && rows[j]! < hi; j++) {
        const row = rows[j]!;
        const r = got[j];
        if (r === undefined || row >= index.size) {
          out.push(undefined);
          continue;
        }
        const f = index.facts(d, row - lo);
        const same =
          r.seq === f.seq && (r.lane ?? null) === f.lane && r.t === index.tOf(d, row - lo);
        out.push(same ? r : undefined);
      }
    }
    return out;
  }

  /** Matches `from..to` of `sel`, unless a new run or a cut replaced the log meanwhile. */
  async #slice(sel: AuditSelection, from: number, to: number): Promise<Uint32Array> {
    const generation = this.#generation;
    const rows = await sel.slice(from, to);
    if (generation !== this.#generation) throw new Error('a new run replaced the audit log');
    return rows;
  }

  /** Matching rows `start..start+count` of the current query (for the table's window). */
  async rows(start: number, count: number): Promise<{ queryId: number; rows: AuditRecord[] }> {
    const queryId = this.#queryId;
    const got = await this.#records(await this.#slice(this.#selection, start, start + count));
    if (got.missing.length > 0)
      throw new Error(`${rowsText(got.missing)} of the audit log ${got.why}`);
    return { queryId, rows: got.records as AuditRecord[] };
  }

  /**
   * Every matching row as a JSONL or CSV file, built from parts (a Blob per chunk, so the file is
   * never one giant string). Rows appended after the call are not in it. A row that is nowhere
   * any more (see the class comment) is left out, counted in `missing`, and `why` says why.
   */
  async exportFile(
    kind: 'jsonl' | 'csv',
    onProgress: (done: number, of: number) => void
  ): Promise<{ blob: Blob; rows: number; missing: number; why: string | null }> {
    const sel = this.#selection;
    const of = sel.length;
    const header = toCsv([]);
    const parts: Blob[] = kind === 'csv' ? [new Blob([header])] : [];
    let missing = 0;
    let why: string | null = null;
    for (let i = 0; i < of; i += EXPORT_CHUNK) {
      const got = await this.#records(await this.#slice(sel, i, Math.min(of, i + EXPORT_CHUNK)));
      const chunk =
        got.missing.length > 0 ? got.records.filter((r) => r !== undefined) : got.records;
      if (got.missing.length > 0) {
        missing += got.missing.length;
        why ??= `they ${got.why}`;
      }
      const rows = chunk as AuditRecord[];
      const text = kind === 'jsonl' ? toJsonl(rows) : toCsv(rows).slice(header.length);
      parts.push(new Blob([text]));
      onProgress(Math.min(of, i + EXPORT_CHUNK), of);
    }
    const type = kind === 'jsonl' ? 'application/x-ndjson' : 'text/csv;charset=utf-8';
    return { blob: new Blob(parts, { type }), rows: of - missing, missing, why };
  }
}
