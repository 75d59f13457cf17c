/**
 * A decision store seen from outside: every write that changes what the store holds (a commit, a
 * policy-edit invalidation, a connection closing, a clear) is reported to an observer before it is
 * passed on. The run's invariants read these reports to know what each store held and when a
 * store lifetime ended; the store itself is untouched and answers exactly as before.
 */
import { copyable } from '../../machine/clone';
import type { StoredDecision } from '../../machine/types';
import { liveDecisions, type DecisionStore, type MaybePromise } from '../../store/decision-store';

/**
 * What happened to a lane's store. `opened` starts every lifetime afresh; `held` is what the store
 * already holds when it is handed to the run (a reload's durable namespace), else empty.
 */
export type StoreEvent =
  | { type: 'opened'; scope: DecisionStore['scope']; held: readonly StoredDecision[] }
  | { type: 'commit'; scope: DecisionStore['scope']; connection: string; decision: StoredDecision }
  | { type: 'invalidate'; server: string }
  | { type: 'close'; scope: DecisionStore['scope']; server: string; connection: string }
  | { type: 'clear' };

export type StoreObserver = (event: StoreEvent) => void;

/** A store whose changes an observer sees (see {@link tapStore}). */
export class TappedStore implements DecisionStore {
  /** A store that can say what is on disk (IndexedDB) keeps saying it through the tap. */
  readonly status?: () => unknown;

  constructor(
    readonly inner: DecisionStore,
    readonly observe: StoreObserver
  ) {
    const status = (inner as { status?: () => unknown }).status;
    if (typeof status === 'function') this.status = () => status.call(inner);
  }

  get scope() {
    return this.inner.scope;
  }
  lookup(server: string, connection: string, identity: string, policyHash: string, now: number) {
    return this.inner.lookup(server, connection, identity, policyHash, now);
  }
  commit(connection: string, decision: StoredDecision): MaybePromise<void> {
    // A structured copy: what the machine handed over, not a live object it may still change.
    this.observe({
      type: 'commit',
      scope: this.inner.scope,
      connection,
      decision: { ...decision }
    });
    return this.inner.commit(connection, decision);
  }
  invalidateServer(server: string) {
    this.observe({ type: 'invalidate', server });
    return this.inner.invalidateServer(server);
  }
  closeConnection(server: string, connection: string) {
    this.observe({ type: 'close', scope: this.inner.scope, server, connection });
    return this.inner.closeConnection(server, connection);
  }
  // Sweeping drops entries that had already expired: their lifetimes ended at `expiresAt`.
  sweep(now: number) {
    return this.inner.sweep(now);
  }
  entries() {
    return this.inner.entries();
  }
  count() {
    return this.inner.count();
  }
  liveCount(now: number): number {
    return liveDecisions(this.inner, now);
  }
  clear() {
    this.observe({ type: 'clear' });
    return this.inner.clear();
  }
}
// An engine's copy taps its own copy of the store (lane.ts `copyStore`): the copier meets a tap
// only there. Its observer and status are closures — copied by these rules, it would be refused.
copyable(TappedStore, { name: 'store-tap.TappedStore' });

/** Wrap `store` so that `observe` sees every change to it; reports `opened` at once. */
export function tapStore(store: DecisionStore, observe: StoreObserver): DecisionStore {
  // A store that answers later cannot say now what it holds: its hand-over goes unchecked.
  const held = store.entries();
  observe({ type: 'opened', scope: store.scope, held: Array.isArray(held) ? held : [] });
  return new TappedStore(store, observe);
}
