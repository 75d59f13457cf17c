/**
 * A seek back restored in place keeps the run's namespace (session.ts); a lane made durable
 * later on the timeline must not meet, when the run reaches that change again, the decisions the
 * abandoned future left in its namespace store (found by the time-travel fuzz: lane A showed 8
 * stored decisions the re-simulated run did not have, all decided after the clock).
 */
import { describe, expect, it } from 'vitest';
import { SharedDecisionStore } from '../../store/shared-store';
import { readScenario as read, snap } from './replies.testing';
import { Session, type RunStorage } from './session';

class DiskStore extends SharedDecisionStore {
  status() {
    return { saved: this.count(), heldInMemory: 0, failure: null };
  }
}

function namespace(): RunStorage {
  const stores = { A: new DiskStore(), B: new DiskStore() };
  return {
    run: 'run',
    durable: (l) => stores[l],
    durableError: null,
    audit: null,
    auditError: null
  };
}

const MIN = 60_000;

describe('a lane made durable mid-run, after a seek back in place', () => {
  it('starts with an empty store when the run reaches the change again, as the run re-simulated does', () => {
    const views = [true, false].map((copies) => {
      const s = new Session(copies ? { copyEvery: 100, storage: namespace() } : { copies: false });
      const [l] = s.handle({ type: 'load', scenario: read('reconnect-bypass') });
      if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
      s.handle({ type: 'advance', to: l.start + 10 * MIN });
      s.handle({ type: 'setConfig', lane: 'A', client: { store: 'durable' }, what: 'A durable' });
      s.handle({ type: 'advance', to: l.start + 40 * MIN });
      s.handle({ type: 'seek', t: l.start + 5 * MIN });
      if (copies) expect(s.copyRestores).toBe(1);
      return snap(s.handle({ type: 'advance', to: l.start + 20 * MIN }));
    });
    const [inPlace, resimulated] = views;
    expect(inPlace!.guarantees.filter((g) => g.status === 'broken')).toEqual([]);
    expect(inPlace!.lanes.A.storedDecisions).toBe(resimulated!.lanes.A.storedDecisions);
    expect(inPlace!.lanes.A.counters).toEqual(resimulated!.lanes.A.counters);
  });
});
