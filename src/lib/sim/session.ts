/**
 * The worker-side session: one loaded scenario, driven by the page's commands. Pure and
 * synchronous (no timers): the worker entry point does the yielding between fast-forward slices,
 * and the unit tests drive a session directly in Node.
 */
import type { AuthOutput, IncomingRequest } from '../machine/authorize';
import type { AuditRecord } from '../machine/types';
import type { ConsentSource } from './client';
import type { AuditLog } from '../store/audit-log';
import type { DecisionStore } from '../store/decision-store';
import type { StorageFailure } from '../store/write-behind';
import { sdkFrameProblem } from './conformance';
import type { Simulation } from './engine';
import { RunGuard } from './guard';
import type { DurableProvider } from './lane-store';
import type {
  Command,
  Inspection,
  LaneView,
  PendingConsent,
  Reply,
  Snapshot,
  StorageState,
  StorageView
} from './protocol';
import { digestRun } from './report';
import { LANE_IDS, parseScenario, type LaneId } from './scenario';

/** How many finished requests per lane the inspector can look up (the most recent ones). */
export const INSPECT_WINDOW = 5_000;
/** Events per fast-forward slice by default (the worker adapts it to wall time). */
export const SLICE_EVENTS = 20_000;

interface Kept {
  request: IncomingRequest;
  out: AuthOutput;
}

/** A store or log that can say how much of it is on disk (the IndexedDB ones). */
interface Reporting {
  status(): { saved: number; heldInMemory: number; failure: StorageFailure | null };
}

function reporting(x: unknown): x is Reporting {
  return typeof (x as Partial<Reporting> | null)?.status === 'function';
}

function stateOf(x: Reporting): StorageState {
  const s = x.status();
  return { saved: s.saved, heldInMemory: s.heldInMemory, failure: s.failure?.words ?? null };
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
  /** The run's durable audit log, or null when it could not be opened. */
  audit: (AuditLog & Reporting) | null;
  /** Why the audit log cannot be saved, in plain words, or null. */
  auditError: string | null;
}

export interface SessionOptions {
  storage?: RunStorage;
}

export class Session {
  sim: Simulation | null = null;
  /** The storage the next `load` uses (and the current run keeps until then). */
  #next: RunStorage | null;
  #storage: RunStorage | null = null;
  /** The run's invariants, fed by every frame, record and store change. */
  #guard: RunGuard | null = null;
  #audit: AuditRecord[] = [];
  #kept: Record<LaneId, Map<number, Kept>> = { A: new Map(), B: new Map() };
  #pending = new Map<number, { info: PendingConsent; answer: (approved: boolean) => void }>();
  #nextToken = 1;
  #human = new Set<LaneId>();
  #events = 0;
  #ff: { target: number; total: number; from: number } | null = null;

  constructor(opts: SessionOptions = {}) {
    this.#next = opts.storage ?? null;
  }

  /** Storage for the next run (the worker opens a fresh namespace before each load). */
  setStorage(storage: RunStorage | null): void {
    this.#next = storage;
  }

  /** The current run's storage (the worker flushes and retries it). */
  get storage(): RunStorage | null {
    return this.#storage;
  }

