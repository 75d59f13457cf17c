/**
 * Play, as the page sees it (issue #9): the worker plays the scenario on its own clock at the
 * speed setting (raftscope's idea; worker/live.ts) and posts snapshots; this shows them at most
 * one per animation frame. The playground (playground.svelte.ts) delegates Play, Pause and the
 * speed here.
 *
 * While playing, a frame must stay short (issue #9: p95 ≤ 16.7 ms at 1000×): the clock and the
 * lanes table show the newest snapshot about 30 times a second; the heavier panels (charts,
 * statechart, guarantees, the audit table's rows) follow a few times a second, in turns, each in
 * a frame of its own; the charts' canvases are drawn on those frames, three a frame (frame-beat.ts).
 * At a pause or the run's end, every panel shows the same snapshot at once.
 */
import type { AuditView, Snapshot } from '$lib/sim/session/protocol';
import type { Playground } from '../playground.svelte';
import type { SimClient } from '../worker/client';
import { liveBeat } from '../frame-beat';
import { DEFAULT_SPEED } from './speed';
import { SpeedMeter } from './speed-meter';

/** While playing, how often the speed reached is looked at again (ms). */
const METER_SAY_MS = 1_000;

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

/** One of the slower updates while playing: how often, when it last ran, whether it has news. */
interface Slot {
  every: number;
  at: number;
  due: () => boolean;
  run: () => void;
}

/** What play shows into: the playground's snapshots and its audit table. */
export type LiveView = Pick<
  Playground,
  'snapshot' | 'panelSnapshot' | 'chartSnapshot' | 'auditTable'
>;

