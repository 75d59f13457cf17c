/**
 * The handler behind the MCP SDK 2.x (`@modelcontextprotocol/client` and `/server` 2.4): the
 * handler registered by method name, `client.setRequestHandler('sampling/createMessage',
 * conn.handle)`, with the request's id and signal in `ctx.mcpReq`. What the 2.x server's
 * `createMessage` receives is what these tests assert, as the 1.x ones do (handler.spec.ts).
 */
import { Client, InMemoryTransport as ClientMemory } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { defaultPolicy, type Policy } from '../machine/policy';
import type { HandlerAuditRecord } from './audit';
import { createSamplingPolicy, type SamplingPolicy, type SamplingPolicyOptions } from './handler';
import type { ConsentAnswer } from './sources';
import { deferred, outcome, until } from './sdk-pair.testing';

const ask = (text = 'Summarise 2.3.', maxTokens = 200) => ({
  messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }],
  maxTokens
});

async function pair2(lab: SamplingPolicy, name = 'everything') {
  const [clientSide, serverSide] = ClientMemory.createLinkedPair();
  const server = new Server({ name, version: '1.0.0' }, { capabilities: {} });
  const client = new Client(
    { name: 'policy-lab-test-client', version: '1.0.0' },
    { capabilities: { sampling: {} } }
  );
  const conn = lab.connect(name);
  let handled = 0;
  client.setRequestHandler('sampling/createMessage', (request, ctx) => {
    handled++;
    return conn.handle(request, ctx) as never;
  });
  await Promise.all([client.connect(clientSide), server.connect(serverSide)]);
  client.onclose = () => conn.close();
  return { server, client, conn, handled: () => handled, close: () => client.close() };
}

function lab(over: Partial<SamplingPolicyOptions> = {}) {
  const t = {
    consents: 0,
    samples: 0,
    records: [] as HandlerAuditRecord[],
    policy: undefined as unknown as SamplingPolicy
  };
  t.policy = createSamplingPolicy({
    policy: defaultPolicy(),
    consent: () => (t.consents++, 'allow'),
    sample: (_params, { model }) => {
      t.samples++;
      return {
        content: { type: 'text', text: `answer ${t.samples}` },
        model,
        usage: { outputTokens: 5 }
      };
    },
    audit: (r) => void t.records.push(r),
    ...over
  });
  return t;
}

describe('handler behind the MCP SDK 2.x', () => {
  it('N identical calls after a denial: one consent, no sample, N -32003 errors with data at the server', async () => {
    const N = 5;
    const dialog = deferred<ConsentAnswer>();
    const t = lab({ consent: () => (t.consents++, dialog.promise) });
    const p = await pair2(t.policy);
    const calls = Array.from({ length: N }, () => outcome(p.server.createMessage(ask())));
    await until(() => p.handled() === N, 'all requests reached the handler');
    dialog.resolve('deny');
    const got = [...(await Promise.all(calls)), await outcome(p.server.createMessage(ask()))];
    expect(t.consents).toBe(1);
    expect(t.samples).toBe(0);
    expect(got).toHaveLength(N + 1);
    for (const g of got) {
      expect(g.error?.code).toBe(-32003);
      expect(g.error?.message).toContain("Sampling denied by the user for server 'everything'");
      expect(g.error?.data).toMatchObject({
        reason: 'user.denied',
        server: 'everything',
        retryable: false
      });
    }
    // The request ids the 2.x client passed in ctx.mcpReq are the audit's.
    expect(new Set(t.records.map((r) => r.requestId)).size).toBe(N + 1);
    expect(t.records.every((r) => typeof r.requestId === 'number')).toBe(true);
    await p.close();
    await t.policy.close();
  });

  it('an allowed call returns the sampled text and the policy model', async () => {
    const t = lab();
    const p = await pair2(t.policy);
    const got = await outcome(p.server.createMessage(ask()));
    expect(got.result).toMatchObject({
      role: 'assistant',
      content: { type: 'text', text: 'answer 1' },
      model: 'example-model-v2'
    });
    await p.close();
    await t.policy.close();
  });

  it('a tiny per-call cap: budget_exceeded reaches the server as a result', async () => {
    const policy: Policy = defaultPolicy();
    policy.defaults.perCallCap = { amount: '0.001', currency: 'USD' };
    const t = lab({ policy });
    const p = await pair2(t.policy);
    const got = await outcome(p.server.createMessage(ask('Summarise 2.3.', 1000)));
    expect(got.error).toBeUndefined();
    expect(got.result).toMatchObject({
      stopReason: 'budget_exceeded',
      content: { type: 'text', text: '' }
    });
    expect(got.result!.budget).toMatchObject({
      decision: {
        limitApplied: { amount: '0.0010', currency: 'USD' },
        estimatedCost: { amount: '0.015012', currency: 'USD' }
      }
    });
    expect(t.samples).toBe(0);
    await p.close();
    await t.policy.close();
  });

  it('shadow mode: every call served, the log says which would have been denied', async () => {
    const t = lab({
      mode: 'shadow',
      consent: (r) => (t.consents++, JSON.stringify(r.params).includes('secret') ? 'deny' : 'allow')
    });
    const p = await pair2(t.policy);
    const got = [
      await outcome(p.server.createMessage(ask('release notes'))),
      await outcome(p.server.createMessage(ask('the secret plan'))),
      await outcome(p.server.createMessage(ask('the secret plan')))
    ];
    for (const g of got) {
      expect(g.error).toBeUndefined();
      expect(g.result?.content).toMatchObject({ type: 'text' });
    }
    expect(t.records.map((r) => [r.outcome, r.reason, r.shadow])).toEqual([
      ['allowed', null, { outcome: 'allowed', reason: null }],
      ['denied', 'user.denied', { outcome: 'denied', reason: 'user.denied' }],
      ['denied', 'user.denied', { outcome: 'denied', reason: 'user.denied' }]
    ]);
    expect(t.consents).toBe(2);
    await p.close();
    await t.policy.close();
  });
});
