import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RETAIN_AT_LEAST } from '../../client/presentations';
import type { AuditRecord } from '../../machine/types';
import { record, T0 } from './invariants/records.testing';
import { LoopTracker, type AlertSettings } from './loops';
import { CloneMap } from '../../machine/clone';
import { CheckpointMemo, copyAsCheckpoint } from '../../store/checkpoint-memo';

/**
 * The count as the tracker first wrote it — every identity's times under one map keyed by lane
 * and identity, the window counted over the whole list — to hold the faster tracker to.
 */
class Reference {
  private readonly times = new Map<string, number[]>();
  private since = 0;
  private longestWindow = 0;

  presented(lane: string, r: AuditRecord, alert: AlertSettings) {
    const at = r.t - r.durationMs;
    const threshold = Math.max(1, Math.floor(alert.threshold));
    const key = `${lane}\u0000${r.identity}`;
    const times = this.times.get(key) ?? [];
    let i = times.length;
    while (i > 0 && times[i - 1]! > at) i--;
    times.splice(i, 0, at);
    const keep = Math.max(threshold + 1, RETAIN_AT_LEAST);
    if (times.length > keep) times.splice(0, times.length - keep);
    this.times.set(key, times);
    let inWindow = 0;
    for (const t of times) if (t <= at && at - t < alert.windowMs) inWindow++;
    this.longestWindow = Math.max(this.longestWindow, alert.windowMs);
    if (++this.since >= 4096 && this.since >= this.times.size / 2) {
      this.since = 0;
      for (const [k, ts] of this.times) {
        const last = ts[ts.length - 1];
        if (last === undefined || r.t - last > 2 * this.longestWindow) this.times.delete(k);
      }
    }
    return { inWindow, loop: inWindow - 1 >= threshold };
  }
}

const step = fc.record({
  lane: fc.constantFrom('A', 'B'),
  identity: fc.constantFrom('s:a', 's:b', 's:c'),
  gap: fc.nat({ max: 5_000 }),
  durationMs: fc.oneof(fc.constant(0), fc.nat({ max: 20_000 })),
  threshold: fc.oneof(
    fc.constantFrom(1, 3, 40, 63, 64, 80, 0, 2.5),
    fc.integer({ min: -2, max: 100 })
  ),
  windowMs: fc.oneof(fc.constantFrom(10_000, 600_000, 0, -1, 1), fc.nat({ max: 1_000_000 }))
});

describe('LoopTracker', () => {
  it('counts each presentation as the tracker keyed by lane and identity did', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), fc.nat({ max: 5000 }), (steps, skip) => {
        const fast = new LoopTracker();
        const ref = new Reference();
        let t = T0;
        // Some runs pass a sweep (every 4096 presentations, or half the identities held) part way.
        for (let k = 0; k < skip; k++) {
          const r = record({ t: (t += 1), identity: `s:other${k % 50}` });
          const alert = { threshold: 3, windowMs: 1_000 };
          expect(fast.presented('A', r, alert)).toEqual(ref.presented('A', r, alert));
        }
        for (const s of steps) {
          const r = record({ t: (t += s.gap), identity: s.identity, durationMs: s.durationMs });
          const alert = { threshold: s.threshold, windowMs: s.windowMs };
          expect(fast.presented(s.lane, r, alert)).toEqual(ref.presented(s.lane, r, alert));
        }
      }),
      { numRuns: 200 }
    );
  });

  it('sweeps as the reference does when it holds more identities than a sweep spaces (half of them)', () => {
    // 10,000 identities presented in turn every 7 ms: each comes back after 70 s and may be
    // forgotten 40 s (twice the window) after it was last seen, so a sweep every 4,096
    // presentations (28.7 s) forgets each every time round, one every 5,000 (35 s) not always.
    // Then a window of 1,000 s: what was kept counts, what was forgotten does not.
    const fast = new LoopTracker();
    const ref = new Reference();
    let t = T0;
    const counts: number[] = [];
    for (let k = 0; k < 25_000; k++) {
      const r = record({ t: (t += 7), identity: `s:other${k % 10_000}` });
      const alert = { threshold: 3, windowMs: 20_000 };
      expect(fast.presented('A', r, alert)).toEqual(ref.presented('A', r, alert));
    }
    for (let k = 0; k < 2_000; k++) {
      const r = record({ t: (t += 7), identity: `s:other${(k * 37) % 10_000}` });
      const alert = { threshold: 3, windowMs: 1_000_000 };
      const got = fast.presented('A', r, alert);
      expect(got).toEqual(ref.presented('A', r, alert));
      counts.push(got.inWindow);
    }
    // Both kinds are there: identities kept from the turn before, and identities forgotten.
    expect(counts.some((n) => n >= 3)).toBe(true);
    expect(counts.some((n) => n <= 2)).toBe(true);
  });
});

describe('LoopTracker in engine checkpoints', () => {
  it('a checkpoint taken as steps run counts, once copied, as the tracker did from there', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 200 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        (steps, cuts) => {
          const run = new LoopTracker();
          const memo = new CheckpointMemo();
          const at = new Set(cuts.map((c) => c % steps.length));
          const checkpoints: { from: number; cp: LoopTracker }[] = [];
          const counts: ReturnType<LoopTracker['presented']>[] = [];
          let t = T0;
          const records = steps.map((s) =>
            record({ t: (t += s.gap), identity: s.identity, durationMs: s.durationMs })
          );
          steps.forEach((s, i) => {
            if (at.has(i))
              checkpoints.push({
                from: i,
                cp: copyAsCheckpoint(memo, () => new CloneMap().get(run))
              });
            counts.push(run.presented(s.lane, records[i]!, s));
          });
          for (const { from, cp } of checkpoints) {
            // The checkpoint itself is never run; its copy (a restore) goes on as the run did.
            expect(() => cp.presented('A', records[from]!, steps[from]!)).toThrow(/never run/);
            const restored = new CloneMap().get(cp);
            for (let i = from; i < steps.length; i++)
              expect(restored.presented(steps[i]!.lane, records[i]!, steps[i]!)).toEqual(counts[i]);
          }
        }
      ),
      { numRuns: 150 }
    );
  });

  it('a checkpoint shares the times lists the run did not change since the one before', () => {
    const run = new LoopTracker();
    const alert = { threshold: 3, windowMs: 60_000 };
    for (let k = 0; k < 100; k++)
      run.presented('A', record({ t: T0 + k, identity: `s:${k}` }), alert);
    const memo = new CheckpointMemo();
    const a = copyAsCheckpoint(memo, () => new CloneMap().get(run));
    const made = memo.made;
    run.presented('A', record({ t: T0 + 500, identity: 's:7' }), alert);
    const b = copyAsCheckpoint(memo, () => new CloneMap().get(run));
    // One list changed (s:7's): one copy made; the 99 others are the first checkpoint's.
    expect(memo.made - made).toBe(1);
    const lists = (x: LoopTracker) =>
      (x['frozen'] as { times: readonly (readonly number[])[] } | null)!.times;
    expect(lists(b).filter((l, i) => l === lists(a)[i])).toHaveLength(99);
    // Copied (a restore), both count as the run.
    const next = record({ t: T0 + 600, identity: 's:7' });
    expect(new CloneMap().get(b).presented('A', next, alert)).toEqual(
      run.presented('A', next, alert)
    );
  });
});
