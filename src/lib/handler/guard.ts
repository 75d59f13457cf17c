/**
 * The handler's own bounds and failure reporting (issue #20 item 7): what stands between a
 * hostile or broken world and a silent allow.
 *
 * - {@link GuardedStore} wraps the decision store. A commit that throws or rejects (disk full,
 *   permissions, a store at its bound) is remembered for the request that made it, so the handler
 *   fails that request closed with -32603 — the lab's host, by design, still sends a frame when a
 *   commit fails (a lesson shows why), but a shipped client must not serve a decision it could not
 *   keep. A store holding `maxStoredDecisions` entries after a sweep refuses new commits the same
 *   way: a server flooding distinct requests meets a full store, not an unbounded one.
 * - {@link HandlerLimits}: the bounds and their defaults.
 */
import type { StoredDecision } from '../machine/types';
import type { DecisionStore, LookupResult, MaybePromise } from '../store/decision-store';
import type { JsonRpcId } from '../machine/types';
import { HandlerConfigError } from './options';

export interface HandlerLimits {
  /**
   * Requests one connection may have in flight (waiting for a dialog, a model call, a stored
   * decision or its audit record); past it a request is refused at once with -32603. Default 1,000.
   */
  maxInFlight?: number;
  /** Decisions the store may hold (live ones, after a sweep); past it a commit fails closed. Default 100,000. */
  maxStoredDecisions?: number;
}

export const DEFAULT_LIMITS: Required<HandlerLimits> = {
  maxInFlight: 1_000,
  maxStoredDecisions: 100_000
};

export function validLimits(input: unknown): Required<HandlerLimits> {
  if (input === undefined) return { ...DEFAULT_LIMITS };
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new HandlerConfigError('limits', [{ path: '$.limits', message: 'not an object' }]);
  const out = { ...DEFAULT_LIMITS };
  const errors: { path: string; message: string }[] = [];
  for (const [k, v] of Object.entries(input)) {
    if (!(k in DEFAULT_LIMITS)) {
      errors.push({ path: `$.limits.${k}`, message: 'unknown limit' });
      continue;
    }
    if (!Number.isSafeInteger(v) || (v as number) < 1)
      errors.push({ path: `$.limits.${k}`, message: 'not a positive integer' });
    else out[k as keyof HandlerLimits] = v as number;
  }
  if (errors.length > 0) throw new HandlerConfigError('limits', errors);
  return out;
}

/** What failed, for the log line and an `onError` callback. */
export interface HandlerErrorContext {
  /** `store`: a decision could not be kept (or read); `audit`: a record could not be written;
   *  `flood`: a connection went past `limits.maxInFlight`. */
  kind: 'store' | 'audit' | 'flood';
  server: string;
  connection: string;
  requestId?: JsonRpcId;
}

export type OnError = (error: Error, where: HandlerErrorContext) => void;

/** The default `onError`: one line on stderr saying where, what, and what the server was sent. */
export function logError(error: Error, w: HandlerErrorContext): void {
  const req = w.requestId === undefined ? '' : ` request ${JSON.stringify(w.requestId)}`;
  console.error(
    `sampling-policy-lab: ${w.kind} failure on ${w.connection}${req}: ${error.message}` +
      (w.kind === 'flood' ? '' : ' (answered -32603, nothing served)')
  );
}

function isPromise<T>(v: MaybePromise<T>): v is Promise<T> {
  return typeof (v as Promise<T> | undefined)?.then === 'function';
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

const key = (connection: string, server: string, identity: string) =>
  `${connection}\u0000${server}\u0000${identity}`;

export class GuardedStore implements DecisionStore {
  readonly #inner: DecisionStore;
  readonly #max: number;
  readonly #now: () => number;
  /** Commits that failed, by (connection, server, identity), until their request answers. */
  readonly #failed = new Map<string, Error>();

  constructor(inner: DecisionStore, maxStoredDecisions: number, now: () => number) {
    this.#inner = inner;
    this.#max = maxStoredDecisions;
    this.#now = now;
  }

  get scope() {
    return this.#inner.scope;
  }

  /** The commit failure of this request's decision, once (null when it was kept or never made). */
  takeFailure(connection: string, server: string, identity: string): Error | null {
    // Asked on every request; almost always nothing failed (no key to build and hash then).
    if (this.#failed.size === 0) return null;
    const k = key(connection, server, identity);
    const e = this.#failed.get(k);
    if (e === undefined) return null;
    this.#failed.delete(k);
    return e;
  }

  /** Failures remembered (a closed connection's are dropped with it). */
  get failures(): number {
    return this.#failed.size;
  }

  forgetConnection(connection: string): void {
    const prefix = `${connection}\u0000`;
    for (const k of this.#failed.keys()) if (k.startsWith(prefix)) this.#failed.delete(k);
  }

  lookup(
    server: string,
    connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): MaybePromise<LookupResult | null> {
    return this.#inner.lookup(server, connection, identity, policyHash, now);
  }

  commit(connection: string, decision: StoredDecision): MaybePromise<void> {
    try {
      this.#checkRoom();
      const r = this.#inner.commit(connection, decision);
      return isPromise(r) ? r.catch((e: unknown) => this.#fail(connection, decision, e)) : r;
    } catch (e) {
      return this.#fail(connection, decision, e);
    }
  }

  /** Remember a failed commit for the request that made it, and throw it on. */
  #fail(connection: string, decision: StoredDecision, e: unknown): never {
    const err = asError(e);
    this.#failed.set(key(connection, decision.server, decision.identity), err);
    throw err;
  }

  /** Throw when the store is at its bound even after dropping what has expired. */
  #checkRoom(): void {
    const n = this.#inner.count();
    if (typeof n !== 'number' || n < this.#max) return;
    const swept = this.#inner.sweep(this.#now());
    if (isPromise(swept)) swept.catch(() => {});
    const after = this.#inner.count();
    if (typeof after === 'number' && after >= this.#max)
      throw new Error(
        `the decision store holds ${after} live decisions, its bound (limits.maxStoredDecisions)`
      );
  }

  invalidateServer(server: string) {
    return this.#inner.invalidateServer(server);
  }
  closeConnection(server: string, connection: string) {
    return this.#inner.closeConnection(server, connection);
  }
  sweep(now: number) {
    return this.#inner.sweep(now);
  }
  entries() {
    return this.#inner.entries();
  }
  count() {
    return this.#inner.count();
  }
  clear() {
    return this.#inner.clear();
  }
}
