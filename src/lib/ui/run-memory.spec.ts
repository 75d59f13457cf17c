import { describe, expect, it } from 'vitest';
import type { TimelineAction } from '$lib/sim/engine/engine';
import { RUN_KEY, RunMemory, resumeOf, runKey, scenarioAfter, type KeyValue } from './run-memory';
import type { LaneId, StoreScope } from '$lib/machine/vocabulary';

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
  it('remembers the run, where it is and its timeline, and a new page reads them back', async () => {
    const kv = memoryKv();
    const m = new RunMemory(() => kv);
    m.started('r1', 'k', 7);
    m.at(500);
    m.timeline(1_000, [restart]);
    m.at(1_500);
    expect(await new RunMemory(() => kv).read()).toEqual({
      id: 'r1',
      key: 'k',
      seed: 7,
      t: 1_500,
      actions: [restart],
      fork: null
    });
  });

  it('a run at its end is resumed there; one where it began is loaded again, never resumed (issue #18)', async () => {
    const kv = memoryKv();
    const m = new RunMemory(() => kv);
    const start = 1_000_000;
    m.started('r1', 'k', null, start);
    m.at(start);
    expect(resumeOf(await m.read())).toEqual({});
    // The end is a place like any other: the namespace goes with the time it belongs to.
    m.at(start + 3_600_000);
    expect(resumeOf(await m.read())).toEqual({
      resume: 'r1',
      at: { t: start + 3_600_000, actions: [], fork: null }
    });
    // Back where it began (a seek to the start): loaded again, in a fresh namespace.
    m.timeline(start, [], null);
    expect(resumeOf(await m.read())).toEqual({});
    // A link's run begins at its fork point: a reload there opens the link again.
    m.started('r2', 'k', null, start + 600_000);
    m.at(start + 600_000);
    expect((await m.read())?.t).toBeNull();
    m.at(start + 600_001);
    expect((await m.read())?.t).toBe(start + 600_001);
  });

  it('a share link’s timeline is part of what was loaded: another link is another run', () => {
    const data = { name: 'x', seed: 1 };
    expect(runKey(data, null, undefined)).toBe(runKey(data, null));
    expect(runKey(data, null, { actions: [restart] })).not.toBe(runKey(data, null));
  });

  it('a new load starts over; a run with nothing durable is not kept', async () => {
    const kv = memoryKv();
    const m = new RunMemory(() => kv);
    m.started('r1', 'k', null);
    m.timeline(1_000, [restart]);
    m.started('r2', 'k2', null);
    expect(await m.read()).toMatchObject({ id: 'r2', t: null, actions: [] });
    m.started(null, 'k3', null);
    expect(kv.map.has(RUN_KEY)).toBe(false);
    expect(await m.read()).toBeNull();
  });

  it('follows the run into a fresh namespace (a seek back, a fork), keeping its place', async () => {
    const kv = memoryKv();
    const m = new RunMemory(() => kv);
    m.started('r1', 'k', 3);
    m.timeline(1_000, [restart]);
    m.moved('r2');
    expect(await m.read()).toEqual({
      id: 'r2',
      key: 'k',
      seed: 3,
      t: 1_000,
      actions: [restart],
      fork: null
    });
  });

  it('remembers a fork (the share link’s ForkSpec and the actions it was made from) and a person’s answers', async () => {
    const kv = memoryKv();
    const m = new RunMemory(() => kv);
    m.started('r1', 'k', 3);
    const answer: TimelineAction = {
      t: 2_000,
      events: 40,
      kind: 'consent',
      lane: 'A',
      connection: 'persistent-1#2',
      requestId: 7,
      approved: false
    };
    const fork = {
      spec: {
        version: 1 as const,
        atMs: 600_000,
        lane: 'A' as const,
        change: { kind: 'config' as const, client: { store: 'durable' as const } }
      },
      base: [restart]
    };
    m.timeline(3_000, [answer], fork);
    const back = await new RunMemory(() => kv).read();
    expect(back).toEqual({ id: 'r1', key: 'k', seed: 3, t: 3_000, actions: [answer], fork });
  });

  it('a damaged timeline is named by its path and the run starts over', async () => {
    const kv = memoryKv();
    const saved = { id: 'r1', key: 'k', seed: 3, t: 3_000, fork: null };
    kv.setItem(
      RUN_KEY,
      JSON.stringify({
        ...saved,
        actions: [
          {
            t: 2_000,
            events: 4,
            kind: 'consent',
            lane: 'A',
            connection: 'c#1',
            requestId: 7,
            approved: 'yes'
          }
        ]
      })
    );
    const m = new RunMemory(() => kv);
    expect(await m.read()).toBeNull();
    expect(m.problem).toBe(
      'The run could not be resumed after the reload: its saved timeline is damaged at $.actions[0].approved: expected true or false, got the string "yes". It starts over.'
    );
    kv.setItem(
      RUN_KEY,
      JSON.stringify({ ...saved, actions: [], fork: { spec: { version: 2 }, base: [] } })
    );
    expect(await m.read()).toBeNull();
    expect(m.problem).toContain('$.fork.spec.version');
    kv.setItem(RUN_KEY, JSON.stringify({ ...saved, actions: [] }));
    expect(await m.read()).not.toBeNull();
    expect(m.problem).toBe('');
  });

  it('junk in storage, or no storage at all, means no run to resume', async () => {
    const kv = memoryKv();
    kv.setItem(RUN_KEY, '{"id":3}');
    expect(await new RunMemory(() => kv).read()).toBeNull();
    kv.setItem(RUN_KEY, 'not json');
    expect(await new RunMemory(() => kv).read()).toBeNull();
    const none = new RunMemory(() => {
      throw new Error('SecurityError');
    });
    none.started('r1', 'k', null);
    expect(await none.read()).toBeNull();
  });
});

describe('runKey', () => {
  it('is the same whatever the seed, and differs for another scenario or trace', async () => {
    const a = { name: 'x', seed: 1, lanes: {} };
    expect(runKey(a, null)).toBe(runKey({ ...a, seed: 99 }, null));
    expect(runKey(a, null)).not.toBe(runKey({ ...a, name: 'y' }, null));
    expect(runKey(a, null)).not.toBe(
      runKey(a, [{ t: 0, server: 's', type: 'request', params: {} } as never])
    );
  });
});

describe('scenarioAfter', () => {
  it('applies the lane edits among the actions, in order, and leaves the data untouched', async () => {
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

  it('on a fork of a fork, takes each branch’s edits up to its own fork point', () => {
    const data = { start: '2026-01-01T00:00:00Z', lanes: { A: {}, B: {} } };
    const t0 = Date.parse(data.start);
    const edit = (t: number, lane: LaneId, store: StoreScope): TimelineAction => ({
      t: t0 + t,
      events: t,
      kind: 'config',
      lane,
      client: { store },
      what: 'w'
    });
    const spec = (atMs: number, lane: LaneId) => ({
      version: 1 as const,
      atMs,
      lane,
      change: { kind: 'config' as const, client: {} }
    });
    const out = scenarioAfter(data, [], {
      spec: spec(200, 'B'),
      // The first fork's branch: an edit before the second fork, one after (not this run's).
      base: [edit(150, 'A', 'durable'), edit(300, 'B', 'durable')],
      parents: [
        { spec: spec(100, 'A'), base: [edit(50, 'B', 'connection'), edit(120, 'A', 'connection')] }
      ]
    });
    expect(out.lanes).toEqual({
      A: { client: { store: 'durable' } },
      B: { client: { store: 'connection' } }
    });
  });
});
