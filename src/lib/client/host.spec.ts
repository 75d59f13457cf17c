/**
 * The seed's property, asserted directly on the client host with both store scopes:
 * the same request presented twice gives one consent prompt, zero provider calls on the denied
 * path, and `represented == 1`; with connection scope and a reconnect in between, the second
 * presentation is evaluated afresh — the hole the playground teaches.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { AuthOutput, ConsentInput } from '../machine/authorize';
import { resolveClientConfig, type ClientConfigInput } from '../machine/config';
import { requestIdentity } from '../machine/identity';
import { defaultPolicy, type Policy } from '../machine/policy';
import type { SamplingParams } from '../machine/types';
import { MemoryAuditLog } from '../store/audit-log';
import { CachedDurableStore } from '../store/cached-durable-store';
import { ConnectionDecisionStore } from '../store/connection-store';
import type { DecisionStore } from '../store/decision-store';
import { ClientHost } from './host';
// The host's default executor runs each request on an XState actor.
import './actor-executor';
import { VirtualClock } from '../sim/world/clock';
import { cardsByModel, createProvider, DEFAULT_PROVIDER } from '../sim/actors/provider';
import { Rng } from '../sim/world/rng';

const P = 'You summarise release notes.';
const M = [{ role: 'user' as const, content: { type: 'text' as const, text: 'Summarise 2.3.' } }];
const params = (over: Partial<SamplingParams> = {}): SamplingParams => ({
  systemPrompt: P,
  messages: M,
  includeContext: 'allServers',
  maxTokens: 200,
  ...over
});

interface Rig {
  host: ClientHost;
  clock: VirtualClock;
  prompts: ConsentInput[];
  providerCalls: () => number;
  send: (p: SamplingParams, connection?: string, id?: number) => Promise<AuthOutput>;
}

function rig(
  store: DecisionStore,
  opts: { answer?: boolean; policy?: Policy; config?: ClientConfigInput } = {}
): Rig {
  const clock = new VirtualClock(Date.UTC(2026, 2, 10, 9));
  const prompts: ConsentInput[] = [];
  const provider = createProvider(DEFAULT_PROVIDER, clock, new Rng(1));
  const host = new ClientHost({
    config: resolveClientConfig({ store: store.scope, ...opts.config }),
    policy: opts.policy ?? defaultPolicy(),
    cards: cardsByModel(DEFAULT_PROVIDER.cards),
    store,
    audit: new MemoryAuditLog(),
    clock,
    consent: (input, answer) => {
      prompts.push(input);
      const t = clock.setTimeout(() => answer(opts.answer ?? false), 2_000);
      return () => clock.clearTimeout(t);
    },
    provider: provider.source
  });
  let nextId = 1;
  const send = async (p: SamplingParams, connection = 'release-notes#1', id = nextId++) => {
    let out: AuthOutput | undefined;
    host.handle(
      { id, server: 'release-notes', connection, params: p, receivedAt: clock.now() },
      (o) => {
        out = o;
      }
    );
    // Let IndexedDB promises settle and the virtual clock run, until the machine answers.
    for (let i = 0; i < 200 && !out; i++) {
      await new Promise((r) => setImmediate(r));
      clock.runUntil(clock.now() + 1_000);
    }
    if (!out) throw new Error('no frame');
    return out;
  };
  return { host, clock, prompts, providerCalls: () => provider.stats.calls, send };
}

const scopes: [string, () => Promise<DecisionStore>][] = [
  ['connection-scoped', async () => new ConnectionDecisionStore()],
  [
    'durable',
    async () => {
      const r = await CachedDurableStore.open({ dbName: `client-spec-${Math.random()}` });
      if (!r.ok) throw new Error(r.error);
      return r.store;
    }
  ]
];

describe.each(scopes)('the seed property with a %s store', (_name, open) => {
  it('asks once, calls no model, and replays the denial with represented == 1', async () => {
    const store = await open();
    const r = rig(store, { answer: false });
    const first = await r.send(params());
    const second = await r.send(params());
    expect(first.frame && 'error' in first.frame && first.frame.error.data).toMatchObject({
      reason: 'user.denied',
      server: 'release-notes',
      retryable: false
    });
    expect(second.frame && 'error' in second.frame ? second.frame.error.data : null).toEqual(
      first.frame && 'error' in first.frame ? first.frame.error.data : undefined
    );
    expect(r.prompts).toHaveLength(1);
    expect(r.providerCalls()).toBe(0);
    const identity = requestIdentity('release-notes', params());
    const entries = await store.entries();
    expect(entries.find((e) => e.identity === identity)?.represented).toBe(1);
    expect(second.audit).toMatchObject({
      replayed: true,
      represented: 1,
      consentShown: false,
      cost: '0.0000'
    });
  });

  it('calls the model again on the replay of an allowed decision, without asking again', async () => {
    const store = await open();
    const r = rig(store, { answer: true });
    const first = await r.send(params());
    const second = await r.send(params());
    expect(first.audit.outcome).toBe('trimmed');
    expect(second.audit.outcome).toBe('trimmed');
    expect(r.prompts).toHaveLength(1);
    expect(r.providerCalls()).toBe(2);
    // A completion is never replayed: the store holds only verdicts.
    for (const e of await store.entries()) expect(Object.keys(e)).not.toContain('text');
  });
});

describe('reconnect', () => {
  it('connection scope: a reconnect between two presentations gets a fresh evaluation and a second prompt', async () => {
    const store = new ConnectionDecisionStore();
    const r = rig(store, { answer: false });
    await r.send(params(), 'release-notes#1');
    await r.host.closeConnection('release-notes', 'release-notes#1');
    const second = await r.send(params(), 'release-notes#2');
    expect(r.prompts).toHaveLength(2);
    expect(second.audit.replayed).toBe(false);
  });

  it('durable scope: the same reconnect is answered from the store', async () => {
    const opened = await CachedDurableStore.open({
      dbName: `client-spec-reconnect-${Math.random()}`
    });
    if (!opened.ok) throw new Error(opened.error);
    const r = rig(opened.store, { answer: false });
    await r.send(params(), 'release-notes#1');
    await r.host.closeConnection('release-notes', 'release-notes#1');
    const second = await r.send(params(), 'release-notes#2');
    expect(r.prompts).toHaveLength(1);
    expect(second.audit.replayed).toBe(true);
  });
});

describe('the host', () => {
  it('commits the decision before the frame is sent', async () => {
    const store = new ConnectionDecisionStore();
    const order: string[] = [];
    const commit = store.commit.bind(store);
    store.commit = (c, d) => {
      order.push('commit');
      return commit(c, d);
    };
    const r = rig(store, { answer: false });
    r.host.handle(
      {
        id: 1,
        server: 'release-notes',
        connection: 'c',
        params: params(),
        receivedAt: r.clock.now()
      },
      () => order.push('frame')
    );
    r.clock.runUntil(r.clock.now() + 10_000);
    expect(order).toEqual(['commit', 'frame']);
  });

  it('a policy edit to one server invalidates only its decisions', async () => {
    const store = new ConnectionDecisionStore();
    const r = rig(store, { answer: false });
    await r.send(params());
    const edited = defaultPolicy();
    edited.servers['other'] = { consent: 'allow' };
    expect(r.host.setPolicySync(edited, ['release-notes', 'other'])).toEqual({ other: 0 });
    const edited2 = defaultPolicy();
    edited2.servers['release-notes'] = { consent: 'allow' };
    expect(r.host.setPolicySync(edited2, ['release-notes'])).toEqual({ 'release-notes': 1 });
    const after = await r.send(params());
    expect(after.audit.replayed).toBe(false);
    expect(after.audit.outcome).toBe('trimmed');
  });

  it('a policy edit on a store that answers later: the same counts, once they have landed', async () => {
    const store = new ConnectionDecisionStore();
    const order: string[] = [];
    const later: DecisionStore = Object.assign(Object.create(store) as DecisionStore, {
      invalidateServer: (server: string) => {
        order.push(`start ${server}`);
        return Promise.resolve(store.invalidateServer(server)).then((n) => {
          order.push(`end ${server}`);
          return n;
        });
      }
    });
    const r = rig(later, { answer: false });
    await r.send(params());
    const edited = defaultPolicy();
    edited.servers['release-notes'] = { consent: 'allow' };
    edited.servers['other'] = { consent: 'allow' };
    const out = r.host.setPolicy(edited, ['release-notes', 'other']);
    expect(out).toBeInstanceOf(Promise);
    // The new policy is in force at once; the counts come when the store has answered.
    expect(r.host.policy).toBe(edited);
    expect(await out).toEqual({ 'release-notes': 1, other: 0 });
    // One after another, as the store is asked.
    expect(order).toEqual(['start release-notes', 'end release-notes', 'start other', 'end other']);
    // The simulation's variant needs the counts now: it says why it cannot have them.
    expect(() => r.host.setPolicySync(defaultPolicy(), ['release-notes'])).toThrow(/answers later/);
  });

  it('silence drops the denial frame and records the silence', async () => {
    const r = rig(new ConnectionDecisionStore(), { answer: false, config: { silence: true } });
    const out = await r.send(params());
    expect(out.frame).toBeNull();
    expect(out.audit).toMatchObject({ outcome: 'denied', silenced: true, reason: 'user.denied' });
  });

  it('times out a consent dialog nobody answers as a denial', async () => {
    const clockStore = new ConnectionDecisionStore();
    const r = rig(clockStore, { config: { consentTimeoutMs: 1_000 } });
    const out = await r.send(params());
    expect(out.audit).toMatchObject({
      outcome: 'denied',
      reason: 'user.timeout',
      consent: 'timeout'
    });
  });
});

describe('volume and spend bookkeeping', () => {
  const allowAll = (over: Partial<Policy['defaults']>): Policy => {
    const p = defaultPolicy();
    p.defaults = {
      ...p.defaults,
      consent: 'allow',
      maxContext: 'allServers',
      perCallCap: null,
      ...over
    };
    p.servers = {};
    return p;
  };

  it('a stored transient denial expires when its retryAfterMs says to come back', async () => {
    const r = rig(new ConnectionDecisionStore(), {
      policy: allowAll({ rateLimit: { requests: 1, windowMs: 30_000 } })
    });
    await r.send(params({ systemPrompt: 'first' }));
    const denied = await r.send(params());
    const data =
      denied.frame && 'error' in denied.frame
        ? (denied.frame.error.data as { retryAfterMs: number })
        : null;
    expect(denied.audit.reason).toBe('policy.rate_limit');
    expect(data!.retryAfterMs).toBeGreaterThan(0);
    const stored = (await r.host.store.entries()).find((e) => e.reason === 'policy.rate_limit')!;
    // The default TTL is 60 s, the window 30 s: the entry expires with the hint, not the TTL.
    expect(stored.expiresAt).toBe(stored.decidedAt + data!.retryAfterMs);
    r.clock.runUntil(stored.expiresAt!);
    const retried = await r.send(params());
    expect(retried.audit.replayed).toBe(false);
  });

  it('two calls evaluated while both run cannot overdraw the budget window together', async () => {
    // Each call is estimated at 24 input + 200 output tokens ≈ 0.0031; the window holds 0.0050.
    const r = rig(new ConnectionDecisionStore(), {
      policy: allowAll({ budget: { amount: '0.0050', currency: 'USD', windowMs: 86_400_000 } })
    });
    const outs: AuthOutput[] = [];
    for (const id of [1, 2]) {
      r.host.handle(
        {
          id,
          server: 'release-notes',
          connection: 'c',
          params: params({ systemPrompt: `p${id}` }),
          receivedAt: r.clock.now()
        },
        (o) => outs.push(o)
      );
    }
    r.clock.runUntil(r.clock.now() + 60_000);
    // The second finds 0.0019 left: enough for its input, not its estimate, so it is a cost
    // refusal against the remainder (which a server can shrink to), not "exhausted until reset".
    expect(outs.map((o) => o.audit.outcome).sort()).toEqual(['allowed', 'budget_exceeded']);
    const refused = outs.find((o) => o.audit.outcome === 'budget_exceeded')!;
    expect(refused.audit.budgetDecision?.limitSource).toBe('budget_window');
    expect(r.host.spentMicros('release-notes')).toBeLessThanOrEqual(5_000);
  });

  it('a transport failure before the provider answers costs nothing and carries no budget decision', async () => {
    const clock = new VirtualClock(0);
    const provider = createProvider(
      { ...DEFAULT_PROVIDER, failures: [{ server: 'release-notes', kind: 'transport' }] },
      clock,
      new Rng(1)
    );
    const host = new ClientHost({
      config: resolveClientConfig({ store: 'connection' }),
      policy: allowAll({}),
      cards: cardsByModel(DEFAULT_PROVIDER.cards),
      store: new ConnectionDecisionStore(),
      audit: new MemoryAuditLog(),
      clock,
      consent: () => {},
      provider: provider.source
    });
    let out: AuthOutput | undefined;
    host.handle(
      { id: 1, server: 'release-notes', connection: 'c', params: params(), receivedAt: 0 },
      (o) => (out = o)
    );
    clock.runUntil(60_000);
    expect(out!.audit).toMatchObject({
      outcome: 'transport_error',
      cost: '0.0000',
      budgetDecision: null
    });
    expect(out!.frame && 'error' in out!.frame && out!.frame.error).toMatchObject({ code: -32001 });
    expect(out!.frame && 'error' in out!.frame && out!.frame.error.data).toBeUndefined();
  });
});
