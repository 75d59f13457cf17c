/**
 * The host's presentation history: how often each request identity was presented recently, for
 * the retry-loop alert (SPEC §4: an identity presented 40 times in 10 minutes is a retry loop).
 *
 * It lives beside the decision store, not in it, because the history must outlive the stored
 * entry: a loop answered by transient denials, cost refusals or expired entries is still a loop,
 * and a counter that dies with a 60-second `user.denied` entry never sees 40 of anything. The
 * alert settings are read on every presentation, so a learner's change takes effect at once.
 *
 * Bounded: each identity keeps at most `threshold` timestamps, identities silent for a whole
 * window are swept, and past `maxIdentities` the least recently presented are dropped.
 */
import type { AlertConfig } from '../machine/vocabulary';

export interface PresentationResult {
  /** Presentations of this identity inside the window, this one included. */
  inWindow: number;
  /** True when this presentation puts the identity at or over the threshold (level-triggered). */
  alert: boolean;
}

/** An alert config a learner typed can be nonsense: zero, negative or NaN fall back to the SPEC's numbers. */
export function saneAlert(alert: Partial<AlertConfig> | undefined): AlertConfig {
  const threshold = alert?.threshold;
  const windowMs = alert?.windowMs;
  return {
    threshold:
      typeof threshold === 'number' && Number.isFinite(threshold) && threshold >= 1
        ? Math.floor(threshold)
        : 40,
    windowMs:
      typeof windowMs === 'number' && Number.isFinite(windowMs) && windowMs > 0 ? windowMs : 600_000
  };
}

export class PresentationHistory {
  /** key → presentation times, oldest first; Map order = least recently presented first. */
  readonly #times = new Map<string, number[]>();
  #lastSweep = -Infinity;

  constructor(readonly maxIdentities = 10_000) {}

  /** Record one presentation of `key` at `now` under the alert settings current at `now`. */
  record(key: string, now: number, settings: Partial<AlertConfig> | undefined): PresentationResult {
    const { threshold, windowMs } = saneAlert(settings);
    this.#sweep(now, windowMs);
    const times = this.#times.get(key) ?? [];
    this.#times.delete(key);
    times.push(now);
    // Only presentations inside the window count, and only `threshold` of them are ever needed.
    let drop = 0;
    while (drop < times.length && now - times[drop]! >= windowMs) drop++;
    if (times.length - drop > threshold) drop = times.length - threshold;
    if (drop > 0) times.splice(0, drop);
    this.#times.set(key, times);
    if (this.#times.size > this.maxIdentities) {
      const oldest = this.#times.keys().next().value;
      if (oldest !== undefined) this.#times.delete(oldest);
    }
    return { inWindow: times.length, alert: times.length >= threshold };
  }

  /** Identities currently remembered (for the memory bound's tests and the UI). */
  get size(): number {
    return this.#times.size;
  }

  clear(): void {
    this.#times.clear();
  }

  /** Drop identities whose last presentation left the window; at most once per window. */
  #sweep(now: number, windowMs: number): void {
    if (now - this.#lastSweep < windowMs) return;
    this.#lastSweep = now;
    for (const [key, times] of this.#times) {
      const last = times[times.length - 1];
      if (last === undefined || now - last >= windowMs) this.#times.delete(key);
    }
  }
}
