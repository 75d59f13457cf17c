/**
 * The decision store (SPEC §4): the interface both scopes implement and the logic they share.
 *
 * It stores a verdict and a reason, never a completion. A hit on an unexpired entry replays the
 * verdict; its `represented` counter goes up and feeds the retry-loop alert, never the answer.
 *
 * Everything here is pure: time is a `now` parameter in virtual ms, never the wall clock.
 */
import type { StoredDecision } from '../machine/types';

/**
 * A value or a promise of it. The memory store returns plain values so the simulation engine can
 * run hundreds of thousands of requests without a microtask per lookup; the IndexedDB store
 * returns promises. Callers that accept either `await` the result (awaiting a plain value is fine).
 */
export type MaybePromise<T> = T | Promise<T>;

/**
 * A lookup hit: `represented` has already been incremented. The retry-loop alert is not the
 * store's: it reads the host's presentation history (client/presentations.ts), which outlives entries.
 */
export interface LookupResult {
  decision: StoredDecision;
}

/** Where decisions live: `connection` evaporates with the transport, `durable` outlives it. */
export type { StoreScope } from '../machine/vocabulary';
import type { StoreScope } from '../machine/vocabulary';

export interface DecisionStore {
  readonly scope: StoreScope;
  /**
   * Hit = an unexpired entry for (server, identity) whose policyHash equals the current one. A hit
   * increments `represented` (counted, never part of the answer). Expired or stale-hash entries are misses and
   * are deleted. `connection` is ignored by the durable scope.
   */
  lookup(
    server: string,
    connection: string,
    identity: string,
    policyHash: string,
    now: number
  ): MaybePromise<LookupResult | null>;
  /** Commit a verdict (never a completion). Resolves once it is stored — the machine sends the frame only after. */
  commit(connection: string, decision: StoredDecision): MaybePromise<void>;
  /** A policy edit to this server's block: drop its entries only; returns how many. */
  invalidateServer(server: string): MaybePromise<number>;
  /** The server's connection closed. Connection scope: drop that connection's entries. Durable: nothing. */
  closeConnection(server: string, connection: string): MaybePromise<void>;
  /**
   * Drop every entry expired at `now` (virtual ms); returns how many. The engine calls it on the
   * virtual clock, so a long run keeps only live entries and "Stored decisions" counts those.
   */
  sweep(now: number): MaybePromise<number>;
  /** Every stored entry (expired ones included until a sweep, lookup or invalidation removes them). */
  entries(): MaybePromise<StoredDecision[]>;
  count(): MaybePromise<number>;
  /**
   * Entries that still answer at `now` (`isLive`), counted without the array `entries` makes:
   * the run's view checkpoints count them ~20 times a second of live play at 1000×, over tens of
   * thousands of entries. Optional: without it, `entries()` is counted.
   */
  liveCount?(now: number): number;
  /** Drop everything; returns how many entries were dropped. */
  clear(): MaybePromise<number>;
}

/** One definition of expiry, shared with the machine that computes it. */
export { expiresAtFor } from '../machine/reasons';

/** Whether the entry has reached its expiry at `now` (an entry is dead *at* `expiresAt`, not after). */
export function isExpired(d: Pick<StoredDecision, 'expiresAt'>, now: number): boolean {
  return d.expiresAt !== null && now >= d.expiresAt;
}

/**
 * The approval a denial carried, as the "allowed, do not ask again" entry it becomes once the
 * denial has expired (a rate window, a budget window or a deadline was about *when*); null when
 * there is none or it has expired too.
 */
export function approvalAfter(d: StoredDecision, now: number): StoredDecision | null {
  const a = d.approval;
  if (!a || (a.expiresAt !== null && now >= a.expiresAt)) return null;
  return {
    server: d.server,
    identity: d.identity,
    verdict: 'allowed',
    reason: null,
    retryable: false,
    decidedAt: a.decidedAt,
    expiresAt: a.expiresAt,
    policyHash: d.policyHash,
    represented: d.represented,
    recent: []
  };
}

/**
 * What an entry answers at `now` under `policyHash`: itself while it lives, then the approval it
 * carried; null (drop it) when decided under another policy or nothing of it lives.
 */
