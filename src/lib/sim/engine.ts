/**
 * The simulation engine: one virtual clock, one seeded population, two lanes.
 *
 * Each lane is a client host (its own configuration, policy, decision store, provider and user)
 * facing its own copy of the same server population. Random streams are forked by label —
 * `server:NAME`, `provider`, `user` — never by lane, so the two lanes draw the same numbers until
 * their configurations make them diverge. Nothing here reads the wall clock or Math.random: the
 * same scenario and seed give byte-identical frames and audit records in Node and in a browser.
 */
import type { AuthOutput, ConsentInput, IncomingRequest } from '../machine/authorize';
import type { RunHandle } from './client';
import { resolveClientConfig, type ClientConfig, type ClientConfigInput } from '../machine/config';
import { toMicros } from '../machine/money';
import type { Policy } from '../machine/policy';
import type {
  AuditRecord,
  Frame,
  JsonRpcId,
  Money,
  SamplingParams,
  SamplingRequest
} from '../machine/types';
import type { AuditLog } from '../store/audit-log';
import { buildLaneStore, type DurableProvider } from './lane-store';
import { ClientHost, type Executor, type ProviderSource } from './client';
import { ConsentDesk } from './dialogs';
import { VirtualClock } from './clock';
import { callDirect } from './direct';
import { LaneMetrics } from './metrics';
import { cardsByModel, createProvider } from './provider';
import { Rng } from './rng';
import { extensionProblem, formatSpan } from './extend';
import { LANE_IDS, type LaneId, type Scenario } from './scenario';
import { applyWireStyle } from './servers/request';
import { createServer } from './servers/behaviours';
import type { TraceEvent } from './trace';
import { tapStore, type StoreEvent } from './store-tap';
import { createUser } from './user';
import { restartLane, type RestartReport } from './restart';
import type { ServerAgent, ServerEnv, ServerReport, ServerSpec, Task, WireStyle } from './world';

/** One line of `frames.jsonl`: a frame in either direction, as sent. */
export interface FrameLine {
  t: number;
  lane: LaneId;
  server: string;
  connection: string;
  /** `in`: a request the client received; `out`: the client's one response. */
  direction: 'in' | 'out';
  frame: SamplingRequest | Frame;
}

/** A request whose consent dialog just opened: where it is in the machine. */
export interface AskedFacts {
  identity: string;
  /** The states it went through so far (ending in `consenting`). */
  path: string[];
}

/** A change the learner made mid-run, marked on the timeline. */
export interface TimelineMark {
  t: number;
  lane: LaneId;
  what: string;
  /** What kind of moment it is; absent on configuration and policy edits (older marks). */
  kind?: 'restart' | 'fork' | 'extend';
}

/**
 * Where in a run something happened: the virtual time and how many clock events had run. Two
 * actions at the same virtual time are told apart by the event count, so re-simulating a run and
 * applying its actions at the same positions gives the same bytes (checkpoint.ts).
 */
export interface RunPosition {
  t: number;
  events: number;
}

/** A change applied to a running simulation from outside it, at its position (checkpoint.ts). */
export type TimelineAction = RunPosition &
  (
    | { kind: 'config'; lane: LaneId; client: ClientConfigInput; what: string }
    | { kind: 'policy'; lane: LaneId; policy: Policy }
    | { kind: 'restart' }
    | { kind: 'extend'; end: number }
    /** From here, a person answers these lanes' consent dialogs (the others', the simulated user). */
    | { kind: 'human'; lanes: LaneId[] }
    /** A person answered a dialog (dialogs.ts): the request `requestId` on `connection`. */
    | { kind: 'consent'; lane: LaneId; connection: string; requestId: JsonRpcId; approved: boolean }
  );

