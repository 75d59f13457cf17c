/**
 * Live play, run by the worker (issue #9). The page used to drive play: each animation frame it
 * asked for one `advance` and waited for its snapshot, so the worker sat idle while the page
 * rendered, and a slow frame slowed the simulation. Now the page says "play at speed S" and the
 * worker runs on its own clock: batches sized by wall time, simulated time owed by the wall clock
 * times the speed, and one snapshot per batch — posted only when the page has shown the previous
 * one (`liveAck`), so the page never has more than one to deserialise and render per frame.
 *
 * These commands are the page's and the browser worker's only (the Node session has no live
 * play), so they live beside the worker, not in `sim/session/protocol.ts`.
 */

export type LiveCommand =
  /**
   * Play at `speed`× the wall clock. Its id tags every live snapshot until `liveStop`. `cap`: play
   * no faster than this whatever the speed, as a slower machine would (the `?liveCap=N` test knob).
   */
  | { type: 'live'; speed: number; cap?: number }
  /** A new speed for the play in progress (nothing if none). */
  | { type: 'liveSpeed'; speed: number }
  /** The page has shown the last live snapshot: the worker may post the next. */
  | { type: 'liveAck' }
  /** Stop playing; the reply is one snapshot of where the run stopped. */
  | { type: 'liveStop' };

export interface LiveRequest {
  id: number;
  cmd: LiveCommand;
}

const LIVE_TYPES: ReadonlySet<string> = new Set(['live', 'liveSpeed', 'liveAck', 'liveStop']);

/** Whether a command is live play's (the browser worker's own, not the session's). */
export function isLiveCommand(cmd: { type: string }): cmd is LiveCommand {
  return LIVE_TYPES.has(cmd.type);
}

/** Wall time one batch aims at: long enough that posting is a small overhead, short enough
 *  that a command (pause, a config change) waits at most about this long. */
export const LIVE_SLICE_MS = 16;
/** Wall time one batch aims at when caught up: about a frame, so each frame has news. */
export const LIVE_TICK_MS = 16;
/**
 * The most wall time the simulation may owe: a worker that cannot keep up (or was held up: a
 * machine that slept, a long task) runs flat out instead of piling up a debt it would later pay
 * in a burst. A fast-forward's wait is never owed (live-play.ts).
 *
 * A second, not the quarter of a second the page's own loop once capped a frame at: the worker
 * stalls by itself now and then — a batch that takes an engine checkpoint late in a busy day ran
 * 150–300 ms at 2 lanes × 50 servers — and a debt capped at 250 ms dropped what the stall owed
 * for good, though play had the time to make it up after. Measured over the simulated day at
 * 1000× (10 s windows, hours 16–22): 4–7 % of the simulated time dropped and 932–953×, against
 * none dropped and 972–1000× with this cap; the day played in ~88 s instead of ~93.
 */
export const LIVE_MAX_LAG_MS = 1_000;
const MIN_EVENTS = 50;
const MAX_EVENTS = 50_000;

/**
 * How much simulated time the next batch runs, and at most how many events, so the batch takes
 * about LIVE_SLICE_MS. Pure arithmetic on the wall times it is given (testable without timers).
 */
export class LivePacer {
  speed: number;
  /** The most simulated ms a wall ms, whatever the speed (a test knob: a slower machine). */
  readonly cap: number;
  /** Simulated ms owed to the wall clock (what the next batch should run). */
  owed = 0;
  /** The event limit of the next batch (adapted to the wall time batches take). */
  events = 500;
  #wall: number;

  constructor(speed: number, now: number, cap = Infinity) {
    this.speed = speed;
    this.cap = cap;
    this.#wall = now;
  }

  /** The simulated ms due at wall time `now`: what is owed, plus speed × the wall time since. */
  due(now: number): number {
    const wall = Math.max(0, now - this.#wall);
    this.#wall = now;
    const speed = Math.min(this.speed, this.cap);
    this.owed = Math.min(this.owed + wall * speed, LIVE_MAX_LAG_MS * speed);
    return this.owed;
  }

  /**
   * A batch ran `simMs` of simulated time in `events` events and `tookMs` of wall time. A batch
   * cut short by its event limit that took less than a slice may run more next time; one that
   * took longer runs fewer.
   */
  ran(simMs: number, events: number, tookMs: number): void {
    this.owed = Math.max(0, this.owed - simMs);
    const took = Math.max(0.25, tookMs);
    if ((events >= this.events && took < LIVE_SLICE_MS) || took > LIVE_SLICE_MS)
      this.events = Math.round(
        Math.max(MIN_EVENTS, Math.min(MAX_EVENTS, (this.events * LIVE_SLICE_MS) / took))
      );
  }

  /** The simulated time the next batch runs to from `now`: whole milliseconds, as events are. */
  target(now: number): number {
    return now + Math.floor(this.owed);
  }

  /** How long to wait before the next batch: none while behind, else about a frame. */
  wait(tookMs: number): number {
    return this.owed >= 1 ? 0 : Math.max(0, LIVE_TICK_MS - tookMs);
  }
}
