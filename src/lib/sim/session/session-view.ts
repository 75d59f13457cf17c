/**
 * What the worker session (session.ts) shows the page of a run: the lanes' views, how much of the
 * run is on disk, a finished request for the inspector, and the consent dialogs waiting for a
 * person with the page's token for each. Pure reads of the engine.
 */
import type { SnapshotSlot } from './session-snapshots';
import type { AuthOutput, IncomingRequest } from '../../machine/authorize';
import type { JsonRpcId } from '../../machine/types';
import type { AuditLog } from '../../store/audit-log';
import type { DecisionStore } from '../../store/decision-store';
import type { StorageFailure } from '../../store/write-behind';
import type { Simulation } from '../engine/engine';
import type { DurableProvider } from '../engine/lane-store';
import type { Inspection, LaneView, PendingConsent, StorageState, StorageView } from './protocol';
import { LANE_IDS } from '../input/lanes';
import type { LaneId } from '../input/scenario';

/** A finished request the inspector can look up. */
export interface Kept {
  request: IncomingRequest;
  out: AuthOutput;
}

/** A store or log that can say how much of it is on disk (the IndexedDB ones). */
export interface Reporting {
  status(): {
    saved: number;
    heldInMemory: number;
    lost?: number;
    failure: StorageFailure | null;
  };
}

export function reporting(x: unknown): x is Reporting {
  return typeof (x as Partial<Reporting> | null)?.status === 'function';
}

function stateOf(x: Reporting): StorageState {
  const s = x.status();
  return {
    saved: s.saved,
    heldInMemory: s.heldInMemory,
    lost: s.lost ?? 0,
    failure: s.failure?.words ?? null
  };
}

/**
 * Where the next loaded run keeps what is durable: the browser's worker opens a namespace per run
 * in IndexedDB and hands it over here; without one (Node, the unit tests) durable lanes keep their
 * decisions in memory, as `lab run` does.
 */
export interface RunStorage {
  /** The run's namespace id. */
  run: string | null;
  /** The lane's durable store for this run, or null when durable storage is unavailable. */
  durable: DurableProvider;
  /** Why durable storage is unavailable, in plain words, or null. */
  durableError: string | null;
  /**
   * The run's durable audit log, or null when it could not be opened. It holds the rows of the
   * run's timeline as far as it was played (`nextKey` of them): a seek back restored in place
   * leaves the later ones, which playing on would write again the same; `truncate(n)` keeps the
   * first n only, when a change starts a new branch there.
   */
  audit: (AuditLog & Reporting & { truncate?(rows: number): void; nextKey?: number }) | null;
  /** Why the audit log cannot be saved, in plain words, or null. */
  auditError: string | null;
  /** Where the run's latest engine snapshot is kept, so a reload resumes from it (issue #21). */
  snapshots?: SnapshotSlot | null;
}

/** Each lane as the page draws it now. */
export function laneViews(sim: Simulation): Record<LaneId, LaneView> {
  const lanes = {} as Record<LaneId, LaneView>;
  for (const id of LANE_IDS) {
    const lane = sim.lanes[id];
    const count = lane.host.store.count();
    lanes[id] = {
      label: lane.label,
      counters: lane.metrics.counters,
      series: lane.metrics.seriesAt(sim.now),
      edges: lane.metrics.edges,
      storedDecisions: typeof count === 'number' ? count : -1,
      scope: lane.host.store.scope,
      storage: reporting(lane.host.store) ? stateOf(lane.host.store) : null,
      fellBack: lane.fellBack
    };
  }
  return lanes;
}

/** How much of the run is on disk: sent in every snapshot and after every group commit. */
export function storageView(sim: Simulation, storage: RunStorage | null): StorageView {
  const lanes = {} as StorageView['lanes'];
  for (const id of LANE_IDS) {
    const store = sim.lanes[id].host.store;
    const count = store.count();
    lanes[id] = {
      storage: reporting(store) ? stateOf(store) : null,
      storedDecisions: typeof count === 'number' ? count : -1
    };
  }
  const audit = storage?.audit;
  return {
    run: storage?.run ?? null,
    lanes,
    audit: audit ? stateOf(audit) : null,
    auditError: storage?.auditError ?? null
  };
}

/** Durable decisions a lane found at load: a reload within a run resumes them. */
export function resumedCount(sim: Simulation, lane: LaneId): number {
  const store: DecisionStore = sim.lanes[lane].host.store;
  const n = reporting(store) ? store.count() : 0;
  return typeof n === 'number' ? n : 0;
}

/** The inspector's answer for request `seq` of `lane`, from the requests kept. */
export function inspection(kept: Kept | undefined, lane: LaneId, seq: number): Inspection {
  if (!kept) return { type: 'inspection', lane, seq, found: false };
  return {
    type: 'inspection',
    lane,
    seq,
    found: true,
    request: {
      id: kept.request.id,
      server: kept.request.server,
      connection: kept.request.connection,
      params: kept.request.params,
      receivedAt: kept.request.receivedAt
    },
    identity: kept.out.audit.identity,
    path: kept.out.path,
    frame: kept.out.frame,
    audit: kept.out.audit
  };
}

/**
 * The page's token for each dialog a person is asked (dialogs.ts names them by lane, connection
 * and request id): kept across re-simulations, so a dialog re-created by a seek keeps its token.
 */
export class DialogTokens {
  #tokens = new Map<string, number>();
  #dialogs = new Map<number, { lane: LaneId; connection: string; requestId: JsonRpcId }>();
  #next = 1;

  /** A new run: no dialog has a token yet (tokens still only grow). */
  clear(): void {
    this.#tokens.clear();
    this.#dialogs.clear();
  }

  /** The dialog a token names, if it was ever shown. */
  dialog(token: number) {
    return this.#dialogs.get(token);
  }

  /** The dialogs waiting for a person, each with its token. */
  pending(sim: Simulation): PendingConsent[] {
    return sim.consent.open.map(({ key, lane, input }) => {
      let token = this.#tokens.get(key);
      if (token === undefined) {
        token = this.#next++;
        this.#tokens.set(key, token);
        this.#dialogs.set(token, {
          lane,
          connection: input.connection,
          requestId: input.requestId
        });
      }
      return {
        lane,
        token,
        server: input.server,
        requestId: input.requestId,
        identity: input.identity,
        params: input.params,
        askedAt: input.now
      };
    });
  }
}
