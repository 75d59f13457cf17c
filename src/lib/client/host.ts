/**
 * The client host: one configured MCP client ("a lane") that authorises sampling requests by
 * running one authorisation-machine actor per request, with its IO wired to a decision store,
 * an audit log, a volume ledger (rate limits, budget windows, session pools), a consent source
 * and a provider.
 *
 * The same host runs in the simulation (virtual clock, simulated user and provider), on the page
 * (the learner answers the dialogs) and in the shipped handler (real time, the MCP client's
 * callbacks): only its driver differs (driver.ts). It knows nothing about servers' behaviour.
 *
 * Why one file of ~800 lines: the host's five steps (lookup, evaluate, consent, provider,
 * commit), its in-flight joins and its volume ledger share the host's private state — the
 * reservations a step makes are the ones commit settles or a cancel releases — and they are
 * methods so a copied run calls its copied host (issue #21). Split, each part would need that
 * state passed or made public; host-steps.ts already holds what needs none of it.
 */
import type {
  AuthContext,
  AuthorizationActor,
  AuthInput,
  AuthOutput,
  CommitInput,
  ConsentInput,
  EvaluateRequest,
  IncomingRequest,
  LookupInput,
  ProviderInput
} from '../machine/authorize';
// The flow and its table, not machine.ts: XState loads only with the actor executor
// (actor-executor.ts), so the simulation's worker runs without it.
import { authorizationFlow, STEP_TIMEOUT_MS, type StepName } from '../machine/authorize/flow';
import {
  FastRun,
  tableOf,
  type FastObserver,
  type MachineTable,
  type StepArgs,
  type StepLogic
} from '../machine/authorize/fast';
import { estimateCostMicros, type RateCard } from '../machine/budget';
import { providerErrorFrame } from '../machine/frames';
import { contextRequested, meteredMicros } from '../machine/authorize/outcomes';
import { fromMicrosExact, toMicros } from '../machine/money';
import type { AuditRecord, Money, StoredDecision } from '../machine/types';
import type { ClientConfig } from '../machine/config';
import {
  addSpend,
  countRequest,
  evaluate,
  initialVolume,
  rollVolume,
  type VolumeState
} from '../machine/evaluate';
import { effectiveBlock, policyHash } from '../machine/policy/effective';
import type { Policy, PolicyBlock } from '../machine/policy';
import type { AuditLog } from '../store/audit-log';
import type { DecisionStore, LookupResult, MaybePromise } from '../store/decision-store';
import { copyable } from '../machine/clone';
import { HostStep, TableHandle, Waiter, type Flight } from './host-steps';
import { PresentationHistory } from './presentations';
import type { ConsentActor, ConsentSource, Driver, ProviderActor, ProviderSource } from './driver';

export interface ClientHostOptions {
  config: ClientConfig;
  policy: Policy;
  cards: Record<string, RateCard>;
  store: DecisionStore;
  audit: AuditLog;
  clock: Driver;
  /** Who answers dialogs: a callback, or an actor (the simulation's, which can be copied). */
  consent: ConsentSource | ConsentActor;
  /** Who runs model calls: a callback, or an actor (the simulation's). */
  provider: ProviderSource | ProviderActor;
  lane?: string;
  /** How each request's machine is run (default `actor`). */
  executor?: Executor;
}

/** Money a running call holds against its server's window and its connection's pool. */
interface Reservation {
  server: string;
  connection: string;
  /** The call's request id as its reservation key holds it (`String(id)`). */
  request: string;
  micros: number;
  /** The latest virtual ms the call can end (its hold is released by then). */
  until: number;
}

function isPromise<T>(v: MaybePromise<T>): v is Promise<T> {
  return typeof (v as Promise<T> | undefined)?.then === 'function';
}

/** Run `then` on a value now, or when its promise settles; report a rejection as `fail`. */
function settle<T>(v: MaybePromise<T>, then: (v: T) => void, fail: (e: unknown) => void): void {
  if (isPromise(v)) v.then(then, fail);
  else then(v);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Who hears a request's outcome when it is an object (the simulation's lane keeps one record
 * per request in flight): a copy of the run copies it; a callback it cannot.
 */
export interface DecisionListener {
  decided(out: AuthOutput): void;
}

/** What `authorize` tells of a request's outcome: a callback or a listener. */
export type OnDone = ((out: AuthOutput) => void) | DecisionListener;

