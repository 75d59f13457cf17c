import { describe, expect, it } from 'vitest';
import { createActor, setup } from 'xstate';
import { VirtualClock } from './clock';
import { Rng } from './rng';
import { CloneMap, NotCloneable } from '../../machine/clone';

describe('VirtualClock', () => {
  it('runs events in time order, same-instant events in scheduling order', () => {
    const c = new VirtualClock(1000);
    const seen: string[] = [];
    c.schedule(1200, () => seen.push('b'));
    c.schedule(1100, () => seen.push('a'));
    c.schedule(1200, () => seen.push('c'));
    expect(c.runUntil(1150)).toBe(1);
    expect(c.now()).toBe(1150);
    c.runUntil(5000);
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(c.now()).toBe(5000);
  });

  it('cancels timers and bounds the work of one slice', () => {
    const c = new VirtualClock();
    const seen: number[] = [];
    const id = c.setTimeout(() => seen.push(1), 10);
    for (let i = 0; i < 5; i++) c.setTimeout(() => seen.push(2), 20);
    c.clearTimeout(id);
    expect(c.pending).toBe(5);
    expect(c.runUntil(100, 2)).toBe(2);
    expect(c.now()).toBe(20);
    c.runUntil(100);
    expect(seen).toEqual([2, 2, 2, 2, 2]);
  });

  it('keeps time and scheduling order when most pending timers are cancelled', () => {
    // Enough cancellations that the clock sweeps its cancelled entries out more than once.
    const c = new VirtualClock();
    const rng = new Rng(7);
    const seen: number[] = [];
    const expected: [number, number][] = [];
    for (let k = 0; k < 2_000; k++) {
      const at = Math.floor(rng.next() * 50);
      const id = c.schedule(at, () => seen.push(k));
      if (k % 7 === 0) expected.push([at, k]);
      else c.clearTimeout(id);
    }
    expect(c.pending).toBe(expected.length);
    c.runUntil(100);
    expected.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    expect(seen).toEqual(expected.map(([, k]) => k));
  });

  it("drives an XState machine's delays in virtual time", () => {
    const m = setup({}).createMachine({
      initial: 'waiting',
      states: { waiting: { after: { 30000: 'timedOut' } }, timedOut: { type: 'final' } }
    });
    const clock = new VirtualClock();
    const a = createActor(m, { clock }).start();
    clock.runUntil(29_999);
    expect(a.getSnapshot().value).toBe('waiting');
    clock.runUntil(30_000);
    expect(a.getSnapshot().value).toBe('timedOut');
  });
});

describe('Rng', () => {
  it('is reproducible from a seed and forks independent streams', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(new Rng(43).next()).not.toBe(xs[0]);
    const f1 = new Rng(42).fork('server-1');
    const f2 = new Rng(42).fork('server-2');
    expect(f1.next()).not.toBe(f2.next());
    expect(new Rng(42).fork('server-1').next()).toBe(new Rng(42).fork('server-1').next());
  });

  it('draws in range', () => {
    const r = new Rng(7);
    for (let i = 0; i < 1000; i++) {
      const v = r.int(3, 5);
      expect(v).toBeGreaterThanOrEqual(3);
      expect(v).toBeLessThanOrEqual(5);
      const u = r.next();
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
    }
  });
});

describe('reservations', () => {
  it('an inserted reservation fires in the place it was reserved, not where it was inserted', () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    const r = clock.reserve(10);
    clock.setTimeout(() => fired.push('set after, same time'), 10);
    clock.setTimeout(() => fired.push('earlier'), 5);
    clock.insert(r, () => fired.push('reserved first'));
    clock.runUntil(20);
    expect(fired).toEqual(['earlier', 'reserved first', 'set after, same time']);
  });

  it('a reservation never inserted never fires, and a cancelled insertion neither', () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    clock.reserve(10);
    const id = clock.insert(clock.reserve(10), () => fired.push('cancelled'));
    clock.clearTimeout(id);
    clock.setTimeout(() => fired.push('kept'), 10);
    clock.runUntil(20);
    expect(fired).toEqual(['kept']);
    expect(clock.pending).toBe(0);
  });
});

describe('events as data', () => {
  it('runs an event that is data through its dispatcher, in order with callbacks', () => {
    const clock = new VirtualClock(0);
    const seen: string[] = [];
    clock.dispatch = (e) => seen.push(e.kind === 'answer' ? `answer ${e.ticket}` : e.kind);
    clock.after(10, { kind: 'answer', lane: 'A', ticket: 2 });
    clock.setTimeout(() => seen.push('callback'), 10);
    clock.schedule(5, { kind: 'restart' });
    clock.insert({ at: 10, seq: clock.reserveBlock(1) }, { kind: 'answer', lane: 'B', ticket: 3 });
    clock.runUntil(20);
    expect(seen).toEqual(['restart', 'answer 2', 'callback', 'answer 3']);
  });

  it('refuses to run data without a world, naming the event', () => {
    const clock = new VirtualClock(0);
    clock.after(1, { kind: 'provider', lane: 'A', call: 1 });
    expect(() => clock.runUntil(5)).toThrow(/no world to run a 'provider' event/);
  });

  it('a copy holds the same events at the same times, run by its own dispatcher', () => {
    const clock = new VirtualClock(0);
    clock.dispatch = () => {
      throw new Error('the original ran an event of the copy');
    };
    clock.after(10, { kind: 'answer', lane: 'A', ticket: 1 });
    const gone = clock.after(12, { kind: 'answer', lane: 'A', ticket: 2 });
    clock.after(15, { kind: 'answer', lane: 'B', ticket: 3 });
    clock.clearTimeout(gone);
    const copy = new CloneMap().get(clock);
    const seen: string[] = [];
    copy.dispatch = (e) =>
      seen.push(e.kind === 'answer' ? `${e.lane}${e.ticket}@${copy.now()}` : '');
    copy.runUntil(20);
    expect(seen).toEqual(['A1@10', 'B3@15']);
    expect(clock.pending).toBe(2);
  });

  it("a callback pending (XState's setTimeout: the actor executor) cannot be copied, and says so", () => {
    const clock = new VirtualClock(0);
    clock.after(5, { kind: 'restart' });
    const t = clock.setTimeout(() => {}, 10);
    expect(() => new CloneMap().get(clock)).toThrow(NotCloneable);
    expect(() => new CloneMap().get(clock)).toThrow(
      /a timer set as a callback is pending .*XState actors/
    );
    // Once it is cleared (or has run), what remains is data: the clock copies.
    clock.clearTimeout(t);
    expect(new CloneMap().get(clock).pending).toBe(1);
  });
});
