/**
 * Chart redraws spread over animation frames (issue #9). A new snapshot changes every chart at
 * once; drawing six canvases in one frame is what made frames long while playing. Each chart
 * queues its redraw here instead, and each frame draws the oldest queued one. (One, not "as many
 * as fit in a budget": uPlot commits a draw in a microtask, after the call returns, so the call's
 * own time says nothing.) A chart queued again before it was drawn keeps its place and draws the
 * newest data. While playing, the frames are those that render anyway, three charts each
 * (frame-beat.ts).
 */
export interface FrameClock {
  request(cb: () => void): number;
  cancel(handle: number): void;
  /** How many queued charts one of its frames draws (default one; frame-beat.ts: more). */
  perFrame?(): number;
}

const browserClock: FrameClock = {
  request: (cb) => requestAnimationFrame(cb),
  cancel: (h) => cancelAnimationFrame(h)
};

export class RedrawQueue {
  readonly #clock: FrameClock;
  readonly #queue = new Map<object, () => void>();
  #handle: number | null = null;

  constructor(clock: FrameClock = browserClock) {
    this.#clock = clock;
  }

  /** Queue `draw` for `key`; replaces (in its place) a draw queued for it and not yet run. */
  push(key: object, draw: () => void): void {
    this.#queue.set(key, draw);
    if (this.#handle === null) this.#handle = this.#clock.request(this.#frame);
  }

  /** Forget a queued draw (the chart is gone); no frame is asked for when none is left. */
  drop(key: object): void {
    this.#queue.delete(key);
    if (this.#queue.size === 0 && this.#handle !== null) {
      this.#clock.cancel(this.#handle);
      this.#handle = null;
    }
  }

  get size(): number {
    return this.#queue.size;
  }

  #frame = (): void => {
    this.#handle = null;
    for (let n = this.#clock.perFrame?.() ?? 1; n > 0; n--) {
      const first = this.#queue.entries().next();
      if (first.done) break;
      const [key, draw] = first.value;
      this.#queue.delete(key);
      draw();
    }
    if (this.#queue.size > 0) this.#handle = this.#clock.request(this.#frame);
  };
}