/**
 * The host's record of one request: whom to tell of its outcome, and whether it was told. The
 * run reports to it (its observer), and it to the host.
 */
class HostRequest implements FastObserver {
  finished = false;
  constructor(
    public host: ClientHost,
    readonly request: IncomingRequest,
    public onDone: OnDone
  ) {}
  complete(out: AuthOutput): void {
    this.host.requestEnded(this, out);
  }
  error(e: unknown, ctx: AuthContext | undefined): void {
    this.host.requestEnded(this, null, e, ctx);
  }
  tell(out: AuthOutput): void {
    const d = this.onDone;
    if (typeof d === 'function') d(out);
    else d.decided(out);
  }
}
// A request reporting to a callback cannot be copied (the copier says so); its request is shared.
copyable(HostRequest, { name: 'host.HostRequest', fields: { request: 'shared' } });

/** A request being authorised. */
export interface RunHandle {
  identity(): string;
  /** The states the request has gone through so far (a paused `consent` breakpoint shows them). */
  path?(): string[];
  /** The server cancelled the request: it still gets one frame, streamed tokens are charged. */
  cancel(): void;
}

export interface RequestHandle extends RunHandle {
  /** The request's machine: the /single/ page follows its live state. */
  readonly actor: AuthorizationActor;
}

/**
 * How a host runs each request's authorisation machine. `actor`: an XState actor per request
 * (with an invoked child actor per waiting state) — what the /single/ page follows live.
 * `table`: the same machine read once into a transition table and interpreted without actors
 * (machine/authorize/fast.ts) — byte-identical frames and audit records, several times faster;
 * what the simulation runs.
 */
export type Executor = 'actor' | 'table';

/** The steps a host invokes, by name (the flow's `invoke` sources): the host's own methods. */
export type HostSteps = Readonly<Record<StepName, StepLogic>>;

/**
 * The `actor` executor (actor-executor.ts, which brings XState): `machine` builds a host's
 * machine with its steps as invoked actors, once per host; `run` starts one request on it.
 */
export interface ActorExecutor {
  machine(steps: HostSteps): unknown;
  run(machine: unknown, clock: Driver, input: AuthInput, done: FastObserver): RequestHandle;
}

let actorExecutor: ActorExecutor | undefined;

/** Called by actor-executor.ts when it is imported. */
export function installActorExecutor(e: ActorExecutor): void {
  actorExecutor = e;
}

let table: MachineTable | undefined;

/** The flow's transition table, built on first use (a snapshot names its states by it). */
export function tableFor(): MachineTable {
  return (table ??= tableOf(authorizationFlow));
}

