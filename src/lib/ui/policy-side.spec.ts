import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WIDTH,
  MIN_WIDTH,
  WIDTH_KEY,
  clampWidth,
  defaultWidth,
  storedWidth
} from './policy-side';

describe('the policy editor side panel', () => {
  it('keeps its width within the window, the lanes keeping their share', () => {
    expect(clampWidth(100, 1366)).toBe(MIN_WIDTH);
    expect(clampWidth(700, 1366)).toBe(700);
    expect(clampWidth(5000, 1366)).toBe(1366 - 420);
  });

  it('remembers the width; anything else stored is ignored', () => {
    const at = (v: string | null) => ({ getItem: (k: string) => (k === WIDTH_KEY ? v : null) });
    expect(storedWidth(at('812'))).toBe(812);
    expect(storedWidth(at('wide'))).toBe(DEFAULT_WIDTH);
    expect(storedWidth(at(null))).toBe(DEFAULT_WIDTH);
    expect(storedWidth(null)).toBe(DEFAULT_WIDTH);
    expect(storedWidth(null, defaultWidth(1920))).toBe(806);
    expect(defaultWidth(1366)).toBe(DEFAULT_WIDTH);
  });
});