export class LivePlay {
  playing = $state(false);
  #speed = $state(DEFAULT_SPEED);
  get speed(): number {
    return this.#speed;
  }
  /** While playing, the worker plays on at the new speed. */
  set speed(v: number) {
    this.#speed = v;
    this.#measureAfresh();
    if (this.playing) this.#client()?.send({ type: 'liveSpeed', speed: v });
  }
  /**
   * While playing, the speed play reaches when it falls short of the one asked (the machine
   * cannot keep up: speed-meter.ts), else null.
   */
  short = $state<number | null>(null);
  /** Play no faster than this (the `?liveCap=N` test knob: a slower machine); none by default. */
  cap: number | undefined = undefined;
  readonly #meter = new SpeedMeter();
  #saidAt = 0;
  /** The pace is measured from here on (play starts, the speed changes). */
  #measureAfresh(): void {
    this.#meter.reset();
    this.short = null;
  }
  /** Wall-clock frame times (ms) while playing: `bench:ui` reads them. */
  frameTimes: number[] = [];

  readonly #pg: LiveView;
  readonly #client: () => SimClient | null;
  /** Show a snapshot as any reply's (playground/replies.ts): play's newest, at its frame. */
  readonly #show: (r: Snapshot) => void;

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
        this.#pg.auditTable.onView(view);
      }
    },
    {
      every: PANEL_MS,
      at: 0,
      due: () => this.#pg.chartSnapshot !== this.#pg.snapshot,
      run: () => (this.#pg.chartSnapshot = this.#pg.snapshot)
    },
    {
      every: PANEL_MS,
      at: 0,
      due: () => this.#pg.panelSnapshot !== this.#pg.snapshot,
      run: () => (this.#pg.panelSnapshot = this.#pg.snapshot)
    }
  ];

  constructor(pg: LiveView, client: () => SimClient | null, show: (r: Snapshot) => void) {
    this.#pg = pg;
    this.#client = client;
    this.#show = show;
  }

  /**
   * A snapshot that answers a `live` request is play's news (true): held for the next frame, or
   * dropped as stale. Any other snapshot is not play's (false), and is shown as it comes.
   */
  news(r: Snapshot, re: number | null): boolean {
    if (re === null || !this.#liveIds.has(re)) return false;
    // Play's news: shown at the next frame, the newest only; after a pause, stale.
    if (this.playing && re === this.#liveId) this.#pending = r;
    return true;
  }

  /** The worker's error for request `re`: when it is the play in progress, play has stopped. */
  failed(re: number | null): void {
    if (re !== null && re === this.#liveId) this.stopped();
  }

  /** The audit table follows every AUDIT_MS while playing (its rows are the costliest to draw). */
  auditView(view: AuditView): void {
    if (this.playing) this.#auditPending = view;
    else {
      this.#auditPending = null;
      this.#pg.auditTable.onView(view);
    }
  }

  /** An `auditView` reply (the table's own query answered): shown at once, anything held dropped. */
  auditAnswer(view: AuditView): void {
    this.#auditPending = null;
    this.#pg.auditTable.onView(view);
  }

  play(): void {
    const client = this.#client();
    const snapshot = this.#pg.snapshot;
    if (this.playing || !client || !snapshot || snapshot.done) return;
    this.playing = true;
    this.#pending = null;
    this.#liveId = client.send({
      type: 'live',
      speed: this.speed,
      ...(this.cap !== undefined ? { cap: this.cap } : {})
    });
    this.#measureAfresh();
    this.#liveIds.add(this.#liveId);
    this.#last = performance.now();
    // The charts' redraws ride on the frames that show something (frame-beat.ts).
    liveBeat.drive(true);
    const tick = (t: number) => {
      if (!this.playing) return;
      this.frameTimes.push(t - this.#last);
      this.#last = t;
      liveBeat.frame(t, this.#frame(t));
      if (this.playing) this.#raf = requestAnimationFrame(tick);
    };
    this.#raf = requestAnimationFrame(tick);
  }

  /**
   * One frame of play: one of the slower updates that are due — the audit table's rows, the
   * charts, the statechart and guarantees — or else the newest snapshot (then the worker may send
   * the next), so no frame draws more than one of them. Whether it showed anything.
   */
  #frame(t: number): boolean {
    // The one that waited longest of the slower updates due: it has this frame to itself.
    let next: Slot | null = null;
    for (const slot of this.#slots)
      if (t - slot.at >= slot.every && slot.due() && (!next || slot.at < next.at)) next = slot;
    if (next) {
      next.at = t;
      next.run();
      return true;
    }
    const snap = this.#pending;
    if (snap && t - this.#shownAt >= SHOW_MS) {
      this.#shownAt = t;
      this.#pending = null;
      this.#client()?.send({ type: 'liveAck' });
      this.#show(snap);
      this.#meter.add(t, snap.now);
      if (t - this.#saidAt >= METER_SAY_MS) {
        this.#saidAt = t;
        this.short = this.#meter.look(this.#speed);
      }
      return true;
    }
    return false;
  }

  /** Play ended in the worker (the run's end, an error): everything shows where it stopped. */
  stopped(): void {
    if (!this.playing) return;
    this.playing = false;
    this.short = null;
    this.#liveId = 0;
    this.#pending = null;
    cancelAnimationFrame(this.#raf);
    liveBeat.drive(false);
    this.#catchUp();
  }

  /** The panels and the table show what the clock shows (play stopped). */
  #catchUp(): void {
    this.#pg.panelSnapshot = this.#pg.chartSnapshot = this.#pg.snapshot;
    const view = this.#auditPending;
    this.#auditPending = null;
    if (view) this.#pg.auditTable.onView(view);
  }

  pause(): void {
    if (this.playing) {
      // The worker stops and answers with where it stopped (shown like any command's answer).
      this.#client()?.send({ type: 'liveStop' });
      this.#liveId = 0;
      this.#pending = null;
    }
    this.playing = false;
    this.short = null;
    cancelAnimationFrame(this.#raf);
    liveBeat.drive(false);
    this.#catchUp();
  }

  /** The page goes away: no frame of play runs after it. */
  cancelFrames(): void {
    cancelAnimationFrame(this.#raf);
    liveBeat.drive(false);
  }
}
