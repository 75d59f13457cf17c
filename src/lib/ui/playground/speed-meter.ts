/**
 * The speed play actually reaches, for the page to say so when it falls short of the setting: the
 * worker plays on its own clock (worker/live.ts), and a machine that cannot keep up (a busy
 * 2-core laptop late in the 50-server benchmark's day: ~910–970× of 1000×) plays slower than the
 * slider says. The worker drops what it owes past a second rather than race to catch up
 * (worker/live.ts), so the clock's pace is the truth, and the slider alone would not be.
 *
 * Measured from the snapshots shown (wall time of the frame, the snapshot's simulated time) over
 * the last few seconds: pure arithmetic on the times it is given (testable without timers).
 */

/** The wall time the pace is measured over (ms). */
export const METER_WINDOW_MS = 3_000;
/** The least wall time measured before the pace is said (ms): the first Play loads the parsers. */
export const METER_MIN_MS = 2_000;
/** Play reaching less than this share of the speed asked is said to fall short. */
export const SHORT_OF = 0.9;

export class SpeedMeter {
  /** Wall and simulated times (ms), oldest first, pairs flat. */
  #points: number[] = [];
  /** Looks in a row ({@link look}) that found play short. */
  #shortLooks = 0;

  /** A snapshot of simulated time `sim` shown at wall time `wall`. */
  add(wall: number, sim: number): void {
    const p = this.#points;
    p.push(wall, sim);
    // Keep one point at or before the window's start, so the window is always covered.
    let drop = 0;
    while (p.length - drop >= 4 && p[drop + 2]! <= wall - METER_WINDOW_MS) drop += 2;
    if (drop) p.splice(0, drop);
  }

  /** Forget the pace (play starts, the speed changes). */
  reset(): void {
    this.#points = [];
    this.#shortLooks = 0;
  }

  /**
   * What to say of the pace, looked at now and then: the speed reached ({@link shortfall}) from
   * the second look in a row that finds it short of `asked`, else null. A single stall (a tab
   * switch, a collection) is not a machine that cannot keep up.
   */
  look(asked: number): number | null {
    const short = shortfall(asked, this.reached());
    if (short === null) {
      this.#shortLooks = 0;
      return null;
    }
    return ++this.#shortLooks > 1 ? short : null;
  }

  /** Simulated ms per wall ms over the window, or null before METER_MIN_MS of it. */
  reached(): number | null {
    const p = this.#points;
    if (p.length < 4) return null;
    const wall = p[p.length - 2]! - p[0]!;
    if (wall < METER_MIN_MS) return null;
    return (p[p.length - 1]! - p[1]!) / wall;
  }
}

/** The speed to say play reaches, rounded, or null while it keeps (nearly) to the `asked` one. */
export function shortfall(asked: number, reached: number | null): number | null {
  if (reached === null || reached >= SHORT_OF * asked) return null;
  return reached >= 10 ? Math.round(reached) : Math.round(reached * 10) / 10;
}
