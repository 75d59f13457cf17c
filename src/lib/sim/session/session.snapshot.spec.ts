/**
 * Snapshots that outlive the page (issue #21, session-snapshots.ts): the session saves its run's
 * latest snapshot into the run's storage, and a reload resumes from it — the same run as a
 * reload that re-simulates from the start, counters, marks, stored decisions and audit rows
 * alike. A snapshot that cannot be used is dropped, with a note when it could not be read, and
 * the reload re-simulates: nothing else is lost.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LANE_IDS, type LaneId } from '../input/scenario';
import { Session, type RunStorage } from './session';
import { DiskStore, MemoryAuditLog } from './run-storage.testing';
import { only, readScenario as read, snap } from './replies.testing';
import { auditLineJson } from '../report/report';
import { SNAPSHOT_VERSION } from '../engine/snapshot';
import { loadSnapshots } from './snapshots-loader';
import { canonicalJson, type SavedSnapshot, type SnapshotSlot } from './session-snapshots';

const MIN = 60_000;

// The worker loads the snapshot code with the parsers (snapshots-loader.ts).
beforeAll(() => loadSnapshots());

/** The run's snapshot slot as IndexedDB keeps it: a structured copy, the newest save winning. */
class MemorySlot implements SnapshotSlot {
  saved: SavedSnapshot | null = null;
  saves = 0;
  drops = 0;
  save(s: SavedSnapshot): void {
    this.saved = structuredClone(s);
    this.saves++;
  }
  drop(): void {
    this.saved = null;
    this.drops++;
  }
}

/** One run's namespace: stores, log and snapshot slot outlive a session, as IndexedDB a page. */
function namespace(slot: MemorySlot | null) {
  const stores = { A: new DiskStore(), B: new DiskStore() };
  const log = new MemoryAuditLog();
  const ns: RunStorage & { stores: Record<LaneId, DiskStore>; log: MemoryAuditLog } = {
    run: 'r-test',
    stores,
    log,
    durable: (lane) => stores[lane],
    durableError: null,
    audit: log,
    auditError: null,
    snapshots: slot
  };
  return ns;
}

/** Play `name` to `minutes`, stopped there (a pause); the namespace and the reload's timeline. */
function played(name: string, minutes: number, slot: MemorySlot | null, copy?: MemorySlot) {
  const data = read(name);
  const disk = namespace(slot);
  const s = new Session({ storage: disk });
  const [l] = s.handle({ type: 'load', scenario: data });
  if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
  s.handle({ type: 'advance', to: l.start + 7 * MIN + 3 });
  s.handle({ type: 'setConfig', lane: 'B', client: { store: 'durable' }, what: 'lane B durable' });
  for (let m = 8; m <= minutes; m++) s.handle({ type: 'advance', to: l.start + m * MIN + 17 });
  s.saveSnapshot();
  if (copy && slot) copy.saved = slot.saved;
  const [timeline] = only(s.handle({ type: 'timeline' }), 'timeline');
  return { data, disk, l, timeline: timeline!, session: s };
}

/** A reload of that run in a new session, played to the end; what it showed and wrote. */
function reload(p: ReturnType<typeof played>) {
  const after = new Session({ storage: p.disk });
  const rs = after.handle({
    type: 'load',
    scenario: p.data,
    resume: 'r-test',
    at: { t: p.timeline.t, actions: p.timeline.actions }
  });
  const [loaded] = only(rs, 'loaded');
  const restarted = only(rs, 'restarted')[0]!;
  const atReload = snap([after.snapshot()]);
  const end = snap(after.handle({ type: 'advance', to: p.l.end }));
  return { loaded: loaded!, restarted, atReload, end, log: p.disk.log.rows.map(auditLineJson) };
}

