import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from './outcomes';

describe("the audit record's time (isoTime)", () => {
  it('is what toISOString gives, for any instant a Date holds (fixed seed)', () => {
    const instant = fc.oneof(
      fc.integer({ min: -8.64e15 + 1_000, max: 8.64e15 - 1_000 }),
      fc.double({ min: -8.64e15 + 1_000, max: 8.64e15 - 1_000, noNaN: true }),
      fc.constantFrom(-8.64e15, 8.64e15, 0, -0),
      fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 })
    );
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 8 }), (times) => {
        // Runs of nearby instants too: the formatted second is reused within a second.
        for (const t of times)
          for (const d of [0, 1, 999, -1, 0.5]) {
            const at = Math.max(-8.64e15, Math.min(8.64e15, t + d));
            expect(isoTime(at)).toBe(new Date(at).toISOString());
          }
      }),
      { numRuns: 2_000, seed: 20 }
    );
  });

  it('throws on an instant a Date cannot hold, as toISOString does', () => {
    for (const t of [NaN, Infinity, -Infinity, 8.64e15 + 1, -8.64e15 - 1]) {
      expect(() => new Date(t).toISOString()).toThrow(RangeError);
      expect(() => isoTime(t)).toThrow(RangeError);
    }
  });
});