export class ClientHost implements HostSteps {
  config: ClientConfig;
  readonly cards: Record<string, RateCard>;
  /** Swappable: the learner may move a lane between connection scope and durable mid-run. */
  store: DecisionStore;
  readonly audit: AuditLog;
  readonly clock: Driver;
  readonly lane: string | undefined;
  /** Every presentation of every identity, for the retry-loop alert (outlives stored entries). */
  presentations = new PresentationHistory();
  private _policy: Policy;
  private hashes = new Map<string, string>();
  /**
   * Each server's effective block, made on first use and kept until the policy changes (as
   * `hashes`): a request read it four times (its evaluation, its volume twice, its charge), each
   * read a copy of the policy's defaults. Read only, never changed: a copy of the host makes its
   * own on use.
   */
  private _blocks: Map<string, PolicyBlock> | undefined = undefined;
  private ledger = new Map<string, VolumeState>();
  private _pools = new Map<string, number>();
  /**
   * What calls still running were estimated to cost, held against their server's budget window
   * and their connection's pool until they finish: without it, two calls evaluated while a third
   * runs would each be granted the whole remainder, and together overdraw it.
   */
  private reserved: Reservation[] = [];
  // An array, not a Map by reservation key: in a process that makes an AbortSignal per request
  // (the SDK does; handler.ts's `Running` says why it matters) a long-lived Map's entries are
  // promoted to the old generation even when deleted before the next scavenge, and a Map with a
  // key set and deleted per request rehashes into a fresh table every few requests. An array
  // slot is neither; a call's reservation is found by a scan, as `_heldUntil` already scans them
  // all (as many as the calls in flight that hold money).
  /** The reservations' sums by server and by connection (kept with `reserved`, read per call). */
  private heldBy = { server: new Map<string, number>(), connection: new Map<string, number>() };
  /**
   * Identities being decided, by identity: each the first of a list of the identity's flights
   * (`Flight.next`), one per place its decision lives (`findFlight`). Later presentations join
   * them. Keyed by the identity, not by a string of the place's parts: the identity is a string
   * the presentation history and the store's lookup have already hashed; a key built per
   * presentation was a fresh string, flattened and hashed again.
   */
  private _flights = new Map<string, Flight>();
  /** How many flights `_flights` holds (its lists' lengths, summed). */
  private _flightCount = 0;
  /**
   * Which flight each leading request decides, by its connection, then its id (`String(id)`, as
   * its reservation names it): the flight it led, for its place — the flight found there when it
   * lands is the one landed, as with a key. By connection first, not by a '<connection>\0<id>'
   * string: that was a fresh string built, flattened and hashed twice per request. A connection's
   * map goes when it empties (what a closed connection held is let go).
   *
   * A list when one id leads more than one identity at once: JSON-RPC ids are the server's to
   * choose, and a buggy or hostile server may send id 7 for two different requests while both
   * run. Each request then lands the flight of its own identity: with a single slot, the second
   * lead took the first's place, so the first request's verdict landed the second identity's
   * waiters (an approval of X allowed a request for Y without asking) and the first flight was
   * never landed (host.trust.spec.ts).
   */
  private leaders = new Map<string, Map<string, Flight | Flight[]>>();
  private _seq = 0;
  /**
   * A model's rate card, for `evaluate`: one function for the host's life, not one per call —
   * made on first use (a closure over the host: a copy makes its own).
   */
  private _card: ((m: string) => RateCard | undefined) | undefined = undefined;
  /** The actor executor's machine with this host's steps, built on the first actor run. */
  private _machine: unknown;
  private readonly _executor: Executor;
  /** Who answers dialogs: an actor is copied with the host; a callback cannot be (clone.ts). */
  private readonly consent: ConsentSource | ConsentActor;
  /** Who runs model calls (as `consent`). */
  private readonly provider: ProviderSource | ProviderActor;

  constructor(opts: ClientHostOptions) {
    this.config = opts.config;
    this.cards = opts.cards;
    this.store = opts.store;
    this.audit = opts.audit;
    this.clock = opts.clock;
    this.lane = opts.lane;
    this._policy = opts.policy;
    this._executor = opts.executor ?? 'actor';
    this.consent = opts.consent;
    this.provider = opts.provider;
  }

  // The invoked steps (the flow's `invoke` sources), as methods: a request's run calls them on
  // its host (FastRun's `steps`), so a copy of the run calls its host's copy; the actor path
  // wraps each in `fromCallback` (`handle`). A step that waits is a record (HostStep).

  lookupDecision({ input, port }: StepArgs): HostStep {
    const step = new HostStep(this, port);
    this.present(input as LookupInput, step);
    return step;
  }

  evaluatePolicy({ input, port }: StepArgs): void {
    // One reading of the clock for the evaluation and its event (one instant on a virtual clock;
    // a real one is read ~12 times a request, ~0.1 µs each).
    const now = this.clock.now();
    port.send({
      type: 'policy.evaluated',
      evaluation: this.evaluate(input as EvaluateRequest, now),
      at: now
    });
  }

  askConsent({ input, port }: StepArgs): HostStep {
    const step = new HostStep(this, port);
    const c = this.consent;
    if (typeof c === 'function')
      step.cancelWith(c(input as ConsentInput, (approved) => step.answer(approved)));
    else step.started(c, c.ask(input as ConsentInput, step));
    return step;
  }

  callProvider({ input, port }: StepArgs): HostStep {
    const step = new HostStep(this, port);
    const p = this.provider;
    if (typeof p === 'function')
      step.cancelWith(
        p(input as ProviderInput, (ev, owned) => (owned ? step.emitOwned(ev) : step.emit(ev)))
      );
    else step.started(p, p.call(input as ProviderInput, step));
    return step;
  }

  commitDecision({ input, port }: StepArgs): HostStep {
    const step = new HostStep(this, port);
    const { connection, decision } = input as CommitInput;
    try {
      const r = this.store.commit(connection, decision);
      if (isPromise(r))
        r.then(
          () => this.committed(step),
          (e: unknown) => this.committed(step, errorText(e))
        );
      else this.committed(step);
    } catch (e) {
      this.committed(step, errorText(e));
    }
    return step;
  }

