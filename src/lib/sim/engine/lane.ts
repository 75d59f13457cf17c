/**
 * One lane of a simulation (engine.ts): a client host — its configuration, policy, decision
 * store, provider and user — and its copy of the server population, each server on its own
 * connections. The lane receives the servers' requests, runs the authorisation machine on each and
 * delivers the one answer over the connection that asked.
 *
 * Over 400 lines on purpose: a server's runtime is its lane's (env, connections), copied with it.
 */
import type { AuthOutput, ConsentInput, IncomingRequest } from '../../machine/authorize';
import {
  resolveClientConfig,
  type ClientConfig,
  type ClientConfigInput
} from '../../machine/config';
import { toMicros } from '../../machine/money';
import type { Policy } from '../../machine/policy';
import type {
  AuditRecord,
  Frame,
  JsonRpcId,
  Money,
  SamplingParams,
  StoredDecision
} from '../../machine/types';
import type { AuditLog } from '../../store/audit-log';
import { ClientHost, type DecisionListener, type RunHandle } from '../../client/host';
import { copyable, NotCloneable, type CloneMap } from '../../machine/clone';
import { callDirect, type DirectCall, type DirectPayee } from '../actors/direct';
import type { Simulation } from './engine';
import type { AskedFacts, SimulationOptions } from './engine-types';
import type { DecisionStore } from '../../store/decision-store';
import { SharedDecisionStore } from '../../store/shared-store';
import { ConnectionDecisionStore } from '../../store/connection-store';
import { checkpointMemo } from '../../store/checkpoint-memo';
import { checkpointDecisions } from '../../store/checkpoint-store';
import { buildLaneStore, type DurableProvider } from './lane-store';
import { LaneMetrics } from './metrics';
import { cardsByModel, SimProvider } from '../actors/provider';
import { Rng } from '../world/rng';
import type { LaneId, Scenario } from '../input/scenario';
import { applyWireStyle } from '../actors/servers/request';
import { tapStore, TappedStore } from './store-tap';
import { SimUser } from '../actors/user';
import type { Protocol } from '../../machine/vocabulary';
import type {
  ServerAgent,
  ServerEnv,
  ServerReport,
  ServerSpec,
  ServerTimer,
  Task,
  WireStyle
} from '../world/world';

/**
 * A lane's audit log: it forwards records to the lane (its metrics, the run's `onAudit` hook)
 * instead of keeping them, so runs of millions stay small.
 */
class SinkAuditLog implements AuditLog {
  private n = 0;
  constructor(private readonly lane: LaneRuntime) {}
  append(r: AuditRecord): void {
    this.n++;
    this.lane.audited(r);
  }
  all(): AuditRecord[] {
    return [];
  }
  clear(): void {
    this.n = 0;
  }
  count(): number {
    return this.n;
  }
}
copyable(SinkAuditLog, { name: 'lane.SinkAuditLog' });

function notCloneable(what: string): never {
  throw new NotCloneable(what);
}

/**
 * Put `from`'s decisions into `to` (emptied first), each registered as the copy of its original:
 * a request in flight that a lookup answered holds the store's live entry (clone.ts).
 */
function refill(m: CloneMap, from: DecisionStore, to: DecisionStore): void {
  const all = entriesNow(from);
  to.clear();
  for (const d of all) to.commit('*', d);
  const copies = to.entries();
  if (!Array.isArray(copies) || copies.length !== all.length)
    notCloneable('a store copy lost decisions');
  for (let i = 0; i < all.length; i++) {
    const d = all[i]!;
    const c = copies[i]!;
    if (c.server !== d.server || c.identity !== d.identity)
      notCloneable('a store copy holds its decisions in another order');
    m.set(d, c);
  }
}

/** `store`'s entries, read now: a store that answers later cannot be copied. */
function entriesNow(store: DecisionStore): StoredDecision[] {
  const all = store.entries();
  return Array.isArray(all) ? all : notCloneable('a store that answers later cannot be copied');
}

