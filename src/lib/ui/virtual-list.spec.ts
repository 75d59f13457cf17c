import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isAtEnd, scrollToReveal, virtualWindow, type WindowInput } from './virtual-list';

const base: WindowInput = {
  scrollTop: 0,
  viewportHeight: 280,
  rowHeight: 28,
  count: 100,
  overscan: 0
};

/** Where row `i` lands relative to the viewport's top, in px. */
function screenTop(i: number, w: ReturnType<typeof virtualWindow>, input: WindowInput): number {
  return w.offsetY + (i - w.start) * input.rowHeight - input.scrollTop;
}

describe('virtualWindow', () => {
  it('renders nothing for an empty list', () => {
    expect(virtualWindow({ ...base, count: 0 })).toEqual({
      start: 0,
      end: 0,
      offsetY: 0,
      totalHeight: 0
    });
  });

  it('at the top, renders the visible rows plus the one a partial scroll reveals', () => {
    // 280 / 28 = 10 visible rows, +1 for the sliver when the viewport starts mid-row.
    expect(virtualWindow(base)).toEqual({ start: 0, end: 11, offsetY: 0, totalHeight: 2800 });
  });

  it('follows the scroll offset row by row', () => {
    expect(virtualWindow({ ...base, scrollTop: 28 })).toMatchObject({ start: 1, end: 12 });
    expect(virtualWindow({ ...base, scrollTop: 55 })).toMatchObject({ start: 1, end: 12 });
    expect(virtualWindow({ ...base, scrollTop: 56 })).toMatchObject({ start: 2, offsetY: 56 });
  });

  it('adds overscan on both sides, clamped to the list', () => {
    expect(virtualWindow({ ...base, overscan: 5 })).toMatchObject({ start: 0, end: 16 });
    expect(virtualWindow({ ...base, scrollTop: 28 * 50, overscan: 5 })).toMatchObject({
      start: 45,
      end: 66,
      offsetY: 45 * 28
    });
    // Scrolled to the end: 2800 - 280 = 2520 → first visible row 90.
    expect(virtualWindow({ ...base, scrollTop: 2520, overscan: 5 })).toMatchObject({
      start: 85,
      end: 100
    });
  });

  it('clamps a scroll offset beyond either end (elastic overscroll, a shrunk list)', () => {
    expect(virtualWindow({ ...base, scrollTop: -40 })).toMatchObject({ start: 0, offsetY: 0 });
    const w = virtualWindow({ ...base, scrollTop: 99_999 });
    expect(w.end).toBe(100);
    expect(w.start).toBeLessThan(100);
  });

  it('renders every row of a list shorter than the viewport', () => {
    expect(virtualWindow({ ...base, count: 3, overscan: 8 })).toMatchObject({
      start: 0,
      end: 3,
      totalHeight: 84
    });
  });

  it('at 100,000 rows keeps the DOM to a screenful and lands on the right rows mid-list', () => {
    const input = { ...base, count: 100_000, viewportHeight: 600, overscan: 10 };
    const mid = virtualWindow({ ...input, scrollTop: 50_000 * 28 });
    expect(mid.totalHeight).toBe(2_800_000);
    expect(mid.start).toBe(49_990);
    expect(mid.end).toBe(50_000 + Math.ceil(600 / 28) + 1 + 10);
    expect(mid.end - mid.start).toBeLessThan(60);
    expect(mid.offsetY).toBe(49_990 * 28);
    const last = virtualWindow({ ...input, scrollTop: 2_800_000 - 600 });
    expect(last.end).toBe(100_000);
  });

  it('caps the spacer height and still reaches the first and the last row', () => {
    const input = {
      ...base,
      count: 2_000_000,
      viewportHeight: 600,
      overscan: 2,
      maxHeight: 1_000_000
    };
    const top = virtualWindow(input);
    expect(top).toMatchObject({ start: 0, offsetY: 0, totalHeight: 1_000_000 });
    const endInput = { ...input, scrollTop: 1_000_000 - 600 };
    const end = virtualWindow(endInput);
    expect(end.end).toBe(2_000_000);
    // The last row's bottom sits exactly at the viewport's bottom.
    expect(screenTop(1_999_999, end, endInput) + 28).toBeCloseTo(600, 6);
    // Halfway down the scrollbar is halfway down the rows.
    const half = virtualWindow({ ...input, scrollTop: (1_000_000 - 600) / 2 });
    expect(half.start).toBeGreaterThanOrEqual(999_970);
    expect(half.start).toBeLessThanOrEqual(1_000_000);
  });

  it('property: every row that overlaps the viewport is rendered, at its own position', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200_000 }),
        fc.integer({ min: 10, max: 2000 }),
        fc.integer({ min: 1, max: 80 }),
        fc.integer({ min: 0, max: 20 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom(undefined, 50_000),
        (count, viewportHeight, rowHeight, overscan, at, maxHeight) => {
          const probe = { ...base, count, viewportHeight, rowHeight, overscan, maxHeight };
          const range = Math.max(0, virtualWindow(probe).totalHeight - viewportHeight);
          const input = { ...probe, scrollTop: at * range };
          const w = virtualWindow(input);
          expect(w.start).toBeGreaterThanOrEqual(0);
          expect(w.end).toBeLessThanOrEqual(count);
          expect(w.end - w.start).toBeLessThanOrEqual(
            Math.ceil(viewportHeight / rowHeight) + 1 + 2 * overscan
          );
          // The rows just outside the window are off screen.
          if (w.start > 0)
            expect(screenTop(w.start - 1, w, input) + rowHeight).toBeLessThanOrEqual(1e-6);
          if (w.end < count)
            expect(screenTop(w.end, w, input)).toBeGreaterThanOrEqual(viewportHeight - 1e-6);
          // Rows are contiguous, rowHeight apart, starting at offsetY.
          expect(screenTop(w.start, w, input) + input.scrollTop).toBeCloseTo(w.offsetY, 6);
        }
      )
    );
  });
});

