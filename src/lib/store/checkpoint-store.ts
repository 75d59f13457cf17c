/**
 * A durable store kept outside the engine — the browser's, in IndexedDB (cached-durable-store.ts)
 * — as an engine checkpoint holds it (issue #21, checkpoint-memo.ts).
 *
 * Such a store cannot be copied by its rules (its writer and database are the page's), so an engine
 * copy puts its decisions into a store of its own (sim/engine/lane.ts `copyStore`). For a
 * checkpoint, which is never run and only copied again, that would be a full copy of every
 * decision, maps and expiry heap included, each time (about 15 MiB over a day of the retry storm in
 * the browser). It holds them as a flat list instead, in the store's order, each decision a copy
 * shared with the checkpoints before while its value is the same — as the stores the engine copies
 * itself hold theirs (connection-store.ts). A copy of the checkpoint (a restore) puts the list into
 * the run's store again, or into one in memory, exactly as it put the store's entries before.
 */
import type { StoredDecision } from '../machine/types';
import type { DecisionStore } from './decision-store';
import { DECISION_LIST } from './connection-store';
import type { CheckpointMemo } from './checkpoint-memo';

function frozenStore(): never {
  throw new Error("an engine checkpoint's store is never run: copy the checkpoint to run it");
}

/** A durable store's decisions in an engine checkpoint: a list, read only. */
export class CheckpointDecisions implements DecisionStore {
  readonly scope = 'durable' as const;
  constructor(private readonly decisions: readonly StoredDecision[]) {}
  lookup(): never {
    frozenStore();
  }
  commit(): never {
    frozenStore();
  }
  invalidateServer(): never {
    frozenStore();
  }
  closeConnection(): never {
    frozenStore();
  }
  sweep(): never {
    frozenStore();
  }
  clear(): never {
    frozenStore();
  }
  /** The store's entries when the checkpoint was taken, in its order. */
  entries(): StoredDecision[] {
    return this.decisions.slice();
  }
  count(): number {
    return this.decisions.length;
  }
}

/**
 * The checkpoint's form of `entries` (a store's, in its order: server by server), kept by
 * `owner`: each decision's copy found in the last checkpoint's list where it is unchanged
 * (checkpoint-memo.ts `listed`). A request in flight holding one gets the same copy
 * (connection-store.ts `engineCloneMap`), and a restore maps it on to the restored store's
 * entry.
 */
export function checkpointDecisions(
  owner: object,
  entries: readonly StoredDecision[],
  memo: CheckpointMemo
): CheckpointDecisions {
  const listed = memo.listed(owner, DECISION_LIST, entries.length);
  let server: string | undefined;
  for (let i = 0; i < entries.length; i++) {
    const d = entries[i]!;
    // A section: one server's decisions (the store lists them server by server).
    if (d.server !== server) listed.section((server = d.server));
    listed.copy(d);
  }
  return new CheckpointDecisions(listed.done());
}