/** Connection names made so far, by server name then connection number (see connectionName). */
const connectionNames = new Map<string, string[]>();
/** Connection numbers past this are named afresh each time (a memo must stay small). */
const NAMED_CONNECTIONS = 256;

/**
 * `name#n`, the same string each time: the name keys the stores' maps and the host's, and is
 * compared at every delivery. A string made afresh per request was hashed afresh by every map
 * it keyed and compared character by character; one string hashes once and compares by
 * reference. A pure function's memo: nothing of a run is in it.
 */
function connectionName(name: string, n: number): string {
  if (n >= NAMED_CONNECTIONS) return `${name}#${n}`;
  let names = connectionNames.get(name);
  if (names === undefined) connectionNames.set(name, (names = []));
  return (names[n] ??= `${name}#${n}`);
}

export class ServerRuntime implements ServerEnv {
  readonly name: string;
  rng: Rng;
  agent: ServerAgent | null = null;
  private conn = 0;
  private isConnected = false;
  private nextId = 0;

  constructor(
    readonly lane: LaneRuntime,
    spec: Pick<ServerSpec, 'name'>,
    root: Rng
  ) {
    this.name = spec.name;
    this.rng = root.fork(`server:${spec.name}`);
  }

  get connection(): string {
    return connectionName(this.name, this.conn);
  }

  now(): number {
    return this.lane.sim.clock.now();
  }
  schedule(ms: number, timer: ServerTimer): number {
    return this.lane.sim.clock.after(ms, {
      kind: 'server',
      lane: this.lane.id,
      server: this.name,
      timer
    });
  }
  cancel(timer: number): void {
    this.lane.sim.clock.clearTimeout(timer);
  }
  connected(): boolean {
    return this.isConnected;
  }
  connect(): void {
    if (this.isConnected) return;
    this.conn++;
    this.nextId = 0;
    this.isConnected = true;
  }
  disconnect(): void {
    if (!this.isConnected) return;
    this.isConnected = false;
    this.lane.host.closeConnection(this.name, this.connection);
  }
  advertisedCeiling(): Money | null {
    return this.lane.host.config.advertiseCeiling
      ? this.lane.host.advertisedCeiling(this.name)
      : null;
  }
  report(r: ServerReport): void {
    this.lane.metrics.report(r);
  }
  protocol(): Protocol {
    return this.lane.host.config.protocol;
  }
  /** The lane's host agent loop: `hostRetries` more calls, each after `hostRetryDelayMs`. */
  hostRetryAfterMs(failedCalls: number): number | null {
    const c = this.lane.host.config;
    return failedCalls <= c.hostRetries ? c.hostRetryDelayMs : null;
  }

  send(params: SamplingParams, _task: Task, wire?: WireStyle): JsonRpcId | null {
    if (!this.isConnected) return null;
    const id = ++this.nextId;
    const sent = wire && (wire.reverseKeys || wire.nfd) ? applyWireStyle(params, wire) : params;
    this.lane.receive(this, id, sent);
    return id;
  }
}
// Copied with its lane: its connection, its random stream, its agent.
copyable(ServerRuntime, { name: 'lane.ServerRuntime' });

function askedFacts(handle: RunHandle): AskedFacts {
  return { identity: handle.identity(), path: handle.path?.() ?? [] };
}

/** Whether a dialog's input names this request (ids compared as text, as a key of them did). */
function sameRequest(connection: string, id: JsonRpcId, input: ConsentInput): boolean {
  return connection === input.connection && String(id) === String(input.requestId);
}

/**
 * A request of a lane in flight: what the lane read of its configuration at arrival, and the
 * host's handle. The host tells it of the outcome (a listener, not a closure: an engine copy
 * copies it with the lane).
 */
