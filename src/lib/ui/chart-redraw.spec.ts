import { describe, expect, it } from 'vitest';
import { RedrawQueue, type FrameClock } from './chart-redraw';

/** Animation frames run by hand. */
function manualClock() {
  let next: (() => void) | null = null;
  const clock: FrameClock = {
    request: (cb) => {
      next = cb;
      return 1;
    },
    cancel: () => (next = null)
  };
  const frame = () => {
    const cb = next;
    next = null;
    cb?.();
  };
  return { clock, frame, pending: () => next !== null };
}

describe('chart redraws spread over frames', () => {
  it('draws one queued chart a frame, the oldest first', () => {
    const m = manualClock();
    const q = new RedrawQueue(m.clock);
    const drawn: string[] = [];
    const keys = ['a', 'b', 'c'].map((name) => ({ name }));
    for (const k of keys) q.push(k, () => drawn.push(k.name));
    m.frame();
    expect(drawn).toEqual(['a']);
    m.frame();
    m.frame();
    expect(drawn).toEqual(['a', 'b', 'c']);
    expect(m.pending()).toBe(false);
  });

  it('a chart queued again keeps its place and draws only its newest data', () => {
    const m = manualClock();
    const q = new RedrawQueue(m.clock);
    const drawn: string[] = [];
    const a = {};
    const b = {};
    q.push(a, () => drawn.push('a1'));
    q.push(b, () => drawn.push('b1'));
    q.push(a, () => drawn.push('a2'));
    m.frame();
    m.frame();
    expect(drawn).toEqual(['a2', 'b1']);
  });

  it('a dropped chart is not drawn, and no frame is asked for when nothing is left', () => {
    const m = manualClock();
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
