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
  /** Each record's write, by the host's record object (the frame waits for it). */
  #writes = new WeakMap<object, Promise<void>>();
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
    // Read when written, not now: the handler may still mark the record (failedClosed) in the
    // turn the host appended it.
    const record = (): HandlerAuditRecord =>
      this.#shadow ? Object.assign({}, r, { shadow: { outcome: r.outcome, reason: r.reason } }) : r;
    this.#pending++;
    const write =
      typeof target === 'string'
        ? this.#tail.then(() => this.#appendFile(target, line(record())))
        : this.#tail.then(() => target(record()));
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
    this.#writes.set(r, done);
    // The chain goes on after a failed write: the failure is that record's request's, not every
    // later one's.
    this.#tail = done.catch(() => {});
  }

  /** The write of the record the host appended (resolved when there is no target). */
  written(r: AuditRecord): Promise<void> {
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
