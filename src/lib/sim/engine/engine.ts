/**
 * The simulation engine: one virtual clock, one seeded population, two lanes.
 *
 * Each lane is a client host (its own configuration, policy, decision store, provider and user)
 * facing its own copy of the same server population. Random streams are forked by label —
 * `server:NAME`, `provider`, `user` — never by lane, so the two lanes draw the same numbers until
 * their configurations make them diverge. Nothing here reads the wall clock or Math.random: the
 * same scenario and seed give byte-identical frames and audit records in Node and in a browser.
 *
 * Just over 400 lines: the run's position, its timeline of outside changes and its copy are one
 * engine's, and split apart they would each reach into the others' private state.
 */
import { VirtualClock } from '../world/clock';
import { copyable } from '../../machine/clone';
import { engineCloneMap } from '../../store/connection-store';
import { ConsentDesk, type DialogWatcher } from '../actors/dialogs';
import { step } from './step';
import type { ConsentInput } from '../../machine/authorize';
import type { ClientConfigInput } from '../../machine/config';
import type { Policy } from '../../machine/policy';
import type { JsonRpcId } from '../../machine/types';
import { extensionProblem, formatSpan } from './extend';
import { LaneRuntime, ServerRuntime } from './lane';
import { restartLane, type RestartReport } from './restart';
import { Rng } from '../world/rng';
import { LANE_IDS } from '../input/lanes';
import type { LaneId, Scenario } from '../input/scenario';
import { createServer } from '../actors/servers/behaviours';
import type { TraceEvent } from '../input/trace';
import type { RunPosition, SimulationOptions, TimelineAction, TimelineMark } from './engine-types';

export type {
  AskedFacts,
  FrameLine,
  RunPosition,
  SimulationOptions,
  TimelineAction,
  TimelineMark
} from './engine-types';
export { LaneRuntime } from './lane';

export class Simulation implements DialogWatcher {
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
  private endAt: number;
  private nextSample: number;
  private ran = 0;
  private halted = false;
  /** The target of a slice cut (or held) with events still due at or before it, else −∞. */
  private owed = -Infinity;
  private recording = true;
  /** Forks made on this engine (fork.ts), and the last one that changed each lane. */
  private forks = 0;
  private readonly forkedIn: Record<LaneId, number> = { A: 0, B: 0 };

