/**
 * The panel's number formatting: one shared `Intl.NumberFormat` (for speed) writes exactly what
 * `toLocaleString('en-US')` writes, for any number the summaries can meet.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { n, plural } from './catalogue';

describe('n', () => {
  it("writes what toLocaleString('en-US') writes", () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.double(), fc.nat({ max: 2 ** 53 })), (x) => {
        expect(n(x)).toBe(x.toLocaleString('en-US'));
      })
    );
    for (const x of [0, -0, 1, 999, 1000, 12345, 1234567.891, NaN, Infinity, -Infinity])
      expect(n(x)).toBe(x.toLocaleString('en-US'));
    expect(n(12345)).toBe('12,345');
    expect(plural(1, 'request')).toBe('1 request');
    expect(plural(1200, 'request')).toBe('1,200 requests');
  });
});
