import { describe, expect, it } from 'vitest';
import { METER_MIN_MS, METER_WINDOW_MS, SpeedMeter, shortfall } from './speed-meter';

/** Snapshots every `every` ms of wall time from `from` to `to`, the clock at `speed`×. */
function feed(m: SpeedMeter, from: number, to: number, speed: number, sim0 = 0, every = 33) {
  let sim = sim0;
  for (let wall = from; wall <= to; wall += every) {
    m.add(wall, sim);
    sim += speed * every;
  }
  return sim;
}

describe('SpeedMeter', () => {
  it('says nothing before two seconds of play', () => {
    const m = new SpeedMeter();
    expect(m.reached()).toBeNull();
    feed(m, 0, METER_MIN_MS - 50, 1000);
    expect(m.reached()).toBeNull();
    feed(m, METER_MIN_MS, METER_MIN_MS + 100, 1000, 1000 * METER_MIN_MS);
    expect(m.reached()).toBeCloseTo(1000, 0);
  });

  it('measures the last few seconds only: a machine that slows down is seen slowing', () => {
    const m = new SpeedMeter();
    const sim = feed(m, 0, 10_000, 1000);
    expect(m.reached()).toBeCloseTo(1000, 0);
    feed(m, 10_033, 10_033 + METER_WINDOW_MS + 500, 400, sim);
    expect(m.reached()).toBeCloseTo(400, 0);
  });

  it('counts a stall in the window it happened in', () => {
    const m = new SpeedMeter();
    let sim = feed(m, 0, 2_500, 1000);
    // The clock stood still for half a second (a long batch), then went on at speed.
    sim = feed(m, 3_000, 3_000, 0, sim);
    feed(m, 3_033, 5_000, 1000, sim + 33_000);
    const r = m.reached()!;
    expect(r).toBeLessThan(1000);
    expect(r).toBeGreaterThan(800);
  });

  it('starts afresh after a reset', () => {
    const m = new SpeedMeter();
    feed(m, 0, 5_000, 10);
    m.reset();
    expect(m.reached()).toBeNull();
    feed(m, 6_000, 9_000, 500, 1e6);
    expect(m.reached()).toBeCloseTo(500, 0);
  });
});

describe('SpeedMeter.look', () => {
  it('says the speed reached from the second look in a row that finds it short', () => {
    const m = new SpeedMeter();
    let sim = feed(m, 0, 3_000, 400);
    expect(m.look(1000)).toBeNull();
    sim = feed(m, 3_033, 4_000, 400, sim);
    expect(m.look(1000)).toBeCloseTo(400, -1);
    // Back to speed: a look that is not short clears it, and the count starts again.
    sim = feed(m, 4_033, 8_000, 1000, sim);
    expect(m.look(1000)).toBeNull();
    sim = feed(m, 8_033, 12_000, 300, sim);
    expect(m.look(1000)).toBeNull();
    expect(m.look(1000)).toBeCloseTo(300, -1);
    m.reset();
    feed(m, 20_000, 23_000, 300, sim);
    expect(m.look(1000)).toBeNull();
  });
});

describe('shortfall', () => {
  it('is null while play keeps to nine tenths of the speed asked', () => {
    expect(shortfall(1000, null)).toBeNull();
    expect(shortfall(1000, 1000)).toBeNull();
    expect(shortfall(1000, 901)).toBeNull();
    expect(shortfall(1000, 900)).toBeNull();
  });
  it('rounds the speed reached', () => {
    expect(shortfall(1000, 899.6)).toBe(900);
    expect(shortfall(1000, 20.4)).toBe(20);
    expect(shortfall(10, 3.04)).toBe(3);
    expect(shortfall(10, 0.26)).toBe(0.3);
  });
});
