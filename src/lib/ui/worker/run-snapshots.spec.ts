/**
 * Each run's latest snapshot in IndexedDB (run-snapshots.ts), in fake-indexeddb: what a run saves
 * is what its reload reads (the newest save, a structured copy), a drop or a pruning forgets it,
 * and a new run's namespace reads nothing.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { SavedSnapshot } from '$lib/sim/session/session-snapshots';
import { dropSnapshots, snapshotSlot } from './run-snapshots';

const saved = (t: number): SavedSnapshot => ({
  snapshot: { version: 1, meta: { at: { t, events: t * 2 } }, root: { m: new Map([[1, 'x']]) } },
  counts: { auditRows: t, frames: t * 3 },
  views: [],
  actions: '[]'
});

/** Let the slot's writes settle (each is one transaction). */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('run snapshots in IndexedDB', () => {
  it('a reload reads the newest save of its run, as a structured copy', async () => {
    const slot = await snapshotSlot('r1', false);
    expect(slot.saved).toBeNull();
    slot.save(saved(1));
    slot.save(saved(2));
    slot.save(saved(3));
    await settle();
    const again = await snapshotSlot('r1', true);
    expect(again.saved).toEqual(saved(3));
    expect((again.saved!.snapshot.root as { m: Map<number, string> }).m.get(1)).toBe('x');
    // Another run's namespace holds nothing of it; a new run reads nothing at all.
    expect((await snapshotSlot('r2', true)).saved).toBeNull();
    expect((await snapshotSlot('r1', false)).saved).toBeNull();
  });

  it('a drop forgets it, and so does the pruning of its run', async () => {
    const a = await snapshotSlot('r3', false);
    a.save(saved(5));
    await settle();
    a.drop();
    await settle();
    expect((await snapshotSlot('r3', true)).saved).toBeNull();
    const b = await snapshotSlot('r4', false);
    const c = await snapshotSlot('r5', false);
    b.save(saved(6));
    c.save(saved(7));
    await settle();
    await dropSnapshots(['r4']);
    expect((await snapshotSlot('r4', true)).saved).toBeNull();
    expect((await snapshotSlot('r5', true)).saved).toEqual(saved(7));
  });
});
