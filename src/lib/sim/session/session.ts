/**
 * The worker-side session: one loaded scenario, driven by the page's commands. Pure and
 * synchronous (no timers): the worker entry point does the yielding between fast-forward slices,
 * and the unit tests drive a session directly in Node.
 *
 * Over 400 lines on purpose: every command touches the run, its branch and its checkpoints; the
 * parts that do not are session-engine.ts, session-timeline.ts and session-view.ts.
 */
import type { AuditRecord, Frame } from '../../machine/types';
import { BreakpointWatcher, parseBreak, type BreakCondition } from '../timeline/breakpoints';
import type { CheckpointRecorder } from '../engine/checkpoint';
import type { Simulation, TimelineAction } from '../engine/engine';
import { planFastForward } from '../engine/extend';
import { chainSpecs } from '../engine/fork-run';
import type { RunGuard } from '../checks/guard';
import type { Command, Reply, Snapshot, StorageView } from './protocol';
import { restartNotice } from '../engine/restart';
import { LANE_IDS } from '../input/lanes';
import type { LaneId, Scenario } from '../input/scenario';
// zod's parsers, loaded on first use (the worker awaits them before a command that needs them).
import { parsers } from '../input/parsers';
import { readyMadeParse } from '../input/ready-made';
import { NotCloneable } from '../../machine/clone';
import { replayFrom } from '../engine/checkpoint';
import { EngineCheckpoints } from '../engine/engine-checkpoints';
import { wireEngine, type Create, type LoadedRun, type RestoreFrom } from './session-engine';
import type { EngineCheckpoint } from '../engine/engine-checkpoints';
import type { SavedSnapshot, SnapshotSaver } from './session-snapshots';
import { snapshotsLoaded, type SnapshotModule } from './snapshots-loader';
import { RecentWindow } from './recent-window';
import {
  branchAt,
  createFork,
  FutureActions,
  linkedFork,
  ownActions,
  recreateAt,
  resumeAt,
  timelineOf,
  type RunFork
} from '../timeline/session-timeline';
import {
  DialogTokens,
  inspection,
  laneViews,
  resumedCount,
  storageView,
  type Kept,
  type RunStorage
} from './session-view';

/**
 * How the session's engine is running, which decides where its audit rows and decisions go (the
 * run's own hooks — guard, checkpoints, breakpoints — see every event whatever the mode):
 * - `live`: played forward for the page.
 * - `resimulating`: a seek back or a fork re-running the run from the start (or a fork point);
 *   quiet, unless the worker asked for `replayAudit` (then as `live`).
 * - `inPlace`: a seek back restored from an engine checkpoint in the run's own namespace, whose
 *   log already holds the rows up to the checkpoint: the log gets the rows it lacks, the
 *   inspector the requests; the page reads the rows from the log.
 * - `restoring`: a reload re-simulating its run (`load` with `at`) in the run's own namespace: the
 *   rows 0…t its log holds are neither shown nor written (the worker indexes them from there;
 *   writing them again would double them). The rows the log lacks — their writes were still
 *   behind when the page reloaded — are written again and shown: the run is deterministic, so
 *   they are the rows the run made, byte for byte, and the log and the table have no hole.
 * - `resuming`: the same in a namespace that is not the run's (another tab has it, or it was
 *   pruned): quiet, as it holds none of the run's rows to go on from.
 */
type Mode = 'live' | 'resimulating' | 'inPlace' | 'restoring' | 'resuming';

/**
 * Where a row goes: the page's audit rows (`missing`: only the rows the log lacks), the durable
 * audit log (rows it lacks), the inspector.
 */
interface Sinks {
  page: boolean | 'missing';
  log: boolean;
  inspector: boolean;
}

const SINKS: Record<Mode, Sinks> = {
  live: { page: true, log: true, inspector: true },
  resimulating: { page: false, log: false, inspector: false },
  inPlace: { page: false, log: true, inspector: true },
  restoring: { page: 'missing', log: true, inspector: false },
  resuming: { page: false, log: false, inspector: false }
};

