/**
 * Decision stores for the handler, built from the lab's own (the same classes a lane runs):
 *
 * - `memoryStore()`: connection scope. Each MCP connection has its own decisions; `conn.close()`
 *   drops them, so a server that reconnects is asked about again (what the lab's connection-scoped
 *   lane teaches against, and the safe default for a process that cannot keep anything).
 * - `memoryStore({ scope: 'process' })`: the lab's durable scope, kept in memory for the life of
 *   the process: one partition for every connection of a server, so a refusal outlives the
 *   transport. It does not survive a restart; `fileStore(dir)` (file-store.ts) does.
 */
import { ConnectionDecisionStore } from '../store/connection-store';
import type { DecisionStore } from '../store/decision-store';
import { SharedDecisionStore } from '../store/shared-store';

export interface MemoryStoreOptions {
  /** `connection` (default): forgotten with the connection. `process`: kept across connections. */
  scope?: 'connection' | 'process';
}

export function memoryStore(opts: MemoryStoreOptions = {}): DecisionStore {
  const scope = opts.scope ?? 'connection';
  if (scope === 'process') return new SharedDecisionStore();
  if (scope === 'connection') return new ConnectionDecisionStore();
  throw new Error(
    `memoryStore: scope must be 'connection' or 'process', got ${JSON.stringify(scope)}`
  );
}
