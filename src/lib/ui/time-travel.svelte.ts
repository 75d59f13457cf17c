/**
 * Time travel on the page (issue #10): the scrubber, the breakpoints and forks. The worker does
 * the work (sim/session/session.ts "Time travel"): a seek forward runs the run on, a seek back
 * re-simulates it from its start into a fresh IndexedDB namespace (ui/worker/sim.worker.ts), so
 * everything the page shows — lanes, charts, statechart, audit log — is the run at t, and Play
 * continues from there. This class holds what the controls show and sends the commands.
 */
import type { ClientConfigInput } from '$lib/machine/config';
import type { Policy } from '$lib/machine/policy';
import type { ForkChange, ForkSpec } from '$lib/sim/engine/fork';
import type { LaneId } from '$lib/sim/input/scenario';
import type { Command, Reply, Snapshot } from '$lib/sim/session/protocol';
import type { ViewCheckpoint } from '$lib/sim/engine/checkpoint';
import { formatSimTime } from './playground-page.svelte';

/**
 * Setting breakpoints and making forks (time-travel-edits.ts): loaded when one is first set or
 * made, or a link brings a fork — not with the page, whose first screen only seeks (issue #24).
 */
const edits = () => import('./time-travel-edits');

/** What the time-travel controls need of the playground (a `Playground`, or a test double). */
export interface TravelHost {
  readonly snapshot: Snapshot | null;
  pause(): void;
  play(): void;
  /**
   * Send a command; resolves with the replies it caused, up to the one `last` says ends them.
   * Rejects with the worker's error for this command.
   */
  travelRequest(cmd: Command, last: (r: Reply) => boolean): Promise<Reply[]>;
  /** The run went back in time: drop what the page holds of the abandoned branch. */
  rewound(): void;
}

/** A change as the lane editors make it (a configuration as edited, or a validated policy). */
export type ForkEdit =
  { kind: 'config'; client: ClientConfigInput; what?: string } | { kind: 'policy'; policy: Policy };

const isSnapshot = (r: Reply) => r.type === 'snapshot';

/** The gap between stops when the run has no two checkpoints yet (one virtual minute). */
const DEFAULT_SPACING = 60_000;

export class TimeTravel {
  /** Virtual times (absolute ms) of the checkpoints so far: the scrubber's stops. */
  stops = $state.raw<number[]>([]);
  seeking = $state(false);
  /** Wall time the last seek took in the browser (ms), for the note and the benchmark. */
  lastSeekMs = $state<number | null>(null);
  error = $state('');
  /**
   * The last seek went back: the run goes on in a fresh storage namespace (the page says so; the
   * later branch's durable decisions and audit rows stay behind in the old one, unused).
   */
  wentBack = $state(false);
  /**
   * How the last seek got there, for the note under the scrubber: it ran the run on ('ran'),
   * restored an engine checkpoint in place, storage kept ('restored'), or re-simulated from the
   * start into fresh storage ('resimulated').
   */
  seekHow = $state<'ran' | 'restored' | 'resimulated' | null>(null);
  /** The breakpoint conditions in force (sim/timeline/breakpoints.ts syntax). */
  conditions = $state.raw<string[]>([]);
  breakError = $state('');
  /** The fork this run is on, if any. */
  fork = $state.raw<ForkSpec | null>(null);
  /**
   * With the forks it was made on (a fork of a fork), first fork first: what the share link
   * carries, and what the lane editors show. Empty off any fork.
   */
  forks = $state.raw<ForkSpec[]>([]);
  forkErrors = $state.raw<string[]>([]);

  constructor(readonly host: TravelHost) {}

  get start(): number {
    return this.host.snapshot?.start ?? 0;
  }
  get end(): number {
    return this.host.snapshot?.end ?? 0;
  }
  get now(): number {
    return this.host.snapshot?.now ?? 0;
  }

  /** "0:15:00 of 1:00:00": the slider's aria-valuetext. */
  valueText(t = this.now): string {
    return `${formatSimTime(t - this.start)} of ${formatSimTime(this.end - this.start)}`;
  }

  /** The spacing of the checkpoints (for stops past the furthest point the run has reached). */
  get spacing(): number {
    const s = this.stops;
    return s.length >= 2 ? Math.max(1, s[1]! - s[0]!) : DEFAULT_SPACING;
  }

