/**
 * Engine checkpoints of a lane whose durable decisions the page keeps in IndexedDB (issue #21):
 * the checkpoint lists them, sharing those unchanged with the checkpoint before, and a restore
 * puts them back into the run's store exactly as they were.
 */
import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CloneMap } from '../../machine/clone';
import type { StoredDecision } from '../../machine/types';
import { CachedDurableStore } from '../../store/cached-durable-store';
import { CheckpointMemo, copyAsCheckpoint } from '../../store/checkpoint-memo';
import { CheckpointDecisions } from '../../store/checkpoint-store';
import { SharedDecisionStore } from '../../store/shared-store';
import { engineCloneMap } from '../../store/connection-store';
import { parseScenario, type Scenario } from '../input/scenario';
import { metricsJson } from '../report/report';
import { copyEngine, Simulation } from './engine';

const MIN = 60_000;

function load(name: string): Scenario {
  const r = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

let dbs = 0;
/** A durable store in an IndexedDB database of its own, as the worker attaches one per lane. */
async function durableStore(): Promise<CachedDurableStore> {
  const r = await CachedDurableStore.open({ dbName: `lane-checkpoint-${++dbs}` });
  if (!r.ok) throw new Error(r.error);
  return r.store;
}

/** reconnect-bypass, lane B durable in IndexedDB, run to `minutes`. */
async function durableRun(minutes: number) {
  const store = await durableStore();
  const sim = new Simulation(load('reconnect-bypass'), {
    durable: (l) => (l === 'B' ? store : null)
  });
  sim.advanceTo(sim.start + minutes * MIN);
  expect(sim.lanes.B.host.store).toBe(store);
  return { sim, store };
}

const entries = (s: { entries(): unknown }) => s.entries() as StoredDecision[];
const checkpoint = (memo: CheckpointMemo, sim: Simulation) =>
  copyAsCheckpoint(memo, () => copyEngine(sim, {}));

describe('engine checkpoints of a durable lane kept in IndexedDB', () => {
  it('list its decisions in order, sharing with the checkpoint before those that did not change', async () => {
    const { sim, store } = await durableRun(20);
    const memo = new CheckpointMemo();
    const a = checkpoint(memo, sim);
    const listed = a.lanes.B.host.store;
    expect(listed).toBeInstanceOf(CheckpointDecisions);
    expect(entries(listed)).toEqual(entries(store));
    expect(entries(listed).length).toBeGreaterThan(2);
    // A checkpoint is never run.
    expect(() => listed.commit('c', entries(listed)[0]!)).toThrow(/never run/);

    sim.advanceTo(sim.start + 40 * MIN);
    const b = checkpoint(memo, sim);
    expect(entries(b.lanes.B.host.store)).toEqual(entries(store));
    const before = new Map(entries(listed).map((d) => [d.identity, d]));
    let shared = 0;
    let changed = 0;
    for (const d of entries(b.lanes.B.host.store)) {
      const old = before.get(d.identity);
      if (old !== undefined && JSON.stringify(old) === JSON.stringify(d)) {
        expect(d).toBe(old);
        shared++;
      } else {
        expect(d).not.toBe(old);
        changed++;
      }
    }
    expect(shared).toBeGreaterThan(0);
    expect(changed).toBeGreaterThan(0);
    // Listed again with nothing changed since, nothing is copied afresh: one list of the same.
    const made = memo.made;
    const again = copyAsCheckpoint(memo, () => sim.lanes.B.copyStore(new CloneMap(), {}));
    expect(memo.made).toBe(made);
    entries(again).forEach((d, i) => expect(d).toBe(entries(b.lanes.B.host.store)[i]));
  });

  it('restore to the store as it was, in IndexedDB or in memory, and run on as the run did', async () => {
    const { sim, store } = await durableRun(25);
    const memo = new CheckpointMemo();
    checkpoint(memo, sim); // the next one shares with it
    sim.advanceTo(sim.start + 35 * MIN);
    const cp = checkpoint(memo, sim);
    const at = structuredClone(entries(store));

    const target = await durableStore();
    const inIdb = copyEngine(cp, { durable: () => target });
    expect(inIdb.lanes.B.host.store).toBe(target);
    expect(entries(target)).toEqual(at);
    const inMemory = copyEngine(cp, {});
    expect(inMemory.lanes.B.host.store).toBeInstanceOf(SharedDecisionStore);
    expect(entries(inMemory.lanes.B.host.store)).toEqual(at);
    // The checkpoint holds its list still: a restore takes none of it.
    expect(entries(cp.lanes.B.host.store)).toEqual(at);

    for (const s of [sim, inIdb, inMemory]) s.runToEnd();
    expect(metricsJson(inIdb)).toBe(metricsJson(sim));
    expect(metricsJson(inMemory)).toBe(metricsJson(sim));
    expect(entries(target)).toEqual(entries(store));
    expect(entries(inMemory.lanes.B.host.store)).toEqual(entries(store));
  });

  it('a request holding a stored decision holds the checkpoint’s copy, and after a restore the store’s entry', async () => {
    const { sim, store } = await durableRun(20);
    const live = entries(store).find((d) => d.expiresAt === null || d.expiresAt > sim.now)!;
    const held = store.lookup(live.server, 'c', live.identity, live.policyHash, sim.now)!.decision;
    const times = held.represented;
    // As an engine's copy does: the store first (engine.ts), then the requests' runs (fast.ts).
    const memo = new CheckpointMemo();
    const [listed, inCheckpoint] = copyAsCheckpoint(memo, () => {
      const m = engineCloneMap();
      return [sim.lanes.B.copyStore(m, {}), m.box(held)] as const;
    });
    expect(entries(listed)).toContain(inCheckpoint);
    // The checkpoint of the whole engine shares that copy (nothing changed since).
    const cp = checkpoint(memo, sim);
    expect(entries(cp.lanes.B.host.store)).toContain(inCheckpoint);

    const target = await durableStore();
    const back = new CloneMap();
    cp.lanes.B.copyStore(back, { durable: () => target });
    const restored = back.box(inCheckpoint);
    expect(entries(target)).toContain(restored);
    target.lookup(live.server, 'c', live.identity, live.policyHash, sim.now);
    expect(restored.represented).toBe(times + 1);
    expect(inCheckpoint.represented).toBe(times);
    expect(held.represented).toBe(times);
  });
});