class Flying implements DecisionListener, RunHandle {
  handle: RunHandle | null = null;
  /** Decided (possibly before `authorize` returned). */
  done = false;
  constructor(
    public lane: LaneRuntime,
    readonly request: IncomingRequest,
    /** Its number in the lane's `inFlight`. */
    readonly key: number,
    /** Read at arrival, as the annotation is decided then. */
    readonly annotate: boolean,
    /** 2026-07-28 at arrival (the round belongs to its revision). */
    readonly rounds: boolean
  ) {}
  decided(out: AuthOutput): void {
    this.lane.decided(this, out);
  }
  identity(): string {
    return this.handle?.identity() ?? '';
  }
  path(): string[] {
    return this.handle?.path?.() ?? [];
  }
  cancel(): void {
    this.handle?.cancel();
  }
}
copyable(Flying, { name: 'lane.Flying', fields: { request: 'shared' } });

export class LaneRuntime implements DirectPayee {
  readonly host: ClientHost;
  readonly metrics: LaneMetrics;
  readonly servers = new Map<string, ServerRuntime>();
  readonly label: string;
  readonly userStats;
  readonly providerStats;
  /** True while the lane asked for durable storage and runs connection-scoped instead. */
  fellBack: boolean;
  /** Where the lane's durable decisions live when not the run's (`useDurable`). */
  private durableSet: DurableProvider | undefined;
  /** SEP-2577's baseline: the lane's servers call the provider themselves (see direct.ts). */
  readonly direct: boolean;
  /** The lane's simulated provider and user (their events name them by lane: events.ts). */
  readonly provider: SimProvider;
  readonly user: SimUser;
  private readonly cards: Scenario['provider']['cards'];
  /**
   * Requests being decided, in arrival order: a client restart cancels them (restart.ts). Keyed
   * by a number the lane gives each, not by a '<connection>\0<id>' string: that was a string
   * built, flattened and hashed per request. A dialog's request is found by its connection and
   * id (`asked`), rarely: mostly while `receive` runs it.
   */
  readonly inFlight = new Map<number, Flying>();
  private flyingSeq = 0;
  /** The request `receive` is handing to the machine, and whether it opened a dialog meanwhile. */
  private receiving: { connection: string; id: JsonRpcId; asked: boolean } | null = null;

  constructor(
    readonly sim: Simulation,
    readonly id: LaneId,
    scenario: Scenario,
    root: Rng
  ) {
    const lane = scenario.lanes[id];
    const opts = sim.opts;
    this.label = lane.label;
    this.direct = lane.direct === true;
    this.cards = scenario.provider.cards;
    this.metrics = new LaneMetrics();
    const config = resolveClientConfig(lane.client);
    const { store, fellBack } = this.buildStore(config);
    this.fellBack = fellBack;
    this.provider = new SimProvider(scenario.provider, sim.clock, root.fork('provider'), id);
    this.user = new SimUser(scenario.user, sim.clock, root.fork('user'), id);
    this.host = new ClientHost({
      config,
      policy: lane.policy,
      cards: cardsByModel(scenario.provider.cards),
      store,
      audit: new SinkAuditLog(this),
      clock: sim.clock,
      consent: sim.consent.source(id, this.user),
      provider: this.provider,
      lane: id,
      executor: opts.executor ?? 'table'
    });
    this.userStats = this.user.stats;
    this.providerStats = this.provider.stats;
  }

  /** Where the lane's durable decisions live: set by `useDurable`, else the run's hook. */
  private get durable(): DurableProvider | undefined {
    return this.durableSet ?? this.sim.opts.durable;
  }

  /** An audit record of the lane's host: its cost to the metrics, the record to the run's hook. */
  audited(r: AuditRecord): void {
    this.metrics.charge(toMicros(r.cost));
    // The host's records already name the lane (its `lane` option is this lane's id), and nothing
    // changes a record once it is appended (host.ts `finish`), so the hook gets it as it is: a
    // copy of its 27 fields was ~130 bytes per request, ~6 MB/s of the worker's garbage in live play
    // (bench:profile:worker --heap). Any other record (none today) is still copied under the lane.
    const hook = this.sim.opts.onAudit;
    if (hook) hook(r.lane === this.id ? r : { ...r, lane: this.id });
  }

