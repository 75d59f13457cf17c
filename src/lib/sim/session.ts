/**
 * The worker-side session: one loaded scenario, driven by the page's commands. Pure and
 * synchronous (no timers): the worker entry point does the yielding between fast-forward slices,
 * and the unit tests drive a session directly in Node.
 */
import type { AuthOutput, IncomingRequest } from '../machine/authorize';
import type { AuditRecord, JsonRpcId } from '../machine/types';
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
import { LANE_IDS, parseScenario, type LaneId, type Scenario } from './scenario';
import { BreakpointWatcher, parseBreak, type BreakCondition } from './breakpoints';
import { applyAction, CheckpointRecorder, replayFrom, replayTo } from './checkpoint';
import type { SimulationOptions, TimelineAction } from './engine';
import { parseTimeline } from './actions';
import { planFastForward } from './extend';
import { forkRun, parseFork, type ForkSpec } from './fork';
import { restartNotice } from './restart';
import type { TraceEvent } from './trace';

/** How many finished requests per lane the inspector can look up (the most recent ones). */
export const INSPECT_WINDOW = 5_000;
/** Checkpoints a run keeps at most (about 1.6 KiB each; see scripts/bench-seek.ts). */
export const MAX_CHECKPOINTS = 2_000;
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
  /**
   * The page's token for each dialog a person is asked (dialogs.ts names them by lane, connection
   * and request id): kept across re-simulations, so a dialog re-created by a seek keeps its token.
   */
  #tokens = new Map<string, number>();
  #dialogs = new Map<number, { lane: LaneId; connection: string; requestId: JsonRpcId }>();
  #nextToken = 1;
  #events = 0;
  #ff: { target: number; total: number; from: number } | null = null;
  // Time travel (issue #10): what the run was loaded from, so it can be re-simulated.
  #run: {
    scenario: Scenario;
    seed?: number;
    trace?: TraceEvent[];
    /** Who answered dialogs at the start (later changes are timeline actions). */
    human: LaneId[];
    /**
     * The fork this run is on: made from the `base` actions, its own later actions being the
     * engine's from index `from` on. Re-creating the run is then `forkRun` and those actions.
     */
    fork: { spec: ForkSpec; base: TimelineAction[]; from: number } | null;
  } | null = null;
  /** True while re-simulating: the run's own hooks (guard, checkpoints) see it; the page not. */
  #quiet = false;
  /**
   * True while a reload re-simulates its run (`load` with `at`): never shown and never written,
   * whatever a re-simulation otherwise does — the run's rows 0…t are in the resumed namespace
   * already (the worker indexes them from there), so writing them again would double them.
   */
  #resuming = false;
  /**
   * Re-simulations (a seek back, a fork) hand their audit rows and decisions to the page too
   * instead of keeping them quiet: the browser's worker sets this after opening a fresh namespace,
   * so the restored run's audit log and inspector hold the rows of the branch it is on, and only
   * those (the abandoned branch's rows stay in the old namespace, which nothing reads any more).
   */
  replayAudit = false;
  #recorder: CheckpointRecorder | null = null;
  #watcher: BreakpointWatcher | null = null;
  /** The breakpoints, kept across restores and forks (the watcher of each new engine reads them). */
  readonly #conditions: BreakCondition[] = [];
  /**
   * After a seek back, the timeline's later actions (edits, restarts), applied again where they
   * were as the run reaches them: scrubbing back and forth shows one timeline. A new change
   * (an edit, a restart, a fork) drops them: the run is on a new branch.
   */
  #future: TimelineAction[] = [];

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
        return this.#loadAt(cmd);
      case 'timeline': {
        const sim = this.#need();
        const fork = this.#run?.fork;
        return [
          {
            type: 'timeline',
            t: sim.now,
            actions: fork ? sim.actions.slice(fork.from) : [...sim.actions],
            fork: fork ? { spec: fork.spec, base: fork.base } : null
          }
        ];
      }
      case 'fork?':
        this.#need();
        return [{ type: 'forkState', fork: this.#run?.fork?.spec ?? null }];
      case 'advance': {
        this.#events = this.#advance(cmd.to, cmd.maxEvents ?? Infinity);
        return [this.snapshot()];
      }
      case 'step':
        this.#applyDue();
        this.#events = this.#need().step() ? 1 : 0;
        return [this.snapshot()];
      case 'restart':
      case 'seek':
      case 'checkpoints':
      case 'fork':
      case 'setBreakpoints':
      case 'resume':
      case 'extend':
        return this.#timeTravel(cmd);
      case 'fastForward': {
        const sim = this.#need();
        const plan = planFastForward(sim.scenario, sim.now, sim.end, cmd.ms);
        const target = plan.target;
        this.#ff = { target, total: target - sim.now, from: sim.now };
        // Past the scenario's end the run stops there, and says so (it used to stop silently).
        return plan.message
          ? [{ type: 'fastForwardClamped', message: plan.message, extendTo: plan.extendTo }]
          : [];
      }
      case 'cancel': {
        const was = this.#ff !== null;
        this.#ff = null;
        return was ? [{ type: 'fastForwardDone', cancelled: true }, this.snapshot()] : [];
      }
      case 'setConfig':
        this.#future = []; // a change after seeking back starts a new branch
        this.#need().setLaneConfig(cmd.lane, cmd.client, cmd.what);
        return [this.snapshot()];
      case 'setPolicy': {
        this.#future = [];
        const invalidated = this.#need().setLanePolicy(cmd.lane, cmd.policy);
        return [{ type: 'policyApplied', lane: cmd.lane, invalidated }, this.snapshot()];
      }
      // Who answers and a person's answers are timeline actions (engine.ts): a re-simulation
      // re-applies them where they were. Either is a change: after a seek back, a new branch.
      case 'setHuman':
        if (this.#need().setHuman(cmd.human)) this.#future = [];
        return [this.snapshot()];
      case 'consent': {
        const d = this.#dialogs.get(cmd.token);
        if (d && d.lane === cmd.lane) {
          this.#applyDue();
          if (this.#need().answerConsent(d.lane, d.connection, d.requestId, cmd.approved))
            this.#future = [];
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
    this.#events = this.#advance(ff.target, maxEvents);
    // A breakpoint that held ends the fast-forward where it held.
    const done = sim.now >= ff.target || this.#watcher?.hit != null;
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
        series: lane.metrics.seriesAt(sim.now),
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
      pendingConsent: this.#pendingConsent(sim),
      human: sim.consent.human,
      events: this.#events,
      guarantees: this.#guard?.results() ?? [],
      paused: this.#watcher?.hit ?? null
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
    this.#tokens.clear();
    this.#dialogs.clear();
    this.#ff = null;
    const storage = (this.#storage = this.#next);
    this.#run = {
      scenario: r.scenario,
      human: [...(cmd.human ?? [])],
      fork: null,
      ...(cmd.seed !== undefined ? { seed: cmd.seed } : {}),
      ...(cmd.trace ? { trace: cmd.trace } : {})
    };
    this.sim = this.#build(storage, (opts, make) => make(r.scenario, opts));
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

  /**
   * A load, and for a reload mid-run (`at`) the run brought back to where it was: re-simulated
   * quietly with the durable lanes in memory (the decisions in the resumed namespace are those of
   * time `at.t`; re-simulating over them would let the run meet its own future), then given those
   * decisions, then the client restarted — exactly what `lab run --restart-at` does at that time.
   */
  #loadAt(cmd: Extract<Command, { type: 'load' }>): Reply[] {
    const at = cmd.at;
    if (!at) return [this.#load(cmd)];
    // Run memory is the page's sessionStorage: checked as any outside input, paths and all.
    const timeline = parseTimeline(at);
    if (!timeline.ok) return [{ type: 'loaded', ok: false, errors: timeline.errors }];
    const loaded = this.#load(cmd);
    if (loaded.type !== 'loaded' || !loaded.ok || !this.sim) return [loaded];
    const run = this.#run!;
    const storage = this.#storage;
    this.#resuming = true;
    try {
      this.sim = this.#build(storage, (opts, make) => {
        const memory = { ...opts };
        delete memory.durable;
        const fork = timeline.fork;
        if (!fork) return replayTo(run.scenario, memory, timeline.actions, { t: at.t }, make);
        // A forked run comes back as the fork, then the actions taken on it (run-memory.ts).
        const forked = forkRun(run.scenario, memory, fork.base, fork.spec, make);
        run.fork = { spec: fork.spec, base: fork.base, from: forked.actions.length };
        return replayFrom(forked, timeline.actions, { t: at.t });
      });
    } finally {
      this.#resuming = false;
    }
    const sim = this.sim;
    // Only the namespace being resumed holds the decisions of time t; without it (another tab
    // has the run, or it was pruned) the durable lanes keep the re-simulated ones, in memory.
    if (storage && cmd.resume && storage.run === cmd.resume)
      for (const id of LANE_IDS) sim.lanes[id].useDurable(storage.durable);
    const resumed = { A: this.#resumed('A'), B: this.#resumed('B') };
    const report = sim.restartClient();
    return [
      { ...loaded, resumed },
      { type: 'restarted', report, notice: restartNotice(report) }
    ];
  }

  /**
   * A new engine for the loaded run, its hooks wired to this session: the guard, the checkpoint
   * recorder and the breakpoint watcher always; the page's audit rows, inspector and durable
   * audit log only while not re-simulating. `create` builds it (from the start, by replay, by fork).
   */
  #build(
    storage: RunStorage | null,
    create: (
      opts: SimulationOptions,
      make: (s: Scenario, o: SimulationOptions) => Simulation
    ) => Simulation
  ): Simulation {
    const run = this.#run!;
    const auditLog = storage?.audit ?? null;
    const guard = (this.#guard = new RunGuard(run.scenario, { validate: sdkFrameProblem }));
    // At most about 2,000 checkpoints a run (a few MB), however fine its sampling.
    const recorder = (this.#recorder = new CheckpointRecorder(
      Math.floor(run.scenario.durationMs / MAX_CHECKPOINTS)
    ));
    const watcher = (this.#watcher = new BreakpointWatcher(this.#conditions, guard));
    const opts = watcher.options(
      recorder.options({
        ...(run.seed !== undefined ? { seed: run.seed } : {}),
        ...(run.trace ? { trace: run.trace } : {}),
        ...(storage ? { durable: storage.durable } : {}),
        onAudit: (rec) => {
          if ((this.#quiet && !this.replayAudit) || this.#resuming) return;
          this.#audit.push(rec);
          void auditLog?.append(rec);
        },
        onDecision: (lane, request, out) => {
          if ((this.#quiet && !this.replayAudit) || this.#resuming) return;
          const kept = this.#kept[lane];
          kept.set(out.audit.seq, { request, out });
          if (kept.size > INSPECT_WINDOW) kept.delete(kept.keys().next().value!);
        },
        ...(run.human.length ? { human: run.human } : {})
      })
    );
    // The recorder sees the engine from its creation, so a re-simulation (a seek back, a fork)
    // records the checkpoints before t again: the scrubber's stops stay one timeline.
    const sim = create(opts, (s, o) => recorder.attach(guard.simulate(s, o)));
    recorder.attach(sim);
    watcher.attach(sim);
    return sim;
  }

  /** Durable decisions a lane found at load: a reload within a run resumes them. */
  #resumed(lane: LaneId): number {
    const store: DecisionStore = this.#need().lanes[lane].host.store;
    const n = reporting(store) ? store.count() : 0;
    return typeof n === 'number' ? n : 0;
  }

  /** The dialogs waiting for a person, each with the page's token for it. */
  #pendingConsent(sim: Simulation): PendingConsent[] {
    return sim.consent.open.map(({ key, lane, input }) => {
      let token = this.#tokens.get(key);
      if (token === undefined) {
        token = this.#nextToken++;
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

  // ---- Time travel (issue #10): restart, seek, checkpoints, fork, breakpoints, extend ----

  #timeTravel(
    cmd: Extract<
      Command,
      {
        type: 'restart' | 'seek' | 'checkpoints' | 'fork' | 'setBreakpoints' | 'resume' | 'extend';
      }
    >
  ): Reply[] {
    const sim = this.#need();
    switch (cmd.type) {
      case 'restart': {
        this.#future = [];
        const report = sim.restartClient();
        return [{ type: 'restarted', report, notice: restartNotice(report) }, this.snapshot()];
      }
      case 'seek':
        return this.#seek(cmd.t);
      case 'checkpoints':
        return [{ type: 'checkpoints', checkpoints: this.#recorder?.checkpoints ?? [] }];
      case 'fork': {
        const run = this.#run!;
        const parsed = parseFork(cmd.fork, run.scenario);
        if (!parsed.ok) return [{ type: 'forked', ok: false, errors: parsed.errors }];
        const actions = [...sim.actions, ...this.#future];
        this.#future = [];
        this.#rebuild((opts, make) => forkRun(run.scenario, opts, actions, parsed.fork, make));
        // What a reload or a later seek re-creates the fork from (run memory keeps it too).
        run.fork = { spec: parsed.fork, base: actions, from: this.#need().actions.length };
        const t = this.#need().now;
        return [
          { type: 'forked', ok: true, t, auditRows: this.#recorder!.counts().auditRows },
          this.snapshot()
        ];
      }
      case 'setBreakpoints': {
        const parsed = cmd.conditions.map(parseBreak);
        const errors = parsed.flatMap((p) => (p.ok ? [] : [p.error]));
        if (errors.length) return [{ type: 'breakpoints', ok: false, errors }];
        this.#conditions.splice(
          0,
          this.#conditions.length,
          ...parsed.flatMap((p) => (p.ok ? [p.condition] : []))
        );
        return [{ type: 'breakpoints', ok: true, conditions: cmd.conditions }];
      }
      case 'resume':
        this.#watcher?.resume();
        return [this.snapshot()];
      case 'extend': {
        const r = sim.extendTo(cmd.end);
        return [
          r.ok
            ? { type: 'extended', ok: true, end: sim.end }
            : { type: 'extended', ok: false, message: r.message },
          this.snapshot()
        ];
      }
    }
  }

  /** Apply the timeline's actions due at the run's current position. */
  #applyDue(): void {
    const sim = this.#need();
    while (this.#future.length) {
      const a = this.#future[0]!;
      if (a.events !== sim.events || a.t !== sim.now) return;
      this.#future.shift();
      applyAction(sim, a);
    }
  }

  /**
   * `advanceTo`, stopping at each of the timeline's later actions to apply it where it was first
   * applied (the same event count and time), so the bytes are those of the first time through.
   */
  #advance(to: number, maxEvents: number): number {
    const sim = this.#need();
    let n = 0;
    for (;;) {
      const a = this.#future[0];
      if (!a || a.t > Math.min(to, sim.end) || n >= maxEvents) break;
      if (sim.events < a.events) {
        n += sim.advanceTo(a.t, Math.min(a.events - sim.events, maxEvents - n));
        // Cut by the slice's limit, or a breakpoint held: the action waits for the next call.
        const stopped = n >= maxEvents || this.#watcher?.hit != null;
        if (sim.events < a.events && stopped) return n;
      }
      if (sim.now < a.t) sim.advanceTo(a.t);
      this.#future.shift();
      applyAction(sim, a);
    }
    return n + sim.advanceTo(to, maxEvents - n);
  }

  /** Forward: run there. Back: re-simulate from the start to `t`, quietly (checkpoint.ts). */
  #seek(t: number): Reply[] {
    const sim = this.#need();
    if (t >= sim.now) {
      this.#events = this.#advance(t, Infinity);
    } else {
      const run = this.#run!;
      const fork = run.fork;
      let actions: TimelineAction[];
      if (fork && t >= run.scenario.start + fork.spec.atMs) {
        // Back within the fork: re-created as a fork, then its own actions up to t.
        actions = [...sim.actions.slice(fork.from), ...this.#future];
        this.#rebuild((opts, make) =>
          replayFrom(forkRun(run.scenario, opts, fork.base, fork.spec, make), actions, { t })
        );
      } else {
        // Before the fork (or no fork): the run it was made from, which the fork left at t.
        actions = fork ? fork.base : [...sim.actions, ...this.#future];
        run.fork = null;
        this.#rebuild((opts, make) => replayTo(run.scenario, opts, actions, { t }, make));
      }
      const at = this.#need().position;
      this.#future = actions.filter((a) => a.events > at.events || a.t > at.t);
    }
    const now = this.#need().now;
    return [
      {
        type: 'seeked',
        t: now,
        fork: this.#run?.fork?.spec ?? null,
        auditRows: this.#recorder!.counts().auditRows,
        checkpoint: this.#recorder!.at(now)
      },
      this.snapshot()
    ];
  }

  /**
   * Replace the engine by one re-simulated quietly. Durable decisions must not come from the
   * abandoned branch: the new engine uses the storage the worker set for it (a fresh namespace),
   * or memory when none was set.
   */
  #rebuild(
    create: (
      opts: SimulationOptions,
      make: (s: Scenario, o: SimulationOptions) => Simulation
    ) => Simulation
  ): void {
    const fresh = this.#next !== this.#storage ? this.#next : null;
    this.#storage = fresh;
    this.#ff = null;
    this.#audit = [];
    this.#kept = { A: new Map(), B: new Map() };
    this.#quiet = true;
    try {
      this.sim = this.#build(fresh, create);
    } finally {
      this.#quiet = false;
    }
  }
}
