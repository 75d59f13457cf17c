/**
 * The playground's state: one scenario in a Web Worker, which plays it on its own clock at the
 * speed setting (raftscope's idea; worker/live.ts), and the snapshots that come back, shown at
 * most one per animation frame. Components read this; they never talk to the worker directly.
 *
 * While playing, a frame must stay short (issue #9: p95 ≤ 16.7 ms at 1000×): the clock and the
 * lanes table show the newest snapshot about 30 times a second; the heavier panels (charts,
 * statechart, guarantees, the audit table's rows) follow a few times a second, in turns, each in
 * a frame of its own. At a pause or the run's end, every panel shows the same snapshot at once.
 */
import type { ClientConfigInput } from '$lib/machine/config';
import type { Policy } from '$lib/machine/policy';
import type { InvariantResult } from '$lib/sim/invariants';
import type {
  AuditView,
  Command,
  Inspection,
  PendingConsent,
  Reply,
  Snapshot,
  StorageView
} from '$lib/sim/protocol';
import type { LaneId, ScenarioError } from '$lib/sim/scenario';
import type { TraceEvent } from '$lib/sim/trace';
import { AuditTableState } from './audit-table.svelte';
import { downloadBlob } from './download';
import { focusOf, type AuditFocus } from './guarantees';
import { SimClient } from './worker/client';
import { RunMemory, runKey, scenarioAfter } from './run-memory';
import type { RestartReport } from '$lib/sim/restart';

/** Speeds on a logarithmic slider: 1× to 1000× simulated time. */
export const MIN_SPEED = 1;
export const MAX_SPEED = 1000;
export const DEFAULT_SPEED = 60;
/** While playing, how often the heavier panels follow (ms)... */
export const PANEL_MS = 250;
/** ...and the audit table, the costliest to draw (its rows fly by too fast to read anyway). */
export const AUDIT_MS = 500;
/**
 * While playing, the least time between two snapshots shown (ms): about 30 a second, every other
 * frame at 60 Hz. The clock reads as smoothly, and the page leaves the worker (and the machine)
 * half the rendering.
 */
export const SHOW_MS = 25;

/** The steps `+` and `-` move along. */
export const SPEED_STEPS = [1, 2, 5, 10, 20, 30, 60, 120, 250, 500, 1000];

/** The next step up or down from `speed` (from between two steps, the nearer one in that direction). */
export function nextSpeed(speed: number, dir: 1 | -1): number {
  if (dir > 0) return SPEED_STEPS.find((s) => s > speed) ?? MAX_SPEED;
  return [...SPEED_STEPS].reverse().find((s) => s < speed) ?? MIN_SPEED;
}

export function speedToSlider(speed: number): number {
  return Math.round((Math.log10(speed) / Math.log10(MAX_SPEED)) * 100);
}
export function sliderToSpeed(v: number): number {
  const s = Math.pow(10, (v / 100) * Math.log10(MAX_SPEED));
  return s < 10 ? Math.round(s * 10) / 10 : Math.round(s);
}

/** One of the slower updates while playing: how often, when it last ran, whether it has news. */
interface Slot {
  every: number;
  at: number;
  due: () => boolean;
  run: () => void;
}