  /**
   * The copy of the lane's store, for a copy of its engine whose hooks are `opts` (engine.ts
   * registers it as a substitute before the copy): the same decisions, the copy's observer (the
   * engine copy's invariants) — told of nothing, since nothing changed. A durable lane whose
   * decisions the page keeps in IndexedDB gets the run's store back (`opts.durable`), holding
   * exactly these; a copy without one keeps them in memory. An engine checkpoint of a lane whose
   * decisions live elsewhere lists them (checkpoint-store.ts) and a restore puts them back so.
   */
  copyStore(m: CloneMap, opts: SimulationOptions): DecisionStore {
    const store = this.host.store;
    const inner = store instanceof TappedStore ? store.inner : store;
    let copy: DecisionStore;
    if (inner.scope === 'durable' && !this.fellBack && opts.durable) {
      copy = opts.durable(this.id) ?? notCloneable(`lane ${this.id}'s durable storage is gone`);
      refill(m, inner, copy);
    } else if (m.has(inner)) copy = m.registered(inner);
    else if (inner instanceof SharedDecisionStore || inner instanceof ConnectionDecisionStore)
      copy = m.get(inner);
    else if (inner.scope === 'durable') {
      // Kept elsewhere (the browser's IndexedDB): an engine checkpoint lists its decisions,
      // sharing those unchanged since the last (checkpoint-store.ts); any other copy runs them.
      const memo = checkpointMemo();
      if (memo) copy = checkpointDecisions(inner, entriesNow(inner), memo);
      else refill(m, inner, (copy = new SharedDecisionStore()));
    } else throw new NotCloneable(`lane ${this.id}'s ${inner.scope} store cannot be copied`);
    const observe = opts.onStore;
    return observe ? new TappedStore(copy, (e) => observe(this.id, e)) : copy;
  }

  /** A request arrives from a server: record the frame, run the machine, deliver the answer. */
  receive(server: ServerRuntime, id: JsonRpcId, params: SamplingParams): void {
    if (this.direct) return this.callDirect(server, id, params);
    const sim = this.sim;
    const t = sim.clock.now();
    const connection = server.connection;
    const request: IncomingRequest = { id, server: server.name, connection, params, receivedAt: t };
    this.metrics.request();
    sim.opts.onFrame?.({
      t,
      lane: this.id,
      server: server.name,
      connection,
      direction: 'in',
      frame: { jsonrpc: '2.0', id, method: 'sampling/createMessage', params }
    });
    const receiving = (this.receiving = { connection, id, asked: false });
    const config = this.host.config;
    const f = new Flying(
      this,
      request,
      ++this.flyingSeq,
      config.annotateTrim,
      config.protocol === '2026-07-28'
    );
    f.handle = this.host.authorize(request, f);
    this.receiving = null;
    if (f.done) return;
    this.inFlight.set(f.key, f);
    // A dialog opened while the machine ran (it does so synchronously): tell of it now that the
    // request and its path can be read.
    if (receiving.asked) sim.opts.onConsentAsked?.(this.id, request, askedFacts(f));
  }

  /** A request's machine is done (its record hears it): the metrics, the hooks, the frame. */
  decided(f: Flying, out: AuthOutput): void {
    const sim = this.sim;
    const { request, key } = f;
    f.done = true;
    this.inFlight.delete(key);
    const now = sim.clock.now();
    this.metrics.decided(out, f.annotate);
    sim.opts.onDecision?.(this.id, request, out);
    const frame = out.frame;
    // 2026-07-28: the handler answered the host's own SDK, inside a tool call. A refusal (an
    // error, or no answer at all) fails that tool call at the host: the server hears nothing.
    const local = f.rounds && (!frame || 'error' in frame);
    if (local)
      sim.clock.schedule(now, {
        kind: 'toolCallFailed',
        lane: this.id,
        server: request.server,
        connection: request.connection,
        id: request.id
      });
    if (!frame) return; // silenced: the server learns nothing and must infer.
    sim.opts.onFrame?.({
      t: now,
      lane: this.id,
      server: request.server,
      connection: request.connection,
      direction: 'out',
      frame
    });
    if (local) return;
    // Delivered as its own event, and only over the connection that asked: a frame for a
    // closed transport goes nowhere.
    sim.clock.schedule(now, {
      kind: 'deliver',
      lane: this.id,
      server: request.server,
      connection: request.connection,
      id: request.id,
      frame
    });
  }