  handle(cmd: Command): Reply[] {
    switch (cmd.type) {
      case 'load':
        return [this.#load(cmd)];
      case 'advance': {
        const sim = this.#need();
        this.#events = sim.advanceTo(cmd.to, cmd.maxEvents ?? Infinity);
        return [this.snapshot()];
      }
      case 'step':
        this.#events = this.#need().step() ? 1 : 0;
        return [this.snapshot()];
      case 'fastForward': {
        const sim = this.#need();
        const target = Math.min(sim.end, sim.now + cmd.ms);
        this.#ff = { target, total: target - sim.now, from: sim.now };
        return [];
      }
      case 'cancel': {
        const was = this.#ff !== null;
        this.#ff = null;
        return was ? [{ type: 'fastForwardDone', cancelled: true }, this.snapshot()] : [];
      }
      case 'setConfig':
        this.#need().setLaneConfig(cmd.lane, cmd.client, cmd.what);
        return [this.snapshot()];
      case 'setPolicy': {
        const invalidated = this.#need().setLanePolicy(cmd.lane, cmd.policy);
        return [{ type: 'policyApplied', lane: cmd.lane, invalidated }, this.snapshot()];
      }
      case 'setHuman':
        this.#human = new Set(cmd.human);
        return [this.snapshot()];
      case 'consent': {
        const p = this.#pending.get(cmd.token);
        if (p) {
          this.#pending.delete(cmd.token);
          p.answer(cmd.approved);
        }
        return [this.snapshot()];
      }
      case 'inspect':
        return [this.#inspect(cmd.lane, cmd.seq)];
      case 'retryStorage':
        // The writing itself is asynchronous and the worker's; here, only the state to show.
        return [this.snapshot()];
      case 'clearStored': {
        const store = this.#need().lanes[cmd.lane].host.store;
        const n = store.clear();
        return [
          { type: 'cleared', lane: cmd.lane, count: typeof n === 'number' ? n : -1 },
          this.snapshot()
        ];
      }
      case 'auditQuery':
      case 'auditRows':
      case 'auditExport':
      case 'auditWindow':
        // The audit table's questions are the browser worker's (ui/audit-service.ts).
        return [];
      case 'digest': {
        const r = parseScenario(cmd.scenario);
        if (!r.ok) return [{ type: 'digest', ok: false, errors: r.errors }];
        return [
          {
            type: 'digest',
            ok: true,
            digest: digestRun(r.scenario, cmd.seed !== undefined ? { seed: cmd.seed } : {})
          }
        ];
      }
    }
  }

  /** True while a fast-forward is running: the worker keeps calling `fastForwardSlice`. */
  get fastForwarding(): boolean {
    return this.#ff !== null;
  }

  /** Run one slice of the fast-forward (at most `maxEvents` events); returns the replies to post. */
  fastForwardSlice(maxEvents = SLICE_EVENTS): Reply[] {
    const ff = this.#ff;
    const sim = this.sim;
    if (!ff || !sim) return [];
    this.#events = sim.advanceTo(ff.target, maxEvents);
    const done = sim.now >= ff.target;
    const progress: Reply = { type: 'progress', done: sim.now - ff.from, total: ff.total };
    if (!done) return [progress];
    this.#ff = null;
    return [progress, { type: 'fastForwardDone', cancelled: false }, this.snapshot()];
  }

  /**
   * The audit records since the last snapshot or drain, handed over and forgotten: the worker
   * drains after every fast-forward slice, so a simulated week never piles up here.
   */
  drainAudit(): AuditRecord[] {
    const out = this.#audit;
    this.#audit = [];
    return out;
  }

  snapshot(): Snapshot {
    const sim = this.#need();
    const lanes = {} as Record<LaneId, LaneView>;
    for (const id of LANE_IDS) {
      const lane = sim.lanes[id];
      const count = lane.host.store.count();
      lanes[id] = {
        label: lane.label,
        counters: lane.metrics.counters,
        series: lane.metrics.series,
        edges: lane.metrics.edges,
        storedDecisions: typeof count === 'number' ? count : -1,
        scope: lane.host.store.scope,
        storage: reporting(lane.host.store) ? stateOf(lane.host.store) : null,
        fellBack: lane.fellBack
      };
    }
    const audit = this.#audit;
    this.#audit = [];
    return {
      type: 'snapshot',
      now: sim.now,
      start: sim.start,
      end: sim.end,
      done: sim.done,
      lanes,
      audit,
      marks: sim.marks,
      durableError: this.#storage?.durableError ?? null,
      storage: this.storageView(),
      pendingConsent: [...this.#pending.values()].map((p) => p.info),
      events: this.#events,
      guarantees: this.#guard?.results() ?? []
    };
  }

  /** How much of the run is on disk: sent in every snapshot and after every group commit. */
  storageView(): StorageView {
    const sim = this.#need();
    const lanes = {} as StorageView['lanes'];
    for (const id of LANE_IDS) {
      const store = sim.lanes[id].host.store;
      const count = store.count();
      lanes[id] = {
        storage: reporting(store) ? stateOf(store) : null,
        storedDecisions: typeof count === 'number' ? count : -1
      };
    }
    const audit = this.#storage?.audit;
    return {
      run: this.#storage?.run ?? null,
      lanes,
      audit: audit ? stateOf(audit) : null,
      auditError: this.#storage?.auditError ?? null
    };
  }

  #need(): Simulation {
    if (!this.sim) throw new Error('no scenario is loaded');
    return this.sim;
  }

  #load(cmd: Extract<Command, { type: 'load' }>): Reply {
    const r = parseScenario(cmd.scenario);
    if (!r.ok) return { type: 'loaded', ok: false, errors: r.errors };
    this.#audit = [];
    this.#kept = { A: new Map(), B: new Map() };
    this.#pending.clear();
    this.#ff = null;
    this.#human = new Set(cmd.human ?? []);
    const storage = (this.#storage = this.#next);
    const auditLog = storage?.audit ?? null;
    this.#guard = new RunGuard(r.scenario, { validate: sdkFrameProblem });
    this.sim = this.#guard.simulate(r.scenario, {
      ...(cmd.seed !== undefined ? { seed: cmd.seed } : {}),
      ...(cmd.trace ? { trace: cmd.trace } : {}),
      ...(storage ? { durable: storage.durable } : {}),
      onAudit: (rec) => {
        this.#audit.push(rec);
        void auditLog?.append(rec);
      },
      onDecision: (lane, request, out) => {
        const kept = this.#kept[lane];
        kept.set(out.audit.seq, { request, out });
        if (kept.size > INSPECT_WINDOW) kept.delete(kept.keys().next().value!);
      },
      consent: (lane, simulated) => this.#consentFor(lane, simulated)
    });
    return {
      type: 'loaded',
      ok: true,
      name: r.scenario.name,
      start: this.sim.start,
      end: this.sim.end,
      servers: r.scenario.servers.map((s) => s.name),
      run: storage?.run ?? null,
      resumed: { A: this.#resumed('A'), B: this.#resumed('B') }
    };
  }

  /** Durable decisions a lane found at load: a reload within a run resumes them. */
  #resumed(lane: LaneId): number {
    const store: DecisionStore = this.#need().lanes[lane].host.store;
    const n = reporting(store) ? store.count() : 0;
    return typeof n === 'number' ? n : 0;
  }

  /** Dialogs go to a person while the lane is in "you are the user" mode, else to the model. */
  #consentFor(lane: LaneId, simulated: ConsentSource): ConsentSource {
    return (input, answer) => {
      if (!this.#human.has(lane)) return simulated(input, answer);
      const token = this.#nextToken++;
      this.#pending.set(token, {
        info: {
          lane,
          token,
          server: input.server,
          requestId: input.requestId,
          identity: input.identity,
          params: input.params,
          askedAt: input.now
        },
        answer
      });
      return () => this.#pending.delete(token);
    };
  }

  #inspect(lane: LaneId, seq: number): Inspection {
    const k = this.#kept[lane].get(seq);
    if (!k) return { type: 'inspection', lane, seq, found: false };
    return {
      type: 'inspection',
      lane,
      seq,
      found: true,
      request: {
        id: k.request.id,
        server: k.request.server,
        connection: k.request.connection,
        params: k.request.params,
        receivedAt: k.request.receivedAt
      },
      identity: k.out.audit.identity,
      path: k.out.path,
      frame: k.out.frame,
      audit: k.out.audit
    };
  }
}
