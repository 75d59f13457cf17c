import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import type { Reply, Snapshot } from './protocol';
import { Session } from './session';
import { only } from './replies.testing';
import type { LaneId } from '../../machine/vocabulary';

const scenario = JSON.parse(
  readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')
) as Record<string, unknown>;

function loaded(s: Session, extra: Partial<{ human: LaneId[] }> = {}) {
  const [r] = s.handle({ type: 'load', scenario, ...extra });
  if (r?.type !== 'loaded' || !r.ok) throw new Error('not loaded');
  return r;
}

describe('the worker session', () => {
  it('rejects an invalid scenario with paths, and runs nothing', () => {
    const s = new Session();
    const [r] = s.handle({ type: 'load', scenario: { ...scenario, seed: -1 } });
    expect(r).toMatchObject({ type: 'loaded', ok: false });
    expect(r?.type === 'loaded' && !r.ok && r.errors[0]?.path).toBe('$.seed');
    expect(s.sim).toBeNull();
  });

  it('advances in virtual time and streams audit records once', () => {
    const s = new Session();
    const l = loaded(s);
    const [a] = only(s.handle({ type: 'advance', to: l.start + 600_000 }), 'snapshot');
    expect(a!.now).toBe(l.start + 600_000);
    expect(a!.audit.length).toBeGreaterThan(0);
    expect(a!.lanes.A.counters.consentPrompts).toBeGreaterThan(a!.lanes.B.counters.consentPrompts);
    const [b] = only(s.handle({ type: 'advance', to: l.start + 600_000 }), 'snapshot');
    expect(b!.audit).toHaveLength(0);
  });

  it('charts end at the counters of the moment, between samples too', () => {
    const s = new Session();
    const l = loaded(s);
    // 7 s past a 15 s sample: the lanes table and the charts must not disagree while paused here.
    const [a] = only(s.handle({ type: 'advance', to: l.start + 22 * 60_000 + 7_000 }), 'snapshot');
    for (const lane of ['A', 'B'] as const) {
      const { series, counters } = a!.lanes[lane];
      expect(series.t.at(-1)).toBe(a!.now);
      expect(series.values.consentPrompts.at(-1)).toBe(counters.consentPrompts);
      expect(series.values.requests.at(-1)).toBe(counters.requests);
      expect(series.values.spendMicros.at(-1)).toBe(counters.spendMicros);
    }
    // The live point is not kept: the next snapshot's samples are the engine's own.
    expect(s.sim!.lanes.A.metrics.series.t.at(-1)).toBeLessThan(a!.now);
  });

  it('fast-forwards in slices, and can be cancelled', () => {
    const s = new Session();
    loaded(s);
    expect(s.handle({ type: 'fastForward', ms: 3_600_000 })).toEqual([]);
    expect(s.fastForwarding).toBe(true);
    const replies: Reply[] = [];
    while (s.fastForwarding) replies.push(...s.fastForwardSlice());
    const snap = only(replies, 'snapshot').at(-1) as Snapshot;
    expect(snap.done).toBe(true);
    expect(only(replies, 'fastForwardDone')[0]).toMatchObject({ cancelled: false });

    const t = new Session();
    loaded(t);
    t.handle({ type: 'fastForward', ms: 3_600_000 });
    expect(only(t.handle({ type: 'cancel' }), 'fastForwardDone')[0]).toMatchObject({
      cancelled: true
    });
    expect(t.fastForwarding).toBe(false);
  });

  // Issue #19: the fast-forward loop did not catch an engine error (live play did): the page
  // kept showing its progress bar, the clock stuck where the error was.
  it('a fast-forward the engine throws in ends, saying what broke and when', () => {
    const s = new Session();
    const l = loaded(s);
    const toIso = Date.prototype.toISOString;
    let calls = 0;
    const spy = vi.spyOn(Date.prototype, 'toISOString').mockImplementation(function (this: Date) {
      if (++calls > 40) throw new RangeError('Invalid time value');
      return toIso.call(this);
    });
    try {
      s.handle({ type: 'fastForward', ms: 3_600_000 });
      const replies: Reply[] = [];
      for (let i = 0; s.fastForwarding && i < 1_000; i++) replies.push(...s.fastForwardSlice(500));
      expect(s.fastForwarding).toBe(false);
      const done = only(replies, 'fastForwardDone');
      expect(done).toHaveLength(1);
      expect(done[0]!.error).toMatch(
        /^the engine failed at 0:\d\d:\d\d \(simulated\): Invalid time value$/
      );
      const snap = only(replies, 'snapshot').at(-1)!;
      expect(Number.isFinite(snap.now)).toBe(true);
      expect(snap.now).toBeGreaterThan(l.start);
      expect(snap.now).toBeLessThan(l.start + 3_600_000);
      // Half-way through an event, the engine goes no further: every way on says the same.
      expect(() => s.handle({ type: 'advance', to: l.end })).toThrow(done[0]!.error);
      expect(() => s.handle({ type: 'fastForward', ms: 60_000 })).toThrow(done[0]!.error);
    } finally {
      spy.mockRestore();
    }
    // A run loaded again is a new engine.
    loaded(s);
    const [snap] = only(s.handle({ type: 'advance', to: l.start + 60_000 }), 'snapshot');
    expect(snap!.now).toBe(l.start + 60_000);
  });

  it('routes consent dialogs to a person in "you are the user" mode', () => {
    const s = new Session();
    const l = loaded(s, { human: ['A'] });
    const [snap] = only(s.handle({ type: 'advance', to: l.start + 1_000 }), 'snapshot');
    const p = snap!.pendingConsent.find((c) => c.lane === 'A');
    expect(p?.server).toMatch(/^persistent/);
    const [after] = only(
      s.handle({ type: 'consent', lane: 'A', token: p!.token, approved: false }),
      'snapshot'
    );
    expect(after!.pendingConsent.find((c) => c.token === p!.token)).toBeUndefined();
    const [later] = only(s.handle({ type: 'advance', to: l.start + 2_000 }), 'snapshot');
    const rec = [...after!.audit, ...later!.audit].find(
      (r) => r.lane === 'A' && r.consent === 'denied'
    );
    expect(rec?.reason).toBe('user.denied');
  });

  it('applies a policy edit to one lane and reports the invalidated decisions', () => {
    const s = new Session();
    const l = loaded(s);
    s.handle({ type: 'advance', to: l.start + 600_000 });
    const policy = structuredClone(
      (scenario.lanes as { B: { policy: Record<string, unknown> } }).B.policy
    );
    (policy.defaults as Record<string, unknown>).consent = 'allow';
    const [applied] = only(
      s.handle({ type: 'setPolicy', lane: 'B', policy: policy as never }),
      'policyApplied'
    );
    const total = Object.values(applied!.invalidated).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(0);
    const [snap] = only(s.handle({ type: 'advance', to: l.start + 600_000 }), 'snapshot');
    expect(snap!.marks.at(-1)?.what).toMatch(/policy edited/);
  });

  it('inspects a finished request: params, identity, path and its one frame', () => {
    const s = new Session();
    const l = loaded(s);
    const [snap] = only(s.handle({ type: 'advance', to: l.start + 60_000 }), 'snapshot');
    const rec = snap!.audit.find((r) => r.lane === 'B')!;
    const [ins] = only(s.handle({ type: 'inspect', lane: 'B', seq: rec.seq }), 'inspection');
    expect(ins).toMatchObject({ found: true, identity: rec.identity });
    expect(ins!.path?.[0]).toBe('identifying');
    expect(ins!.frame).toBeTruthy();
  });

  it('digests a whole run the same way twice', () => {
    const s = new Session();
    const [a] = s.handle({ type: 'digest', scenario });
    const [b] = new Session().handle({ type: 'digest', scenario });
    expect(a).toEqual(b);
    expect(a?.type === 'digest' && a.ok && a.digest.frameLines).toBeGreaterThan(10);
  });
});
