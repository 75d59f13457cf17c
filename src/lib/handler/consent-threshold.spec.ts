/**
 * The policy's `askAbove` through the shipped handler, over a real SDK 1.x server and client: a
 * call whose pre-flight estimate is at or below the threshold is served without calling the
 * client's `consent`; one above it asks, with that estimate; a person's "deny" for the identity
 * wins over "cheap"; and the rate limit still counts every cheap call.
 */
import { describe, expect, it } from 'vitest';
import { defaultPolicy, type Policy } from '../machine/policy';
import type { HandlerAuditRecord } from './audit';
import { createSamplingPolicy } from './handler';
import type { ConsentAnswer, ConsentRequest } from './sources';
import { ask, deferred, outcome, pair, until } from './sdk-pair.testing';

/** "Summarise 2.3." is 4 input tokens at $3/Mtok; each output token $15/Mtok (the lab's card). */
const CHEAP = ask('Summarise 2.3.', { maxTokens: 200 }); // 12 + 3,000 µ$ = 0.003012
const DEAR = ask('Summarise 2.3.', { maxTokens: 1000 }); // 12 + 15,000 µ$ = 0.015012, same identity

function lab(answer: ConsentAnswer, edit: (p: Policy) => void = () => {}) {
  const policy = defaultPolicy();
  policy.defaults.askAbove = { amount: '0.005', currency: 'USD' };
  edit(policy);
  const asked: ConsentRequest[] = [];
  const records: HandlerAuditRecord[] = [];
  let samples = 0;
  const handler = createSamplingPolicy({
    policy,
    consent: (r) => (asked.push(r), answer),
    sample: (_p, { model }) => (samples++, { content: { type: 'text', text: 'ok' }, model }),
    audit: (r) => void records.push(r)
  });
  return { handler, asked, records, samples: () => samples };
}

describe('askAbove through the handler', () => {
  it('serves a call at or below the threshold with no consent call, and records why', async () => {
    const t = lab('allow');
    const p = await pair(t.handler);
    const got = await outcome(p.server.createMessage(CHEAP));
    expect(got.result?.stopReason).toBe('endTurn');
    expect(t.asked).toHaveLength(0);
    expect(t.samples()).toBe(1);
    expect(t.records[0]).toMatchObject({
      outcome: 'allowed',
      consentShown: false,
      consent: 'not-asked',
      consentSkipped: {
        estimatedCost: { amount: '0.003012', currency: 'USD' },
        askAbove: { amount: '0.005', currency: 'USD' }
      }
    });
    // Nothing was stored: the identical request is judged afresh, and skipped afresh.
    await outcome(p.server.createMessage(CHEAP));
    expect(t.asked).toHaveLength(0);
    expect(t.records[1]).toMatchObject({ replayed: false, consentSkipped: expect.any(Object) });
    await p.close();
    await t.handler.close();
  });

  it('asks above the threshold, with the estimate, even for an identity just served cheaply', async () => {
    const t = lab('allow');
    const p = await pair(t.handler);
    await outcome(p.server.createMessage(CHEAP));
    // maxTokens is outside the identity: a cheap call must not vouch for a dear one.
    const got = await outcome(p.server.createMessage(DEAR));
    expect(got.result?.stopReason).toBe('endTurn');
    expect(t.asked).toHaveLength(1);
    expect(t.asked[0]!.estimate).toEqual({ amount: '0.015012', currency: 'USD' });
    expect(t.records[0]!.identity).toBe(t.records[1]!.identity);
    expect(t.records[1]).toMatchObject({ consentShown: true, consent: 'approved' });
    expect(t.records[1]!.consentSkipped).toBeUndefined();
    await p.close();
    await t.handler.close();
  });

  it("a person's deny wins over cheap: the identity's stored denial is replayed", async () => {
    const t = lab('deny');
    const p = await pair(t.handler);
    const first = await outcome(p.server.createMessage(DEAR));
    expect(first.error).toMatchObject({ code: -32003, data: { reason: 'user.denied' } });
    const cheap = await outcome(p.server.createMessage(CHEAP));
    expect(cheap.error).toMatchObject({ code: -32003, data: { reason: 'user.denied' } });
    expect(t.asked).toHaveLength(1);
    expect(t.samples()).toBe(0);
    expect(t.records[1]).toMatchObject({ replayed: true });
    expect(t.records[1]!.consentSkipped).toBeUndefined();
    await p.close();
    await t.handler.close();
  });

  it('concurrent identical cheap calls: no dialog for any, each served and recorded', async () => {
    const t = lab('allow');
    const p = await pair(t.handler);
    const got = await Promise.all([1, 2, 3].map(() => outcome(p.server.createMessage(CHEAP))));
    expect(got.map((g) => g.result?.stopReason)).toEqual(['endTurn', 'endTurn', 'endTurn']);
    expect(t.asked).toHaveLength(0);
    expect(t.records).toHaveLength(3);
    for (const r of t.records) expect(r.consentSkipped).toBeDefined();
    await p.close();
    await t.handler.close();
  });

  it('a dearer call joining a cheap one in flight is still asked (no vouching through a join)', async () => {
    // The cheap call's model answer is held open so the dear one (same identity) arrives while
    // it is in flight and joins it.
    const release = deferred<void>();
    let calls = 0;
    const policy = defaultPolicy();
    policy.defaults.askAbove = { amount: '0.005', currency: 'USD' };
    const asked: ConsentRequest[] = [];
    const records: HandlerAuditRecord[] = [];
    const handler = createSamplingPolicy({
      policy,
      consent: (r) => (asked.push(r), 'allow'),
      sample: async (_p, { model }) => {
        if (calls++ === 0) await release.promise;
        return { content: { type: 'text', text: 'ok' }, model };
      },
      audit: (r) => void records.push(r)
    });
    const p = await pair(handler);
    const cheap = outcome(p.server.createMessage(CHEAP));
    await until(() => calls === 1, 'the cheap call reached the model');
    const dear = outcome(p.server.createMessage(DEAR));
    await until(() => p.handled() === 2, 'the dear call reached the handler');
    release.resolve();
    const got = await Promise.all([cheap, dear]);
    expect(got.map((g) => g.result?.stopReason)).toEqual(['endTurn', 'endTurn']);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.estimate).toEqual({ amount: '0.015012', currency: 'USD' });
    expect(records.find((r) => r.consentShown)?.identity).toBe(records[0]!.identity);
    await p.close();
    await handler.close();
  });

  it('the rate limit counts cheap calls like any other', async () => {
    const t = lab('allow', (p) => (p.defaults.rateLimit = { requests: 2, windowMs: 3_600_000 }));
    const p = await pair(t.handler);
    const got = [];
    for (const n of [1, 2, 3]) got.push(await outcome(p.server.createMessage(ask(`Task ${n}.`))));
    expect(got.slice(0, 2).map((g) => g.result?.stopReason)).toEqual(['endTurn', 'endTurn']);
    expect(got[2]!.error).toMatchObject({ code: -32003, data: { reason: 'policy.rate_limit' } });
    expect(t.asked).toHaveLength(0);
    await p.close();
    await t.handler.close();
  });

  it('a threshold in another currency than the rate card never applies: every call is asked', async () => {
    const t = lab('allow', (p) => (p.defaults.askAbove = { amount: '100', currency: 'EUR' }));
    const p = await pair(t.handler);
    await outcome(p.server.createMessage(CHEAP));
    expect(t.asked).toHaveLength(1);
    expect(t.records[0]!.consentSkipped).toBeUndefined();
    await p.close();
    await t.handler.close();
  });
});
