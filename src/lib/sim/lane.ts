/**
 * One lane of a simulation (engine.ts): a client host — its configuration, policy, decision
 * store, provider and user — and its copy of the server population, each server on its own
 * connections. The lane receives the servers' requests, runs the authorisation machine on each and
 * delivers the one answer over the connection that asked.
 */
import type { ConsentInput, IncomingRequest } from '../machine/authorize';
import { resolveClientConfig, type ClientConfig, type ClientConfigInput } from '../machine/config';
import { toMicros } from '../machine/money';
import type { Policy } from '../machine/policy';
import type { AuditRecord, JsonRpcId, Money, SamplingParams } from '../machine/types';
import type { AuditLog } from '../store/audit-log';
import { ClientHost, type ProviderSource, type RunHandle } from './client';
import { callDirect } from './direct';
import type { Simulation } from './engine';
import type { AskedFacts, SimulationOptions } from './engine-types';
import { buildLaneStore, type DurableProvider } from './lane-store';
import { LaneMetrics } from './metrics';
import { cardsByModel, createProvider } from './provider';
import type { Rng } from './rng';
import type { LaneId, Scenario } from './scenario';
import { applyWireStyle } from './servers/request';
import { tapStore } from './store-tap';
import { createUser } from './user';
import type { ServerAgent, ServerEnv, ServerReport, ServerSpec, Task, WireStyle } from './world';

/** An audit log that forwards records instead of keeping them: runs of millions stay small. */
class SinkAuditLog implements AuditLog {
  #n = 0;
  constructor(private readonly sink: (r: AuditRecord) => void) {}
  append(r: AuditRecord): void {
    this.#n++;
    this.sink(r);
  }
  all(): AuditRecord[] {
    return [];
  }
  clear(): void {
    this.#n = 0;
  }
  count(): number {
    return this.#n;
  }
}

export class ServerRuntime implements ServerEnv {
  readonly name: string;
  readonly rng: Rng;
  agent: ServerAgent | null = null;
  #conn = 0;
  #connected = false;
  #nextId = 0;

  constructor(
    readonly lane: LaneRuntime,
    spec: Pick<ServerSpec, 'name'>,
    root: Rng
  ) {
    this.name = spec.name;
    this.rng = root.fork(`server:${spec.name}`);
  }

  get connection(): string {
    return `${this.name}#${this.#conn}`;
  }