export function answerOf(
  d: StoredDecision,
  policyHash: string,
  now: number
): StoredDecision | null {
  if (d.policyHash !== policyHash) return null;
  return isExpired(d, now) ? approvalAfter(d, now) : d;
}

/** Whether anything of the entry still answers at `now` (the denial, or the approval under it). */
export function isLive(d: StoredDecision, now: number): boolean {
  return !isExpired(d, now) || approvalAfter(d, now) !== null;
}

/**
 * A store's unexpired entries at `now` (expired ones linger until a sweep; they answer nothing):
 * its `liveCount` when it has one, else its `entries()` counted (0 for a store that answers only
 * asynchronously).
 */
export function liveDecisions(store: DecisionStore, now: number): number {
  if (store.liveCount) return store.liveCount(now);
  const all = store.entries();
  if (Array.isArray(all)) return all.filter((d) => isLive(d, now)).length;
  const n = store.count();
  return typeof n === 'number' ? n : 0;
}

/** Record one re-presentation on `d` (mutates it): `represented += 1`. */
export function recordPresentation(d: StoredDecision): void {
  d.represented += 1;
}

/** Whether a stored entry answers the current presentation; the reason it does not, if not. */
export function classifyEntry(
  d: StoredDecision,
  policyHash: string,
  now: number
): 'hit' | 'expired' | 'stale' {
  if (d.policyHash !== policyHash) return 'stale';
  if (isExpired(d, now)) return 'expired';
  return 'hit';
}

/**
 * A copy holding exactly the StoredDecision fields. Commits go through this so that a caller who
 * hands over a richer object (say, a decision spread together with its result) cannot smuggle a
 * completion into the store: the store holds a verdict and a reason, never content.
 */
export function toStoredDecision(d: StoredDecision): StoredDecision {
  const out: StoredDecision = {
    server: d.server,
    identity: flat(d.identity),
    verdict: d.verdict,
    reason: d.reason,
    retryable: d.retryable,
    decidedAt: d.decidedAt,
    expiresAt: d.expiresAt,
    policyHash: d.policyHash,
    represented: d.represented,
    recent: [...d.recent]
  };
  if (d.resetsAt !== undefined) out.resetsAt = d.resetsAt;
  if (d.retryAfterMs !== undefined) out.retryAfterMs = d.retryAfterMs;
  if (d.retryAt !== undefined) out.retryAt = d.retryAt;
  if (d.message !== undefined) out.message = d.message;
  if (d.approval !== undefined)
    out.approval = { decidedAt: d.approval.decidedAt, expiresAt: d.approval.expiresAt };
  return out;
}

/**
 * Read from so that `flat` is not a pure expression an optimising compiler may drop (it never
 * holds anything that matters).
 */
let _flatSink = 0;

/**
 * `s`, made one flat string in place. An identity is built by concatenation (its server, `:`, its
 * hex digest appended a word at a time: machine/sha256.ts), which the engine keeps as a tree of
 * partial strings, about ten objects and 350 bytes beside its 43 characters. A stored decision
 * lives for as long as its entry (a handler's memory store keeps every allowed one), and so would
 * the tree; reading a character flattens it (the engine copies the characters once and the tree's
 * parts die young). Same value: strings compare by their characters.
 */
function flat(s: string): string {
  _flatSink ^= s.charCodeAt(0);
  return s;
}

/** A light shape check for entries read back from storage written by an older build or by hand. */
export function isStoredDecision(v: unknown): v is StoredDecision {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Record<string, unknown>;
  return (
    typeof d.server === 'string' &&
    typeof d.identity === 'string' &&
    (d.verdict === 'allowed' || d.verdict === 'denied') &&
    (d.reason === null || typeof d.reason === 'string') &&
    typeof d.retryable === 'boolean' &&
    typeof d.decidedAt === 'number' &&
    (d.expiresAt === null || typeof d.expiresAt === 'number') &&
    typeof d.policyHash === 'string' &&
    typeof d.represented === 'number' &&
    Array.isArray(d.recent)
  );
}
