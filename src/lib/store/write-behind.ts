/**
 * Write-behind with group commit, shared by the durable decision store and the durable audit log.
 *
 * Changes are applied to memory at once by the owner and queued here; `flush()` writes every queued
 * change in one IndexedDB transaction. That is what lets the simulation fast-forward a day: one
 * transaction per batch instead of one per request.
 *
 * Honesty is the other half of the job (SPEC §4: never report a durable guarantee it does not
 * have). The owner learns what is on disk only through `committed(batch)`, called after the
 * transaction has committed, so anything it counts as saved really is. A failed batch goes back
 * to the front of the queue and the writer *holds*: it records the failure in plain words and
 * writes nothing more until `retry()` — a full disk is not hammered, no later batch can land ahead
 * of the failed one, and the owner can say how much is held in memory only.
 */
import { describeStorageError, type OpenFailureKind, type StorageLoss, type UseStore } from './idb';

/** A storage failure in words a learner can act on, plus the technical error for the console. */
export interface StorageFailure {
  kind: OpenFailureKind | 'timeout';
  /** Plain words: "the browser's storage for this site is full …". */
  words: string;
  /** The full message, naming the database and the error's name. */
  error: string;
}

/** Turn any thrown value into a {@link StorageFailure}. */
export function toFailure(thrown: unknown, what: string, storeName?: string): StorageFailure {
  // A store's own Error wraps the browser's; the browser's names the cause.
  const err = thrown instanceof Error && thrown.cause !== undefined ? thrown.cause : thrown;
  if (err instanceof Error && err.name === 'TimeoutError') {
    return {
      kind: 'timeout',
      words: 'the browser did not answer the storage request in time',
      error: `Could not ${what}: the browser did not answer in time.`
    };
  }
  const { kind, words } = describeStorageError(err, storeName);
  const name =
    typeof err === 'object' && err !== null && 'name' in err ? String(err.name) : 'Error';
  return { kind, words, error: `Could not ${what}: ${words} (${name}).` };
}

export interface WriteBehindOptions<Op> {
  /** Apply a batch in one transaction, in order; resolve once committed, reject if it did not. */
  write(batch: readonly Op[]): Promise<void>;
  /** Called after a batch has committed: the owner moves it to its "saved" view. */
  committed?(batch: readonly Op[]): void;
  /**
   * Ops with the same key coalesce (the later one wins, so a hot identity re-presented thousands
   * of times in a batch is written once); `null` marks a barrier (a range delete) that nothing
   * coalesces across. Without it every op is written.
   */
  keyOf?(op: Op): string | null;
  /** What a batch holds, for the error message: "decision change(s)". */
  noun: string;
  /** Ops written in one transaction at most (default MAX_BATCH). */
  maxBatch?: number;
  /** What one op holds, in `noun`s (default 1): `pendingWeight` and the error message count it. */
  weightOf?(op: Op): number;
  /** The object store name, for the error words. */
  storeName: string;
}

/** Ops written in one transaction at most; a longer queue is written in several, in order. */
export const MAX_BATCH = 5_000;

export class WriteBehind<Op> {
  readonly #opts: WriteBehindOptions<Op>;
  #queue: Op[] = [];
  /** Position in `#queue` of the latest op per key since the last barrier. */
  #latest = new Map<string, number>();
  #inFlight = 0;
  /** Batches committed so far (a long flush that commits is making progress). */
  #commits = 0;
  /** Each flush writes after the previous one settles, so batches land in order. */
  #tail: Promise<boolean> = Promise.resolve(true);
  #failure: StorageFailure | null = null;
  /** Bumped by `discardAll`: a batch failing after it must not come back. */
  #generation = 0;
  /** The batch being written, and the `discardAll` generation it was taken in. */
  #writing: { batch: Op[]; generation: number } | null = null;
  /** Bumped when a write that never settled is given up (see `fail`): its late answer is ignored. */
  #attempt = 0;

  constructor(opts: WriteBehindOptions<Op>) {
    this.#opts = opts;
  }

  /** Changes not yet committed (queued or being written now). */
  get pending(): number {
    return this.#queue.length + this.#inFlight;
  }