  /**
   * The flight deciding an identity in one place, if any. Where an identity's decision lives: a
   * connection-scoped store decides per connection (`connection`), a durable one for every
   * connection of the server (null). The policy hash is part of it: a presentation under an
   * edited policy never joins one decided under the old.
   */
  private findFlight(
    connection: string | null,
    server: string,
    identity: string,
    policyHash: string
  ): Flight | undefined {
    for (let f = this._flights.get(identity); f !== undefined; f = f.next ?? undefined)
      if (f.connection === connection && f.server === server && f.policyHash === policyHash)
        return f;
    return undefined;
  }

  /** `f` decides its place from now on: as a Map's set, a flight there before is replaced. */
  private setFlight(f: Flight): void {
    const head = this._flights.get(f.identity);
    const old = head && this.findFlight(f.connection, f.server, f.identity, f.policyHash);
    const rest = old ? this.unlinkFlight(head, old) : (head ?? null);
    f.next = rest;
    this._flights.set(f.identity, f);
    this._flightCount++;
  }

  /** The flight landed: out of its identity's list (and the map, when it was the last). */
  private deleteFlight(f: Flight): void {
    const rest = this.unlinkFlight(this._flights.get(f.identity)!, f);
    if (rest === null) this._flights.delete(f.identity);
    else this._flights.set(f.identity, rest);
  }

  /** `f` out of the list that starts at `head`: the list's new start. */
  private unlinkFlight(head: Flight, f: Flight): Flight | null {
    this._flightCount--;
    let start: Flight | null = head;
    if (head === f) start = f.next;
    else
      for (let g = head; g.next !== null; g = g.next)
        if (g.next === f) {
          g.next = f.next;
          break;
        }
    f.next = null;
    return start;
  }

  /**
   * One presentation: counted in the history (for the alert), then answered from the store, or
   * — when the same identity is being decided in the same scope — from that decision once it
   * lands: one consent dialog and one rate-limit count per identity, not one per retry.
   */
  private present(input: LookupInput, step: HostStep): void {
    const now = this.clock.now();
    // Keyed by the identity itself, which names its server (`<server>:<32 hex digits>`,
    // machine/identity.ts): the string the store's lookup hashes next, hashed once for both —
    // a key built per presentation was a fresh string, flattened and hashed each time.
    const { alert } = this.presentations.record(input.identity, now, this.config.alert);
    this.enter(input, alert, step, now);
  }

  /** `now`: the clock's reading, when the caller has just taken it (one instant: see `present`). */
  private enter(input: LookupInput, alert: boolean, step: HostStep, now = this.clock.now()): void {
    // The place is the one of this moment, whenever the store answers (the scope may change).
    const scope = this.store.scope === 'connection' ? input.connection : null;
    const flight = this.findFlight(scope, input.server, input.identity, input.policyHash);
    if (flight) {
      step.send({ type: 'store.joining', at: now });
      flight.waiters.push(new Waiter(input, alert, step));
      return;
    }
    // Methods, not closures: a memory store answers in this turn, every request passes here.
    try {
      const looked = this.store.lookup(
        input.server,
        input.connection,
        input.identity,
        input.policyHash,
        now
      );
      if (isPromise(looked))
        looked.then(
          (hit) => this.looked(input, scope, alert, step, hit, this.clock.now()),
          (e: unknown) => this.lookupFailed(input, scope, alert, step, e)
        );
      else this.looked(input, scope, alert, step, looked, now);
    } catch (e) {
      this.lookupFailed(input, scope, alert, step, e);
    }
  }

  /** This presentation decides its identity: later ones join it until it lands. */
  private lead(input: LookupInput, scope: string | null): void {
    const f: Flight = {
      waiters: [],
      represented: 0,
      connection: scope,
      server: input.server,
      identity: input.identity,
      policyHash: input.policyHash,
      next: null
    };
    this.setFlight(f);
    let byId = this.leaders.get(input.connection);
    if (byId === undefined) {
      byId = new Map();
      this.leaders.set(input.connection, byId);
    }
    const id = String(input.requestId);
    const had = byId.get(id);
    if (had === undefined || (!Array.isArray(had) && had.identity === f.identity)) byId.set(id, f);
    else if (!Array.isArray(had)) byId.set(id, [had, f]);
    else {
      const i = had.findIndex((g) => g.identity === f.identity);
      if (i < 0) had.push(f);
      else had[i] = f;
    }
  }

