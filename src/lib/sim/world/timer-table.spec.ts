import { describe, expect, it } from 'vitest';
import { CloneMap } from '../../machine/clone';
import { Rng } from './rng';
import { TimerTable } from './timer-table';

describe('TimerTable', () => {
  it('answers as a Map would over adds and deletes that grow, empty and refill it', () => {
    const table = new TimerTable<string>(4);
    const map = new Map<number, string>();
    const rng = new Rng(3);
    let next = 1;
    for (let step = 0; step < 20_000; step++) {
      // Phases of growth and of draining, so the table both grows and sweeps its tombstones.
      const adding = Math.floor(step / 2_000) % 2 === 0 ? 0.7 : 0.3;
      if (rng.next() < adding || map.size === 0) {
        const id = next++;
        table.set(id, `t${id}`);
        map.set(id, `t${id}`);
      } else {
        const id = 1 + Math.floor(rng.next() * (next - 1));
        expect(table.delete(id)).toBe(map.delete(id));
      }
      if (step % 97 === 0) {
        const id = 1 + Math.floor(rng.next() * next);
        expect(table.get(id)).toBe(map.get(id));
      }
      expect(table.size).toBe(map.size);
    }
    const seen = new Map<number, string>();
    table.forEach((v, id) => seen.set(id, v));
    expect(new Map([...seen].sort((a, b) => a[0] - b[0]))).toEqual(map);
  });

  it('put replaces the value of an id it holds and adds one it does not, as a Map set', () => {
    const table = new TimerTable<string>(4);
    const map = new Map<number, string>();
    const rng = new Rng(7);
    for (let step = 0; step < 5_000; step++) {
      // Few ids, reused: a connection numbering its requests from 1 again.
      const id = 1 + Math.floor(rng.next() * 12);
      if (rng.next() < 0.6) {
        table.put(id, `v${step}`);
        map.set(id, `v${step}`);
      } else expect(table.delete(id)).toBe(map.delete(id));
      expect(table.get(id)).toBe(map.get(id));
      expect(table.size).toBe(map.size);
    }
  });

  it('copies into an independent table holding the copies of its values', () => {
    const a = { n: 1 };
    const table = new TimerTable<{ n: number }>();
    table.set(1, a);
    table.set(2, { n: 2 });
    const m = new CloneMap();
    const copy = m.get(table);
    copy.delete(2);
    copy.set(3, { n: 3 });
    expect(table.get(2)).toEqual({ n: 2 });
    expect(table.get(3)).toBeUndefined();
    expect(copy.get(1)).toEqual(a);
    expect(copy.get(1)).not.toBe(a);
  });
});
