import { describe, expect, it } from 'vitest';
import type { TimelineAction } from '$lib/sim/engine';
import { RUN_KEY, RunMemory, runKey, scenarioAfter, type KeyValue } from './run-memory';

function memoryKv(): KeyValue & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, v),
    removeItem: (k) => void map.delete(k)
  };
}

const restart: TimelineAction = { t: 1_000, events: 12, kind: 'restart' };

describe('RunMemory', () => {
  it('remembers the run, where it is and its timeline, and a new page reads them back', () => {
    const kv = memoryKv();
    const m = new RunMemory(() => kv);
    m.started('r1', 'k', 7);
    m.at(500);
    m.timeline(1_000, [restart]);
    m.at(1_500);
    expect(new RunMemory(() => kv).read()).toEqual({
      id: 'r1',
      key: 'k',
      seed: 7,
      t: 1_500,
      actions: [restart]
    });
  });

  it('a new load starts over; a run with nothing durable is not kept', () => {
    const kv = memoryKv();
    const m = new RunMemory(() => kv);
    m.started('r1', 'k', null);
    m.timeline(1_000, [restart]);
    m.started('r2', 'k2', null);
    expect(m.read()).toMatchObject({ id: 'r2', t: null, actions: [] });
    m.started(null, 'k3', null);
    expect(kv.map.has(RUN_KEY)).toBe(false);
    expect(m.read()).toBeNull();
  });

  it('follows the run into a fresh namespace (a seek back, a fork), keeping its place', () => {
    const kv = memoryKv();
    const m = new RunMemory(() => kv);
    m.started('r1', 'k', 3);
    m.timeline(1_000, [restart]);
    m.moved('r2');
    expect(m.read()).toEqual({ id: 'r2', key: 'k', seed: 3, t: 1_000, actions: [restart] });
  });

  it('junk in storage, or no storage at all, means no run to resume', () => {
    const kv = memoryKv();
    kv.setItem(RUN_KEY, '{"id":3}');
    expect(new RunMemory(() => kv).read()).toBeNull();
    kv.setItem(RUN_KEY, 'not json');
    expect(new RunMemory(() => kv).read()).toBeNull();
    const none = new RunMemory(() => {
      throw new Error('SecurityError');
    });
    none.started('r1', 'k', null);
    expect(none.read()).toBeNull();
  });
});

describe('runKey', () => {
  it('is the same whatever the seed, and differs for another scenario or trace', () => {
    const a = { name: 'x', seed: 1, lanes: {} };
    expect(runKey(a, null)).toBe(runKey({ ...a, seed: 99 }, null));
    expect(runKey(a, null)).not.toBe(runKey({ ...a, name: 'y' }, null));
    expect(runKey(a, null)).not.toBe(
      runKey(a, [{ t: 0, server: 's', type: 'request', params: {} } as never])
    );
  });
});

describe('scenarioAfter', () => {
  it('applies the lane edits among the actions, in order, and leaves the data untouched', () => {
    const data = {
      name: 'x',
      lanes: { A: { client: { store: 'connection' } }, B: { label: 'b' } }
    };
    const out = scenarioAfter(data, [
      { t: 1, events: 1, kind: 'config', lane: 'A', client: { store: 'durable' }, what: 'w' },
      restart,
      {
        t: 2,
        events: 2,
        kind: 'config',
        lane: 'A',
        client: { rememberTtlMs: 5 } as never,
        what: 'w'
      }
    ]);
    expect(out.lanes).toEqual({ A: { client: { rememberTtlMs: 5 } }, B: { label: 'b' } });
    expect(data.lanes.A.client).toEqual({ store: 'connection' });
    expect(scenarioAfter(data, [restart])).toBe(data);
  });
});
