/**
 * The handler's real clock serves the inserted timers of one length with one runtime timer
 * (clock.ts): they must still fire as runtime timers would — each no sooner than its length after
 * it was inserted, in the order inserted, a cleared one never — and a clock with nothing pending
 * must not hold the process open.
 */
import { describe, expect, it, vi } from 'vitest';
import { RealClock } from './clock';

/** Runtime timers holding the process open. */
const openTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

/** Resolves once `fired` holds `n` names. */
function until(fired: string[], n: number): Promise<void> {
  return new Promise((resolve) => {
    const poll = () => (fired.length >= n ? resolve() : setImmediate(poll));
    poll();
  });
}

describe('RealClock.insert', () => {
  it('fires timers of one length in the order inserted, none before its length', () => {
    // Fake time: with the runtime's, a loaded machine can run the 5 ms wait past a's and b's 20 ms
    // and reorder what this test inserts (it did, once, under four parallel test runs).
    vi.useFakeTimers();
    try {
      const clock = new RealClock();
      const fired: string[] = [];
      const late: number[] = [];
      const at = (name: string, ms: number) => {
        const t0 = Date.now();
        clock.insert(ms, () => {
          fired.push(name);
          late.push(Date.now() - t0 - ms);
        });
      };
      at('a', 20);
      at('b', 20);
      vi.advanceTimersByTime(5);
      at('c', 20);
      at('short', 5);
      vi.advanceTimersByTime(19);
      expect(fired).toEqual(['short', 'a', 'b']);
      vi.advanceTimersByTime(1);
      expect(fired).toEqual(['short', 'a', 'b', 'c']);
      expect(late).toEqual([0, 0, 0, 0]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('never fires a cleared timer, and the one after a cleared head still fires', async () => {
    const clock = new RealClock();
    const fired: string[] = [];
    const a = clock.insert(10, () => fired.push('a'));
    clock.insert(10, () => fired.push('b'));
    const c = clock.insert(10, () => fired.push('c'));
    clock.clearTimeout(a);
    clock.clearTimeout(c);
    clock.clearTimeout(c);
    clock.insert(10, () => fired.push('d'));
    await until(fired, 2);
    await new Promise((r) => setTimeout(r, 30));
    expect(fired).toEqual(['b', 'd']);
  });

  it('fires a timer inserted by a firing one after its own length', async () => {
    const clock = new RealClock();
    const fired: string[] = [];
    let t1 = 0;
    clock.insert(10, () => {
      fired.push('first');
      t1 = Date.now();
      clock.insert(10, () => {
        fired.push(`second after ${Date.now() - t1 >= 9 ? 'its length' : 'too soon'}`);
      });
    });
    await until(fired, 2);
    expect(fired).toEqual(['first', 'second after its length']);
  });

  it('holds the process open only while a timer is pending', async () => {
    const clock = new RealClock();
    const before = openTimers();
    const a = clock.insert(60_000, () => {});
    const b = clock.insert(60_000, () => {});
    expect(openTimers()).toBe(before + 1);
    clock.clearTimeout(a);
    expect(openTimers()).toBe(before + 1);
    clock.clearTimeout(b);
    expect(openTimers()).toBe(before);
    // A new one wakes the parked timer: pending again.
    const c = clock.insert(60_000, () => {});
    expect(openTimers()).toBe(before + 1);
    clock.clearTimeout(c);
    expect(openTimers()).toBe(before);
  });

  it('gives a length the runtime treats specially a runtime timer of its own', async () => {
    const clock = new RealClock();
    const fired: string[] = [];
    clock.insert(0, () => fired.push('zero'));
    const never = clock.insert(0, () => fired.push('cleared'));
    clock.clearTimeout(never);
    await until(fired, 1);
    await new Promise((r) => setTimeout(r, 10));
    expect(fired).toEqual(['zero']);
  });
});
