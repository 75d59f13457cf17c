/**
 * Chart redraws spread over animation frames (issue #9). A new snapshot changes every chart at
 * once; drawing six canvases in one frame is what made frames long while playing. Each chart
 * queues its redraw here instead, and each frame draws the oldest queued ones until a small time
 * budget is spent (at least one). A chart queued again before it was drawn keeps its place and
 * draws the newest data.
 */
export interface FrameClock {
  request(cb: () => void): number;
  cancel(handle: number): void;
  now(): number;
}

const browserClock: FrameClock = {
  request: (cb) => requestAnimationFrame(cb),
  cancel: (h) => cancelAnimationFrame(h),
  now: () => performance.now()
};

/** Wall time one frame may spend drawing charts (ms), after the first. */
export const CHART_FRAME_BUDGET_MS = 4;

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
    const t0 = this.#clock.now();
    for (const [key, draw] of this.#queue) {
      this.#queue.delete(key);
      draw();
      if (this.#clock.now() - t0 >= CHART_FRAME_BUDGET_MS) break;
    }
    if (this.#queue.size > 0) this.#handle = this.#clock.request(this.#frame);
  };
}
