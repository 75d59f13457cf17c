/**
 * A client restart (issue #10): what a real MCP client loses when its process stops and starts
 * again at virtual time t, and what it keeps. This is the seed's argument made visible: "a user
 * who denied a request on Monday is not asked about it again on Tuesday" only when the decision
 * store outlives the client.
 *
 * What a restart does, per lane:
 * - **Requests in flight are cancelled** — an orderly shutdown. Each still gets its one frame and
 *   its one audit record (the machine's `request.cancelled` edge: a -32603 frame, the tokens
 *   already streamed charged), so "every request gets exactly one frame" and "every token is paid
 *   for" hold across it. The frames are written to transports that are closing: the servers never
 *   read them, as with any frame for a closed connection, and find out by their own timeouts.
 *   Consent dialogs open at that moment close unanswered; model calls stop.
 * - **Every server's connection drops and reconnects** at t, exactly as a reconnecting server's
 *   does (servers/behaviours `reconnector`): new connection ids, JSON-RPC ids from 1, session pools
 *   (per connection) start empty.
 * - **The connection-scoped lane's decisions are gone** (they lived on connections that closed);
 *   **the durable lane's are kept** (its store is the client's durable storage, IndexedDB in the
 *   browser, and outlives the process). A lane that asked for durable storage and fell back to
 *   memory is connection-scoped and loses them.
 * - **Budget and rate windows are kept**, and so is the retry-loop presentation history: a real
 *   client rebuilds them from its audit log, which outlives the process in both lanes (SPEC: the
 *   record is what answers "why did the bill triple" a month later). Losing them would let a
 *   restart overdraw a daily budget — the one guarantee a host never negotiates — and would hide a
 *   loop that straddles the restart; the invariants (no-overdraw, loops-flagged) hold unchanged.
 *
 * Pure: it acts on the engine's lane on the virtual clock; no wall time, no randomness.
 */
import type { LaneRuntime } from './engine';
import type { LaneId } from '../../machine/vocabulary';
import { liveDecisions } from '../../store/decision-store';

// The report's shape lives in engine-types.ts (the engine's data at its edges), so that module
// need not import this one.
import type { LaneRestart, RestartReport } from './engine-types';
export type { LaneRestart, RestartReport } from './engine-types';

/** Restart one lane's client at `t` (see the module comment). */
export function restartLane(lane: LaneRuntime, t: number): LaneRestart {
  const before = liveDecisions(lane.host.store, t);
  // Newest first: a presentation waiting on an in-flight decision ends before the decision it
  // waits for, so cancelling the leader never hands its waiters a fresh evaluation to start.
  const flying = [...lane.inFlight.values()].reverse();
  for (const h of flying) h.cancel();
  lane.inFlight.clear();
  let reconnected = 0;
  for (const server of lane.servers.values()) {
    if (!server.connected()) continue; // already down: it reconnects on its own schedule
    server.disconnect();
    server.connect();
    reconnected++;
  }
  // A connection-scoped store lived in the client's memory: all of it goes with the process,
  // including entries committed for connections that had already closed (a decision that finished
  // after its transport dropped), which no lookup could reach but which still counted as stored.
  if (lane.host.store.scope === 'connection') lane.host.store.clear();
  const kept = liveDecisions(lane.host.store, t);
  return {
    scope: lane.host.store.scope,
    before,
    kept,
    lost: before - kept,
    cancelled: flying.length,
    reconnected
  };
}

/** The notice the page shows: "Client restarted: lane A lost 5 stored decisions, lane B kept 14". */
export function restartNotice(report: RestartReport): string {
  const part = (id: LaneId) => {
    const l = report.lanes[id];
    return l.lost > 0 || l.scope === 'connection'
      ? `lane ${id} lost ${l.lost} stored decision${l.lost === 1 ? '' : 's'}`
      : `lane ${id} kept ${l.kept} stored decision${l.kept === 1 ? '' : 's'}`;
  };
  const cancelled = report.lanes.A.cancelled + report.lanes.B.cancelled;
  const tail = cancelled
    ? ` (${cancelled} request${cancelled === 1 ? '' : 's'} in flight cancelled)`
    : '';
  return `Client restarted: ${part('A')}, ${part('B')}${tail}`;
}
