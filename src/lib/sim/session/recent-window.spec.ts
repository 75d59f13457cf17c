import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RecentWindow } from './recent-window';

/** What the session did before: a Map whose oldest entry goes once it holds more than `size`. */
function reference(size: number, ops: [number, number][]): Map<number, number> {
  const m = new Map<number, number>();
  for (const [k, v] of ops) {
    m.set(k, v);
    if (m.size > size) m.delete(m.keys().next().value!);
  }
  return m;
}

describe('RecentWindow', () => {
  it('keeps the most recent entries, as a Map evicting its oldest does (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer())),
        fc.integer(),
        (size, ops, cut) => {
          const w = new RecentWindow<number, number>(size);
          for (const [k, v] of ops) w.set(k, v);
          const want = reference(size, ops);
          for (let k = 0; k <= 20; k++) expect(w.get(k)).toBe(want.get(k));
          // Filtered, then added to: as the Map rebuilt from the kept entries.
          const kept = w.filter((v) => v < cut);
          const m = new Map([...want].filter(([, v]) => v < cut));
          kept.set(99, 0);
          m.set(99, 0);
          if (m.size > size) m.delete(m.keys().next().value!);
          for (const k of [...Array(21).keys(), 99]) expect(kept.get(k)).toBe(m.get(k));
        }
      )
    );
  });
});
