import { describe, expect, it } from 'vitest';
import { ffProgressWords, formatSpan } from './sim-time';

describe('time in words', () => {
  it('a span rounds to the minute past one', () => {
    expect(formatSpan(45_000)).toBe('45 s');
    expect(formatSpan(57 * 60_000 + 3_000)).toBe('57 min');
    expect(formatSpan(3_600_000)).toBe('1 h');
    expect(formatSpan(3_780_000)).toBe('1 h 3 min');
  });

  it("a fast-forward's progress: the percentage, and the time left at the pace so far", () => {
    expect(ffProgressWords({ done: 0, total: 100, started: 0, at: 0 })).toBe('0%');
    expect(ffProgressWords({ done: 25, total: 100, started: 1_000, at: 11_000 })).toBe(
      '25% · about 30 s left'
    );
    expect(ffProgressWords({ done: 10, total: 100, started: 0, at: 10_000 })).toBe(
      '10% · about 1 min 30 s left'
    );
  });
});