  private looked(
    input: LookupInput,
    scope: string | null,
    alert: boolean,
    step: HostStep,
    hit: LookupResult | null,
    at: number
  ): void {
    if (hit) {
      step.send({ type: 'store.hit', decision: hit.decision, alert, at });
    } else {
      this.lead(input, scope);
      step.send({ type: 'store.miss', alert, at });
    }
  }

  private lookupFailed(
    input: LookupInput,
    scope: string | null,
    alert: boolean,
    step: HostStep,
    e: unknown
  ) {
    this.lead(input, scope);
    step.send({ type: 'store.failed', error: errorText(e), alert, at: this.clock.now() });
  }

  /** A commit ended (with `error` when it failed): the step says so while it is live. */
  private committed(step: HostStep, error?: string): void {
    if (!step.live) return;
    const at = this.clock.now();
    step.send(error ? { type: 'commit.failed', error, at } : { type: 'commit.done', at });
  }

  /**
   * The decision this presentation waited for has landed. The store answers first (that bumps
   * `represented` on the entry); a verdict that was not stored (an allowed call without "do not
   * ask again") is handed over directly. No verdict (a crash, or a cost refusal, which depends on
   * maxTokens outside the identity) means this presentation is decided afresh — joining whichever
   * waiter leads now.
   */
  private join(w: Waiter, flight: Flight, verdict: StoredDecision | null): void {
    const { input, alert, step } = w;
    if (!verdict) {
      // A waiter whose request already ended (cancelled by a client restart) must not lead a new
      // decision: no request would ever land it, and every later presentation would wait on it.
      if (step.live) this.enter(input, alert, step);
      return;
    }
    const direct = () => {
      flight.represented += 1;
      step.send({
        type: 'store.hit',
        decision: { ...verdict, represented: flight.represented, recent: [] },
        alert,
        joined: true,
        at: this.clock.now()
      });
    };
    try {
      settle(
        this.store.lookup(
          input.server,
          input.connection,
          input.identity,
          input.policyHash,
          this.clock.now()
        ),
        (hit) =>
          hit
            ? step.send({
                type: 'store.hit',
                decision: hit.decision,
                alert,
                joined: true,
                at: this.clock.now()
              })
            : direct(),
        direct
      );
    } catch {
      direct();
    }
  }

  /**
   * A request finished: if it led a decision, the presentations waiting on it get its verdict.
   */
  private land(request: IncomingRequest, verdict: StoredDecision | null, identity: string): void {
    const byId = this.leaders.get(request.connection);
    if (byId === undefined) return;
    const id = String(request.id);
    const entry = byId.get(id);
    if (entry === undefined) return;
    // Only a flight of this request's own identity ('' when its machine failed before knowing it:
    // then the one led under its id, as before).
    let led: Flight;
    if (Array.isArray(entry)) {
      const i = entry.findIndex((g) => g.identity === identity);
      if (i < 0) return;
      led = entry[i]!;
      entry.splice(i, 1);
      if (entry.length === 1) byId.set(id, entry[0]!);
    } else {
      if (identity !== '' && entry.identity !== identity) return;
      led = entry;
      // The connection's last leader (the usual case: one request in flight per connection) goes
      // with its map, which is not emptied first: V8 shrinks a Map whose last entry is deleted
      // (a runtime call and a new table, ~1.8 MB/s of the sim worker's garbage in live play).
      if (byId.size === 1) this.leaders.delete(request.connection);
      else byId.delete(id);
    }
    if (byId.size === 0) this.leaders.delete(request.connection);
    // The flight in its place now: another may have replaced it there (a second lead of the same
    // identity whose store answered later), and it is that one that lands, as by a key.
    const flight = this.findFlight(led.connection, led.server, led.identity, led.policyHash);
    if (!flight) return;
    this.deleteFlight(flight);
    for (const w of flight.waiters) this.join(w, flight, verdict);
  }

  get policy(): Policy {
    return this._policy;
  }

  /** How this host runs each request's machine. */
  get executor(): Executor {
    return this._executor;
  }

