/**
 * A decision store seen from outside: every write that changes what the store holds (a commit, a
 * policy-edit invalidation, a connection closing, a clear) is reported to an observer before it is
 * passed on. The run's invariants read these reports to know what each store held and when a
 * store lifetime ended; the store itself is untouched and answers exactly as before.
 */
import type { StoredDecision } from '../machine/types';
import type { DecisionStore, MaybePromise } from '../store/decision-store';

/** What happened to a lane's store. `opened` starts every lifetime afresh (a new, empty store). */
export type StoreEvent =
  | { type: 'opened'; scope: DecisionStore['scope'] }
  | { type: 'commit'; scope: DecisionStore['scope']; connection: string; decision: StoredDecision }
  | { type: 'invalidate'; server: string }
  | { type: 'close'; scope: DecisionStore['scope']; server: string; connection: string }
  | { type: 'clear' };

export type StoreObserver = (event: StoreEvent) => void;

/** Wrap `store` so that `observe` sees every change to it; reports `opened` at once. */
export function tapStore(store: DecisionStore, observe: StoreObserver): DecisionStore {
  observe({ type: 'opened', scope: store.scope });
  // A store that can say what is on disk (IndexedDB) keeps saying it through the tap.
  const status = (store as { status?: () => unknown }).status;
  return {
    ...(typeof status === 'function' ? { status: () => status.call(store) } : {}),
    get scope() {
      return store.scope;
    },
    lookup: (server, connection, identity, policyHash, now) =>
      store.lookup(server, connection, identity, policyHash, now),
    commit(connection: string, decision: StoredDecision): MaybePromise<void> {
      // A structured copy: what the machine handed over, not a live object it may still change.
      observe({ type: 'commit', scope: store.scope, connection, decision: { ...decision } });
      return store.commit(connection, decision);
    },
    invalidateServer(server: string) {
      observe({ type: 'invalidate', server });
      return store.invalidateServer(server);
    },
    closeConnection(server: string, connection: string) {
      observe({ type: 'close', scope: store.scope, server, connection });
      return store.closeConnection(server, connection);
    },
    // Sweeping drops entries that had already expired: their lifetimes ended at `expiresAt`.
    sweep: (now: number) => store.sweep(now),
    entries: () => store.entries(),
    count: () => store.count(),
    clear() {
      observe({ type: 'clear' });
      return store.clear();
    }
  };
}