  /** The stop one checkpoint before or after `from`, clamped to the run. */
  neighbour(dir: 1 | -1, from = this.now): number {
    const s = this.stops;
    if (dir < 0) {
      let best = this.start;
      for (const t of s) if (t < from && t > best) best = t;
      return best;
    }
    const next = s.find((t) => t > from);
    return Math.min(this.end, next ?? from + this.spacing);
  }

  /** Ask the worker for its checkpoints (after a load, a seek, a pause). */
  async refreshStops(): Promise<void> {
    if (!this.host.snapshot) return;
    const rs = await this.host.travelRequest(
      { type: 'checkpoints' },
      (r) => r.type === 'checkpoints'
    );
    const r = rs.at(-1);
    if (r?.type === 'checkpoints') this.stops = r.checkpoints.map((c: ViewCheckpoint) => c.t);
  }

  /** Move the whole playground to virtual time `t` (absolute ms). */
  async seek(t: number): Promise<void> {
    const snap = this.host.snapshot;
    if (!snap || this.seeking) return;
    const to = Math.round(Math.min(snap.end, Math.max(snap.start, t)));
    if (to === snap.now) return;
    this.host.pause();
    this.seeking = true;
    this.error = '';
    const back = to < snap.now;
    const t0 = performance.now();
    try {
      const rs = await this.host.travelRequest({ type: 'seek', t: to }, isSnapshot);
      this.lastSeekMs = performance.now() - t0;
      // Back before the fork point, the run is the one the fork was made from.
      const seeked = rs.find((r) => r.type === 'seeked');
      if (seeked?.type === 'seeked') this.setFork(seeked.forks);
      if (back) this.host.rewound();
      this.wentBack = back;
      const inPlace = seeked?.type === 'seeked' && seeked.inPlace === true;
      this.seekHow = inPlace ? 'restored' : back ? 'resimulated' : 'ran';
      await this.refreshStops();
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.seeking = false;
    }
  }

  /** Seek one checkpoint back or on (the stops asked afresh: the run may have played on). */
  async step(dir: 1 | -1): Promise<void> {
    // Keys pressed while a seek runs are counted, then taken together.
    this.#steps += dir;
    if (this.seeking) return;
    while (this.#steps !== 0) {
      let n = this.#steps;
      this.#steps = 0;
      await this.refreshStops();
      let t = this.now;
      for (; n !== 0; n -= Math.sign(n)) t = this.neighbour(n > 0 ? 1 : -1, t);
      await this.seek(t);
    }
  }
  #steps = 0;

  /** What the last key started (a step or a seek): settled when the run is there. */
  pending: Promise<void> = Promise.resolve();

  /** The scrubber's keys: ←/→ a checkpoint, Home/End the run's ends. True when handled. */
  key(key: string): boolean {
    switch (key) {
      case 'ArrowLeft':
      case 'ArrowDown':
        this.pending = this.step(-1);
        return true;
      case 'ArrowRight':
      case 'ArrowUp':
        this.pending = this.step(1);
        return true;
      case 'Home':
        this.pending = this.seek(this.start);
        return true;
      case 'End':
        this.pending = this.seek(this.end);
        return true;
      default:
        return false;
    }
  }

  // ---- Breakpoints ----

  /** Add a condition (checked here first, so a typo is named before anything is sent). */
  async addBreak(text: string): Promise<boolean> {
    return (await edits()).addBreak(this, text);
  }

  async removeBreak(cond: string): Promise<boolean> {
    return (await edits()).setBreaks(
      this,
      this.conditions.filter((c) => c !== cond)
    );
  }

  /** The decision a breakpoint stopped on, while the run is paused there. */
  get paused() {
    return this.host.snapshot?.paused ?? null;
  }

  /** Go on from a breakpoint: the run plays on to the next condition that holds. */
  async resume(): Promise<void> {
    await this.host.travelRequest({ type: 'resume' }, isSnapshot);
    this.host.play();
  }

  // ---- Fork ----

  /**
   * "Fork from here" is armed: the next change made in a lane's editors (configuration or policy)
   * forks the run at the current time instead of changing the lane live.
   */
  forkArmed = $state(false);

  /** Fork at the current time with `change` to `lane` (what the armed editors call). */
  async forkHere(lane: LaneId, change: ForkEdit): Promise<boolean> {
    this.forkArmed = false;
    const atMs = this.now - this.start;
    // The editors' input shape; the worker validates it with ForkSchema (errors with paths).
    return this.startFork({ version: 1, atMs, lane, change: change as ForkChange });
  }

