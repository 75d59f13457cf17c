/**
 * Where the handler's audit records go: a callback, or a file path appended as JSON Lines (the
 * lab's audit JSONL: keys in the lab's order, one record a line, what the lab's audit import
 * reads). Writes are serial and batched (`AuditSink`), so the file's order is the decisions'
 * order; every request's frame waits for its own record to be written (nothing reaches a server
 * unrecorded), and a record that cannot be written fails that request closed (handler.ts).
 */
import { orderRecord } from '../store/audit-export';
import type { AuditLog } from '../store/audit-log';
import type { AuditRecord, Outcome } from '../machine/types';

/** A record in the lab's audit format; in shadow mode it says the verdict was not enforced. */
export type HandlerAuditRecord = AuditRecord & {
  /**
   * Shadow mode: the outcome and reason are the policy's verdict, which the handler did not
   * enforce — the server was sent the model's result whatever they say.
   */
  shadow?: { outcome: Outcome; reason: string | null };
  /**
   * The decision could not be stored, so the server was sent this error instead of what
   * `outcome` says (a shipped handler fails closed; see guard.ts).
   */
  failedClosed?: { code: number; message: string };
};

export type AuditTarget = string | ((record: HandlerAuditRecord) => void | Promise<void>);

function line(r: HandlerAuditRecord): string {
  const ordered = orderRecord(r) as HandlerAuditRecord;
  if (r.shadow) ordered.shadow = { outcome: r.shadow.outcome, reason: r.shadow.reason };
  if (r.failedClosed)
    ordered.failedClosed = { code: r.failedClosed.code, message: r.failedClosed.message };
  return JSON.stringify(ordered) + '\n';
}

/** Told once when a record's write ends (handler.ts's request: it then answers, or fails). */
export interface WriteListener {
  written(): void;
  failed(error: unknown): void;
}

/**
 * What a batch is scheduled on: a microtask, as `RESOLVED.then(fn)`. Not `queueMicrotask`,
 * which in Node makes an AsyncResource and a bound function per call (about a kilobyte).
 */
const RESOLVED = Promise.resolve();

function isPromise(v: unknown): v is Promise<unknown> {
  return typeof (v as Promise<unknown> | undefined)?.then === 'function';
}

/**
 * Records are queued as they are appended and written in batches: the records of one turn in
 * one go (a microtask after the turn that appended them — the handler may still mark a record,
 * `failedClosed`, in that turn), and a file's in one append per batch, the next batch queueing
 * while one is being written (a group write). A callback gets the records one at a time, in
 * order, each after the one before it was written (a promise it returns is waited for). Why
 * batches: a chain of promises per record (the write, its bookkeeping, the request's wait on it)
 * was a measurable share of a handler request; now a record costs a queue slot and its
 * listener's call. Order and content are as before: the decisions' order, each record as the
 * lab writes it.
 */
export class AuditSink implements AuditLog {
  readonly #target: AuditTarget | undefined;
  readonly #shadow: boolean;
  /** Appended, not yet being written: flat (record, listener or null) pairs, in order. */
  #queue: unknown[] = [];
  /** A microtask to write the queue is due. */
  #scheduled = false;
  /** A batch is being written (a file append, or a callback's promise): the queue waits. */
  #busy = false;
  /** Resolved when nothing is queued or being written (`flush`); made only when asked for. */
  #drained: { promise: Promise<void>; resolve: () => void } | null = null;
  #written = 0;
  /** Records appended and not yet written (or failed): the audit queue. */
  #pending = 0;
  #append: ((path: string, data: string) => Promise<void>) | null = null;
  /** `#writeQueue`, bound once: scheduled as a resolved promise's reaction (see `RESOLVED`). */
  readonly #write = () => this.#writeQueue();

  constructor(target: AuditTarget | undefined, shadow: boolean) {
    if (target !== undefined && typeof target !== 'string' && typeof target !== 'function')
      throw new Error('createSamplingPolicy: audit must be a file path or a function');
    this.#target = target;
    this.#shadow = shadow;
  }

