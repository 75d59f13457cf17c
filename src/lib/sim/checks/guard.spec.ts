/**
 * The guard in the worker session: every snapshot carries the run's guarantees, counted from the
 * same run the lanes show; a live change (silence on) shows in them at once; a new run starts
 * them afresh.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Reply, Snapshot } from '../session/protocol';
import { Session } from '../session/session';
import { parseScenario } from '../input/scenario';
import { budgetHeldToWindow, guardedSimulation } from './guard';
import { storedDecision } from './invariants/records.testing';

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

  // Found by the time-travel fuzz: the budget lowered from $0.10 to 11 µ$ while lane A's first
  // call streamed. The call was granted under the old budget and its tokens are paid for; the
  // window guarantee judges each call by the budget it was decided under.
  it('a budget lowered while a call runs is not an overdraw; later calls meet the new one', () => {
    const data = JSON.parse(readFileSync('static/scenarios/budget-window.json', 'utf8')) as Record<
      string,
      unknown
    >;
    const block = (amount: string) => ({
      sampling: true,
      allowedModels: ['example-model-v2'],
      defaultModel: 'example-model-v2',
      maxInputTokens: 32_000,
      maxContext: 'allServers',
      rateLimit: null,
      budget: { amount, currency: 'USD', windowMs: 1_287_829 },
      perCallCap: null,
      consent: 'ask'
    });
    const policy = (amount: string) => ({ version: 1, defaults: block(amount), servers: {} });
    const s = new Session();
    const [r] = s.handle({ type: 'load', scenario: data });
    if (r?.type !== 'loaded' || !r.ok) throw new Error('not loaded');
    s.handle({ type: 'setPolicy', lane: 'A', policy: policy('0.10') as never });
    s.handle({ type: 'advance', to: r.start + 10 });
    s.handle({ type: 'setPolicy', lane: 'A', policy: policy('0.000011') as never });
    const end = snapshot(s.handle({ type: 'advance', to: r.end }));
    const g = end.guarantees.find((x) => x.id === 'no-overdraw')!;
    expect(g.status).toBe('held');
    expect(g.checked).toBeGreaterThan(0);
    // The first call was paid in full, and nothing more fit in the lowered window.
    expect(end.lanes.A.counters.spendMicros).toBeGreaterThan(11);
    expect(end.lanes.A.counters.spendMicros).toBeLessThan(100_000);
  });

  // Found by the time-travel fuzz (seed -735106889, path 1198): lane B's policy edited at 382 ms,
  // before any decision under the old policy was stored. A request decided before the edit stored
  // its answer under the old policy's hash at 3.1 s; no lookup answers from it, so the next
  // presentation asked again — rightly — and the guarantee must not count that entry as live.
  it('a decision stored under a policy edited since starts no store lifetime', () => {
    const data = JSON.parse(readFileSync('static/scenarios/prompt-mutator.json', 'utf8')) as Record<
      string,
      unknown
    >;
    const s = new Session();
    const [r] = s.handle({ type: 'load', scenario: data });
    if (r?.type !== 'loaded' || !r.ok) throw new Error('not loaded');
    s.handle({ type: 'advance', to: r.start + 382 });
    const policy = {
      version: 1,
      defaults: {
        sampling: true,
        allowedModels: ['example-model-v2'],
        defaultModel: 'example-model-v2',
        maxInputTokens: 8261,
        maxContext: 'none',
        rateLimit: { requests: 27, windowMs: 116_568 },
        budget: null,
        perCallCap: { amount: '0.025352', currency: 'USD' },
        consent: 'ask'
      },
      servers: {}
    };
    s.handle({ type: 'setPolicy', lane: 'B', policy: policy as never });
    const end = snapshot(s.handle({ type: 'advance', to: r.end }));
    const g = end.guarantees.find((x) => x.id === 'one-consent')!;
    expect(g.status).toBe('held');
    expect(g.checked).toBeGreaterThan(1);
  });

  // Found by the time-travel fuzz (FUZZ_SEED=1627199263): lane B of the budget-window lesson
  // stores its exhausted windows for the session; at 09:20 its TTL for them goes back to the
  // window. The denials stored before keep their lifetime, and their replays after 09:30 say
  // resetsAt 09:30 as they did: stored past the reset on purpose, not a false claim. Lane A's,
  // stored until the reset, are still held to the window they are sent in.
  it('a denial stored for the session is judged by the lifetime it was stored with, not the TTL now', () => {
    const parsed = parseScenario(readFileSync('static/scenarios/budget-window.json', 'utf8'));
    if (!parsed.ok) throw new Error('not parsed');
    const scenario = parsed.scenario;
    const at = (hhmm: string) => Date.parse(`2026-03-10T${hhmm}:00Z`);
    const stale: number[] = [];
    const { sim, guard } = guardedSimulation(scenario, {
      onFrame: (l) => {
        const data = 'error' in l.frame ? (l.frame.error.data as { resetsAt?: string }) : null;
        if (l.lane === 'B' && data?.resetsAt && Date.parse(data.resetsAt) <= l.t) stale.push(l.t);
      }
    });
    sim.advanceTo(at('09:20'));
    const ttlSession = sim.lanes.B.host.config.reasons['policy.budget_exhausted'].ttl.kind;
    expect(ttlSession).toBe('session');
    // Lane B's configuration without its override: the reason's default TTL, its window.
    sim.setLaneConfig('B', { preflightDefault: 'truncate' });
    expect(sim.lanes.B.host.config.reasons['policy.budget_exhausted'].ttl.kind).toBe('window');
    sim.advanceTo(at('09:45'));
    // The case arose: lane B replayed stored denials whose resetsAt had passed.
    expect(stale.length).toBeGreaterThan(0);
    const g = guard.results().find((x) => x.id === 'denials-true')!;
    expect(g.offenders).toEqual([]);
    expect(g.status).toBe('held');
    expect(g.checked).toBeGreaterThan(0);
  });

  it('an exhausted-budget denial is held to its window unless its decision outlives the reset', () => {
    const reset = Date.parse('2026-03-10T09:30:00Z');
    const exhausted = (expiresAt: number | null) =>
      storedDecision({
        reason: 'policy.budget_exhausted',
        resetsAt: '2026-03-10T09:30:00Z',
        expiresAt
      });
    // Stored until its reset (the TTL `window`), or for less: held, whatever the lane's TTL now.
    expect(budgetHeldToWindow(exhausted(reset), false)).toBe(true);
    expect(budgetHeldToWindow(exhausted(reset - 1), false)).toBe(true);
    // Stored for the session, or past its reset: not held, whatever the lane's TTL now.
    expect(budgetHeldToWindow(exhausted(null), true)).toBe(false);
    expect(budgetHeldToWindow(exhausted(reset + 1), true)).toBe(false);
    // No decision behind the denial (a TTL of `none`), or another reason's: the lane's TTL.
    expect(budgetHeldToWindow(null, true)).toBe(true);
    expect(budgetHeldToWindow(null, false)).toBe(false);
    expect(budgetHeldToWindow(storedDecision({ reason: 'user.denied' }), true)).toBe(true);
  });
});