  /** Re-run `fork.lane` from `fork.atMs` with its change; the other lane keeps its history. */
  async startFork(fork: ForkSpec): Promise<boolean> {
    // Paused at once, as asked, while the fork's code loads.
    this.host.pause();
    this.seeking = true;
    try {
      return await (await edits()).startFork(this, fork);
    } finally {
      this.seeking = false;
    }
  }

  /**
   * A fork the page was opened with (a share link's `&f=`), for the scenario the link carries:
   * applied once, right after that scenario loads.
   */
  #linkFork: { scenario: string; fork: unknown } | null = null;

  fromLink(scenario: unknown, fork: unknown): void {
    this.#linkFork = fork == null ? null : { scenario: JSON.stringify(scenario), fork };
  }

  /**
   * A new run (a load, Reset, a seed; `scenario` is its data): no fork — unless it is the
   * linked scenario's first load, which gets the link's fork. The breakpoints stay (the worker
   * keeps them).
   */
  async loaded(scenario: unknown): Promise<void> {
    this.forkErrors = [];
    this.error = '';
    const link = this.#linkFork;
    this.#linkFork = null;
    if (link && link.scenario === JSON.stringify(scenario))
      return (await edits()).linkForks(this, link.fork);
    await this.#syncFork();
    await this.refreshStops();
  }

  /**
   * The fork the worker's run is on: none for a new run, the same after a live edit, the fork a
   * reload brought back (run-memory.ts) — the worker says which.
   */
  async #syncFork(): Promise<void> {
    // Asked even before the first snapshot: the run is loaded once its data is (the page's
    // first load sets the scenario, then asks for the first snapshot).
    try {
      const rs = await this.host.travelRequest({ type: 'fork?' }, (r) => r.type === 'forkState');
      const r = rs.at(-1);
      this.setFork(r?.type === 'forkState' ? r.forks : []);
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    }
  }

  /** The forks the run is on now (a seek, a fork made, the worker's word). */
  setFork(forks: ForkSpec[]): void {
    if (JSON.stringify(forks) === JSON.stringify(this.forks)) return;
    // A fork of a fork keeps the live edits made since the earlier forks on the lane it leaves.
    const prefix = this.forks.every((f, i) => JSON.stringify(f) === JSON.stringify(forks[i]));
    const last = forks.at(-1) ?? null;
    this.#editedSinceFork =
      prefix && last ? this.#editedSinceFork.filter((l) => l !== last.lane) : [];
    this.forks = forks;
    this.fork = last;
  }

  /** What the share link carries: the fork, or for a fork of a fork the list of them. */
  get linkFork(): ForkSpec | ForkSpec[] | null {
    return this.forks.length > 1 ? this.forks : this.fork;
  }

  // ---- What the lane editors show (issue #10: after a fork, what the lane actually runs) ----

  /** Lanes edited live since the fork: their editors show the page's configuration again. */
  #editedSinceFork = $state.raw<LaneId[]>([]);

  /** A lane was edited live (configuration or policy): from now on it runs the edit. */
  edited(lane: LaneId): void {
    if (this.forks.some((f) => f.lane === lane) && !this.#editedSinceFork.includes(lane))
      this.#editedSinceFork = [...this.#editedSinceFork, lane];
  }

  /** The change a fork made to `lane` that its editors must show, if any (the latest of a kind). */
  #forked(lane: LaneId, kind: ForkChange['kind']): ForkChange | null {
    if (this.#editedSinceFork.includes(lane)) return null;
    for (let i = this.forks.length - 1; i >= 0; i--) {
      const f = this.forks[i]!;
      if (f.lane === lane && f.change.kind === kind) return f.change;
    }
    return null;
  }

  /** The client configuration `lane` runs: the fork's for the forked lane, else `base`. */
  laneClient(lane: LaneId, base: ClientConfigInput): ClientConfigInput {
    const c = this.#forked(lane, 'config');
    return c?.kind === 'config' ? c.client : base;
  }

  /** The policy `lane` runs: the fork's for a lane forked with a policy, else `base`. */
  lanePolicy(lane: LaneId, base: Policy | null): Policy | null {
    const c = this.#forked(lane, 'policy');
    return c?.kind === 'policy' ? c.policy : base;
  }
}
