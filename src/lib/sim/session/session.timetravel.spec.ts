import { describe, expect, it } from 'vitest';
import { Simulation } from '../engine/engine';
import type { Reply } from './protocol';
import { parseScenario } from '../input/scenario';
import { Session } from './session';
import { only, readScenario as read, snap } from './replies.testing';

function loaded(name = 'reconnect-bypass') {
  const s = new Session();
  const [r] = s.handle({ type: 'load', scenario: read(name) });
  if (r?.type !== 'loaded' || !r.ok) throw new Error('not loaded');
  return { s, start: r.start, end: r.end };
}

function fastForwardAll(s: Session, ms: number): Reply[] {
  const out = s.handle({ type: 'fastForward', ms });
  while (s.fastForwarding) out.push(...s.fastForwardSlice(5_000));
  return out;
}

const MIN = 60_000;

describe('the session, time travel', () => {
  it('restarts the client and says what each lane lost and kept', () => {
    const { s, start } = loaded('restart-client');
    s.handle({ type: 'advance', to: start + 16 * 60 * MIN - 1 });
    const rs = s.handle({ type: 'restart' });
    const [r] = only(rs, 'restarted');
    expect(r!.notice).toBe(
      'Client restarted: lane A lost 2 stored decisions, lane B kept 2 stored decisions'
    );
    const view = snap(rs);
    expect(view.lanes.A.storedDecisions).toBe(0);
    expect(view.lanes.B.storedDecisions).toBe(2);
    expect(view.marks.filter((m) => m.kind === 'restart')).toHaveLength(2);
  });

  it('seeks back by re-simulation: the view at t is the run’s at t, and playing on ends the same', () => {
    const straight = loaded();
    const endView = snap(straight.s.handle({ type: 'advance', to: straight.end }));

    const { s, start, end } = loaded();
    s.handle({ type: 'advance', to: start + 40 * MIN });
    s.handle({ type: 'restart' });
    const restarted = snap(s.handle({ type: 'advance', to: start + 50 * MIN }));
    const rs = s.handle({ type: 'seek', t: start + 20 * MIN });
    const [seeked] = only(rs, 'seeked');
    expect(seeked!.t).toBe(start + 20 * MIN);
    expect(seeked!.checkpoint!.t).toBeLessThanOrEqual(start + 20 * MIN);
    const at = snap(rs);
    expect(at.now).toBe(start + 20 * MIN);
    expect(at.audit).toEqual([]); // the page keeps its first `auditRows` rows
    const scenario = parseScenario(read('reconnect-bypass'));
    if (!scenario.ok) throw new Error();
    let rows = 0;
    const fresh = new Simulation(scenario.scenario, { onAudit: () => void rows++ });
    fresh.advanceTo(start + 20 * MIN);
    expect(at.lanes.A.counters).toEqual(fresh.lanes.A.metrics.counters);
    expect(at.lanes.B.edges).toEqual(fresh.lanes.B.metrics.edges);
    expect(seeked!.auditRows).toBe(rows);
    // Back to 45 min: the restart at 40 min is part of the timeline and happens again.
    const again = snap(s.handle({ type: 'seek', t: start + 45 * MIN }));
    // With the scenario's own restart at 30 min: two marks each.
    expect(again.marks.filter((m) => m.kind === 'restart')).toHaveLength(4);
    const later = snap(s.handle({ type: 'seek', t: start + 50 * MIN }));
    expect(later.lanes.A.counters).toEqual(restarted.lanes.A.counters);
    // Played on to the end: the same as a session that never scrubbed.
    s.handle({ type: 'seek', t: start + 30 * MIN });
    const scrubbed = snap(s.handle({ type: 'advance', to: end }));
    const plain = loaded();
    plain.s.handle({ type: 'advance', to: start + 40 * MIN });
    plain.s.handle({ type: 'restart' });
    const unscrubbed = snap(plain.s.handle({ type: 'advance', to: end }));
    expect(scrubbed.lanes.A.counters).toEqual(unscrubbed.lanes.A.counters);
    expect(scrubbed.lanes.B.counters).toEqual(unscrubbed.lanes.B.counters);
    expect(scrubbed.lanes.A.series).toEqual(unscrubbed.lanes.A.series);
    expect(scrubbed.marks.filter((m) => m.kind === 'restart').map((m) => m.t - start)).toEqual([
      30 * MIN, // the scenario's own restart
      30 * MIN,
      40 * MIN,
      40 * MIN
    ]);
    // The straight run has only the scenario's own restart.
    expect(endView.marks.map((m) => [m.kind, m.t - start])).toEqual([
      ['restart', 30 * MIN],
      ['restart', 30 * MIN]
    ]);
    const [cps] = only(s.handle({ type: 'checkpoints' }), 'checkpoints');
    expect(cps!.checkpoints.length).toBeGreaterThan(10);
    expect(cps!.checkpoints.at(-1)!.t).toBe(end);
  });

  it('pauses a fast-forward at a breakpoint, shows the facts, and resumes', () => {
    const { s } = loaded('retryable-loop');
    const bad = only(
      s.handle({ type: 'setBreakpoints', conditions: ['alert', 'nope'] }),
      'breakpoints'
    );
    expect(bad[0]).toMatchObject({ ok: false });
    expect(!bad[0]!.ok && bad[0]!.errors[0]).toContain('unknown condition "nope"');
    s.handle({ type: 'setBreakpoints', conditions: ['alert'] });
    const rs = fastForwardAll(s, 3_600_000);
    const view = snap(rs);
    expect(view.done).toBe(false);
    expect(view.paused).toMatchObject({ condition: 'alert', audit: { alert: true } });
    expect(only(rs, 'fastForwardDone')).toEqual([{ type: 'fastForwardDone', cancelled: false }]);
    const resumed = snap(s.handle({ type: 'resume' }));
    expect(resumed.paused).toBeNull();
    const end = snap(fastForwardAll(s, 3_600_000));
    expect(end.done).toBe(true);
  });

  it('forks one lane from t: the other lane ends as in the unforked run', () => {
    const base = loaded();
    const unforked = snap(base.s.handle({ type: 'advance', to: base.end }));

    const { s, start, end } = loaded();
    s.handle({ type: 'advance', to: start + 30 * MIN });
    const wrong = only(
      s.handle({
        type: 'fork',
        fork: {
          version: 1,
          atMs: 600_000,
          lane: 'A',
          change: { kind: 'config', client: { store: 'disk' } }
        }
      }),
      'forked'
    );
    expect(wrong[0]).toMatchObject({ ok: false, errors: [{ path: '$.change.client.store' }] });
    const rs = s.handle({
      type: 'fork',
      fork: {
        version: 1,
        atMs: 600_000,
        lane: 'A',
        change: { kind: 'config', client: { store: 'durable' } }
      }
    });
    const [f] = only(rs, 'forked');
    expect(f).toMatchObject({ ok: true, t: start + 600_000 });
    const done = snap(s.handle({ type: 'advance', to: end }));
    expect(done.lanes.B.counters).toEqual(unforked.lanes.B.counters);
    expect(done.lanes.A.counters.consentPrompts).toBeLessThan(
      unforked.lanes.A.counters.consentPrompts
    );
    expect(done.marks.some((m) => m.kind === 'fork' && m.lane === 'A')).toBe(true);
  });

  it('says plainly when "Simulate N h" runs past the end, and can extend the run', () => {
    const { s, start, end } = loaded();
    s.handle({ type: 'advance', to: start + 30 * MIN });
    const [c] = only(s.handle({ type: 'fastForward', ms: 2 * 3_600_000 }), 'fastForwardClamped');
    expect(c!.message).toBe(
      'The scenario ends at 1 h: simulating 30 min of the 2 h asked. Extend the run to 2 h 30 min to simulate all of it.'
    );
    while (s.fastForwarding) s.fastForwardSlice();
    expect(snap(s.handle({ type: 'step' })).now).toBe(end);
    const [x] = only(s.handle({ type: 'extend', end: c!.extendTo! }), 'extended');
    expect(x).toEqual({ type: 'extended', ok: true, end: start + 150 * MIN });
    const after = snap(fastForwardAll(s, 3_600_000));
    expect(after.now).toBe(end + 3_600_000);
    expect(after.lanes.A.counters.requests).toBeGreaterThan(0);
    const [no] = only(s.handle({ type: 'extend', end: start + 400 * 86_400_000 }), 'extended');
    expect(no).toMatchObject({ ok: false, message: expect.stringContaining('at most 30 d') });
  });
});