  append(r: AuditRecord): void {
    if (this.#target === undefined) return;
    this.#pending++;
    this.#queue.push(r, null);
    if (!this.#scheduled && !this.#busy) {
      this.#scheduled = true;
      void RESOLVED.then(this.#write);
    }
  }

  /**
   * Tell `listener` when the record the host appended has been written (at once when there is
   * no target). Ask in the turn the host appended it, as handler.ts does; a record not queued
   * any more (asked for late) counts as written.
   */
  whenWritten(r: AuditRecord, listener: WriteListener): void {
    const q = this.#queue;
    // The record asked for is nearly always the last one appended.
    for (let i = q.length - 2; i >= 0; i -= 2)
      if (q[i] === r) {
        q[i + 1] = listener;
        return;
      }
    listener.written();
  }

  /** The record as written: in shadow mode, with what the policy would have done. */
  #record(r: AuditRecord): HandlerAuditRecord {
    return this.#shadow
      ? Object.assign({}, r, { shadow: { outcome: r.outcome, reason: r.reason } })
      : r;
  }

  /** Write what is queued: one batch (see the class's comment). */
  #writeQueue(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    if (batch.length === 0) return this.#idle();
    this.#queue = [];
    const target = this.#target!;
    if (typeof target === 'string') {
      let data = '';
      for (let i = 0; i < batch.length; i += 2) data += line(this.#record(batch[i] as AuditRecord));
      this.#busy = true;
      this.#appendFile(target, data).then(
        () => this.#batchDone(batch, 0, undefined, false),
        (e: unknown) => this.#batchDone(batch, 0, e, true)
      );
      return;
    }
    this.#callbacks(target, batch, 0);
  }

  /** Hand `batch` from `i` on to the callback, waiting for a promise it returns. */
  #callbacks(
    target: (record: HandlerAuditRecord) => void | Promise<void>,
    batch: unknown[],
    i: number
  ): void {
    for (; i < batch.length; i += 2) {
      let result: unknown;
      try {
        result = target(this.#record(batch[i] as AuditRecord));
      } catch (e) {
        this.#ended(batch, i, e, true);
        continue;
      }
      if (isPromise(result)) {
        this.#busy = true;
        const at = i;
        result.then(
          () => (this.#ended(batch, at, undefined, false), this.#callbacks(target, batch, at + 2)),
          (e: unknown) => (this.#ended(batch, at, e, true), this.#callbacks(target, batch, at + 2))
        );
        return;
      }
      this.#ended(batch, i, undefined, false);
    }
    this.#busy = false;
    this.#next();
  }

  /** A file batch's append ended: every record in it was written, or none was. */
  #batchDone(batch: unknown[], from: number, error: unknown, failed: boolean): void {
    for (let i = from; i < batch.length; i += 2) this.#ended(batch, i, error, failed);
    this.#busy = false;
    this.#next();
  }

  /** The record at `i` was written (or failed): its request is told. */
  #ended(batch: unknown[], i: number, error: unknown, failed: boolean): void {
    this.#pending--;
    if (!failed) this.#written++;
    const listener = batch[i + 1] as WriteListener | null;
    if (listener === null) return;
    if (failed) listener.failed(error);
    else listener.written();
  }

  /** A batch is done: the next one, if records queued meanwhile; else say so to `flush`. */
  #next(): void {
    if (this.#queue.length > 0) {
      if (!this.#scheduled) {
        this.#scheduled = true;
        void RESOLVED.then(this.#write);
      }
    } else this.#idle();
  }

  #idle(): void {
    if (this.#busy || this.#scheduled || this.#queue.length > 0) return;
    const d = this.#drained;
    this.#drained = null;
    d?.resolve();
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.#pending;
  }

  /** Every record appended so far has been written (or failed). */
  flush(): Promise<void> {
    if (!this.#busy && !this.#scheduled && this.#queue.length === 0) return Promise.resolve();
    if (!this.#drained) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#drained = { promise, resolve };
    }
    return this.#drained.promise;
  }

  async #appendFile(path: string, data: string): Promise<void> {
    // Loaded on first use: a handler that logs to a callback runs where there is no filesystem.
    if (!this.#append) {
      const fs = await import('node:fs/promises');
      this.#append = (p, d) => fs.appendFile(p, d, 'utf8');
    }
    await this.#append(path, data);
  }

  all(): AuditRecord[] {
    throw new Error('the handler keeps no audit records in memory: they go to its audit target');
  }
  clear(): void {}
  count(): number {
    return this.#written;
  }
}
