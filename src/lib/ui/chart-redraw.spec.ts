import { describe, expect, it } from 'vitest';
import { CHART_FRAME_BUDGET_MS, RedrawQueue, type FrameClock } from './chart-redraw';

/** Frames run by hand; each draw takes `cost` ms of the clock. */
function manualClock(cost: number) {
  let now = 0;
  let next: (() => void) | null = null;
  const clock: FrameClock = {
    request: (cb) => {
      next = cb;
      return 1;
    },
    cancel: () => (next = null),
    now: () => now
  };
  const frame = () => {
    const cb = next;
    next = null;
    cb?.();
  };
  return { clock, frame, pending: () => next !== null, spend: () => (now += cost) };
}

describe('chart redraws spread over frames', () => {
  it('draws the oldest queued charts first, within a frame budget, at least one a frame', () => {
    const m = manualClock(CHART_FRAME_BUDGET_MS); // each draw spends the whole budget
    const q = new RedrawQueue(m.clock);
    const drawn: string[] = [];
    const keys = ['a', 'b', 'c'].map((name) => ({ name }));
    for (const k of keys)
      q.push(k, () => {
        drawn.push(k.name);
        m.spend();
      });
    m.frame();
    expect(drawn).toEqual(['a']);
    m.frame();
    m.frame();
    expect(drawn).toEqual(['a', 'b', 'c']);
    expect(m.pending()).toBe(false);
  });

  it('a chart queued again keeps its place and draws only its newest data', () => {
    const m = manualClock(0); // cheap draws: all in one frame
    const q = new RedrawQueue(m.clock);
    const drawn: string[] = [];
    const a = {};
    const b = {};
    q.push(a, () => drawn.push('a1'));
    q.push(b, () => drawn.push('b1'));
    q.push(a, () => drawn.push('a2'));
    m.frame();
    expect(drawn).toEqual(['a2', 'b1']);
  });

  it('a dropped chart is not drawn, and no frame is asked for when nothing is left', () => {
    const m = manualClock(0);
    const q = new RedrawQueue(m.clock);
    const gone = {};
    q.push(gone, () => {
      throw new Error('drawn after it was dropped');
    });
    q.drop(gone);
    expect(q.size).toBe(0);
    expect(m.pending()).toBe(false);
  });
});