export class Playground {
  /** The scenario as editable JSON data: what Share puts in the link. */
  scenario = $state.raw<Record<string, unknown> | null>(null);
  name = $state('');
  title = $state('');
  errors = $state.raw<ScenarioError[]>([]);
  snapshot = $state.raw<Snapshot | null>(null);
  /**
   * What the heavier panels show — the statechart and guarantees, and the charts — `snapshot`,
   * except while playing, when each follows every PANEL_MS (see the file's comment).
   */
  panelSnapshot = $state.raw<Snapshot | null>(null);
  chartSnapshot = $state.raw<Snapshot | null>(null);
  /**
   * The audit table: the worker holds the log and answers the table's queries; the page keeps
   * only what is on screen (issue #8: bounded memory at a million rows).
   */
  readonly auditTable = new AuditTableState({
    query: (id, query) => this.#client?.send({ type: 'auditQuery', id, query }),
    rows: (id, start, count) => this.#client?.send({ type: 'auditRows', id, start, count }),
    exportFile: (id, kind) => this.#client?.send({ type: 'auditExport', id, kind })
  });
  playing = $state(false);
  #speed = $state(DEFAULT_SPEED);
  get speed(): number {
    return this.#speed;
  }
  /** While playing, the worker plays on at the new speed. */
  set speed(v: number) {
    this.#speed = v;
    if (this.playing) this.#client?.send({ type: 'liveSpeed', speed: v });
  }
  seed = $state(0);
  ff = $state.raw<{ done: number; total: number } | null>(null);
  human = $state(false);
  inspection = $state.raw<Inspection | null>(null);
  inspecting = $state(false);
  notice = $state('');
  /** What is on disk: per durable lane and for the audit log (updated after every group commit). */
  storage = $state.raw<StorageView | null>(null);
  /** Durable decisions a reload found in its run (non-zero only when the run was resumed). */
  resumed = $state.raw<Record<LaneId, number> | null>(null);
  retrying = $state(false);
  trace: TraceEvent[] | null = null;
  /** The first load after the page opens may resume the tab's run; Reset, a seed or a scenario never do. */
  #mayResume = true;
  // ---- Client restarts and the run's end (issue #10; run-memory.ts) ----
  /** The last client restart (the button's, or a reload's) and its notice, until the next load. */
  restarted = $state.raw<{ report: RestartReport; notice: string } | null>(null);
  /** "Simulate N h" went past the scenario's end: the engine's words, and the end that fits. */
  clamped = $state.raw<{ message: string; extendTo: number | null } | null>(null);
  /** What this tab remembers of its run for a reload (sessionStorage). */
  readonly #runs = new RunMemory(() =>
    typeof sessionStorage === 'undefined' ? null : sessionStorage
  );
  /** The audit rows behind a guarantee the learner followed from the Guarantees panel. */
  get auditFocus(): AuditFocus | null {
    return this.auditTable.focus;
  }
  set auditFocus(f: AuditFocus | null) {
    this.auditTable.focus = f;
  }
  /** Wall-clock frame times (ms) while playing: `bench:ui` reads them. */
  frameTimes: number[] = [];

  #client: SimClient | null = null;
  #last = 0;
  #raf = 0;
  /** The `live` request of the play in progress: its snapshots are shown one per frame. */
  #liveId = 0;
  /** Every `live` request so far: a snapshot of an earlier play, arriving late, is stale. */
  // eslint-disable-next-line svelte/prefer-svelte-reactivity -- bookkeeping, nothing renders it
  readonly #liveIds = new Set<number>();
  /** The newest live snapshot not yet shown (older ones are dropped unseen). */
  #pending: Snapshot | null = null;
  /** When the last live snapshot was shown. */
  #shownAt = 0;
  /** An audit view held back while playing (the table follows in its turn). */
  #auditPending: AuditView | null = null;
  /** The slower updates while playing: each at most every `every` ms, at most one a frame. */
  readonly #slots: Slot[] = [
    {
      every: AUDIT_MS,
      at: 0,
      due: () => this.#auditPending !== null,
      run: () => {
        const view = this.#auditPending!;
        this.#auditPending = null;
        this.auditTable.onView(view);
      }
    },
    {
      every: PANEL_MS,
      at: 0,
      due: () => this.chartSnapshot !== this.snapshot,
      run: () => (this.chartSnapshot = this.snapshot)
    },
    {
      every: PANEL_MS,
      at: 0,
      due: () => this.panelSnapshot !== this.snapshot,
      run: () => (this.panelSnapshot = this.snapshot)
    }
  ];

  get pending(): PendingConsent[] {
    return this.snapshot?.pendingConsent ?? [];
  }

  /**
   * `auditWindow`: how many full audit records the worker keeps in memory (the rest are read back
   * from IndexedDB). A test and benchmark knob (`?auditWindow=N`); it changes memory, not numbers.
   */
  async start(opts: { auditWindow?: number } = {}): Promise<void> {
    this.#client = await SimClient.start();
    this.#client.on((r, re) => this.#onReply(r, re));
    if (opts.auditWindow) this.#client.send({ type: 'auditWindow', window: opts.auditWindow });
    this.auditTable.requery();
  }

  stop(): void {
    cancelAnimationFrame(this.#raf);
    this.#client?.terminate();
  }

  #onReply(r: Reply, re: number | null): void {
    switch (r.type) {
      case 'snapshot':
        if (re !== null && this.#liveIds.has(re)) {
          // Play's news: shown at the next frame, the newest only; after a pause, stale.
          if (this.playing && re === this.#liveId) this.#pending = r;
          break;
        }
        this.#show(r);
        break;
      // ---- issue #10: restarts, the timeline a reload re-applies, the run's end ----
      case 'restarted':
        this.restarted = { report: r.report, notice: r.notice };
        this.#client?.send({ type: 'timeline' });
        break;
      case 'timeline':
        this.#runs.timeline(r.t, r.actions, r.fork);
        break;
      case 'fastForwardClamped':
        this.clamped = { message: r.message, extendTo: r.extendTo };
        break;
      case 'policyApplied':
      case 'extended':
      case 'seeked':
      case 'forked':
        this.#client?.send({ type: 'timeline' });
        break;
      case 'storage':
        this.storage = { run: r.run, lanes: r.lanes, audit: r.audit, auditError: r.auditError };
        break;
      case 'progress':
        this.ff = { done: r.done, total: r.total };
        break;
      case 'fastForwardDone':
        this.ff = null;
        this.notice = r.cancelled ? 'Fast-forward cancelled.' : '';
        break;
      case 'inspection':
        this.inspection = r;
        this.inspecting = false;
        break;
      case 'error':
        if (re !== null && re === this.#liveId) this.#stopped();
        this.notice = r.message;
        break;
      case 'auditView':
        this.#auditPending = null;
        this.auditTable.onView(r.view);
        break;
      case 'auditRows':
        this.auditTable.onRows(r.queryId, r.start, r.rows);
        break;
      case 'auditError':
        this.auditTable.onError(r.id, r.message);
        break;
      case 'auditExportProgress':
        this.auditTable.onExportProgress(r.id, r.done, r.of);
        break;
      case 'auditExport': {
        const blob = this.auditTable.onExportDone(r.id, r);
        if (blob)
          downloadBlob(blob.type.includes('csv') ? 'audit-log.csv' : 'audit-log.jsonl', blob);
        break;
      }
    }
  }

  /** Load scenario data (validated in the worker). Returns the errors, if any. */
  async load(
    data: Record<string, unknown>,
    opts: { trace?: TraceEvent[] } = {}
  ): Promise<ScenarioError[]> {
    const client = this.#client;
    if (!client) return [{ path: '$', message: 'the simulation worker is not running' }];
    this.pause();
    this.ff = null;
    this.trace = opts.trace ?? null;
    const key = runKey(data, opts.trace ?? null);
    const found = this.#mayResume ? await this.#runs.read() : null;
    const saved = found && found.key === key ? found : null;
    const unresumable = this.#mayResume ? this.#runs.problem : '';
    this.#mayResume = false;
    // A reload mid-run: the same seed, re-simulated to where it was, then the client restarted.
    if (saved && saved.seed !== null) data = { ...data, seed: saved.seed };
    const seed = typeof data.seed === 'number' ? data.seed : 0;
    this.restarted = null;
    this.clamped = null;
    const r = await client.request(
      {
        type: 'load',
        scenario: data,
        ...(opts.trace ? { trace: opts.trace } : {}),
        ...(this.human ? { human: ['A', 'B'] } : {}),
        ...(saved ? { resume: saved.id } : {}),
        ...(saved?.t != null
          ? { at: { t: saved.t, actions: saved.actions, fork: saved.fork } }
          : {})
      },
      'loaded'
    );
    if (!r.ok) {
      this.errors = r.errors;
      return r.errors;
    }
    this.errors = [];
    this.#runs.started(r.run, key, typeof data.seed === 'number' ? data.seed : null);
    this.resumed = r.resumed.A + r.resumed.B > 0 ? r.resumed : null;
    this.scenario = saved?.t != null ? scenarioAfter(data, saved.actions, saved.fork) : data;
    this.name = r.name;
    this.title = typeof data.title === 'string' ? data.title : r.name;
    this.seed = seed;
    // A new run's log: ask again, so nothing of the old one is shown (the filters stay).
    this.auditTable.focus = null;
    this.inspection = null;
    this.notice = unresumable;
    this.snapshot = await client.request({ type: 'advance', to: r.start }, 'snapshot');
    return [];
  }

  /** Start over with the same scenario (and seed). */
  async reset(): Promise<void> {
    if (this.scenario)
      await this.load(
        { ...this.scenario, seed: this.seed },
        this.trace ? { trace: this.trace } : {}
      );
  }

  async setSeed(seed: number): Promise<void> {
    if (!this.scenario) return;
    await this.load({ ...this.scenario, seed }, this.trace ? { trace: this.trace } : {});
  }

  /** Show a snapshot: the clock and lanes at once; the panels and the table unless playing. */
  #show(r: Snapshot): void {
    if (r.auditView) this.#auditView(r.auditView);
    this.snapshot = r;
    if (!this.playing) this.panelSnapshot = this.chartSnapshot = r;
    this.storage = r.storage;
    if (r.done) this.#stopped();
    // Who answers the dialogs is the run's (a reload brings it back with the timeline).
    this.human = r.human.length > 0;
    // A breakpoint held: the run stays where it stopped until Resume (time-travel.svelte.ts).
    if (r.paused) this.pause();
    // Where a reload resumes; an ended run (or one not yet started) starts over instead.
    this.#runs.at(!r.done && r.now > r.start ? r.now : null);
  }

  /** The audit table follows every AUDIT_MS while playing (its rows are the costliest to draw). */
  #auditView(view: AuditView): void {
    if (this.playing) this.#auditPending = view;
    else {
      this.#auditPending = null;
      this.auditTable.onView(view);
    }
  }

  play(): void {
    const client = this.#client;
    if (this.playing || !client || !this.snapshot || this.snapshot.done) return;
    this.playing = true;
    this.#pending = null;
    this.#liveId = client.send({ type: 'live', speed: this.speed });
    this.#liveIds.add(this.#liveId);
    this.#last = performance.now();
    const tick = (t: number) => {
      if (!this.playing) return;
      this.frameTimes.push(t - this.#last);
      this.#last = t;
      this.#frame(t);
      if (this.playing) this.#raf = requestAnimationFrame(tick);
    };
    this.#raf = requestAnimationFrame(tick);
  }

  /**
   * One frame of play: one of the slower updates that are due — the audit table's rows, the
   * charts, the statechart and guarantees — or else the newest snapshot (then the worker may send
   * the next), so no frame draws more than one of them.
   */
  #frame(t: number): void {
    // The one that waited longest of the slower updates due: it has this frame to itself.
    let next: Slot | null = null;
    for (const slot of this.#slots)
      if (t - slot.at >= slot.every && slot.due() && (!next || slot.at < next.at)) next = slot;
    if (next) {
      next.at = t;
      next.run();
      return;
    }
    const snap = this.#pending;
    if (snap && t - this.#shownAt >= SHOW_MS) {
      this.#shownAt = t;
      this.#pending = null;
      this.#client?.send({ type: 'liveAck' });
      this.#show(snap);
    }
  }

  /** Play ended in the worker (the run's end, an error): everything shows where it stopped. */
  #stopped(): void {
    if (!this.playing) return;
    this.playing = false;
    this.#liveId = 0;
    this.#pending = null;
    cancelAnimationFrame(this.#raf);
    this.#catchUp();
  }

  /** The panels and the table show what the clock shows (play stopped). */
  #catchUp(): void {
    this.panelSnapshot = this.chartSnapshot = this.snapshot;
    const view = this.#auditPending;
    this.#auditPending = null;
    if (view) this.auditTable.onView(view);
  }

  pause(): void {
    if (this.playing) {
      // The worker stops and answers with where it stopped (shown like any command's answer).
      this.#client?.send({ type: 'liveStop' });
      this.#liveId = 0;
      this.#pending = null;
    }
    this.playing = false;
    cancelAnimationFrame(this.#raf);
    this.#catchUp();
  }

  toggle(): void {
    if (this.playing) this.pause();
    else this.play();
  }

  step(): void {
    this.pause();
    this.#client?.send({ type: 'step' });
  }

  fastForward(hours: number): void {
    if (!this.snapshot || this.ff) return;
    this.pause();
    this.ff = { done: 0, total: hours * 3_600_000 };
    this.#client?.send({ type: 'fastForward', ms: hours * 3_600_000 });
  }

  cancelFastForward(): void {
    this.#client?.send({ type: 'cancel' });
  }

  /** Change a lane's client configuration live; it is marked on the timeline. */
  setClient(lane: LaneId, client: ClientConfigInput, what: string): void {
    if (!this.scenario) return;
    const lanes = structuredClone(this.scenario.lanes) as Record<LaneId, Record<string, unknown>>;
    lanes[lane] = { ...lanes[lane], client };
    this.scenario = { ...this.scenario, lanes };
    this.#client?.send({ type: 'setConfig', lane, client, what: `${what}` });
    this.#client?.send({ type: 'timeline' });
  }

  /** Apply an already-validated policy; returns the stored decisions invalidated per server. */
  async applyPolicy(lane: LaneId, policy: Policy): Promise<Record<string, number>> {
    if (!this.scenario || !this.#client) return {};
    const lanes = structuredClone(this.scenario.lanes) as Record<LaneId, Record<string, unknown>>;
    lanes[lane] = { ...lanes[lane], policy };
    this.scenario = { ...this.scenario, lanes };
    const r = await this.#client.request({ type: 'setPolicy', lane, policy }, 'policyApplied');
    return r.invalidated;
  }

  async clearStored(lane: LaneId): Promise<number> {
    if (!this.#client) return 0;
    const r = await this.#client.request({ type: 'clearStored', lane }, 'cleared');
    return r.count;
  }

  /** Try writing to IndexedDB again after a failure. */
  async retryStorage(): Promise<void> {
    if (!this.#client) return;
    this.retrying = true;
    try {
      await this.#client.request({ type: 'retryStorage' }, 'snapshot');
    } finally {
      this.retrying = false;
    }
  }

  /** The lane asked for durable storage and does not have it (it fell back, or writes failed). */
  lostDurability(lane: LaneId): boolean {
    const view = this.snapshot?.lanes[lane];
    if (!view) return false;
    if (view.fellBack) return true;
    const st = this.storage?.lanes[lane]?.storage ?? view.storage;
    return view.scope === 'durable' && st !== null && st.failure !== null;
  }

  /** How a lane keeps its decisions, in the words its label shows. */
  scopeLabel(lane: LaneId): string {
    const view = this.snapshot?.lanes[lane];
    if (!view) return '';
    if (view.scope === 'connection')
      return view.fellBack
        ? 'connection-scoped (durable storage unavailable)'
        : 'connection-scoped';
    const st = this.storage?.lanes[lane]?.storage ?? view.storage;
    if (st === null) return 'durable (in memory)';
    return st.failure ? 'held in memory only (storage failed)' : 'durable store';
  }

  setHuman(on: boolean): void {
    this.human = on;
    this.#client?.send({ type: 'setHuman', human: on ? ['A', 'B'] : [] });
    this.#client?.send({ type: 'timeline' });
  }

  answer(p: PendingConsent, approved: boolean): void {
    this.#client?.send({ type: 'consent', lane: p.lane, token: p.token, approved });
    // A person's answer is on the timeline: a reload must re-apply it (run-memory.ts).
    this.#client?.send({ type: 'timeline' });
  }

  inspect(lane: LaneId, seq: number): void {
    this.inspecting = true;
    this.#client?.send({ type: 'inspect', lane, seq });
  }

  /** Show the audit rows behind a guarantee; the same one again shows every row. */
  focusGuarantee(g: InvariantResult): void {
    this.auditFocus = this.auditFocus?.id === g.id ? null : focusOf(g);
  }

  laneClient(lane: LaneId): ClientConfigInput {
    const lanes = this.scenario?.lanes as
      Record<LaneId, { client?: ClientConfigInput }> | undefined;
    return lanes?.[lane]?.client ?? {};
  }

  // ---- Time travel (issue #10; the scrubber, breakpoints and forks: time-travel.svelte.ts) ----
  /**
   * Send a time-travel command and collect the replies it causes until `last` says one ends them
   * (a seek: its snapshot). Rejects with the worker's error for this command.
   */
  travelRequest(cmd: Command, last: (r: Reply) => boolean): Promise<Reply[]> {
    const client = this.#client;
    if (!client) return Promise.reject(new Error('the simulation worker is not running'));
    return new Promise((resolve, reject) => {
      const got: Reply[] = [];
      let id = 0;
      const off = client.on((r, re) => {
        if (re !== id) return;
        if (r.type === 'error') {
          off();
          reject(new Error(r.message));
          return;
        }
        got.push(r);
        if (last(r)) {
          off();
          resolve(got);
        }
      });
      id = client.send(cmd);
    });
  }

  /**
   * The run went back (a seek back, a fork): the worker re-simulated it into a fresh namespace.
   * The table asks again for the branch's rows, the inspector's request may not exist any more,
   * and a reload must resume the new namespace, not the abandoned branch's.
   */
  rewound(): void {
    this.auditTable.requery();
    this.inspection = null;
    const run = this.snapshot?.storage.run ?? null;
    if (run) this.#runs.moved(run);
  }

  lanePolicy(lane: LaneId): Policy | null {
    const lanes = this.scenario?.lanes as Record<LaneId, { policy?: Policy }> | undefined;
    return lanes?.[lane]?.policy ?? null;
  }

  // ---- issue #10: Restart client, and going on past the scenario's end ----

  /** Restart the client now, at the run's virtual time: the notice says what each lane lost or kept. */
  async restartClient(): Promise<void> {
    if (!this.#client || !this.snapshot || this.ff) return;
    this.clamped = null;
    await this.#client.request({ type: 'restart' }, 'restarted');
  }

  /**
   * Extend the run to the end the clamped fast-forward named, and simulate the rest of what was
   * asked. Returns the engine's reason when it cannot be extended.
   */
  async extendRun(): Promise<string | null> {
    const end = this.clamped?.extendTo;
    if (!this.#client || end == null || this.ff) return null;
    const r = await this.#client.request({ type: 'extend', end }, 'extended');
    if (!r.ok) return r.message;
    this.clamped = null;
    const now = this.snapshot?.now ?? end;
    if (end > now) {
      this.pause();
      this.ff = { done: 0, total: end - now };
      this.#client.send({ type: 'fastForward', ms: end - now });
    }
    return null;
  }
}
