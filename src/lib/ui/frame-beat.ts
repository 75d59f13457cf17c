/**
 * While playing, the charts' redraws (chart-redraw.ts) ride on the frames that render anyway —
 * those where live play shows a snapshot or one of its slower panels (playground/live-play).
 * Drawn in frames of their own, one chart a frame, they made about 15 more frames a second that
 * the browser had to commit (bench:ui's live play at 2 × 50 servers: ~40 commits a second), and
 * a commit costs the same fixed work whatever changed: every chart's canvas handed to the
 * compositor again, layers updated, a frame composited. Riding along, three charts a frame keep
 * the charts' pace (all of them within a panel turn) in fewer commits.
 *
 * A redraw never waits long for a ride: after BEAT_WAIT_MS it is drawn in a frame of its own.
 * When nothing drives the beat (paused, a lesson's stage), a redraw is an animation frame's, one
 * chart a frame, as before.
 */
import type { FrameClock } from './chart-redraw';

/** The longest a redraw waits for a frame that renders anyway (ms of frame time). */
export const BEAT_WAIT_MS = 100;
/** Charts drawn in one frame that renders anyway. */
export const BEAT_CHARTS = 3;

export class FrameBeat implements FrameClock {
  #driven = false;
  /** Redraws waiting for a ride, by handle (negative: a beat's, never an animation frame's). */
  #waiting = new Map<number, () => void>();
  #next = 1;
  /** The frame time the oldest waiting redraw was first seen at (null: none seen yet). */
  #since: number | null = null;
  /** An animation frame asked for to draw what waited when the beat stopped. */
  #flush = 0;

  request(cb: () => void): number {
    if (!this.#driven) return requestAnimationFrame(() => cb());
    const handle = -this.#next++;
    this.#waiting.set(handle, cb);
    return handle;
  }

  cancel(handle: number): void {
    if (handle < 0) this.#waiting.delete(handle);
    else cancelAnimationFrame(handle);
  }

  /** Charts one frame draws: two on a ride, one in an animation frame of its own. */
  perFrame(): number {
    return this.#driven ? BEAT_CHARTS : 1;
  }

  /** Live play starts (true) or stops (false) driving the beat. */
  drive(on: boolean): void {
    this.#driven = on;
    if (!on && this.#waiting.size > 0 && !this.#flush)
      this.#flush = requestAnimationFrame(() => {
        this.#flush = 0;
        this.#run();
      });
  }

  /**
   * A frame of live play at frame time `t`: `rendered` when it shows something anyway. The
   * waiting redraws ride on it; on a frame that shows nothing, only those that waited too long.
   */
  frame(t: number, rendered: boolean): void {
    if (this.#waiting.size === 0) return;
    this.#since ??= t;
    if (rendered || t - this.#since >= BEAT_WAIT_MS) this.#run();
  }

  #run(): void {
    const due = [...this.#waiting.values()];
    this.#waiting.clear();
    this.#since = null;
    for (const cb of due) cb();
  }
}

/** The page's one beat: live play drives it, the charts draw on it. */
export const liveBeat = new FrameBeat();