export interface SimulationOptions {
  /** Override the scenario's seed. */
  seed?: number;
  /** Receives every frame line (the CLI writes them; the UI keeps a window of them). */
  onFrame?: (line: FrameLine) => void;
  /** Receives every audit record. */
  onAudit?: (record: AuditRecord) => void;
  /** Receives every finished request: the inspector keeps params, path and frame. */
  onDecision?: (lane: LaneId, request: IncomingRequest, out: AuthOutput) => void;
  /**
   * Lanes whose consent dialogs a person answers from the start ("you are the user"); changes
   * later are `setHuman`, answers `answerConsent` (both timeline actions; dialogs.ts).
   */
  human?: readonly LaneId[];
  /**
   * A consent dialog opened (whoever answers it): the request, and its path through the machine
   * so far. The `consent` breakpoint holds here, with the request waiting on the user.
   */
  onConsentAsked?: (lane: LaneId, request: IncomingRequest, asked: AskedFacts) => void;
  /**
   * Where durable lanes keep their decisions (the browser's IndexedDB, per run); undefined = in
   * memory. Connection-scoped lanes are always in memory. See lane-store.ts.
   */
  durable?: DurableProvider;
  /** Replay these events instead of running the simulated population. */
  trace?: TraceEvent[];
  /** Sees every change to a lane's decision store (the run's invariants read what was stored). */
  onStore?: (lane: LaneId, event: StoreEvent) => void;
  /**
   * How each request's authorisation machine runs (client.ts): `table` (default) interprets the
   * machine's transition table; `actor` runs an XState actor per request. Same bytes either way.
   */
  executor?: Executor;
  /** Restart the client at these virtual ms from the start (as the scenario's `restarts` does). */
  restartAt?: readonly number[];
  /** Receives every client restart's report (the page's notice; the CLI's summary line). */
  onRestart?: (report: RestartReport) => void;
  /** Called after each metrics sample at `t`, every event up to `t` run (checkpoint.ts). */
  onSample?: (t: number) => void;
}

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

class ServerRuntime implements ServerEnv {
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

export class Simulation {
  readonly clock: VirtualClock;
  readonly lanes: Record<LaneId, LaneRuntime>;
  readonly start: number;
  readonly seed: number;
  readonly marks: TimelineMark[] = [];
  /** Every change applied from outside, at its position: enough to re-simulate the run. */
  readonly actions: TimelineAction[] = [];
  /** Every client restart, scheduled or asked for. */
  readonly restarts: RestartReport[] = [];
  /** Who answers each lane's consent dialogs, and the dialogs waiting for a person. */
  readonly consent: ConsentDesk;
  #end: number;
  #nextSample: number;
  #events = 0;
  #halt = false;
  #recording = true;