describe('scrollToReveal', () => {
  const input = { scrollTop: 28 * 10, viewportHeight: 280, rowHeight: 28, count: 100 };

  it('leaves the offset alone for a row already in view', () => {
    expect(scrollToReveal(12, input)).toBe(280);
    expect(scrollToReveal(19, input)).toBe(280);
  });

  it('scrolls up to put a row above the view at the top', () => {
    expect(scrollToReveal(3, input)).toBe(84);
  });

  it('scrolls down just enough to put a row below the view at the bottom', () => {
    expect(scrollToReveal(20, input)).toBe(21 * 28 - 280);
    expect(scrollToReveal(99, input)).toBe(2800 - 280);
  });

  it('clamps the index to the list', () => {
    expect(scrollToReveal(-5, input)).toBe(0);
    expect(scrollToReveal(1e9, input)).toBe(2800 - 280);
    expect(scrollToReveal(0, { ...input, count: 0 })).toBe(0);
  });

  it('with a capped spacer, reveals the row at the edge of the view', () => {
    const capped = { ...input, count: 2_000_000, viewportHeight: 600, maxHeight: 1_000_000 };
    for (const row of [0, 1234, 1_000_000, 1_999_999]) {
      const scrollTop = scrollToReveal(row, capped);
      const w = virtualWindow({ ...capped, scrollTop, overscan: 0 });
      expect(row).toBeGreaterThanOrEqual(w.start);
      expect(row).toBeLessThan(w.end);
      const y = w.offsetY + (row - w.start) * 28 - scrollTop;
      expect(y).toBeGreaterThanOrEqual(-1e-6);
      expect(y + 28).toBeLessThanOrEqual(600 + 1e-6);
    }
  });
});

describe('isAtEnd', () => {
  it('is true at the bottom (within slack) and for content shorter than the view', () => {
    expect(isAtEnd(2520, 280, 2800)).toBe(true);
    expect(isAtEnd(2519, 280, 2800)).toBe(true);
    expect(isAtEnd(2500, 280, 2800)).toBe(false);
    expect(isAtEnd(0, 280, 100)).toBe(true);
  });
});