/** Virtual time as h:mm:ss, as the page's clock shows it. */
function clockText(ms: number): string {
  if (!Number.isFinite(ms)) return 'an unknown time';
  const s = Math.floor(Math.max(0, ms) / 1000);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${mm}:${String(s % 60).padStart(2, '0')}`;
}

/** How many finished requests per lane the inspector can look up (the most recent ones). */
export const INSPECT_WINDOW = 5_000;
/** Events per fast-forward slice by default (the worker adapts it to wall time). */
export const SLICE_EVENTS = 20_000;

export type { RunStorage } from './session-view';
export { MAX_CHECKPOINTS } from './session-engine';

export interface SessionOptions {
  storage?: RunStorage;
  /**
   * Restore seeks back from engine checkpoints (engine-checkpoints.ts); default true. False
   * re-simulates every seek from the start, as the tests compare.
   */
  copies?: boolean;
  /** Clock events between engine checkpoints at first (the tests take them closer). */
  copyEvery?: number;
  /** Estimated bytes the engine checkpoints may hold (the tests force a small budget). */
  copyBudgetBytes?: number;
}

export class Session {
  sim: Simulation | null = null;
  /** The storage the next `load` uses (and the current run keeps until then). */
  #next: RunStorage | null;
  #storage: RunStorage | null = null;
  /** The run's invariants, fed by every frame, record and store change. */
  #guard: RunGuard | null = null;
  #audit: AuditRecord[] = [];
  #kept: Record<LaneId, RecentWindow<number, Kept>> = {
    A: new RecentWindow(INSPECT_WINDOW),
    B: new RecentWindow(INSPECT_WINDOW)
  };
  /** The page's token for each dialog a person is asked (session-view.ts). */
  readonly #tokens = new DialogTokens();
  #events = 0;
  #ff: { target: number; total: number; from: number } | null = null;
  /**
   * What broke, once the engine threw mid-event: its state is then half-way through that event,
   * so the run goes no further (a seek back or a new load builds a new engine).
   */
  #broken: string | null = null;
  // Time travel (issue #10): what the run was loaded from, so it can be re-simulated.
  #run: LoadedRun | null = null;
  /** How the engine is running now, and so where its rows go ({@link SINKS}). */
  #mode: Mode = 'live';
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
  readonly #future = new FutureActions();
  /** Copies of the engine along the run's timeline: a seek back restores from one. */
  readonly #copies: EngineCheckpoints;
  readonly #useCopies: boolean;
  /**
   * Saves the run's latest snapshot into its storage, for a reload (session-snapshots.ts): once
   * the snapshot code is loaded (snapshots-loader.ts), else null.
   */
  #saverMade: SnapshotSaver | null = null;
  get #saver(): SnapshotSaver | null {
    const m = snapshotsLoaded();
    return m ? (this.#saverMade ??= new m.SnapshotSaver()) : null;
  }

  constructor(opts: SessionOptions = {}) {
    this.#next = opts.storage ?? null;
    this.#useCopies = opts.copies ?? true;
    this.#copies = new EngineCheckpoints({
      ...(opts.copyEvery !== undefined ? { everyEvents: opts.copyEvery } : {}),
      ...(opts.copyBudgetBytes !== undefined ? { budgetBytes: opts.copyBudgetBytes } : {})
    });
  }

  /** Seeks back restored from an engine checkpoint so far (the rest re-simulated). */
  copyRestores = 0;

  /**
   * The run stopped (a pause, a fast-forward's end, the run's end): save its snapshot now, unless
   * one was saved at this very position. The worker calls it; returns true when it saved.
   */
  saveSnapshot(): boolean {
    return this.#save(true);
  }

  /** Why the run's snapshots cannot be saved (a class of the engine cannot be stored), or null. */
  get snapshotsUnavailable(): string | null {
    return this.#saver?.unavailable ?? null;
  }

  #save(force: boolean): boolean {
    const slot = this.#storage?.snapshots;
    const sim = this.sim;
    if (!slot || !sim || !this.#guard || !this.#recorder || this.#mode !== 'live') return false;
    if (this.#broken || this.#run?.fork || this.#watcher?.hit != null) return false;
    return !!this.#saver?.maybeSave(
      slot,
      sim,
      this.#guard,
      this.#recorder.counts(),
      this.#recorder.checkpoints,
      force
    );
  }

  /**
   * Whether a seek back to `t` restores from an engine checkpoint, in place: the run keeps its
   * storage (its namespace), whose audit log already holds the rows up to t — unless the worker
   * has set a fresh namespace for a re-simulation, which needs them all written again. The worker
   * asks first, and opens a fresh namespace only when the answer is no.
   */
  canRestoreInPlace(t: number): boolean {
    if (!this.#useCopies || this.#copies.at(t) === null) return false;
    return this.#next === this.#storage;
  }

  /**
   * Whether `cmd` re-simulates the run from its start, so that the worker must set a fresh
   * namespace first (a seek back no engine checkpoint serves in place, a valid fork): the
   * abandoned branch's durable decisions stay behind in the old one.
   */
  rewinds(cmd: Command): boolean {
    const sim = this.sim;
    if (!sim) return false;
    if (cmd.type === 'seek') return cmd.t < sim.now && !this.canRestoreInPlace(cmd.t);
    return cmd.type === 'fork' && parsers().parseFork(cmd.fork, sim.scenario).ok;
  }

  /** The engine checkpoints a seek back can restore from (the benchmarks read them). */
  get engineCheckpoints(): EngineCheckpoints {
    return this.#copies;
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
      case 'timeline':
        return [
          timelineOf(
            this.#need(),
            this.#run?.fork ?? null,
            this.#future.list,
            this.#run?.human ?? []
          )
        ];
      case 'fork?':
        this.#need();
        return [
          {
            type: 'forkState',
            fork: this.#run?.fork?.spec ?? null,
            forks: chainSpecs(this.#run?.fork ?? null)
          }
        ];
      case 'advance': {
        this.#events = this.#advance(cmd.to, cmd.maxEvents ?? Infinity);
        return [this.snapshot()];
      }
      case 'step':
        this.#applyDue();
        this.#events = this.#running(() => (this.#need().step() ? 1 : 0));
        this.#checkpoint();
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
        if (this.#broken) throw new Error(this.#broken);
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
        this.#newBranch(); // a change after seeking back starts a new branch
        this.#need().setLaneConfig(cmd.lane, cmd.client, cmd.what);
        return [this.snapshot()];
      case 'setPolicy': {
        this.#newBranch();
        const invalidated = this.#need().setLanePolicy(cmd.lane, cmd.policy);
        return [{ type: 'policyApplied', lane: cmd.lane, invalidated }, this.snapshot()];
      }
      // Who answers and a person's answers are timeline actions (engine.ts): a re-simulation
      // re-applies them where they were. Either is a change: after a seek back, a new branch.
      case 'setHuman':
        if (this.#need().setHuman(cmd.human)) this.#newBranch();
        return [this.snapshot()];
      case 'consent': {
        const d = this.#tokens.dialog(cmd.token);
        if (d && d.lane === cmd.lane) {
          this.#applyDue();
          if (this.#need().answerConsent(d.lane, d.connection, d.requestId, cmd.approved))
            this.#newBranch();
        }
        return [this.snapshot()];
      }
      case 'inspect':
        return [inspection(this.#kept[cmd.lane].get(cmd.seq), cmd.lane, cmd.seq)];
      case 'retryStorage':
        // The writing itself is asynchronous and the worker's; here, only the state to show.
        return [this.snapshot()];
      case 'clearStored': {
        // Not a timeline action: a re-simulation does not repeat it, so no copy taken after it
        // may stand for the timeline, and none before it is harmed.
        this.#copies.dropAfter(this.#need().position);
        this.#cutLog();
        // Nor may a snapshot taken after it stand for the timeline: the ones saved before it
        // still do (a reload re-simulates on from them without it, as from the start); none is
        // saved after it until the run is re-created (a load, a seek, a fork).
        this.#saver?.hold();
        const store = this.#need().lanes[cmd.lane].host.store;
        const n = store.clear();
        return [
          { type: 'cleared', lane: cmd.lane, count: typeof n === 'number' ? n : -1 },
          this.snapshot()
        ];
      }
      case 'memoryBudget':
        if (cmd.checkpointBytes !== undefined) this.#copies.budgetBytes = cmd.checkpointBytes;
        return [];
      case 'auditQuery':
      case 'auditRows':
      case 'auditExport':
      case 'auditWindow':
        // The audit table's questions are the browser worker's (ui/audit-service.ts).
        return [];
      case 'digest': {
        const r = parsers().parseScenario(cmd.scenario);
        if (!r.ok) return [{ type: 'digest', ok: false, errors: r.errors }];
        return [
          {
            type: 'digest',
            ok: true,
            digest: parsers().digestRun(
              r.scenario,
              cmd.seed !== undefined ? { seed: cmd.seed } : {}
            )
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
    try {
      this.#events = this.#advance(ff.target, maxEvents);
    } catch (e) {
      // As live play does: the fast-forward ends, and says what broke and where.
      this.#ff = null;
      return [
        { type: 'fastForwardDone', cancelled: false, error: (e as Error).message },
        this.snapshot()
      ];
    }
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
    const audit = this.#audit;
    this.#audit = [];
    return {
      type: 'snapshot',
      now: sim.now,
      start: sim.start,
      end: sim.end,
      done: sim.done,
      lanes: laneViews(sim),
      audit,
      marks: sim.marks,
      durableError: this.#storage?.durableError ?? null,
      storage: this.storageView(),
      pendingConsent: this.#tokens.pending(sim),
      human: sim.consent.human,
      events: this.#events,
      guarantees: this.#guard?.results() ?? [],
      paused: this.#watcher?.hit ?? null
    };
  }

  /** How much of the run is on disk: sent in every snapshot and after every group commit. */
  storageView(): StorageView {
    return storageView(this.#need(), this.#storage);
  }

  #need(): Simulation {
    if (!this.sim) throw new Error('no scenario is loaded');
    return this.sim;
  }

  /** A change at the run's position: the timeline after it (actions, checkpoints) is gone. */
  #newBranch(): void {
    this.#future.list = [];
    this.#copies.dropAfter(this.#need().position);
    this.#cutLog();
  }

  /** The log's rows after the run's position were another future (a change here): cut them. */
  #cutLog(): void {
    if (this.#recorder) this.#storage?.audit?.truncate?.(this.#recorder.counts().auditRows);
  }

  /** An engine checkpoint, when the run has gone far enough since the last. */
  #checkpoint(): void {
    if (!this.#useCopies || !this.sim || !this.#guard || !this.#recorder) return;
    this.#copies.maybeTake(this.sim, this.#guard, this.#recorder.counts());
  }

  /** `create`: how the run's first engine is made (by default, the scenario from its start). */
  #load(
    cmd: Extract<Command, { type: 'load' }>,
    create?: (scenario: Scenario, run: LoadedRun) => Create
  ): Reply {
    // A ready-made scenario the worker has precompiled (ready-made.ts), else the parser.
    const r = readyMadeParse(cmd.scenario) ?? parsers().parseScenario(cmd.scenario);
    if (!r.ok) return { type: 'loaded', ok: false, errors: r.errors };
    this.#audit = [];
    this.#kept = { A: new RecentWindow(INSPECT_WINDOW), B: new RecentWindow(INSPECT_WINDOW) };
    this.#tokens.clear();
    this.#ff = null;
    // The last run's actions still ahead of it (after a seek back) are not this run's.
    this.#future.list = [];
    this.#copies.clear();
    this.#saver?.reset();
    const storage = (this.#storage = this.#next);
    this.#run = {
      scenario: r.scenario,
      human: [...(cmd.human ?? [])],
      fork: null,
      ...(cmd.seed !== undefined ? { seed: cmd.seed } : {}),
      ...(cmd.trace ? { trace: cmd.trace } : {})
    };
    this.sim = this.#build(
      storage,
      create?.(r.scenario, this.#run) ?? ((opts, make) => make(r.scenario, opts))
    );
    return {
      type: 'loaded',
      ok: true,
      name: r.scenario.name,
      start: this.sim.start,
      end: this.sim.end,
      servers: r.scenario.servers.map((s) => s.name),
      run: storage?.run ?? null,
      resumed: { A: resumedCount(this.sim, 'A'), B: resumedCount(this.sim, 'B') }
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
    if (!at) return [cmd.link ? this.#loadLinked(cmd, cmd.link) : this.#load(cmd)];
    // Run memory is the page's sessionStorage: checked as any outside input, paths and all.
    const timeline = parsers().parseTimeline(at);
    if (!timeline.ok) return [{ type: 'loaded', ok: false, errors: timeline.errors }];
    const loaded = this.#load(cmd);
    if (loaded.type !== 'loaded' || !loaded.ok || !this.sim) return [loaded];
    const run = this.#run!;
    const storage = this.#storage;
    // Only the namespace being resumed holds the run's rows and the decisions of time t.
    const own = !!storage && !!cmd.resume && storage.run === cmd.resume;
    this.#mode = own ? 'restoring' : 'resuming';
    let fromSnapshot: number | undefined;
    let snapshotNote: string | undefined;
    try {
      // From the run's saved snapshot, when it may stand for the run (session-snapshots.ts):
      // re-simulated from there only. Else from the start.
      const mine: RunStorage | null = own ? storage : null;
      const saved = mine?.snapshots?.saved ?? null;
      const m = snapshotsLoaded();
      const why =
        saved && mine && m ? m.unusable(saved, timeline, mine.audit?.nextKey ?? null) : '';
      if (saved && mine && m && why === null) {
        try {
          this.sim = this.#fromSnapshot(m, saved, mine, timeline);
          fromSnapshot = saved.snapshot.meta.at.t;
        } catch (e) {
          if (!m.isSnapshotError(e) && !(e instanceof NotCloneable)) throw e;
          snapshotNote = `The run's saved snapshot could not be read (${(e as Error).message}): it was re-simulated from its start instead.`;
          mine.snapshots?.drop();
        }
      } else if (saved && m) mine?.snapshots?.drop();
      if (fromSnapshot === undefined)
        this.sim = this.#build(storage, (opts, make) => {
          const memory = { ...opts };
          delete memory.durable;
          const resumed = resumeAt(run.scenario, memory, timeline, make);
          run.fork = resumed.fork;
          return resumed.sim;
        });
    } finally {
      this.#mode = 'live';
    }
    const sim = this.sim;
    // Only the namespace being resumed holds the decisions of time t; without it (another tab
    // has the run, or it was pruned) the durable lanes keep the re-simulated ones, in memory.
    if (own) for (const id of LANE_IDS) sim.lanes[id].useDurable(storage.durable);
    const resumed = { A: resumedCount(sim, 'A'), B: resumedCount(sim, 'B') };
    // The log may hold rows after t (a seek back before the reload): the restart starts a new
    // branch at t, so they go, and the page indexes the rows up to t.
    const auditRows = this.#recorder!.counts().auditRows;
    if (own) storage.audit?.truncate?.(auditRows);
    const report = sim.restartClient();
    return [
      {
        ...loaded,
        resumed,
        auditRows,
        ...(fromSnapshot !== undefined ? { fromSnapshot } : {}),
        ...(snapshotNote ? { snapshotNote } : {})
      },
      { type: 'restarted', report, notice: restartNotice(report) }
    ];
  }

  /**
   * The run at the reload's time from its saved snapshot: the snapshot's engine copied as an
   * engine checkpoint is (its guard, checkpoints and counts taken over), the durable lanes in
   * memory as a reload's re-simulation has them, then the timeline's actions after it replayed.
   */
  #fromSnapshot(
    m: SnapshotModule,
    saved: SavedSnapshot,
    storage: RunStorage,
    timeline: { t: number; actions: TimelineAction[] }
  ): Simulation {
    const validate = (frame: unknown) => parsers().sdkFrameProblem(frame as Frame);
    const { sim, guard } = m.restoreSaved(saved, this.#run!.scenario, validate);
    const checkpoint: EngineCheckpoint = {
      at: saved.snapshot.meta.at,
      sim,
      guard,
      counts: saved.counts,
      bytes: 0
    };
    // The namespace's decisions are those of the reload's time: the run meets them after it.
    const memory: RunStorage = {
      ...storage,
      durable: undefined as unknown as RunStorage['durable']
    };
    const made = this.#build(
      memory,
      (_opts, _make, copy) => replayFrom(copy(sim), timeline.actions, { t: timeline.t }),
      { checkpoint, views: saved.views }
    );
    this.#saver?.reset(checkpoint.at);
    return made;
  }

  /**
   * A run opened from a share link (issue #18): its fork re-created at the fork point, and the
   * sender's actions after that applied where they were as the run reaches them — the run the
   * sender saw, edits at their times, not as settings from t = 0. A link that does not fit the
   * scenario (damaged, or made by a build whose runs differ) is refused, saying where.
   */
  #loadLinked(
    cmd: Extract<Command, { type: 'load' }>,
    link: NonNullable<Extract<Command, { type: 'load' }>['link']>
  ): Reply {
    const timeline = parsers().parseTimeline({ t: 0, ...link }, '$.link');
    if (!timeline.ok) return { type: 'loaded', ok: false, errors: timeline.errors };
    const fork = timeline.fork;
    let loaded: Reply;
    try {
      loaded = this.#load(
        cmd,
        fork
          ? (scenario, run) => (opts, make) => {
              const made = linkedFork(scenario, opts, fork, make);
              run.fork = made.fork;
              return made.sim;
            }
          : undefined
      );
    } catch (e) {
      this.sim = null;
      const message = e instanceof Error ? e.message : String(e);
      return { type: 'loaded', ok: false, errors: [{ path: '$.link', message }] };
    }
    if (loaded.type === 'loaded' && loaded.ok) this.#future.list = [...timeline.actions];
    return loaded;
  }

  /**
   * A new engine for the loaded run (session-engine.ts), its observers this session's: the
   * guard, checkpoints and breakpoints always; the page's audit rows, inspector and durable audit
   * log only while not re-simulating. `create` builds it (from the start, by replay, by fork).
   */
  #build(storage: RunStorage | null, create: Create, from?: RestoreFrom): Simulation {
    this.#broken = null;
    const auditLog = storage?.audit ?? null;
    const sinks = (): Sinks =>
      SINKS[this.#mode === 'resimulating' && this.replayAudit ? 'live' : this.#mode];
    const wired = wireEngine(
      this.#run!,
      storage,
      this.#conditions,
      {
        audit: (rec, row) => {
          // The log holds the timeline's rows as far as it was played: a row it has (a seek back
          // restored in place, played on again) is the same row, not written twice.
          const missing = auditLog !== null && row >= (auditLog.nextKey ?? 0);
          const to = sinks();
          if (to.page === true || (to.page === 'missing' && missing)) this.#audit.push(rec);
          if (to.log && missing) void auditLog.append(rec);
        },
        decision: (lane, request, out) => {
          // The inspector keeps the requests of an in-place restore's run on to t too.
          if (!sinks().inspector) return;
          this.#kept[lane].set(out.audit.seq, { request, out });
        }
      },
      create,
      from
    );
    this.#guard = wired.guard;
    this.#recorder = wired.recorder;
    this.#watcher = wired.watcher;
    return wired.sim;
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
        this.#newBranch();
        const report = sim.restartClient();
        return [{ type: 'restarted', report, notice: restartNotice(report) }, this.snapshot()];
      }
      case 'seek':
        return this.#seek(cmd.t);
      case 'checkpoints':
        return [{ type: 'checkpoints', checkpoints: this.#recorder?.checkpoints ?? [] }];
      case 'fork': {
        const run = this.#run!;
        const parsed = parsers().parseFork(cmd.fork, run.scenario);
        if (!parsed.ok) return [{ type: 'forked', ok: false, errors: parsed.errors }];
        // Made on the branch the run is on at the fork's time: on a fork, that fork (a fork of a
        // fork keeps the first fork's history of the lane it leaves alone), else the base run.
        const at = run.scenario.start + parsed.fork.atMs;
        const on = branchAt(
          run.scenario,
          ownActions(sim, run.fork, this.#future.list),
          run.fork,
          at
        );
        this.#future.list = [];
        // The fork's engine is re-simulated (fork.ts); its checkpoints start afresh.
        this.#copies.clear();
        const fork: RunFork = { spec: parsed.fork, base: on.own, parent: on.fork, from: 0 };
        this.#rebuild((opts, make) => createFork(run.scenario, opts, fork, make));
        // What a reload or a later seek re-creates the fork from (run memory keeps it too).
        run.fork = fork;
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

  #applyDue(): void {
    this.#future.applyDue(this.#need());
  }

  /**
   * Advance to `to` (at most `maxEvents` events), in pieces no longer than the engine checkpoints'
   * spacing so that one is taken on the way wherever it falls due (a seek to the end of a day
   * leaves the day covered). A cut slice continues exactly (checkpoint.spec.ts).
   */
  #advance(to: number, maxEvents: number): number {
    const sim = this.#need();
    const held = () => this.#watcher?.hit != null;
    let n = 0;
    return this.#running(() => {
      for (;;) {
        const limit = Math.min(maxEvents - n, this.#useCopies ? this.#copies.room(sim) : Infinity);
        const ran = this.#future.advance(sim, to, limit, held);
        n += ran;
        if (ran > 0) {
          this.#checkpoint();
          this.#save(false);
        }
        if (ran < limit || n >= maxEvents || held()) return n;
      }
    });
  }

  /**
   * Run the engine; an error it throws becomes one line saying when and what ("the run stopped
   * at 2:13:07 (simulated): …"), and the run stays stopped there.
   */
  #running<T>(fn: () => T): T {
    if (this.#broken) throw new Error(this.#broken);
    try {
      return fn();
    } catch (e) {
      const sim = this.#need();
      const what = e instanceof Error ? e.message : String(e);
      this.#broken = `the engine failed at ${clockText(sim.now - sim.start)} (simulated): ${what}`;
      throw new Error(this.#broken, { cause: e });
    }
  }

  /**
   * Forward: run there. Back: copy the last engine checkpoint before `t` and run on from it
   * (engine-checkpoints.ts); without one, re-simulate from the start quietly (checkpoint.ts).
   */
  #seek(t: number): Reply[] {
    const sim = this.#need();
    let inPlace = false;
    if (t >= sim.now) {
      const ahead = this.#aheadCheckpoint(t);
      if (ahead) inPlace = this.#restore(t);
      else this.#events = this.#advance(t, Infinity);
    } else inPlace = this.#restore(t);
    const now = this.#need().now;
    return [
      {
        type: 'seeked',
        t: now,
        fork: this.#run?.fork?.spec ?? null,
        forks: chainSpecs(this.#run?.fork ?? null),
        auditRows: this.#recorder!.counts().auditRows,
        checkpoint: this.#recorder!.at(now),
        ...(inPlace && this.#storage ? { inPlace: true } : {})
      },
      this.snapshot()
    ];
  }

  /**
   * A seek forward to `t` that an engine checkpoint well ahead of the run serves better than
   * running there: only with a log that holds the rows up to it (the page indexes the rows in
   * between from the log: the copy writes none), so in the browser after a seek back. Only once
   * the log's writes are all on disk: the worker waits for every queued write before it reads
   * (commands.ts), and a day of the retry storm played to its end leaves ~390,000 rows queued,
   * minutes of IndexedDB in Chromium — a play on to the end after a seek back waited ~3 min for
   * them where running there takes seconds (and makes the same rows: it writes none the log has).
   */
  #aheadCheckpoint(t: number): boolean {
    const sim = this.#need();
    const log = this.#storage?.audit;
    const cp = this.#copies.at(t);
    if (!cp || !log || !this.canRestoreInPlace(t)) return false;
    if (log.status().heldInMemory > 0) return false;
    if (cp.at.events <= sim.events + this.#copies.everyEvents / 2) return false;
    return (log.nextKey ?? 0) >= cp.counts.auditRows;
  }

  /**
   * Re-create the run at `t` (earlier, or far ahead on its timeline): a copy of the last engine
   * checkpoint at or before `t`, run on to `t`; without one, re-simulated from the start. Within a fork, the fork again;
   * before it, the run it was made from (session-timeline.ts).
   */
  #restore(t: number): boolean {
    const sim = this.#need();
    const run = this.#run!;
    const own = ownActions(sim, run.fork, this.#future.list);
    const back = recreateAt(run.scenario, own, run.fork, t);
    const views = this.#recorder?.checkpoints ?? [];
    // Back before a fork point: the run it was made from, whose timeline after t is not the
    // fork's — the checkpoints after t were the fork's.
    if (back.fork !== run.fork) this.#copies.dropAfter({ t, events: Number.MAX_SAFE_INTEGER });
    run.fork = back.fork;
    const from = this.canRestoreInPlace(t) ? this.#copies.at(t) : null;
    let copied = from !== null;
    if (from) {
      try {
        this.#rebuild((_opts, _make, copy) => replayFrom(copy(from.sim), back.actions, { t }), {
          checkpoint: from,
          views
        });
        this.copyRestores++;
      } catch (e) {
        // A store that cannot be copied into (durable storage gone since): re-simulate, in memory.
        if (!(e instanceof NotCloneable)) throw e;
        copied = false;
        this.#copies.clear();
        this.#rebuild(back.create);
      }
    } else this.#rebuild(back.create);
    const at = this.#need().position;
    this.#future.list = back.actions.filter((a) => a.events > at.events || a.t > at.t);
    return copied;
  }

  /**
   * Replace the engine by one re-simulated quietly. Durable decisions must not come from the
   * abandoned branch: the new engine uses the storage the worker set for it (a fresh namespace),
   * or memory when none was set.
   */
  #rebuild(create: Create, from?: RestoreFrom): void {
    // From a checkpoint the run keeps its storage (canRestoreInPlace); a re-simulation writes
    // into the fresh namespace the worker set, or memory.
    const fresh = from ? this.#storage : this.#next !== this.#storage ? this.#next : null;
    const upTo = from ? from.checkpoint.at.t : -Infinity;
    this.#storage = fresh;
    this.#ff = null;
    this.#audit = [];
    // The inspector keeps the requests finished before the checkpoint (the same on this
    // timeline); a re-simulation shows them all again.
    for (const id of LANE_IDS) this.#kept[id] = this.#kept[id].filter((k) => k.out.audit.t < upTo);
    this.#mode = from !== undefined ? 'inPlace' : 'resimulating';
    try {
      this.sim = this.#build(fresh, create, from);
    } finally {
      this.#mode = 'live';
    }
    // Saves go on from here (the storage's snapshot, if ahead, is replaced by the next one).
    this.#saver?.reset(this.sim.position);
    // In place, the log keeps the rows of the timeline as far as it was played (the replay from
    // the checkpoint wrote none: they were there); a change cuts the later ones (#cutLog).
  }
}
