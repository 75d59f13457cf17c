/**
 * The guard in the worker session: every snapshot carries the run's guarantees, counted from the
 * same run the lanes show; a live change (silence on) shows in them at once; a new run starts
 * them afresh.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Reply, Snapshot } from './protocol';
import { Session } from './session';

const scenario = JSON.parse(readFileSync('static/scenarios/tired-user.json', 'utf8')) as Record<
  string,
  unknown
>;

function snapshot(rs: Reply[]): Snapshot {
  const s = rs.find((r): r is Snapshot => r.type === 'snapshot');
  if (!s) throw new Error('no snapshot');
  return s;
}

describe('the worker session checks its run', () => {
  it('every snapshot carries the guarantees, counted from the run the lanes show', () => {
    const s = new Session();
    const [l] = s.handle({ type: 'load', scenario });
    if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
    const snap = snapshot(s.handle({ type: 'advance', to: l.start + 1_800_000 }));
    const byId = Object.fromEntries(snap.guarantees.map((g) => [g.id, g]));
    expect(byId['one-frame']!.status).toBe('held');
    const { A, B } = snap.lanes;
    const decided = (c: typeof A.counters) =>
      Object.values(c.frames).reduce((x, y) => x + y, 0) + c.silenced;
    expect(byId['one-frame']!.checked).toBe(decided(A.counters) + decided(B.counters));
    expect(byId['one-consent']!.checked).toBe(
      A.counters.consentPrompts + B.counters.consentPrompts
    );
    expect(byId['frames-conform']!.summary).toMatch(/^[\d,]+ of [\d,]+ frames conform$/);

    // Silence on in lane A: the guarantee it gives up is shown as given up, not as kept.
    s.handle({
      type: 'setConfig',
      lane: 'A',
      client: { store: 'connection', silence: true },
      what: 'silence on'
    });
    const later = snapshot(s.handle({ type: 'advance', to: l.start + 3_600_000 }));
    const oneFrame = later.guarantees.find((g) => g.id === 'one-frame')!;
    expect(later.lanes.A.counters.silenced).toBeGreaterThan(0);
    expect(oneFrame.status).toBe('waived');
    expect(oneFrame.summary).toMatch(
      new RegExp(`^${later.lanes.A.counters.silenced} requests? got no frame — silence is on`)
    );

    // A new run starts the guarantees afresh.
    s.handle({ type: 'load', scenario });
    const fresh = snapshot(s.handle({ type: 'advance', to: l.start }));
    expect(fresh.guarantees.find((g) => g.id === 'one-frame')!.summary).toBe(
      '0 of 0 requests answered'
    );
  });
});