  /**
   * What the changes not yet committed (queued or being written now) hold, by `weightOf`: the
   * audit log's ops are chunks of rows, so this is its rows held. Walks the queue, for owners
   * whose ops are few.
   */
  get pendingWeight(): number {
    if (!this.#opts.weightOf) return this.pending;
    const inFlight = this.#inFlight > 0 && this.#writing ? this.#weigh(this.#writing.batch) : 0;
    return this.#weigh(this.#queue) + inFlight;
  }

  /** Batches committed so far: a flush still running whose count moves is writing, not stuck. */
  get commits(): number {
    return this.#commits;
  }

  /** The failure that stopped writing, or null while healthy. */
  get failure(): StorageFailure | null {
    return this.#failure;
  }

  enqueue(op: Op): void {
    const k = this.#opts.keyOf?.(op);
    if (k === undefined) {
      this.#queue.push(op);
      return;
    }
    if (k === null) {
      this.#latest.clear();
      this.#queue.push(op);
      return;
    }
    const at = this.#latest.get(k);
    if (at !== undefined) {
      this.#queue[at] = op;
      return;
    }
    this.#latest.set(k, this.#queue.length);
    this.#queue.push(op);
  }

  /** Replace everything queued by `op` (a clear: nothing queued before it can matter once it runs). */
  discardAll(op?: Op): void {
    this.#queue = [];
    this.#latest.clear();
    this.#generation += 1;
    if (op !== undefined) this.#queue.push(op);
  }

  /**
   * Drop the queued changes `stale` picks, then queue `op` (a cut of the log: rows queued beyond
   * it need not be written at all). For logs without keys (`keyOf` absent).
   */
  discardWhere(stale: (op: Op) => boolean, op: Op): void {
    this.#queue = this.#queue.filter((o) => !stale(o));
    this.#latest.clear();
    this.#queue.push(op);
  }

  /**
   * Write everything queued. Resolves true when every change queued before the call is committed,
   * false when storage has failed (now or earlier; see `failure`). Never rejects.
   */
  flush(): Promise<boolean> {
    // Failed: nothing is written until `retry()`, so say so now. Chained on the tail, the answer
    // waited for the batch in flight, which after a write that never settles (the reason for the
    // failure, marked from outside by the time limit) is for ever.
    if (this.#failure !== null) return Promise.resolve(false);
    const result = this.#tail.then(() => this.#writeQueued());
    this.#tail = result;
    return result;
  }

  /** Clear the failure and write everything held since. */
  retry(): Promise<boolean> {
    this.#failure = null;
    return this.flush();
  }

  /**
   * Mark the writer failed from outside: the worker's time limit on a write that never settles.
   * The batch being written is given up — back to the front of the queue, as a failed one — and
   * its answer, if it ever comes, is ignored: else `retry()` (on a fresh connection) would wait
   * behind a transaction that never answers, and with it the worker's command queue. Writing the
   * batch again is safe: puts and range deletes are idempotent, and a late commit of the old
   * transaction lands before the retry's (IndexedDB runs a store's writes in the order begun);
   * until the retry commits it is not counted as saved.
   */
  fail(failure: StorageFailure): void {
    this.#failure ??= failure;
    const w = this.#writing;
    if (w === null) return;
    this.#attempt += 1;
    this.#writing = null;
    this.#inFlight = 0;
    if (w.generation === this.#generation) this.#requeue(w.batch);
    this.#tail = Promise.resolve(false);
  }

  /**
   * The database was taken away from outside: that is why writing stopped, even if a batch failed
   * first (the browser aborts the transactions of a connection it closes, with an error that
   * reads like a disk fault).
   */
  lose(failure: StorageFailure): void {
    if (this.#failure?.kind !== 'lost') this.#failure = failure;
  }

  /** Resolves once the batch being written, if any, has committed or failed. */
  settled(): Promise<void> {
    return this.#tail.then(() => undefined);
  }

  async #writeQueued(): Promise<boolean> {
    // What is queued now, and no more: ops queued while this flush writes wait for the next one.
    // Chasing them, a flush under a run that never pauses (live play queues rows between its
    // transactions) never ended, and the worker paused play every 2 s to let it (memory-check.ts:
    // a commit that runs long), idle meanwhile.
    let left = this.#queue.length;
    for (;;) {
      if (this.#failure !== null) return false;
      if (this.#queue.length === 0 || left <= 0) return true;
      // At most MAX_BATCH ops (or the owner's maxBatch) per transaction: a backlog of a day's
      // audit rows written at once kept the worker's thread in `put` calls for seconds, and every
      // command waited behind it.
      const all = this.#queue;
      const take = Math.min(all.length, this.#opts.maxBatch ?? MAX_BATCH, left);
      left -= take;
      const batch = take < all.length ? all.slice(0, take) : all;
      this.#queue = take < all.length ? all.slice(take) : [];
      // Positions moved: the ops still queued no longer coalesce with later ones (a later op on
      // the same key is queued after them, so the last write still wins).
      this.#latest.clear();
      const generation = this.#generation;
      const attempt = this.#attempt;
      this.#inFlight = batch.length;
      this.#writing = { batch, generation };
      try {
        await this.#opts.write(batch);
        // Given up while it was being written (`fail`): it is queued again, counted then.
        if (attempt !== this.#attempt) return false;
        this.#commits += 1;
        this.#opts.committed?.(batch);
      } catch (err) {
        if (attempt !== this.#attempt) return false;
        if (generation === this.#generation) this.#requeue(batch);
        this.#failure ??= toFailure(
          err,
          `write ${this.#weigh(batch)} ${this.#opts.noun}`,
          this.#opts.storeName
        );
        return false;
      } finally {
        if (attempt === this.#attempt) {
          this.#inFlight = 0;
          this.#writing = null;
        }
      }
    }
  }

  #weigh(ops: readonly Op[]): number {
    const weightOf = this.#opts.weightOf;
    if (!weightOf) return ops.length;
    let n = 0;
    for (const op of ops) n += weightOf(op);
    return n;
  }

  /**
   * Put a failed batch back in front of what was queued since, compacted: between two barriers,
   * ops on different keys commute, so only the last op per key is kept. While storage is down a
   * looping identity therefore costs one queued op, not one per presentation.
   */
  #requeue(batch: Op[]): void {
    const all = batch.concat(this.#queue);
    const keyOf = this.#opts.keyOf;
    this.#latest.clear();
    if (keyOf === undefined) {
      this.#queue = all;
      return;
    }
    const out: Op[] = [];
    let segment = new Map<string, Op>();
    const close = () => {
      for (const op of segment.values()) out.push(op);
      segment = new Map();
    };
    for (const op of all) {
      const k = keyOf(op);
      if (k === null) {
        close();
        out.push(op);
      } else {
        segment.delete(k);
        segment.set(k, op);
      }
    }
    const start = out.length;
    let i = start;
    for (const k of segment.keys()) this.#latest.set(k, i++);
    close();
    this.#queue = out;
  }
}

/**
 * An IndexedDB object store written behind: what the durable decision store and the durable audit
 * log share. The owner applies a change to memory, queues it on `writer`, and says how a batch is
 * written (`writeBatch`, inside one transaction on `store`) and what a committed batch means to
 * it (`committedBatch`).
 */
export abstract class WrittenBehind<Op> {
  /** The open object store; replaced by {@link reattach} after a lost connection. */
  protected store: UseStore;
  protected readonly writer: WriteBehind<Op>;

  protected constructor(
    store: UseStore,
    opts: Omit<WriteBehindOptions<Op>, 'write' | 'committed'>
  ) {
    this.store = store;
    this.writer = new WriteBehind<Op>({
      ...opts,
      write: (batch) => this.writeBatch(batch),
      committed: (batch) => {
        this.committedBatch(batch);
        this.onCommit?.();
      }
    });
  }

  /**
   * Called after each committed batch, once the store's counts say so: a long queue is written
   * in many batches, and the page can show it going down batch by batch (a reload's restored
   * audit rows: "M of N saved so far") rather than only once all of it is written.
   */
  onCommit: (() => void) | null = null;

  /** Apply a batch in one transaction on `store`; resolve once committed. */
  protected abstract writeBatch(batch: readonly Op[]): Promise<void>;
  /** A batch is on disk: move it to the "saved" view. */
  protected abstract committedBatch(batch: readonly Op[]): void;

  /**
   * Write every queued change in one transaction. Resolves true once everything queued before the
   * call is on disk; false when storage has failed (see `status().failure`). Never rejects.
   */
  flush(): Promise<boolean> {
    return this.writer.flush();
  }

  /** Try again after a failure: write everything held in memory since. */
  retry(): Promise<boolean> {
    return this.writer.retry();
  }

  /** Batches committed so far (see {@link WriteBehind.commits}). */
  get writeProgress(): number {
    return this.writer.commits;
  }

  /** Point at a freshly opened database (after the old connection was lost) before a retry. */
  reattach(store: UseStore): void {
    this.store = store;
  }

  /** Whether this store writes through `store` (a loss of another connection is not its own). */
  attachedTo(store: UseStore): boolean {
    return this.store === store;
  }

  /** Saved items found gone from disk since the store was opened (see {@link recount}). */
  protected lostCount = 0;

  /**
   * The database was lost from outside (deleted by another tab, closed by the browser when its
   * site data was cleared): stop writing and say why at once, before anything is read back.
   */
  lose(loss: StorageLoss): void {
    this.writer.lose({ kind: 'lost', words: loss.words, error: `Storage lost: ${loss.words}.` });
  }

  /**
   * Read back what is left of this store's items on disk through `fresh` (a new connection; null:
   * none could be opened, so nothing can be counted as saved) once the batch in flight has
   * settled. What was counted as saved and is gone is counted as lost and no longer as saved.
   */
  async recount(fresh: UseStore | null): Promise<void> {
    await this.writer.settled();
    this.lostCount += await this.compareWithDisk(fresh);
  }

  /**
   * Stop counting as saved whatever `disk` no longer holds (all of it when `disk` is null or
   * cannot be read); returns how many of the items this page still uses that was.
   */
  protected abstract compareWithDisk(disk: UseStore | null): Promise<number>;

  /** Mark the store failed from outside (the worker's time limit on a write that never settles). */
  fail(failure: StorageFailure): void {
    this.writer.fail(failure);
  }

  /**
   * Forget every change not yet written (a batch already being written still lands). For a
   * namespace nothing will read again: a run the learner rewound leaves its old branch behind, and
   * writing its backlog would only hold up the new branch's storage behind it.
   */
  abandon(): void {
    this.writer.discardAll();
  }
}
