import { describe, expect, it } from 'vitest';
import { LIVE_MAX_LAG_MS, LIVE_SLICE_MS, LIVE_TICK_MS, LivePacer, isLiveCommand } from './live';

describe('live play pacing', () => {
  it('owes speed × the wall time since the last batch, in whole simulated milliseconds', () => {
    const p = new LivePacer(1000, 0);
    expect(p.due(16.5)).toBe(16_500);
    expect(p.target(2_000)).toBe(18_500);
    // The batch ran all of it: nothing owed, so the next batch waits about a frame.
    p.ran(16_500, 300, 4);
    expect(p.owed).toBe(0);
    expect(p.wait(4)).toBe(LIVE_TICK_MS - 4);
    expect(p.due(32.5)).toBe(16_000);
  });

  it('a batch cut short by its event limit leaves the rest owed, and the next runs at once', () => {
    const p = new LivePacer(1000, 0);
    p.due(100);
    p.ran(40_000, p.events, 3);
    expect(p.owed).toBe(60_000);
    expect(p.wait(3)).toBe(0);
  });

  it('adapts the event limit so a batch takes about a slice of wall time', () => {
    const p = new LivePacer(1000, 0);
    p.due(50);
    const before = p.events;
    p.ran(1_000, before, LIVE_SLICE_MS / 4); // quick: four times as many next time
    expect(p.events).toBe(before * 4);
    p.ran(1_000, 10, LIVE_SLICE_MS * 2); // slow: half as many
    expect(p.events).toBe(before * 2);
    // A batch that reached its time early says nothing about the limit.
    p.ran(1_000, 10, 1);
    expect(p.events).toBe(before * 2);
  });

  it('never owes more than LIVE_MAX_LAG_MS of wall time (a worker held up runs flat out, no burst)', () => {
    const p = new LivePacer(500, 0);
    expect(p.due(10_000)).toBe(LIVE_MAX_LAG_MS * 500);
    p.speed = 2;
    p.ran(LIVE_MAX_LAG_MS * 500, 100, 5);
    expect(p.due(10_100)).toBe(200);
  });

  it('owes in full a stall of the worker its own (a batch that took an engine checkpoint: 300 ms)', () => {
    const p = new LivePacer(1000, 0);
    p.due(10);
    p.ran(10_000, 100, 10);
    // The batch ran 300 ms past its slice: all of it is owed, and made up by the batches after.
    expect(p.due(310)).toBe(300_000);
    expect(p.target(0)).toBe(300_000);
    expect(p.wait(300)).toBe(0);
  });

  it('with a cap plays no faster than it, whatever the speed (a slower machine, for the tests)', () => {
    const p = new LivePacer(1000, 0, 20);
    expect(p.due(100)).toBe(2_000);
    p.ran(2_000, 10, 1);
    p.speed = 10;
    expect(p.due(200)).toBe(1_000);
    expect(p.due(10_000)).toBe(LIVE_MAX_LAG_MS * 10);
  });

  it('tells live play commands from the session’s', () => {
    expect(isLiveCommand({ type: 'liveAck' })).toBe(true);
    expect(isLiveCommand({ type: 'advance' })).toBe(false);
  });
});