  constructor(
    readonly scenario: Scenario,
    readonly opts: SimulationOptions = {}
  ) {
    this.seed = opts.seed ?? scenario.seed;
    this.start = scenario.start;
    this.#end = scenario.start + scenario.durationMs;
    this.clock = new VirtualClock(this.start);
    this.consent = new ConsentDesk([], (lane, input) => this.lanes[lane].asked(input));
    // Who answers from the start is on the timeline too: a reload re-simulates the run from its
    // actions alone (run-memory.ts), whatever the reloaded page's checkbox says.
    if (opts.human?.length) this.setHuman(opts.human);
    const root = new Rng(this.seed);
    this.lanes = {
      A: new LaneRuntime(this, 'A', scenario, root, opts),
      B: new LaneRuntime(this, 'B', scenario, root, opts)
    };
    for (const id of LANE_IDS) {
      const lane = this.lanes[id];
      if (opts.trace) {
        for (const name of new Set(opts.trace.map((e) => e.server))) {
          lane.servers.set(name, new ServerRuntime(lane, { name }, root));
        }
      } else {
        for (const spec of scenario.servers) {
          const s = new ServerRuntime(lane, spec, root);
          s.agent = createServer(s, spec);
          lane.servers.set(spec.name, s);
        }
      }
    }
    this.#nextSample = this.start;
    this.#sample();
    if (opts.trace) this.#scheduleTrace(opts.trace);
    else
      for (const id of LANE_IDS)
        for (const s of this.lanes[id].servers.values()) {
          s.connect();
          s.agent!.start();
        }
    // Restarts written into the scenario (a lesson's) or asked for on the command line run as
    // events of their own, so they fall at the same place in every run of the same input.
    const at = [...(scenario.data?.restarts ?? []), ...(opts.restartAt ?? [])];
    for (const ms of [...new Set(at)].sort((a, b) => a - b))
      this.clock.schedule(this.start + ms, () => this.#restart());
  }

  #record(a: TimelineAction): void {
    if (this.#recording) this.actions.push(a);
  }

  /**
   * Run `fn` without recording the actions it applies: a fork schedules the other lane's later
   * history as events of its own branch, which re-creating the branch schedules again (fork.ts).
   */
  unrecorded(fn: () => void): void {
    const was = this.#recording;
    this.#recording = false;
    try {
      fn();
    } finally {
      this.#recording = was;
    }
  }

  /** Virtual time at which the run ends (extendTo moves it). */
  get end(): number {
    return this.#end;
  }

  /** Clock events run so far: with `now`, the run's exact position. */
  get events(): number {
    return this.#events;
  }

  get position(): RunPosition {
    return { t: this.clock.now(), events: this.#events };
  }

  /**
   * Stop the advance in progress after the event now running (a breakpoint held). `advanceTo`
   * returns early with time at that event; the next call continues from there.
   */
  halt(): void {
    this.#halt = true;
    this.clock.interrupt();
  }

  #scheduleTrace(events: TraceEvent[]): void {
    for (const id of LANE_IDS) {
      const lane = this.lanes[id];
      for (const e of events) {
        const server = lane.servers.get(e.server)!;
        this.clock.schedule(this.start + e.t, () => {
          if (e.type === 'connect') server.connect();
          else if (e.type === 'disconnect') server.disconnect();
          else {
            // A trace request on a server that never connected: it connects implicitly.
            if (!server.connected()) server.connect();
            server.send(e.params!, { n: 0, attempts: 1, startedAt: this.clock.now() });
          }
        });
      }
    }
  }

  #sample(): void {
    const now = this.clock.now();
    // A sample at `now` waits while events at `now` are still pending (a slice cut by its event
    // limit, or a breakpoint): it must see all of them, as an uninterrupted run's does.
    const pendingNow = (this.clock.nextAt() ?? Infinity) <= now;
    while (this.#nextSample < now || (this.#nextSample === now && !pendingNow)) {
      for (const id of LANE_IDS) {
        const lane = this.lanes[id];
        // Expired decisions are misses anyway; sweeping them on the virtual clock keeps a long
        // run's memory to its live entries (and is the same in Node and the worker).
        void lane.host.store.sweep(this.#nextSample);
        lane.metrics.sample(this.#nextSample);
      }
      this.opts.onSample?.(this.#nextSample);
      this.#nextSample += this.scenario.sampleMs;
    }
  }

  get now(): number {
    return this.clock.now();
  }

  get done(): boolean {
    return this.clock.now() >= this.end;
  }

  /**
   * Advance virtual time to `t` (never past the end), running at most `limit` events. Returns the
   * number of events run; when the limit cut the slice short, time stays at the last event.
   */
  advanceTo(t: number, limit = Infinity): number {
    const target = Math.min(t, this.end);
    let n = 0;
    this.#halt = false;
    // Sample on the way so the series have points at every sampleMs, however big the slice.
    while (this.clock.now() < target && n < limit) {
      const stop = Math.min(target, this.#nextSample);
      const ran = this.clock.runUntil(stop, limit - n);
      n += ran;
      this.#events += ran;
      this.#sample();
      if (this.#halt || this.clock.now() < stop) break;
    }
    return n;
  }

  /** Run one event (the playground's "step"). */
  step(): boolean {
    const next = this.clock.nextAt();
    if (next === null || next > this.end) return false;
    // Samples due before the event see the state before it, as in `advanceTo`.
    this.#sampleBefore(next);
    this.clock.step();
    this.#events++;
    this.#sample();
    return true;
  }

  #sampleBefore(next: number): void {
    while (this.#nextSample < next && this.#nextSample <= this.end) {
      for (const id of LANE_IDS) {
        const lane = this.lanes[id];
        void lane.host.store.sweep(this.#nextSample);
        lane.metrics.sample(this.#nextSample);
      }
      this.opts.onSample?.(this.#nextSample);
      this.#nextSample += this.scenario.sampleMs;
    }
  }

  runToEnd(): void {
    this.advanceTo(this.end);
  }

  /** Change a lane's client configuration mid-run; it applies to requests from now on. */
  setLaneConfig(lane: LaneId, input: ClientConfigInput, what = 'configuration changed'): void {
    this.#record({ ...this.position, kind: 'config', lane, client: input, what });
    this.lanes[lane].setConfig(input);
    this.marks.push({ t: this.clock.now(), lane, what });
  }

  /** Apply a validated policy to a lane mid-run; returns the invalidated decisions per server. */
  setLanePolicy(lane: LaneId, policy: Policy): Record<string, number> {
    this.#record({ ...this.position, kind: 'policy', lane, policy });
    const out = this.lanes[lane].setPolicy(policy);
    const n = Object.values(out).reduce((a, b) => a + b, 0);
    this.marks.push({
      t: this.clock.now(),
      lane,
      what: `policy edited (${n} stored decisions invalidated)`
    });
    return out;
  }

  /**
   * From now on a person answers the consent dialogs of `lanes` (the others go to the simulated
   * user; dialogs already open stay with whoever has them). Returns false when nothing changed.
   */
  setHuman(lanes: readonly LaneId[]): boolean {
    const sorted = LANE_IDS.filter((l) => lanes.includes(l));
    const before = this.consent.human;
    if (before.length === sorted.length && before.every((l, i) => l === sorted[i])) return false;
    this.#record({ ...this.position, kind: 'human', lanes: sorted });
    this.consent.setHuman(sorted);
    return true;
  }

  /**
   * A person answers the open dialog of lane `lane`'s request `requestId` on `connection`.
   * Returns false when no such dialog is open (answered already, or closed by a timeout).
   */
  answerConsent(
    lane: LaneId,
    connection: string,
    requestId: JsonRpcId,
    approved: boolean
  ): boolean {
    if (!this.consent.find(lane, connection, requestId)) return false;
    this.#record({ ...this.position, kind: 'consent', lane, connection, requestId, approved });
    return this.consent.answer(lane, connection, requestId, approved);
  }

  /**
   * Restart the client now, both lanes (restart.ts): requests in flight are cancelled, every
   * server's connection drops and reconnects, the connection-scoped lane's decisions are gone and
   * the durable lane's kept. Returns the counts per lane; the timeline marks it.
   */
  restartClient(): RestartReport {
    this.#record({ ...this.position, kind: 'restart' });
    return this.#restart();
  }

  #restart(): RestartReport {
    const t = this.clock.now();
    const lanes = {} as RestartReport['lanes'];
    for (const id of LANE_IDS) lanes[id] = restartLane(this.lanes[id], t);
    const report: RestartReport = { t, lanes };
    this.restarts.push(report);
    for (const id of LANE_IDS) {
      const l = lanes[id];
      const what =
        l.scope === 'durable'
          ? `client restarted (kept ${l.kept} stored decisions)`
          : `client restarted (lost ${l.lost} stored decisions)`;
      this.marks.push({ t, lane: id, what, kind: 'restart' });
    }
    this.opts.onRestart?.(report);
    return report;
  }

  /**
   * Let the run go on past the scenario's end, to `end` (virtual ms), within the limits every
   * scenario is held to. Returns why not, in plain words, when it cannot.
   */
  extendTo(end: number): { ok: true } | { ok: false; message: string } {
    const check = extensionProblem(this.scenario, end);
    if (check) return { ok: false, message: check };
    if (end <= this.#end) return { ok: true };
    this.#record({ ...this.position, kind: 'extend', end });
    this.#end = end;
    for (const lane of LANE_IDS)
      this.marks.push({
        t: this.clock.now(),
        lane,
        what: `run extended to ${formatSpan(end - this.start)}`,
        kind: 'extend'
      });
    return { ok: true };
  }
}
