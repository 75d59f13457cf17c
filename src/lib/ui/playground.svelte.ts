/**
 * The playground's state: one scenario in a Web Worker, which plays it on its own clock at the
 * speed setting (raftscope's idea; worker/live.ts), and the snapshots that come back, shown at
 * most one per animation frame. Components read this; they never talk to the worker directly.
 *
 * The parts live beside it, under playground/: play and its frames (live-play.svelte.ts: while
 * playing, the heavier panels follow a few times a second, in turns), what the worker's replies
 * do (replies.ts), loading a scenario and a reload's resume (run-loader.ts), time travel's
 * requests (travel-request.ts) and the speed setting (speed.ts). This class holds the state the
 * components read and delegates to them.
 *
 * Over 400 lines on purpose: it is the one object components bind to, so every state they read is
 * declared here; the behaviour behind each part is in the modules above.
 */
import type { ClientConfigInput } from '$lib/machine/config';
import type { Policy } from '$lib/machine/policy';
import type { InvariantResult } from '$lib/sim/checks/invariants';
import type {
  Command,
  Inspection,
  PendingConsent,
  Reply,
  Snapshot,
  StorageView
} from '$lib/sim/session/protocol';
import type { LaneId, ScenarioError } from '$lib/sim/input/scenario';
import type { TraceEvent } from '$lib/sim/input/trace';
import { AuditTableState } from './audit-table.svelte';
import type { AuditFocus } from './guarantees';
import { SimClient } from './worker/client';
import { RunMemory } from './run-memory';
import type { RestartReport } from '$lib/sim/engine/restart';
import { LivePlay } from './playground/live-play.svelte';
import { PlaygroundReplies } from './playground/replies';
import { RunLoader, type LoadOptions } from './playground/run-loader';
import type { RunTimeline } from '$lib/sim/timeline/link-timeline';
import { travelRequest } from './playground/travel-request';
import { configWords, laneHeading, storeWords, type LaneHeading } from './lane-summary';
import { resolveClientConfig } from '$lib/machine/config';

export {
  MIN_SPEED,
  MAX_SPEED,
  DEFAULT_SPEED,
  SPEED_STEPS,
  nextSpeed,
  speedToSlider,
  sliderToSpeed
} from './playground/speed';
export { PANEL_MS, AUDIT_MS, SHOW_MS } from './playground/live-play.svelte';

