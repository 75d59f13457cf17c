/**
 * Retry loops, for the "every loop is flagged" guarantee (SPEC §4): an identity *re-presented*
 * `threshold` times within the alert window (the seed's "re-presented forty times in ten
 * minutes": `threshold + 1` presentations) is a retry loop, whether or not a decision is stored
 * for it — transient denials, cost refusals and expired entries count too.
 *
 * Presentations are learnt from audit records, which arrive when a request ends, so a presentation
 * that started earlier but ended later is not counted yet: the count can only fall short, never
 * exceed the truth, and the guarantee never flags a presentation the host was right not to.
 */
import type { AuditRecord } from '../../machine/types';
import { copyable } from '../../machine/clone';
import { ENTRY_BYTES, RETAIN_AT_LEAST } from '../../client/presentations';

export interface AlertSettings {
  threshold: number;
  windowMs: number;
}

const SWEEP_EVERY = 4096;

export class LoopTracker {
  /** lane + identity → presentation times (most recent `threshold + 1`), ascending. */
  private readonly times = new Map<string, number[]>();
  private since = 0;
  private longestWindow = 0;

  /**
   * Count the presentation `r` under the lane's alert settings; returns how many presentations of
   * its identity fall inside the window ending at it (it included), and whether that is a loop.
   */
  presented(
    lane: string,
    r: AuditRecord,
    alert: AlertSettings
  ): { inWindow: number; loop: boolean } {
    const at = r.t - r.durationMs;
    const threshold = Math.max(1, Math.floor(alert.threshold));
    const key = `${lane}\u0000${r.identity}`;
    const times = this.times.get(key) ?? [];
    // Keep the times sorted: records arrive in end order, presentations may start out of order.
    let i = times.length;
    while (i > 0 && times[i - 1]! > at) i--;
    times.splice(i, 0, at);
    const keep = Math.max(threshold + 1, RETAIN_AT_LEAST);
    if (times.length > keep) times.splice(0, times.length - keep);
    this.times.set(key, times);
    let inWindow = 0;
    for (const t of times) if (t <= at && at - t < alert.windowMs) inWindow++;
    this.longestWindow = Math.max(this.longestWindow, alert.windowMs);
    if (++this.since >= SWEEP_EVERY) this.sweep(r.t);
    // The first presentation is not a re-presentation: a loop is `threshold` more after it.
    return { inWindow, loop: inWindow - 1 >= threshold };
  }

  /** Roughly what the tracker holds in memory, bytes (engine-size.ts: a checkpoint's budget). */
  approxBytes(): number {
    let n = 0;
    for (const times of this.times.values()) n += times.length;
    // Its keys are made here (lane + identity), not shared with the host's.
    return this.times.size * (ENTRY_BYTES + 160) + n * 8;
  }

  /** Forget identities whose last presentation left every window. */
  private sweep(now: number): void {
    this.since = 0;
    for (const [k, times] of this.times) {
      const last = times[times.length - 1];
      if (last === undefined || now - last > 2 * this.longestWindow) this.times.delete(k);
    }
  }
}

// A copy has its own presentation times and sweep counters (its members are TypeScript private,
// not #private, for the generic copier).
copyable(LoopTracker, { name: 'loops.LoopTracker', blank: () => new LoopTracker() });
