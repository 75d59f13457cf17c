/**
 * The guard in the worker session: every snapshot carries the run's guarantees, counted from the
 * same run the lanes show; a live change (silence on) shows in them at once; a new run starts
 * them afresh.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Reply, Snapshot } from '../session/protocol';
import { Session } from '../session/session';

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
});