export class Playground {
  /** The scenario as editable JSON data, live edits applied: what the editors and the file show. */
  scenario = $state.raw<Record<string, unknown> | null>(null);
  /**
   * The scenario as it was loaded (its seed included), before any change made during the run:
   * what a share link carries, beside the run's timeline (issue #18).
   */
  loaded: Record<string, unknown> | null = null;
  /** The run's timeline as the worker last told it (its `timeline` reply). */
  timeline: RunTimeline | null = null;
  /** Virtual times at which stored decisions were cleared: no timeline action, so no link's. */
  clearedAt: number[] = [];
  name = $state('');
  title = $state('');
  errors = $state.raw<ScenarioError[]>([]);
  snapshot = $state.raw<Snapshot | null>(null);
  /**
   * What the heavier panels show — the statechart and guarantees, and the charts — `snapshot`,
   * except while playing, when each follows every PANEL_MS (playground/live-play.svelte.ts).
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
    exportFile: (id, kind) => this.#client?.send({ type: 'auditExport', id, kind }),
    scenario: () => this.name || this.title
  });
  /** Play and its frames (playground/live-play.svelte.ts). */
  readonly #live = new LivePlay(
    this,
    () => this.#client,
    (r) => this.#replies.show(r)
  );
  get playing(): boolean {
    return this.#live.playing;
  }
  get speed(): number {
    return this.#live.speed;
  }
  /** While playing, the worker plays on at the new speed. */
  set speed(v: number) {
    this.#live.speed = v;
  }
  /** While playing, the speed play reaches when it falls short of the one asked, else null. */
  get speedShort(): number | null {
    return this.#live.short;
  }
  seed = $state(0);
  /**
   * A fast-forward under way: virtual ms done of `total`, and when (wall ms, performance.now) it
   * started and last reported, for the percentage and the time left the bar shows.
   */
  ff = $state.raw<{ done: number; total: number; started: number; at: number } | null>(null);
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
  // ---- Client restarts and the run's end (issue #10; run-memory.ts) ----
  /** The last client restart (the button's, or a reload's) and its notice, until the next load. */
  restarted = $state.raw<{ report: RestartReport; notice: string } | null>(null);
  /** "Simulate N h" went past the scenario's end: the engine's words, and the end that fits. */
  clamped = $state.raw<{ message: string; extendTo: number | null } | null>(null);
  /** What this tab remembers of its run for a reload (sessionStorage). */
  readonly #runs = new RunMemory(() =>
    typeof sessionStorage === 'undefined' ? null : sessionStorage
  );
  /** Loading a scenario, and a reload's resume (playground/run-loader.ts). */
  readonly #loader = new RunLoader(this, () => this.#client, this.#runs);
  /** What the worker's replies do (playground/replies.ts). */
  readonly #replies = new PlaygroundReplies(this, () => this.#client, this.#live, this.#runs);
  /** The audit rows behind a guarantee the learner followed from the Guarantees panel. */
  get auditFocus(): AuditFocus | null {
    return this.auditTable.focus;
  }
  set auditFocus(f: AuditFocus | null) {
    this.auditTable.focus = f;
  }
  /** Wall-clock frame times (ms) while playing: `bench:ui` reads them. */
  get frameTimes(): number[] {
    return this.#live.frameTimes;
  }

  #client: SimClient | null = null;

  get pending(): PendingConsent[] {
    return this.snapshot?.pendingConsent ?? [];
  }

  /**
   * `auditWindow`: how many full audit records the worker keeps in memory (the rest are read back
   * from IndexedDB). A test and benchmark knob (`?auditWindow=N`); it changes memory, not numbers.
   * `memory`: a long run's budgets (`?checkpointBudgetKb=N`, `?heldRecords=N`, `?chartPoints=N`),
   * likewise. `liveCap`: play no faster than N× whatever the speed, as a slower machine would
   * (`?liveCap=N`, a test knob).
   */
  async start(
    opts: {
      auditWindow?: number;
      memory?: { checkpointBytes?: number; heldRecords?: number; chartPoints?: number };
      liveCap?: number;
    } = {}
  ): Promise<void> {
    this.#live.cap = opts.liveCap;
    this.#client = await SimClient.start();
    this.#client.on((r, re) => this.#replies.handle(r, re));
    if (opts.auditWindow) this.#client.send({ type: 'auditWindow', window: opts.auditWindow });
    if (opts.memory) this.#client.send({ type: 'memoryBudget', ...opts.memory });
    this.auditTable.requery();
  }

  stop(): void {
    this.#live.cancelFrames();
    this.#client?.terminate();
  }

  /** Load scenario data (validated in the worker). Returns the errors, if any. */
  load(data: Record<string, unknown>, opts: LoadOptions = {}): Promise<ScenarioError[]> {
    return this.#loader.load(data, opts);
  }

  /** Start over with the same scenario (and seed). */
  async reset(): Promise<void> {
    if (this.scenario)
      await this.load(
        { ...this.scenario, seed: this.seed },
        this.trace ? { trace: this.trace } : {}
      );
  }

  /**
   * What a share link carries of this run (issue #18): the scenario as it was loaded, its forks
   * and its timeline — every change with its time — asked of the worker afresh, so a change made
   * a moment ago is in it; and, in words, what the link cannot carry.
   */
  async sharedRun(
    /** The link carries the run's client log itself (trace mode, issue #22: ShareBar's `trace`). */
    traceCarried = false
  ): Promise<{
    scenario: Record<string, unknown>;
    fork: unknown;
    timeline: unknown;
    leftOut: string;
  } | null> {
    const data = this.loaded ?? this.scenario;
    if (!data) return null;
    const client = this.#client;
    const t = client ? await client.request({ type: 'timeline' }, 'timeline') : this.timeline;
    const start = this.snapshot?.start ?? 0;
    const now = this.snapshot?.now ?? start;
    // What a link leaves out, in words: loaded with the first link made (link-run.ts).
    const { leftOut } = await import('./link-run');
    const words = leftOut(
      {
        trace: this.trace !== null && !traceCarried,
        clearedAt: this.clearedAt.filter((x) => x <= now)
      },
      start
    );
    if (!t) return { scenario: data, fork: null, timeline: null, leftOut: words };
    const { linkOf } = await import('$lib/sim/timeline/link-timeline');
    const link = linkOf(t);
    return { scenario: data, fork: link.fork, timeline: link.timeline, leftOut: words };
  }

  async setSeed(seed: number): Promise<void> {
    if (!this.scenario) return;
    await this.load({ ...this.scenario, seed }, this.trace ? { trace: this.trace } : {});
  }

  play(): void {
    this.#live.play();
  }

  pause(): void {
    this.#live.pause();
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
    this.fastForwardMs(hours * 3_600_000);
  }

  /** Run `ms` of virtual time at once (in the worker's slices, with progress). */
  fastForwardMs(ms: number): void {
    if (!this.snapshot || this.ff || ms <= 0) return;
    this.pause();
    const t = performance.now();
    this.ff = { done: 0, total: ms, started: t, at: t };
    this.#client?.send({ type: 'fastForward', ms });
  }

  /** Simulate to the scenario's end. */
  fastForwardToEnd(): void {
    if (this.snapshot) this.fastForwardMs(this.snapshot.end - this.snapshot.now);
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
    const at = this.snapshot?.now;
    const r = await this.#client.request({ type: 'clearStored', lane }, 'cleared');
    if (at !== undefined) this.clearedAt = [...this.clearedAt, at];
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

  /**
   * What a lane's header says (lane-summary.ts): the store as the engine keeps it and what
   * `client` — the lane's live configuration — changes from the defaults; the scenario's name
   * for the lane beside it when that adds something.
   */
  heading(lane: LaneId, client: ClientConfigInput): LaneHeading {
    const label = this.snapshot?.lanes[lane].label ?? '';
    const words = configWords(client);
    const live = [storeWords(this.scopeLabel(lane)), ...words].filter(Boolean).join(' · ');
    const lanes = this.loaded?.lanes as Record<LaneId, { client?: ClientConfigInput }> | undefined;
    const loaded = lanes?.[lane]?.client ?? {};
    const edited =
      words.join('|') !== configWords(loaded).join('|') ||
      resolveClientConfig(client).store !== resolveClientConfig(loaded).store;
    return laneHeading(label, live, edited);
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
  /** Show the rows behind `g` in the audit log, or every row again (guarantee-focus.ts, loaded then). */
  async focusGuarantee(g: InvariantResult): Promise<void> {
    if (this.auditFocus?.id === g.id) {
      this.auditFocus = null;
      return;
    }
    const { focusOf } = await import('./guarantee-focus');
    this.auditFocus = focusOf(g);
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
    return travelRequest(this.#client, cmd, last);
  }

  /**
   * The run went back (a seek back, a fork): the worker re-simulated it into a fresh namespace.
   * The table asks again for the branch's rows, the inspector's request may not exist any more,
   * and a reload must resume the new namespace, not the abandoned branch's.
   */
  rewound(): void {
    this.auditTable.requery();
    this.inspection = null;
    // A clear is no timeline action: a run re-made from before it never had it.
    const now = this.snapshot?.now ?? 0;
    this.clearedAt = this.clearedAt.filter((t) => t < now);
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
      const t = performance.now();
      this.ff = { done: 0, total: end - now, started: t, at: t };
      this.#client.send({ type: 'fastForward', ms: end - now });
    }
    return null;
  }
}