  constructor(
    readonly scenario: Scenario,
    readonly opts: SimulationOptions = {}
  ) {
    this.start = scenario.start;
    this.seed = opts.seed ?? scenario.seed;
    this.endAt = scenario.start + scenario.durationMs;
    this.clock = new VirtualClock(this.start);
    runsItsClock(this);
    this.consent = new ConsentDesk([], this);
    // Who answers from the start is on the timeline too: a reload re-simulates the run from its
    // actions alone (run-memory.ts), whatever the reloaded page's checkbox says.
    if (opts.human?.length) this.setHuman(opts.human);
    const root = new Rng(this.seed);
    this.lanes = {
      A: new LaneRuntime(this, 'A', scenario, root),
      B: new LaneRuntime(this, 'B', scenario, root)
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
    this.nextSample = this.start;
    this.sample();
    if (opts.trace) this.scheduleTrace(opts.trace);
    else
      for (const id of this.running())
        for (const s of this.lanes[id].servers.values()) {
          s.connect();
          s.agent!.start();
        }
    // Restarts written into the scenario (a lesson's) or asked for on the command line run as
    // events of their own, so they fall at the same place in every run of the same input.
    const at = [...(scenario.data?.restarts ?? []), ...(opts.restartAt ?? [])];
    for (const ms of [...new Set(at)].sort((a, b) => a - b))
      this.clock.schedule(this.start + ms, { kind: 'restart' });
  }

  /** A consent dialog opened in `lane` (the desk tells of each: dialogs.ts). */
  consentAsked(lane: LaneId, input: ConsentInput): void {
    this.lanes[lane].asked(input);
  }

  /** A restart the scenario or the command line scheduled (a `restart` event: events.ts). */
  scheduledRestart(): void {
    this.restart();
  }

  /** One line of the run's trace, on `server` of `lane` (a `trace` event: events.ts). */
  replayTrace(lane: LaneId, name: string, e: TraceEvent): void {
    const server = this.lanes[lane].servers.get(name)!;
    if (e.type === 'connect') server.connect();
    else if (e.type === 'disconnect') server.disconnect();
    else {
      // A trace request on a server that never connected: it connects implicitly.
      if (!server.connected()) server.connect();
      const connection = server.connection;
      const id = server.send(e.params!, { n: 0, attempts: 1, startedAt: this.clock.now() });
      if (id !== null) this.opts.onTraceRequest?.(lane, e, connection, id);
    }
  }

  private record(a: TimelineAction): void {
    if (this.recording) this.actions.push(a);
  }

  /**
   * Run `fn` without recording the actions it applies: a fork schedules the other lane's later
   * history as events of its own branch, which re-creating the branch schedules again (fork.ts).
   */
  unrecorded(fn: () => void): void {
    const was = this.recording;
    this.recording = false;
    try {
      fn();
    } finally {
      this.recording = was;
    }
  }

  /** A fork changed `lane` here (fork.ts): returns the fork's number on this engine. */
  forked(lane: LaneId): number {
    this.forkedIn[lane] = ++this.forks;
    return this.forks;
  }

  /** True when a fork after fork number `generation` changed `lane`. */
  forkedSince(lane: LaneId, generation: number): boolean {
    return this.forkedIn[lane] > generation;
  }

  /** Virtual time at which the run ends (extendTo moves it). */
  get end(): number {
    return this.endAt;
  }

  /** Clock events run so far: with `now`, the run's exact position. */
  get events(): number {
    return this.ran;
  }

  get position(): RunPosition {
    return { t: this.clock.now(), events: this.ran };
  }

  /**
   * Stop the advance in progress after the event now running (a breakpoint held). `advanceTo`
   * returns early with time at that event; the next call continues from there.
   */
  halt(): void {
    this.halted = true;
    this.clock.interrupt();
  }

  /** The lanes whose population runs (`opts.lanes`; both by default). */
  private running(): readonly LaneId[] {
    const only = this.opts.lanes;
    return only ? LANE_IDS.filter((l) => only.includes(l)) : LANE_IDS;
  }

  private scheduleTrace(events: TraceEvent[]): void {
    for (const id of this.running()) {
      for (const e of events)
        this.clock.schedule(this.start + e.t, {
          kind: 'trace',
          lane: id,
          server: e.server,
          event: e
        });
    }
  }

  private sample(): void {
    const now = this.clock.now();
    // A sample at `now` waits while events at `now` are still pending (a slice cut by its event
    // limit, or a breakpoint): it must see all of them, as an uninterrupted run's does.
    const pendingNow = (this.clock.nextAt() ?? Infinity) <= now;
    while (this.nextSample < now || (this.nextSample === now && !pendingNow)) this.takeSample();
  }

  /** The sample due at `nextSample`, in both lanes; then the next one is due. */
  private takeSample(): void {
    for (const id of LANE_IDS) {
      const lane = this.lanes[id];
      // Expired decisions are misses anyway; sweeping them on the virtual clock keeps a long
      // run's memory to its live entries (and is the same in Node and the worker).
      void lane.host.store.sweep(this.nextSample);
      lane.metrics.sample(this.nextSample);
    }
    this.opts.onSample?.(this.nextSample);
    this.nextSample += this.scenario.sampleMs;
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
    this.halted = false;
    // A slice cut (or held) at its target's very instant left events due there: they run now.
    const owed = Math.min(target, this.owed);
    // Sample on the way so the series have points at every sampleMs, however big the slice.
    while (n < limit && (this.clock.now() < target || (this.clock.nextAt() ?? Infinity) <= owed)) {
      const stop = Math.min(target, this.nextSample);
      const ran = this.clock.runUntil(stop, limit - n);
      n += ran;
      this.ran += ran;
      this.sample();
      if (this.halted || this.clock.now() < stop) break;
    }
    const cut = n >= limit || this.halted;
    this.owed = cut && (this.clock.nextAt() ?? Infinity) <= target ? target : -Infinity;
    return n;
  }

  /** Run one event (the playground's "step"). */
  step(): boolean {
    const next = this.clock.nextAt();
    if (next === null || next > this.end) return false;
    // Samples due before the event see the state before it, as in `advanceTo`.
    this.sampleBefore(next);
    this.clock.step();
    this.ran++;
    this.sample();
    return true;
  }

  private sampleBefore(next: number): void {
    while (this.nextSample < next && this.nextSample <= this.end) this.takeSample();
  }

  runToEnd(): void {
    this.advanceTo(this.end);
  }

  /** Change a lane's client configuration mid-run; it applies to requests from now on. */
  setLaneConfig(lane: LaneId, input: ClientConfigInput, what = 'configuration changed'): void {
    this.record({ ...this.position, kind: 'config', lane, client: input, what });
    this.lanes[lane].setConfig(input);
    this.marks.push({ t: this.clock.now(), lane, what });
  }

  /** Apply a validated policy to a lane mid-run; returns the invalidated decisions per server. */
  setLanePolicy(lane: LaneId, policy: Policy): Record<string, number> {
    this.record({ ...this.position, kind: 'policy', lane, policy });
    const out = this.lanes[lane].setPolicy(policy);
    const n = Object.values(out).reduce((a, b) => a + b, 0);
    this.marks.push({
      t: this.clock.now(),
      lane,
      what: `policy edited (${n} stored decision${n === 1 ? '' : 's'} invalidated)`
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
    this.record({ ...this.position, kind: 'human', lanes: sorted });
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
    this.record({ ...this.position, kind: 'consent', lane, connection, requestId, approved });
    return this.consent.answer(lane, connection, requestId, approved);
  }

  /**
   * Restart the client now, both lanes (restart.ts): requests in flight are cancelled, every
   * server's connection drops and reconnects, the connection-scoped lane's decisions are gone and
   * the durable lane's kept. Returns the counts per lane; the timeline marks it.
   */
  restartClient(): RestartReport {
    this.record({ ...this.position, kind: 'restart' });
    return this.restart();
  }

  private restart(): RestartReport {
    const t = this.clock.now();
    const lanes = {} as RestartReport['lanes'];
    for (const id of LANE_IDS) lanes[id] = restartLane(this.lanes[id], t);
    const report: RestartReport = { t, lanes };
    this.restarts.push(report);
    for (const id of LANE_IDS) {
      const l = lanes[id];
      const what =
        l.scope === 'durable'
          ? `client restarted (kept ${l.kept} stored decision${l.kept === 1 ? '' : 's'})`
          : `client restarted (lost ${l.lost} stored decision${l.lost === 1 ? '' : 's'})`;
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
    if (end <= this.endAt) return { ok: true };
    this.record({ ...this.position, kind: 'extend', end });
    this.endAt = end;
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

/**
 * A second, independent engine at `sim`'s exact position (machine/clone.ts), reporting to
 * `opts`'s hooks: continuing both gives the same frames, records and numbers (checkpoint.spec.ts).
 * Call it between events (not from a hook). Throws `NotCloneable` when the run cannot be copied —
 * its requests run as XState actors (the actor executor: only the table executor's runs copy), a
 * store kept elsewhere: re-simulate then.
 *
 * The generic copier copies the engine — hosts and requests' runs too — by the rules each class
 * declares (this one's are below the class); this entry point only says what the copy's own
 * are: its hooks (`opts`), each lane's store (where the copy's decisions live, seen by the
 * copy's hooks), and its clock's dispatcher (itself). The stores are registered first, so that
 * a stored decision a request in flight holds is the copy's store's entry (fast.ts); in a
 * checkpoint, its store's list's copy.
 */
export function copyEngine(sim: Simulation, opts: SimulationOptions = sim.opts): Simulation {
  const m = engineCloneMap();
  m.set(sim.opts, opts);
  const copy = m.walk(() => {
    for (const id of LANE_IDS) {
      const lane = sim.lanes[id];
      m.set(lane.host.store, lane.copyStore(m, opts));
    }
    return m.get(sim);
  });
  runsItsClock(copy);
  return copy;
}

/**
 * `sim` runs the events of its clock. (Made here, not in `copyEngine`: a closure there would keep
 * the whole clone map alive with every copy.)
 */
function runsItsClock(sim: Simulation): void {
  sim.clock.dispatch = (e) => step(sim, e);
}

// Marks, actions and restart reports are never changed once made: a copy has its own lists of the
// same ones. The scenario is shared; the copy's hooks are substituted (`copyEngine`).
copyable(Simulation, {
  name: 'engine.Simulation',
  fields: { scenario: 'shared', marks: 'shallow', actions: 'shallow', restarts: 'shallow' }
});