  now(): number {
    return this.lane.sim.clock.now();
  }
  schedule(ms: number, fn: () => void): number {
    return this.lane.sim.clock.setTimeout(fn, ms);
  }
  cancel(timer: number): void {
    this.lane.sim.clock.clearTimeout(timer);
  }
  connected(): boolean {
    return this.#connected;
  }
  connect(): void {
    if (this.#connected) return;
    this.#conn++;
    this.#nextId = 0;
    this.#connected = true;
  }
  disconnect(): void {
    if (!this.#connected) return;
    this.#connected = false;
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

  send(params: SamplingParams, _task: Task, wire?: WireStyle): JsonRpcId | null {
    if (!this.#connected) return null;
    const id = ++this.#nextId;
    const sent = wire && (wire.reverseKeys || wire.nfd) ? applyWireStyle(params, wire) : params;
    this.lane.receive(this, id, sent);
    return id;
  }
}

function askedFacts(handle: RunHandle): AskedFacts {
  return { identity: handle.identity(), path: handle.path?.() ?? [] };
}

export class LaneRuntime {
  readonly host: ClientHost;
  readonly metrics = new LaneMetrics();
  readonly servers = new Map<string, ServerRuntime>();
  readonly label: string;
  readonly userStats;
  readonly providerStats;
  /** True while the lane asked for durable storage and runs connection-scoped instead. */
  fellBack: boolean;
  #durable: DurableProvider | undefined;
  readonly #onStore: SimulationOptions['onStore'];
  /** SEP-2577's baseline: the lane's servers call the provider themselves (see direct.ts). */
  readonly direct: boolean;
  readonly #provider: ProviderSource;
  readonly #cards: Scenario['provider']['cards'];
  /** Requests being decided, in arrival order: a client restart cancels them (restart.ts). */
  readonly inFlight = new Map<string, RunHandle & { request: IncomingRequest }>();
  /** The request `receive` is handing to the machine, and whether it opened a dialog meanwhile. */
  #receiving: { key: string; asked: boolean } | null = null;

  constructor(
    readonly sim: Simulation,
    readonly id: LaneId,
    scenario: Scenario,
    root: Rng,
    opts: SimulationOptions
  ) {
    const lane = scenario.lanes[id];
    this.label = lane.label;
    const config = resolveClientConfig(lane.client);
    this.#durable = opts.durable;
    this.#onStore = opts.onStore;
    const { store, fellBack } = this.#buildStore(config);
    this.fellBack = fellBack;
    const provider = createProvider(scenario.provider, sim.clock, root.fork('provider'));
    const user = createUser(scenario.user, sim.clock, root.fork('user'));
    this.userStats = user.stats;
    this.providerStats = provider.stats;
    this.direct = lane.direct === true;
    this.#provider = provider.source;
    this.#cards = scenario.provider.cards;
    const sink = opts.onAudit;
    this.host = new ClientHost({
      config,
      policy: lane.policy,
      cards: cardsByModel(scenario.provider.cards),
      store,
      audit: new SinkAuditLog((r) => {
        this.metrics.charge(toMicros(r.cost));
        sink?.({ ...r, lane: id });
      }),
      clock: sim.clock,
      consent: sim.consent.source(id, user.source),
      provider: provider.source,
      lane: id,
      executor: opts.executor ?? 'table'
    });
  }

  /** A request arrives from a server: record the frame, run the machine, deliver the answer. */
  receive(server: ServerRuntime, id: JsonRpcId, params: SamplingParams): void {
    if (this.direct) return this.#callDirect(server, id, params);
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
    const annotate = this.host.config.annotateTrim;
    const key = `${connection}\u0000${String(id)}`;
    let done = false;
    const receiving = (this.#receiving = { key, asked: false });
    const handle = this.host.authorize(request, (out) => {
      done = true;
      this.inFlight.delete(key);
      const now = sim.clock.now();
      this.metrics.decided(out, annotate);
      sim.opts.onDecision?.(this.id, request, out);
      if (!out.frame) return; // silenced: the server learns nothing and must infer.
      const frame = out.frame;
      sim.opts.onFrame?.({
        t: now,
        lane: this.id,
        server: server.name,
        connection,
        direction: 'out',
        frame
      });
      // Delivered as its own event, and only over the connection that asked: a frame for a
      // closed transport goes nowhere.
      sim.clock.schedule(now, () => {
        if (server.connected() && server.connection === connection)
          server.agent?.onFrame(id, frame);
      });
    });
    this.#receiving = null;
    if (done) return;
    this.inFlight.set(key, Object.assign(handle, { request }));
    // A dialog opened while the machine ran (it does so synchronously): tell of it now that the
    // request and its path can be read.
    if (receiving.asked) sim.opts.onConsentAsked?.(this.id, request, askedFacts(handle));
  }

  /** A consent dialog opened for one of this lane's requests (dialogs.ts). */
  asked(input: ConsentInput): void {
    const key = `${input.connection}\u0000${String(input.requestId)}`;
    if (this.#receiving?.key === key) {
      this.#receiving.asked = true;
      return;
    }
    const flying = this.inFlight.get(key);
    if (flying) this.sim.opts.onConsentAsked?.(this.id, flying.request, askedFacts(flying));
  }

  /** No frame, no audit record, no dialog: the client never sees the request. */
  #callDirect(server: ServerRuntime, id: JsonRpcId, params: SamplingParams): void {
    const clock = this.sim.clock;
    const connection = server.connection;
    this.metrics.counters.providerCalls++;
    const call = { server: server.name, id, params, now: clock.now() };
    callDirect(this.#provider, this.#cards, call, (frame, cost) => {
      this.metrics.counters.serverSpendMicros += cost;
      clock.schedule(clock.now(), () => {
        if (server.connected() && server.connection === connection)
          server.agent?.onFrame(id, frame);
      });
    });
  }

  /** The lane's store for `config` (lane-store.ts), seen by the run's invariants when they watch. */
  #buildStore(config: ClientConfig) {
    const built = buildLaneStore(this.id, config, this.#durable);
    const observe = this.#onStore;
    if (!observe) return built;
    return { ...built, store: tapStore(built.store, (e) => observe(this.id, e)) };
  }

  setConfig(input: ClientConfigInput): void {
    const next = resolveClientConfig(input);
    // A change of scope is a change of where state lives: the new store starts empty. (The alert
    // settings are read live from the config by the host.)
    if (next.store !== this.host.config.store) {
      const built = this.#buildStore(next);
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
    this.#durable = durable;
    if (this.host.config.store !== 'durable') return;
    const built = this.#buildStore(this.host.config);
    this.host.store = built.store;
    this.fellBack = built.fellBack;
  }
}