  /** A consent dialog opened for one of this lane's requests (dialogs.ts). */
  asked(input: ConsentInput): void {
    const r = this.receiving;
    if (r !== null && sameRequest(r.connection, r.id, input)) {
      r.asked = true;
      return;
    }
    const hook = this.sim.opts.onConsentAsked;
    if (!hook) return;
    // The latest of that connection and id (a server may reuse an id while its first runs).
    let found: Flying | null = null;
    for (const flying of this.inFlight.values())
      if (sameRequest(flying.request.connection, flying.request.id, input)) found = flying;
    if (found) hook(this.id, found.request, askedFacts(found));
  }

  /** No frame, no audit record, no dialog: the client never sees the request. */
  private callDirect(server: ServerRuntime, id: JsonRpcId, params: SamplingParams): void {
    const clock = this.sim.clock;
    this.metrics.counters.providerCalls++;
    const call = {
      server: server.name,
      connection: server.connection,
      id,
      params,
      now: clock.now()
    };
    callDirect(this.provider, this.cards, call, this);
  }

  /** A direct call's answer: the server paid for it, and gets it as its own event. */
  paid(call: DirectCall, frame: Frame, cost: number): void {
    const clock = this.sim.clock;
    this.metrics.counters.serverSpendMicros += cost;
    clock.schedule(clock.now(), {
      kind: 'deliver',
      lane: this.id,
      server: call.server,
      connection: call.connection,
      id: call.id,
      frame
    });
  }

  /**
   * The lane's store for `config` (lane-store.ts), seen by the run's invariants when they watch.
   * `fresh`: a change of scope — the new store starts empty, as `lab run`'s does; a durable one
   * from the run's namespace may hold what an earlier durable spell, or the future a seek back
   * abandoned in place, left in it (issue #18: found by no-future-decisions).
   */
  private buildStore(config: ClientConfig, fresh = false) {
    const built = buildLaneStore(this.id, config, this.durable);
    if (fresh && built.store.scope === 'durable') void built.store.clear();
    const observe = this.sim.opts.onStore;
    if (!observe) return built;
    return { ...built, store: tapStore(built.store, (e) => observe(this.id, e)) };
  }

  setConfig(input: ClientConfigInput): void {
    const next = resolveClientConfig(input);
    // A change of scope is a change of where state lives: the new store starts empty. (The alert
    // settings are read live from the config by the host.)
    if (next.store !== this.host.config.store) {
      const built = this.buildStore(next, true);
      this.host.store = built.store;
      this.fellBack = built.fellBack;
    }
    this.host.config = next;
  }

  setPolicy(policy: Policy): Record<string, number> {
    return this.host.setPolicySync(policy, this.servers.keys());
  }

  /**
   * Keep a durable lane's decisions in `durable` from now on, in place of the store it has: a
   * page reload re-simulates its run with the decisions in memory and then hands the lane the
   * ones its IndexedDB namespace kept (session.ts). A connection-scoped lane is left alone.
   */
  useDurable(durable: DurableProvider): void {
    this.durableSet = durable;
    if (this.host.config.store !== 'durable') return;
    const built = this.buildStore(this.host.config);
    this.host.store = built.store;
    this.fellBack = built.fellBack;
  }
}

// Copied with its engine, its host by the host's rules (client/host.ts) over the store the
// engine's copy substitutes (`copyStore`); a `useDurable` store is the original's, not the copy's
// (the copy's hooks say where its decisions live).
copyable(LaneRuntime, {
  name: 'lane.LaneRuntime',
  fields: { cards: 'shared', durableSet: 'dropped' }
});