  /** The server's effective policy block (cached until the policy changes; never change it). */
  blockFor(server: string): PolicyBlock {
    const blocks = (this._blocks ??= new Map());
    let b = blocks.get(server);
    if (b === undefined) {
      b = effectiveBlock(this._policy, server);
      blocks.set(server, b);
    }
    return b;
  }

  /** The server's effective policy block hash (cached until the policy changes). */
  policyHashFor(server: string): string {
    let h = this.hashes.get(server);
    if (h === undefined) {
      h = policyHash(this._policy, server);
      this.hashes.set(server, h);
    }
    return h;
  }

  /**
   * Apply a new (already validated) policy. Servers whose effective block changed have their
   * stored decisions invalidated, and only those, one after another. Returns how many entries
   * each lost: at once when the store answers at once (memory, the write-behind durable store),
   * once the last invalidation has landed when it answers later. The one place a policy is
   * applied; {@link setPolicySync} is this for a caller that needs the counts now.
   */
  setPolicy(policy: Policy, servers: Iterable<string>): MaybePromise<Record<string, number>> {
    const changed: string[] = [];
    for (const s of servers)
      if (policyHash(policy, s) !== policyHash(this._policy, s)) changed.push(s);
    this._policy = policy;
    this.hashes.clear();
    this._blocks = undefined;
    const out: Record<string, number> = Object.create(null) as Record<string, number>;
    // Synchronous for as long as the store is: a simulated lane's edit lands within its step.
    const from = (i: number): MaybePromise<Record<string, number>> => {
      for (; i < changed.length; i++) {
        const s = changed[i]!;
        const n = this.store.invalidateServer(s);
        if (isPromise(n))
          return n.then((dropped) => {
            out[s] = dropped;
            return from(i + 1);
          });
        out[s] = n;
      }
      return out;
    };
    return from(0);
  }

  /** {@link setPolicy} for the simulation, whose stores answer at once: the counts, now. */
  setPolicySync(policy: Policy, servers: Iterable<string>): Record<string, number> {
    const out = this.setPolicy(policy, servers);
    if (!isPromise(out)) return out;
    // The invalidations still land; only the counts cannot be had now.
    out.catch(() => undefined);
    throw new Error("setPolicySync: the lane's decision store answers later; use setPolicy");
  }

  /** A server's connection closed: a connection-scoped store forgets what it decided there. */
  closeConnection(server: string, connection: string): MaybePromise<void> {
    this._pools.delete(connection);
    return this.store.closeConnection(server, connection);
  }

  /**
   * Authorise one request with the host's executor. `onDone` receives the one frame (or null
   * for silence) and the audit record.
   */
  authorize(request: IncomingRequest, onDone: OnDone): RunHandle {
    if (this._executor === 'actor') return this.handle(request, onDone);
    const r = new HostRequest(this, request, onDone);
    const run = new FastRun(tableFor(), this, this.clock, this._input(request), r);
    run.start();
    return new TableHandle(run, this);
  }

  /**
   * Authorise one request on an XState actor (the /single/ page follows its live state). Needs
   * the actor executor imported (`import '$lib/client/actor-executor'`).
   */
  handle(request: IncomingRequest, onDone: OnDone): RequestHandle {
    const actors = actorExecutor;
    if (!actors)
      throw new Error(
        "client host: the 'actor' executor is not loaded — import client/actor-executor.ts " +
          "(it brings XState), or run the host with executor: 'table'"
      );
    // The steps as functions (XState's callback actors call them so): this path is never copied.
    this._machine ??= actors.machine({
      lookupDecision: (a) => this.lookupDecision(a),
      evaluatePolicy: (a) => this.evaluatePolicy(a),
      askConsent: (a) => this.askConsent(a),
      callProvider: (a) => this.callProvider(a),
      commitDecision: (a) => this.commitDecision(a)
    });
    const r = new HostRequest(this, request, onDone);
    return actors.run(this._machine, this.clock, this._input(request), r);
  }

  private _input(request: IncomingRequest): AuthInput {
    const input: AuthInput = {
      request,
      config: this.config,
      policyHash: this.policyHashFor(request.server),
      cards: this.cards
    };
    // Set afterwards, not spread into the literal (built member by member at run time, once per
    // request): the same keys in the same order.
    if (this.lane) input.lane = this.lane;
    return input;
  }

