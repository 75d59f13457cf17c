/**
 * The rest of the README's outcome table, as the SDK server receives it: a trimmed context, a
 * dialog nobody answers, a model call past its deadline, a cost refusal as an error, and params
 * the lab refuses before hashing. Real time, with timeouts of a few milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../machine/policy';
import type { HandlerAuditRecord } from './audit';
import { createSamplingPolicy, type SamplingPolicyOptions } from './handler';
import type { ConsentAnswer, SampleOptions } from './sources';
import { ask, outcome, pair, until } from './sdk-pair.testing';

function lab(over: Partial<SamplingPolicyOptions> = {}) {
  const records: HandlerAuditRecord[] = [];
  const policy = createSamplingPolicy({
    policy: defaultPolicy(),
    consent: () => 'allow',
    sample: (_p, { model }) => ({ content: { type: 'text', text: 'ok' }, model }),
    audit: (r) => void records.push(r),
    ...over
  });
  return { policy, records };
}

describe('outcomes', () => {
  it('a wider context than the policy allows is trimmed, sampled with the allowed one, and said so', async () => {
    const seen: SampleOptions[] = [];
    const t = lab({
      sample: (_p, o) => (seen.push(o), { content: { type: 'text', text: 'ok' } })
    });
    const p = await pair(t.policy);
    const got = await outcome(p.server.createMessage(ask('hi', { includeContext: 'allServers' })));
    expect(got.result?._meta).toMatchObject({
      context: { requested: 'allServers', applied: 'thisServer' }
    });
    expect(seen[0]!.includeContext).toBe('thisServer');
    expect(t.records[0]!.outcome).toBe('trimmed');
    await p.close();
    await t.policy.close();
  });

  it('a dialog nobody answers within consentTimeoutMs is user.timeout, and its signal aborts', async () => {
    const signals: AbortSignal[] = [];
    const t = lab({
      client: { consentTimeoutMs: 15 },
      consent: ({ signal }) => (signals.push(signal), new Promise<ConsentAnswer>(() => {}))
    });
    const p = await pair(t.policy);
    const got = await outcome(p.server.createMessage(ask()));
    expect(got.error).toMatchObject({ code: -32003, data: { reason: 'user.timeout' } });
    expect(signals[0]!.aborted).toBe(true);
    await p.close();
    await t.policy.close();
  });

  it('a sample that outlasts deadlineMs is policy.deadline (retryable), and its signal aborts', async () => {
    const signals: AbortSignal[] = [];
    const t = lab({
      client: { deadlineMs: 15 },
      sample: (_p, { signal }) => (signals.push(signal), new Promise(() => {}))
    });
    const p = await pair(t.policy);
    const got = await outcome(p.server.createMessage(ask()));
    expect(got.error).toMatchObject({
      code: -32003,
      data: { reason: 'policy.deadline', retryable: true }
    });
    await until(() => signals[0]?.aborted === true, 'the model call was aborted');
    await p.close();
    await t.policy.close();
  });

  it("with refusalAs: 'error' a call over the cap is a -32003 error carrying the decision", async () => {
    const policy = defaultPolicy();
    policy.defaults.perCallCap = { amount: '0.001', currency: 'USD' };
    const t = lab({ policy, client: { refusalAs: 'error' } });
    const p = await pair(t.policy);
    const got = await outcome(p.server.createMessage(ask('hi', { maxTokens: 1000 })));
    expect(got.error?.code).toBe(-32003);
    expect(got.error?.data).toMatchObject({
      retryable: false,
      budget: { decision: { limitSource: 'host_policy' } }
    });
    await p.close();
    await t.policy.close();
  });

  it('params the lab refuses are -32602 naming the path, before any dialog', async () => {
    let consents = 0;
    const t = lab({ consent: () => (consents++, 'allow') });
    const conn = t.policy.connect('everything');
    const lone = { params: ask('\ud800') };
    await expect(conn.handle(lone)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining(
        '$.params.messages[0].content.text: contains a lone surrogate'
      )
    });
    await expect(conn.handle({ params: ask('hi', { maxTokens: -1 }) })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('$.params.maxTokens')
    });
    expect(consents).toBe(0);
    conn.close();
    await t.policy.close();
  });
});
