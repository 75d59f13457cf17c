/**
 * Shadow mode, the audit file and option validation: a candidate policy on real traffic (every
 * call served, the log says what the policy would have done), and a mistake in the options named
 * by its JSON path before anything runs.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../machine/policy';
import { parseAuditJsonl } from '../store/audit-export';
import type { HandlerAuditRecord } from './audit';
import { createSamplingPolicy, type SamplingPolicyOptions } from './handler';
import { memoryStore } from './stores';
import { ask, outcome, pair } from './sdk-pair.testing';

const base = (over: Partial<SamplingPolicyOptions> = {}): SamplingPolicyOptions => ({
  policy: defaultPolicy(),
  consent: () => 'allow',
  sample: (_p, { model }) => ({ content: { type: 'text', text: 'served' }, model }),
  ...over
});

describe('shadow mode', () => {
  it('serves every call; the audit says which the policy would have refused, and why', async () => {
    const policy = defaultPolicy();
    policy.defaults.consent = 'allow';
    policy.defaults.rateLimit = { requests: 2, windowMs: 60_000 };
    const records: HandlerAuditRecord[] = [];
    let samples = 0;
    const lab = createSamplingPolicy(
      base({
        policy,
        mode: 'shadow',
        audit: (r) => void records.push(r),
        sample: (_p, { model }) => ({
          content: { type: 'text', text: `served ${++samples}` },
          model
        })
      })
    );
    const p = await pair(lab);
    const got = [];
    for (const text of ['one', 'two', 'three', 'four'])
      got.push(await outcome(p.server.createMessage(ask(text))));
    expect(got.map((g) => g.error)).toEqual([undefined, undefined, undefined, undefined]);
    expect(got.map((g) => (g.result?.content as { text: string }).text)).toEqual([
      'served 1',
      'served 2',
      'served 3',
      'served 4'
    ]);
    expect(records.map((r) => r.shadow)).toEqual([
      { outcome: 'allowed', reason: null },
      { outcome: 'allowed', reason: null },
      { outcome: 'denied', reason: 'policy.rate_limit' },
      { outcome: 'denied', reason: 'policy.rate_limit' }
    ]);
    await p.close();
    await lab.close();
  });

  it('serves a call over the per-call cap, and a call the person denied; both logged as refused', async () => {
    const policy = defaultPolicy();
    policy.defaults.perCallCap = { amount: '0.001', currency: 'USD' };
    const records: HandlerAuditRecord[] = [];
    let consents = 0;
    const lab = createSamplingPolicy(
      base({
        policy,
        mode: 'shadow',
        consent: () => (++consents, 'deny'),
        audit: (r) => void records.push(r)
      })
    );
    const p = await pair(lab);
    const big = await outcome(p.server.createMessage(ask('big', { maxTokens: 1000 })));
    const small = await outcome(p.server.createMessage(ask('small', { maxTokens: 20 })));
    expect(big.result).toMatchObject({ content: { text: 'served' }, stopReason: 'endTurn' });
    expect(small.result).toMatchObject({ content: { text: 'served' } });
    expect(consents).toBe(1);
    expect(records.map((r) => r.shadow)).toEqual([
      { outcome: 'budget_exceeded', reason: null },
      { outcome: 'denied', reason: 'user.denied' }
    ]);
    await p.close();
    await lab.close();
  });
});

describe('the audit file', () => {
  it('is JSONL the lab reads back, one record per decision, in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'handler-audit-'));
    try {
      const file = join(dir, 'audit.jsonl');
      const lab = createSamplingPolicy(base({ audit: file, consent: () => 'deny' }));
      const p = await pair(lab);
      await outcome(p.server.createMessage(ask()));
      await outcome(p.server.createMessage(ask()));
      await p.close();
      await lab.close();
      const parsed = parseAuditJsonl(await readFile(file, 'utf8'));
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) return;
      expect(parsed.records.map((r) => [r.seq, r.outcome, r.reason, r.replayed])).toEqual([
        [1, 'denied', 'user.denied', false],
        [2, 'denied', 'user.denied', true]
      ]);
      expect(parsed.records[0]!.connection).toBe('everything#1');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('holds concurrent decisions in their order, each once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'handler-audit-'));
    try {
      const file = join(dir, 'audit.jsonl');
      const lab = createSamplingPolicy(base({ audit: file }));
      const p = await pair(lab);
      const outs = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          outcome(p.server.createMessage(ask(`Summarise ${i}.`)))
        )
      );
      expect(outs.every((o) => o.result)).toBe(true);
      await p.close();
      await lab.close();
      const parsed = parseAuditJsonl(await readFile(file, 'utf8'));
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) return;
      expect(parsed.records.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a record that cannot be written fails its request closed (-32603), never a silent answer', async () => {
    const lab = createSamplingPolicy(
      base({
        audit: () => {
          throw new Error('disk full');
        }
      })
    );
    const p = await pair(lab);
    const got = await outcome(p.server.createMessage(ask()));
    expect(got.error?.code).toBe(-32603);
    expect(got.error?.message).toContain('disk full');
    await p.close();
    await lab.close();
  });
});

describe('the audit callback', () => {
  it('gets the records in order, one at a time, and a record it rejects fails only its own request', async () => {
    const got: number[] = [];
    let writing = 0;
    let most = 0;
    const lab = createSamplingPolicy(
      base({
        audit: async (r) => {
          writing++;
          most = Math.max(most, writing);
          await new Promise((resolve) => setTimeout(resolve, 1));
          writing--;
          got.push(r.seq);
          if (r.seq === 3) throw new Error('disk full');
        }
      })
    );
    const p = await pair(lab);
    const outs = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => outcome(p.server.createMessage(ask(`Summarise ${i}.`))))
    );
    await lab.close();
    expect(got).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(1);
    const failedClosed = outs.filter((o) => o.error);
    expect(failedClosed).toHaveLength(1);
    expect(failedClosed[0]!.error?.code).toBe(-32603);
    expect(failedClosed[0]!.error?.message).toContain('disk full');
    expect(outs.filter((o) => o.result)).toHaveLength(4);
    await p.close();
  });
});

describe('options', () => {
  const fails = (over: Partial<SamplingPolicyOptions>) => () => createSamplingPolicy(base(over));

  it('an invalid policy throws, naming the JSON path', () => {
    const policy = defaultPolicy() as unknown as { defaults: { rateLimit: unknown } };
    policy.defaults.rateLimit = { requests: -1, windowMs: 60_000 };
    expect(fails({ policy })).toThrow(/invalid policy: \$\.defaults\.rateLimit\.requests: /);
    expect(fails({ policy: '{"version": 1,' })).toThrow(/invalid policy: \$: JSON syntax error/);
  });

  it('an invalid client configuration throws, naming the JSON path', () => {
    expect(fails({ client: { store: 'disk' } })).toThrow(/invalid client: \$\.store: /);
    expect(fails({ client: { consentTimeoutMs: -5 } })).toThrow(/\$\.consentTimeoutMs: /);
    expect(fails({ client: { silence: true } })).toThrow(/\$\.silence: a teaching switch/);
    expect(fails({ client: { store: 'durable' }, store: memoryStore() })).toThrow(
      /\$\.store: 'durable', but the store given is connection-scoped/
    );
  });

  it('invalid rate cards, a missing callback or mode throw, naming the place', () => {
    expect(fails({ rateCards: [{ model: 'm' }] })).toThrow(/invalid rateCards: \$\[0\]\.version/);
    expect(fails({ sample: undefined as never })).toThrow(/\$\.sample: not a function/);
    expect(fails({ mode: 'audit' as never })).toThrow(/\$\.mode: 'enforce' or 'shadow'/);
  });

  it("client.store 'durable' without a store gives the process-wide memory store", async () => {
    let consents = 0;
    const lab = createSamplingPolicy(
      base({ client: { store: 'durable' }, consent: () => (++consents, 'deny') })
    );
    const a = await pair(lab);
    await outcome(a.server.createMessage(ask()));
    await a.close();
    const b = await pair(lab);
    expect((await outcome(b.server.createMessage(ask()))).error?.code).toBe(-32003);
    expect(consents).toBe(1);
    await b.close();
    await lab.close();
  });
});
