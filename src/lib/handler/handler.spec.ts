/**
 * The handler behind a real MCP SDK 1.x client, asked by a real SDK server: what the server's
 * `createMessage` receives for each outcome, how many dialogs and model calls it took, and what
 * the audit says.
 */
import { describe, expect, it } from 'vitest';
import { defaultPolicy, type Policy } from '../machine/policy';
import type { SamplingParams } from '../machine/types';
import { createSamplingPolicy, type SamplingPolicyOptions } from './handler';
import type { HandlerAuditRecord } from './audit';
import type { ConsentAnswer, ConsentRequest, SampleResult } from './sources';
import { memoryStore } from './stores';
import { ask, deferred, outcome, pair, until } from './sdk-pair.testing';

function lab(over: Partial<SamplingPolicyOptions> = {}, answer: ConsentAnswer = 'allow') {
  const consents: ConsentRequest[] = [];
  const samples: { params: SamplingParams; model: string }[] = [];
  const records: HandlerAuditRecord[] = [];
  const policy = createSamplingPolicy({
    policy: defaultPolicy(),
    consent: (r) => {
      consents.push(r);
      return answer;
    },
    sample: (params, { model }): SampleResult => {
      samples.push({ params, model });
      return {
        content: { type: 'text', text: `answer ${samples.length}` },
        model,
        stopReason: 'endTurn',
        usage: { inputTokens: 4, outputTokens: 7 }
      };
    },
    audit: (r) => void records.push(r),
    ...over
  });
  return { policy, consents, samples, records };
}

describe('handler behind the MCP SDK 1.x', () => {
  it('N concurrent identical requests after a denial: one dialog, no model call, N -32003 errors', async () => {
    const N = 6;
    const dialog = deferred<ConsentAnswer>();
    const t = lab({
      consent: (r) => {
        t.consents.push(r);
        return dialog.promise;
      }
    });
    const p = await pair(t.policy);
    const calls = Array.from({ length: N }, () => outcome(p.server.createMessage(ask())));
    // Every request is at the handler before the person answers: the others joined the first.
    await until(() => p.handled() === N, 'all requests reached the handler');
    dialog.resolve('deny');
    const got = await Promise.all(calls);
    expect(t.consents).toHaveLength(1);
    expect(t.samples).toHaveLength(0);
    for (const g of got) {
      expect(g.error?.code).toBe(-32003);
      expect(g.error?.data).toMatchObject({
        reason: 'user.denied',
        server: 'everything',
        retryable: false
      });
    }
    expect(t.records).toHaveLength(N);
    expect(t.records.filter((r) => r.consentShown)).toHaveLength(1);
    expect(t.records.every((r) => r.outcome === 'denied' && r.reason === 'user.denied')).toBe(true);
    // A later retry of the same request is answered from the store: still one dialog.
    const again = await outcome(p.server.createMessage(ask()));
    expect(again.error?.data?.reason).toBe('user.denied');
    expect(t.consents).toHaveLength(1);
    await p.close();
    await t.policy.close();
  });

  it('an allowed request returns the sampled text, billed at the tokens the model reported', async () => {
    const t = lab();
    const p = await pair(t.policy);
    const got = await outcome(p.server.createMessage(ask()));
    expect(got.result).toMatchObject({
      role: 'assistant',
      content: { type: 'text', text: 'answer 1' },
      model: 'example-model-v2',
      stopReason: 'endTurn'
    });
    expect(t.samples).toEqual([
      { params: expect.objectContaining(ask()), model: 'example-model-v2' }
    ]);
    // The dialog's estimate: 4 input tokens at $3/Mtok and 200 at $15/Mtok = 3,012 µ$.
    expect(t.consents[0]!.estimate).toEqual({ amount: '0.003012', currency: 'USD' });
    expect(t.consents[0]!.identity).toMatch(/^everything:[0-9a-f]{32}$/);
    const r = t.records[0]!;
    expect(r).toMatchObject({ outcome: 'allowed', consent: 'approved', tokensOut: 7 });
    // 4 × 3 + 7 × 15 = 117 µ$.
    expect(r.cost).toBe('0.000117');
    await p.close();
    await t.policy.close();
  });

  it('a tiny per-call cap reaches the server as a budget_exceeded result with the decision', async () => {
    const policy: Policy = defaultPolicy();
    policy.defaults.perCallCap = { amount: '0.001', currency: 'USD' };
    const t = lab({ policy });
    const p = await pair(t.policy);
    const got = await outcome(p.server.createMessage(ask('Summarise 2.3.', { maxTokens: 1000 })));
    expect(got.error).toBeUndefined();
    expect(got.result).toMatchObject({
      stopReason: 'budget_exceeded',
      content: { type: 'text', text: '' }
    });
    // 4 input tokens at $3/Mtok and 1,000 output at $15/Mtok: 15,012 µ$ against a 1,000 µ$ cap.
    expect(got.result!.budget).toMatchObject({
      decision: {
        limitApplied: { amount: '0.0010', currency: 'USD' },
        limitSource: 'host_policy',
        estimatedCost: { amount: '0.015012', currency: 'USD' }
      }
    });
    expect(t.samples).toHaveLength(0);
    expect(t.records[0]).toMatchObject({ outcome: 'budget_exceeded', cost: '0.0000' });
    await p.close();
    await t.policy.close();
  });

  it('a sample that throws reaches the server as -32603, with no reason and no budget', async () => {
    const t = lab({
      sample: () => {
        throw new Error('provider unreachable');
      }
    });
    const p = await pair(t.policy);
    const got = await outcome(p.server.createMessage(ask()));
    expect(got.error?.code).toBe(-32603);
    expect(got.error?.data?.reason).toBeUndefined();
    expect(t.records[0]).toMatchObject({ outcome: 'provider_error', reason: null });
    await p.close();
    await t.policy.close();
  });
});

