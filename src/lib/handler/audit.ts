/**
 * Where the handler's audit records go: a callback, or a file path appended as JSON Lines (the
 * lab's audit JSONL: keys in the lab's order, one record a line, what the lab's audit import
 * reads). Writes are serial, so the file's order is the decisions' order; every request's frame
 * waits for its own record to be written (nothing reaches a server unrecorded), and a record that
 * cannot be written fails that request closed (handler.ts).
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

export class AuditSink implements AuditLog {
  readonly #target: AuditTarget | undefined;
  readonly #shadow: boolean;
  /**
   * Each record's write, by the host's record object (the frame waits for it). The latest
   * append's is kept aside: the handler asks for it in the same turn the host appended it (the
   * host appends, then hands the record over), so a record asked for before the next append
   * never enters the weak map — an entry per request in a WeakMap is garbage the collector has
   * to trace specially. One not asked for by then moves into the map.
   */
  #writes = new WeakMap<object, Promise<void>>();
  #lastRecord: object | null = null;
  #lastWrite: Promise<void> | null = null;
  #lastAsked = false;
  #tail: Promise<void> = Promise.resolve();
  #written = 0;
  /** Records appended and not yet written (or failed): the audit queue. */
  #pending = 0;
  #append: ((path: string, data: string) => Promise<void>) | null = null;

  constructor(target: AuditTarget | undefined, shadow: boolean) {
    if (target !== undefined && typeof target !== 'string' && typeof target !== 'function')
      throw new Error('createSamplingPolicy: audit must be a file path or a function');
    this.#target = target;
    this.#shadow = shadow;
  }

  append(r: AuditRecord): void {
    const target = this.#target;
    if (target === undefined) return;
    this.#pending++;
    // Read when written, not now (`#record`): the handler may still mark the record
    // (failedClosed) in the turn the host appended it.
    const write =
      typeof target === 'string'
        ? this.#tail.then(() => this.#appendFile(target, line(this.#record(r))))
        : this.#tail.then(() => target(this.#record(r)));
    const done = write.then(
      () => {
        this.#pending--;
        this.#written++;
      },
      (e: unknown) => {
        this.#pending--;
        throw e;
      }
    );
    if (this.#lastRecord !== null && !this.#lastAsked)
      this.#writes.set(this.#lastRecord, this.#lastWrite!);
    this.#lastRecord = r;
    this.#lastWrite = done;
    this.#lastAsked = false;
    // The chain goes on after a failed write: the failure is that record's request's, not every
    // later one's.
    this.#tail = done.catch(() => {});
  }

  /** The record as written: in shadow mode, with what the policy would have done. */
  #record(r: AuditRecord): HandlerAuditRecord {
    return this.#shadow
      ? Object.assign({}, r, { shadow: { outcome: r.outcome, reason: r.reason } })
      : r;
  }

  /**
   * The write of the record the host appended (resolved when there is no target). Ask once per
   * record: handler.ts does, in the turn the host hands the record over. A record asked for a
   * second time after a later append is no longer known, and gets a resolved promise.
   */
  written(r: AuditRecord): Promise<void> {
    if (r === this.#lastRecord) {
      this.#lastAsked = true;
      return this.#lastWrite!;
    }
    return this.#writes.get(r) ?? Promise.resolve();
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.#pending;
  }

  /** Every write started so far has finished (failed ones included). */
  flush(): Promise<void> {
    return this.#tail;
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