describe('the session, replaying audit rows after a seek back (the browser worker)', () => {
  it('hands over exactly the audit rows of the branch up to t, the same as the first time', () => {
    const { s, start } = loaded();
    s.replayAudit = true;
    const first = fastForwardAll(s, 40 * MIN).flatMap((r) =>
      r.type === 'snapshot' ? r.audit : []
    );
    first.push(...s.drainAudit());
    const rs = s.handle({ type: 'seek', t: start + 15 * MIN });
    const [seeked] = only(rs, 'seeked');
    const again = snap(rs).audit;
    expect(seeked!.auditRows).toBeGreaterThan(0);
    expect(again).toHaveLength(seeked!.auditRows);
    expect(again).toEqual(first.slice(0, seeked!.auditRows));
    expect(first.length).toBeGreaterThan(seeked!.auditRows);
  });
});

describe('the session, checkpoints after a seek back', () => {
  it('keeps the checkpoints before t: the same stops as the first time through', () => {
    const { s, start } = loaded();
    s.handle({ type: 'advance', to: start + 30 * MIN });
    const stops = (rs: Reply[]) => only(rs, 'checkpoints')[0]!.checkpoints.map((c) => c.t);
    const before = stops(s.handle({ type: 'checkpoints' }));
    s.handle({ type: 'seek', t: start + 10 * MIN });
    const after = stops(s.handle({ type: 'checkpoints' }));
    expect(after.length).toBeGreaterThan(10);
    expect(after).toEqual(before.filter((t) => t <= start + 10 * MIN));
  });
});
