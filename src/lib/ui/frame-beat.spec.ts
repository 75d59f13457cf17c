import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RedrawQueue } from './chart-redraw';
import { BEAT_CHARTS, BEAT_WAIT_MS, FrameBeat } from './frame-beat';

let frames: FrameRequestCallback[] = [];
/** Run the animation frames asked for so far. */
const animationFrame = () => {
  const due = frames;
  frames = [];
  for (const cb of due) cb(0);
};

beforeEach(() => {
  frames = [];
  vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => frames.push(cb));
  vi.stubGlobal('cancelAnimationFrame', (h: number) => {
    frames = frames.filter((_, i) => i + 1 !== h);
  });
});
afterEach(() => vi.unstubAllGlobals());

/** Three charts queued for a redraw, and what has been drawn. */
function charts(beat: FrameBeat) {
  const q = new RedrawQueue(beat);
  const drawn: string[] = [];
  for (const name of ['a', 'b', 'c']) q.push({ name }, () => drawn.push(name));
  return { q, drawn };
}

describe('chart redraws on the frames live play renders anyway', () => {
  it('while playing, rides on a frame that shows something, BEAT_CHARTS charts a frame', () => {
    const beat = new FrameBeat();
    beat.drive(true);
    const { drawn } = charts(beat);
    // No animation frame of its own: it waits for one that renders.
    expect(frames).toHaveLength(0);
    beat.frame(1_000, false);
    expect(drawn).toEqual([]);
    beat.frame(1_016, true);
    expect(drawn).toEqual(['a', 'b', 'c'].slice(0, BEAT_CHARTS));
    expect(BEAT_CHARTS).toBeGreaterThan(1);
    for (let i = 0; i < 3 && drawn.length < 3; i++) beat.frame(1_033, true);
    expect(drawn).toEqual(['a', 'b', 'c']);
    expect(frames).toHaveLength(0);
  });

  it('draws in a frame of its own when no frame has rendered for BEAT_WAIT_MS', () => {
    const beat = new FrameBeat();
    beat.drive(true);
    const { drawn } = charts(beat);
    beat.frame(1_000, false);
    beat.frame(1_000 + BEAT_WAIT_MS - 1, false);
    expect(drawn).toEqual([]);
    beat.frame(1_000 + BEAT_WAIT_MS, false);
    expect(drawn).toHaveLength(BEAT_CHARTS);
  });

  it('when play stops, what waited is drawn in animation frames, one chart a frame', () => {
    const beat = new FrameBeat();
    beat.drive(true);
    const { drawn } = charts(beat);
    beat.drive(false);
    animationFrame();
    expect(drawn).toEqual(['a']);
    animationFrame();
    animationFrame();
    expect(drawn).toEqual(['a', 'b', 'c']);
    expect(frames).toHaveLength(0);
  });

  it('a chart dropped while it waits is not drawn', () => {
    const beat = new FrameBeat();
    beat.drive(true);
    const q = new RedrawQueue(beat);
    const gone = {};
    q.push(gone, () => {
      throw new Error('drawn after it was dropped');
    });
    q.drop(gone);
    beat.frame(1_000, true);
    beat.drive(false);
    expect(frames).toHaveLength(0);
  });
});