describe('cancellation', () => {
  it("the server's request timeout cancels the run: the dialog's signal aborts, the run is recorded", async () => {
    const t = lab({
      consent: (r) => {
        t.consents.push(r);
        return new Promise<ConsentAnswer>(() => {});
      }
    });
    const p = await pair(t.policy);
    // SDK 1.32 ignores a cancellation of request id 0 (`if (!requestId) return`): spend id 0.
    await p.server.ping();
    const got = await outcome(p.server.createMessage(ask(), { timeout: 20 }));
    expect(got.error?.code).toBe(-32001);
    await until(() => t.records.length === 1, 'the cancelled run was recorded');
    expect(t.consents[0]!.signal.aborted).toBe(true);
    expect(t.samples).toHaveLength(0);
    await p.close();
    await t.policy.close();
  });

  it('a signal that aborts in the turn the request arrived in still cancels it (the listener comes a turn later)', async () => {
    const t = lab({
      consent: (r) => {
        t.consents.push(r);
        return new Promise<ConsentAnswer>(() => {});
      }
    });
    const conn = t.policy.connect('everything');
    const ctl = new AbortController();
    const answered = outcome(conn.handle({ params: ask() }, { requestId: 7, signal: ctl.signal }));
    ctl.abort();
    const got = await answered;
    expect(got.error?.code).toBe(-32603);
    expect(t.consents[0]!.signal.aborted).toBe(true);
    expect(t.records.map((r) => r.outcome)).toEqual(['provider_error']);
    expect(t.samples).toHaveLength(0);
    await t.policy.close();
  });

  it("an answered request leaves no listener on the server's signal (a long-lived signal holds nothing of it)", async () => {
    const dialog = deferred<ConsentAnswer>();
    const t = lab({
      consent: (r) => {
        t.consents.push(r);
        return dialog.promise;
      }
    });
    const conn = t.policy.connect('everything');
    // The signal's listeners, counted through its own methods.
    const signal = new AbortController().signal;
    const on = new Set<unknown>();
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (type: string, l: never, o?: never) => {
      on.add(l);
      add(type, l, o);
    };
    signal.removeEventListener = (type: string, l: never, o?: never) => {
      on.delete(l);
      remove(type, l, o);
    };
    const answered = outcome(conn.handle({ params: ask() }, { requestId: 7, signal }));
    // Still waiting on the dialog a turn later: it listens for a cancellation.
    await new Promise((r) => setImmediate(r));
    await until(() => t.consents.length === 1, 'the dialog opened');
    expect(on.size).toBe(1);
    dialog.resolve('allow');
    expect((await answered).result?.content).toEqual({ type: 'text', text: 'answer 1' });
    expect(on.size).toBe(0);
    // One answered within its turn never listens.
    const quick = lab();
    const c2 = quick.policy.connect('everything');
    await c2.handle({ params: ask('Other.') }, { requestId: 8, signal });
    await new Promise((r) => setImmediate(r));
    expect(on.size).toBe(0);
    await t.policy.close();
    await quick.policy.close();
  });

  it('closing the connection ends what is running on it', async () => {
    const t = lab({
      consent: (r) => {
        t.consents.push(r);
        return new Promise<ConsentAnswer>(() => {});
      }
    });
    const p = await pair(t.policy);
    void outcome(p.server.createMessage(ask()));
    await until(() => t.consents.length === 1, 'the dialog opened');
    p.conn.close();
    expect(t.consents[0]!.signal.aborted).toBe(true);
    await until(() => t.records.length === 1, 'the closed run was recorded');
    await expect(p.conn.handle({ params: ask() })).rejects.toMatchObject({ code: -32603 });
    await p.close();
    await t.policy.close();
  });
});

describe('stores', () => {
  it('memoryStore() forgets a denial when the connection closes: the reconnected server is asked about again', async () => {
    const t = lab({ store: memoryStore() }, 'deny');
    const first = await pair(t.policy);
    expect((await outcome(first.server.createMessage(ask()))).error?.code).toBe(-32003);
    await first.close();
    const second = await pair(t.policy);
    expect((await outcome(second.server.createMessage(ask()))).error?.code).toBe(-32003);
    expect(t.consents).toHaveLength(2);
    expect(t.consents[0]!.connection).not.toBe(t.consents[1]!.connection);
    await second.close();
    await t.policy.close();
  });

  it("memoryStore({ scope: 'process' }) keeps it across connections: replayed, no second dialog", async () => {
    const t = lab({ store: memoryStore({ scope: 'process' }) }, 'deny');
    const first = await pair(t.policy);
    await outcome(first.server.createMessage(ask()));
    await first.close();
    const second = await pair(t.policy);
    const got = await outcome(second.server.createMessage(ask()));
    expect(got.error).toMatchObject({ code: -32003, data: { reason: 'user.denied' } });
    expect(t.consents).toHaveLength(1);
    expect(t.records[1]).toMatchObject({ replayed: true, consentShown: false, represented: 1 });
    await second.close();
    await t.policy.close();
  });
});