describe("a reload resumes from the run's saved snapshot", () => {
  it.each(['reconnect-bypass', 'tired-user', 'in-flight-duplicates'])(
    '%s: saved as it plays and when it stops; the reload from it is the reload by re-simulation',
    (name) => {
      const slot = new MemorySlot();
      const p = played(name, 40, slot);
      expect(slot.saves).toBeGreaterThan(0);
      expect(slot.saved!.snapshot.meta.at.t).toBe(p.timeline.t);
      const fast = reload(p);
      expect(fast.loaded).toMatchObject({ ok: true, fromSnapshot: p.timeline.t });

      const q = played(name, 40, null);
      const slow = reload(q);
      expect(slow.loaded).not.toHaveProperty('fromSnapshot');
      expect(fast.restarted.report).toEqual(slow.restarted.report);
      expect(fast.atReload.now).toBe(slow.atReload.now);
      for (const id of LANE_IDS) {
        expect(fast.atReload.lanes[id].counters).toEqual(slow.atReload.lanes[id].counters);
        expect(fast.end.lanes[id].counters).toEqual(slow.end.lanes[id].counters);
      }
      expect(fast.end.marks).toEqual(slow.end.marks);
      expect(fast.end.guarantees).toEqual(slow.end.guarantees);
      expect(fast.log).toEqual(slow.log);
    },
    120_000
  );

  it('stored decisions cleared (not a timeline action): nothing is saved after it; a reload re-simulates from the snapshot before it', () => {
    const slot = new MemorySlot();
    const p = played('reconnect-bypass', 20, slot);
    const before = slot.saved!.snapshot.meta.at;
    p.session.handle({ type: 'clearStored', lane: 'B' });
    p.session.handle({ type: 'advance', to: p.l.start + 40 * MIN });
    expect(p.session.saveSnapshot()).toBe(false);
    expect(slot.saved!.snapshot.meta.at).toEqual(before);
    const [timeline] = only(p.session.handle({ type: 'timeline' }), 'timeline');
    const r = reload({ ...p, timeline: timeline! });
    expect(r.loaded).toMatchObject({ ok: true, fromSnapshot: before.t });
  });

  it('an older snapshot on the same timeline: re-simulated from there to where the run was', () => {
    const slot = new MemorySlot();
    const older = new MemorySlot();
    const p = played('reconnect-bypass', 20, slot, older);
    // Played on past the saved one, then reloaded with only the older snapshot saved.
    p.session.handle({ type: 'advance', to: p.l.start + 33 * MIN + 1 });
    const [timeline] = only(p.session.handle({ type: 'timeline' }), 'timeline');
    slot.saved = older.saved;
    const fast = reload({ ...p, timeline: timeline! });
    expect(fast.loaded).toMatchObject({ fromSnapshot: p.timeline.t });
    const q = played('reconnect-bypass', 20, null);
    q.session.handle({ type: 'advance', to: q.l.start + 33 * MIN + 1 });
    const slow = reload({ ...q, timeline: timeline! });
    for (const id of LANE_IDS)
      expect(fast.end.lanes[id].counters).toEqual(slow.end.lanes[id].counters);
    expect(fast.log).toEqual(slow.log);
  });
});

describe('a saved snapshot that cannot be used', () => {
  /** A record as a reload finds it: `over` changes the snapshot's own fields. */
  function damaged(p: ReturnType<typeof played>, over: Record<string, unknown>): SavedSnapshot {
    return {
      snapshot: {
        version: SNAPSHOT_VERSION,
        meta: { at: { t: p.timeline.t, events: 1 } },
        root: { junk: true },
        ...over
      },
      counts: { auditRows: 0, frames: 0 },
      views: [],
      actions: canonicalJson(p.timeline.actions)
    } as SavedSnapshot;
  }

  it.each([
    ['of another version', { version: SNAPSHOT_VERSION + 1 }],
    // Saved before classes were named by their copy rules: its names mean nothing here.
    ['of version 1 (classes named by where a probe met them)', { version: 1 }],
    ['damaged', { root: { '\u0000class': 'NoSuchClass' } }]
  ])('%s: dropped with a note; the reload re-simulates, the same run', (_what, over) => {
    const slot = new MemorySlot();
    const p = played('reconnect-bypass', 25, slot);
    slot.saved = damaged(p, over);
    const r = reload(p);
    expect(r.loaded).not.toHaveProperty('fromSnapshot');
    expect((r.loaded as { snapshotNote?: string }).snapshotNote).toMatch(
      /^The run's saved snapshot could not be read \(.+\): it was re-simulated from its start instead\.$/
    );
    expect(slot.drops).toBe(1);
    const q = played('reconnect-bypass', 25, null);
    const slow = reload(q);
    for (const id of LANE_IDS)
      expect(r.end.lanes[id].counters).toEqual(slow.end.lanes[id].counters);
    expect(r.log).toEqual(slow.log);
  });

  it('one from another timeline, or ahead of the run, is not used (and said nothing of)', () => {
    const slot = new MemorySlot();
    const p = played('reconnect-bypass', 25, slot);
    slot.saved = { ...damaged(p, {}), actions: '[]' };
    const r = reload(p);
    expect(r.loaded).not.toHaveProperty('fromSnapshot');
    expect(r.loaded).not.toHaveProperty('snapshotNote');
    expect(slot.drops).toBe(1);
    slot.saved = damaged(p, { meta: { at: { t: p.timeline.t + 1, events: 1 } } });
    expect(reload(p).loaded).not.toHaveProperty('fromSnapshot');
    expect(slot.drops).toBe(2);
  });
});