  /**
   * A request's machine is done (`out`), whichever executor ran it, or failed (`out` null: the
   * fallback frame for `e`, from the context before the failing step). Its record calls this.
   */
  requestEnded(
    r: HostRequest,
    out: AuthOutput | null,
    e?: unknown,
    ctx?: AuthContext | undefined
  ): void {
    this.finish(r, out ?? this.fallback(r.request, ctx, e));
  }

  private finish(r: HostRequest, out: AuthOutput): void {
    if (r.finished) return;
    r.finished = true;
    const request = r.request;
    // Spend and the audit record, before the frame leaves: the log answers "why did the bill
    // triple" a month later, so nothing reaches a server unrecorded.
    out.audit.seq = ++this._seq;
    this.release(request.connection, String(request.id));
    this.charge(out.audit);
    void this.audit.append(out.audit);
    r.tell(out);
    this.land(request, out.verdict, out.audit.identity);
  }

  /** The one frame and record of a request whose machine failed: -32603, no data, no budget. */
  private fallback(request: IncomingRequest, ctx: AuthContext | undefined, e: unknown): AuthOutput {
    const frame = providerErrorFrame(request.id, `internal error: ${errorText(e)}`);
    const now = this.clock.now();
    let cost = 0;
    try {
      cost = ctx ? meteredMicros(ctx) : 0;
    } catch {
      cost = 0;
    }
    const audit: AuditRecord = {
      seq: 0,
      t: now,
      time: new Date(now).toISOString(),
      server: request.server,
      connection: request.connection,
      requestId: request.id,
      identity: ctx?.identity ?? '',
      outcome: 'provider_error',
      reason: null,
      retryable: null,
      replayed: false,
      represented: 0,
      consentShown: ctx?.path.includes('consenting') ?? false,
      consent: ctx?.consent ?? 'not-asked',
      model: null,
      tokensIn: 0,
      tokensOut: ctx?.gen.tokensOut ?? 0,
      cost: fromMicrosExact(cost),
      currency: 'USD',
      durationMs: now - request.receivedAt,
      contextRequested: contextRequested(request.params),
      contextApplied: null,
      budgetDecision: null,
      silenced: false,
      alert: ctx?.alert ?? false,
      ...(this.lane ? { lane: this.lane } : {})
    };
    return { frame, audit, path: [...(ctx?.path ?? []), 'erring', 'sent'], verdict: null };
  }

  /**
   * What the host holds for requests in flight (the shipped handler's memory bounds and its
   * tests read it): identities being decided, presentations waiting on them, reservations, and
   * the connections with a session pool.
   */
  held(): { flights: number; waiters: number; reservations: number; pools: number } {
    let waiters = 0;
    for (const first of this._flights.values())
      for (let f: Flight | null = first; f !== null; f = f.next) waiters += f.waiters.length;
    return {
      flights: this._flightCount,
      waiters,
      reservations: this.reserved.length,
      pools: this._pools.size
    };
  }

  /** The server's volume counters as they stand at `now` (windows roll over as time passes). */
  private volume(server: string, now: number): VolumeState {
    const block = this.blockFor(server);
    const v = this.ledger.get(server);
    return v ? rollVolume(v, block, now) : initialVolume(block, now);
  }

  private _held(key: 'server' | 'connection', value: string): number {
    return this.heldBy[key].get(value) ?? 0;
  }

  private hold(key: 'server' | 'connection', value: string, micros: number): void {
    const m = this.heldBy[key];
    const n = (m.get(value) ?? 0) + micros;
    if (n === 0) m.delete(value);
    else m.set(value, n);
  }

  /** Hold `micros` against the call's server and connection until it finishes. */
  private reserve(r: Reservation): void {
    this.release(r.connection, r.request);
    this.reserved.push(r);
    this.hold('server', r.server, r.micros);
    this.hold('connection', r.connection, r.micros);
  }

  /** The call's reservation (by its connection and request id) ends, if it holds one. */
  private release(connection: string, request: string): void {
    const all = this.reserved;
    let i = 0;
    while (i < all.length && (all[i]!.request !== request || all[i]!.connection !== connection))
      i++;
    if (i === all.length) return;
    const r = all[i]!;
    // The last one moves into its place: the order is never read (`_heldUntil` takes a minimum).
    const last = all.pop()!;
    if (last !== r) all[i] = last;
    this.hold('server', r.server, -r.micros);
    this.hold('connection', r.connection, -r.micros);
  }

  /** The earliest latest-end of the server's running calls that hold money, or null. */
  private _heldUntil(server: string): number | null {
    if (this._held('server', server) <= 0) return null;
    let first: number | null = null;
    for (const r of this.reserved)
      if (r.server === server && r.micros > 0 && (first === null || r.until < first))
        first = r.until;
    return first;
  }

  private evaluate(input: EvaluateRequest, now: number) {
    const block = this.blockFor(input.server);
    const volume = this.volume(input.server, now);
    const evaluation = evaluate({
      server: input.server,
      params: input.params,
      block,
      card: (this._card ??= (m) => this.cards[m]),
      volume,
      heldMicros: this._held('server', input.server),
      heldUntil: this._heldUntil(input.server),
      now,
      rateCounted: input.rateCounted,
      capScope: this.config.capScope,
      sessionPool: this.config.sessionPool,
      capState: {
        sessionPoolSpentMicros:
          (this._pools.get(input.connection) ?? 0) + this._held('connection', input.connection)
      },
      preflightDefault: this.config.preflightDefault
    });
    if (evaluation.kind === 'proceed') {
      const card = this.cards[evaluation.model];
      const estimate = card
        ? estimateCostMicros(card, evaluation.inputTokens, evaluation.maxTokens)
        : 0;
      // A truncating call can never spend past its limit: hold no more than that.
      const micros =
        evaluation.limitMicros === null ? estimate : Math.min(estimate, evaluation.limitMicros);
      // The latest this call can end: a dialog, the provider's deadline, and the commit.
      const c = this.config;
      const until =
        now +
        (evaluation.consent === 'ask' ? c.consentTimeoutMs : 0) +
        c.deadlineMs +
        STEP_TIMEOUT_MS;
      this.reserve({
        server: input.server,
        connection: input.connection,
        request: String(input.requestId),
        micros,
        until
      });
    }
    // Volume controls count every fresh evaluation, whatever its content: that is what bounds a
    // server that varies its requests to dodge identity. A presentation that joined an allowed
    // in-flight decision was counted with it.
    if (!input.rateCounted) this.ledger.set(input.server, countRequest(volume, block, now));
    return evaluation;
  }

  private charge(audit: AuditRecord): void {
    const micros = toMicros(audit.cost);
    if (micros <= 0) return;
    const { server, t, connection } = audit;
    const block = this.blockFor(server);
    this.ledger.set(server, addSpend(this.volume(server, t), block, t, micros));
    const pool = (this._pools.get(connection) ?? 0) + micros;
    this._pools.set(connection, Math.min(pool, Number.MAX_SAFE_INTEGER));
  }

  /** The server's rate and budget windows as they stand at `now` (a breakpoint shows them). */
  volumeAt(server: string, now: number): VolumeState {
    return this.volume(server, now);
  }

  /** Spent in the server's current budget window, in micro-units. */
  spentMicros(server: string): number {
    return this.ledger.get(server)?.budgetSpentMicros ?? 0;
  }

  /** The per-call ceiling a host would advertise at initialize (RFC open question), if any. */
  advertisedCeiling(server: string): Money | null {
    const cap = effectiveBlock(this._policy, server).perCallCap;
    return cap && 'amount' in cap ? { amount: cap.amount, currency: cap.currency } : null;
  }
}

/**
 * A host's copy (clone.ts) takes its configuration, rate cards and policy as they are (replaced,
 * never changed) and the copies of its store and audit log (the engine substitutes them: the
 * copy's hooks see its store), clock, consent and provider actors (a callback source cannot be
 * copied: the copier says so), history, flights (the leaders' among them: one copy each) and
 * reservations' sums. Its caches and ledgers
 * hold values replaced on every change (volume states, reservations, strings): new containers of
 * the same values. What it makes on use, it makes again.
 */
copyable(ClientHost, {
  name: 'host.ClientHost',
  fields: {
    config: 'shared',
    cards: 'shared',
    _policy: 'shared',
    hashes: 'shallow',
    ledger: 'shallow',
    _pools: 'shallow',
    reserved: 'shallow',
    _card: 'dropped',
    _blocks: 'dropped',
    _machine: 'dropped'
  },
  refuse: (h) =>
    h.executor === 'table' ? null : 'requests run as XState actors (only the table executor copies)'
});
