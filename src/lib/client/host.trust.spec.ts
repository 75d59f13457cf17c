/**
 * The numbers a designer reads at the edges of budgets, approvals and replays (issue #18): each
 * case here was seen wrong on a real run, and each test failed on the code before its fix.
 */
import { describe, expect, it } from 'vitest';
import type { Policy } from '../machine/policy';
import { ConnectionDecisionStore } from '../store/connection-store';
import type { ProviderSource } from './driver';
import type { VirtualClock } from '../sim/world/clock';
import {
  SERVER,
  denialData,
  longMessage,
  noRateLimit,
  params,
  rig,
  uncapped
} from '../sim/actors/host-rig.testing';
import { SharedDecisionStore } from '../store/shared-store';

const withBudget = (amount: string, windowMs: number, p: Policy = uncapped()): Policy => {
  p.defaults.budget = { amount, currency: 'USD', windowMs };
  p.servers = {};
  return p;
};

const allowAll = (p: Policy): Policy => {
  p.defaults.consent = 'allow';
  return p;
};

describe('money held for running calls is not an exhausted window', () => {
  // $0.0200 a 7-minute window; two calls of maxTokens 600 hold 9,033 µ$ each while they run.
  const policy = () => allowAll(withBudget('0.0200', 420_000));
  for (const executor of ['actor', 'table'] as const)
    it(`a request meeting only held money is told to come back, not "exhausted" (${executor})`, () => {
      const r = rig({ policy: policy(), executor });
      r.send(params({ maxTokens: 600, systemPrompt: 'X1' }));
      r.send(params({ maxTokens: 600, systemPrompt: 'X2' }));
      r.after(300);
      // Y's input alone (1,007 tokens, 3,021 µ$) is more than the 1,934 µ$ not held.
      const y = params({ messages: longMessage(4_000, 'y'), maxTokens: 100 });
      r.send(y);
      r.after(10);
      const first = denialData(r.outs.at(-1));
      expect(first).toMatchObject({ reason: 'policy.budget_reserved', retryable: true });
      expect(first!.retryAfterMs).toBeGreaterThan(0);
      expect(first!.resetsAt).toBeUndefined();
      // The two calls finish having spent 10,866 µ$: Y fits in what is left.
      r.after(60_000);
      expect(r.outs.filter((o) => o.audit.outcome === 'allowed')).toHaveLength(2);
      r.send(y);
      r.after(60_000);
      const again = r.outs.at(-1)!;
      expect(again.audit.replayed).toBe(false);
      expect(again.audit.outcome).toBe('allowed');
    });

  it('the window spent to the last micro-unit is still exhausted, with resetsAt', () => {
    const r = rig({ policy: allowAll(withBudget('0.0050', 300_000)) });
    r.send(params({ maxTokens: 300 }));
    r.after(60_000);
    r.send(params({ messages: longMessage(8_000, 'z'), maxTokens: 10 }));
    r.after(10);
    expect(denialData(r.outs.at(-1))).toMatchObject({
      reason: 'policy.budget_exhausted',
      retryable: false,
      resetsAt: '2026-03-10T09:05:00Z'
    });
  });
});

describe('a replayed rate-limit denial tells the truth about when to come back', () => {
  const policy = () => {
    const p = allowAll(uncapped());
    p.defaults.rateLimit = { requests: 1, windowMs: 600_000 };
    return p;
  };
  for (const store of [() => new SharedDecisionStore(), () => new ConnectionDecisionStore()])
    it(`the replay at 50 s says the window resets at 600 s (${store().scope})`, () => {
      const r = rig({ policy: policy(), store: store() });
      r.send(params({ systemPrompt: 'first' }));
      r.after(2_000);
      r.send();
      r.after(1);
      expect(denialData(r.outs.at(-1))).toMatchObject({
        reason: 'policy.rate_limit',
        retryAfterMs: 598_000
      });
      r.after(48_000 - 1);
      r.send();
      r.after(1);
      expect(r.outs.at(-1)!.audit.replayed).toBe(true);
      expect(denialData(r.outs.at(-1))).toMatchObject({
        reason: 'policy.rate_limit',
        retryAfterMs: 550_000
      });
    });
});

/** A provider that starts streaming and never finishes: only the deadline ends the call. */
const endless =
  (clock: VirtualClock): ProviderSource =>
  (_input, emit) => {
    let live = true;
    const tick = () => {
      if (!live) return;
      emit({ type: 'provider.chunk', text: 'word ', tokens: 5 });
      clock.setTimeout(tick, 1_000);
    };
    clock.setTimeout(() => {
      if (!live) return;
      emit({ type: 'provider.started', cachedInputTokens: 0 });
      tick();
    }, 0);
    return () => {
      live = false;
    };
  };

describe('"allowed, do not ask again" outlives a later volume denial', () => {
  it('approved, then rate-limited: not asked again in the next window', () => {
    const p = uncapped();
    p.defaults.rateLimit = { requests: 2, windowMs: 600_000 };
    const r = rig({ policy: p, answer: true });
    r.send();
    r.after(5_000);
    r.send();
    r.after(4_000);
    r.send();
    r.after(1);
    expect(denialData(r.outs.at(-1))).toMatchObject({ reason: 'policy.rate_limit' });
    r.after(700_000 - r.clock.now() + Date.UTC(2026, 2, 10, 9));
    r.send();
    r.after(60_000);
    expect(r.prompts).toHaveLength(1);
    expect(r.outs.at(-1)!.audit.outcome).toBe('allowed');
  });

  it('approved, then the window is exhausted: not asked again in the next window', () => {
    // 507 input tokens (1,521 µ$) and 10 out: the first call leaves less than its input.
    const r = rig({ policy: withBudget('0.0031', 300_000), answer: true });
    const x = params({ messages: longMessage(2_000), maxTokens: 10 });
    r.send(x);
    r.after(60_000);
    expect(r.outs.at(-1)!.audit.outcome).toBe('allowed');
    r.send(x);
    r.after(1);
    expect(denialData(r.outs.at(-1))).toMatchObject({ reason: 'policy.budget_exhausted' });
    r.after(300_000);
    r.send(x);
    r.after(60_000);
    expect(r.prompts).toHaveLength(1);
    expect(r.outs.at(-1)!.audit.outcome).toBe('allowed');
    expect(r.outs.at(-1)!.audit.consentShown).toBe(false);
  });

  it('approved, then cut by the deadline: the retry after the deadline entry is not asked again', () => {
    const r = rig({ policy: uncapped(), answer: true, provider: endless });
    r.send();
    r.after(40_000);
    expect(denialData(r.outs.at(-1))).toMatchObject({ reason: 'policy.deadline' });
    r.after(24_000);
    r.send();
    r.after(1_000);
    expect(r.prompts).toHaveLength(1);
  });

  it('a user who said no is still asked again only after the entry lives out (no approval kept)', () => {
    const r = rig({
      policy: uncapped(),
      answer: false,
      config: { reasons: { 'user.denied': { ttl: { kind: 'ms', ms: 10_000 } } } }
    });
    r.send();
    r.after(5_000);
    r.send();
    r.after(10_000);
    r.send();
    r.after(5_000);
    expect(r.prompts).toHaveLength(2);
  });
});

describe('an unanswered consent dialog is its own reason', () => {
  it('user.timeout, retryable, stored for its TTL; user.denied stays permanent', () => {
    const r = rig({ policy: uncapped(), answer: null });
    r.send();
    r.after(61_000);
    const d = denialData(r.outs.at(-1));
    expect(d).toMatchObject({ reason: 'user.timeout', retryable: true, retryAfterMs: 60_000 });
    expect(r.host.config.reasons['user.denied'].retryable).toBe(false);
    expect(r.outs.at(-1)!.audit.consent).toBe('timeout');
  });

  it('its flag and TTL are the reason table’s: a learner can make it permanent', () => {
    const r = rig({
      policy: uncapped(),
      answer: null,
      config: { reasons: { 'user.timeout': { retryable: false, ttl: { kind: 'session' } } } }
    });
    r.send();
    r.after(61_000);
    expect(denialData(r.outs.at(-1))).toEqual({
      reason: 'user.timeout',
      server: 'release-notes',
      retryable: false
    });
    r.send();
    r.after(1);
    expect(r.outs.at(-1)!.audit.replayed).toBe(true);
    expect(r.prompts).toHaveLength(1);
  });

  it('a replay keeps the original message, not a default one', () => {
    const r = rig({ policy: uncapped(), answer: null });
    r.send();
    r.after(61_000);
    const fresh = r.outs.at(-1)!.frame!;
    r.send();
    r.after(1);
    const replay = r.outs.at(-1)!.frame!;
    expect(r.outs.at(-1)!.audit.replayed).toBe(true);
    expect('error' in replay && replay.error.message).toBe('error' in fresh && fresh.error.message);
    expect('error' in fresh && fresh.error.message).toMatch(/timed out/);

    const p = uncapped();
    p.defaults.consent = 'deny';
    const d = rig({ policy: p });
    d.send();
    d.after(1);
    d.send();
    d.after(1);
    const [a, b] = d.outs.map((o) => o.frame!);
    expect(d.outs[1]!.audit.replayed).toBe(true);
    expect('error' in b! && b.error.message).toBe('error' in a! && a.error.message);
    expect('error' in a! && a.error.message).toMatch(/consent rule/);
  });
});

describe('a budget intent the host cannot price', () => {
  it('EUR against a USD rate card is refused with a typed reason, and nothing is spent', () => {
    const r = rig({ policy: allowAll(uncapped()) });
    r.send(
      params({ budget: { intent: { maxCost: { amount: '0.05', currency: 'EUR' } } } } as never)
    );
    r.after(60_000);
    const out = r.outs.at(-1)!;
    expect(denialData(out)).toMatchObject({
      reason: 'policy.currency_unsupported',
      retryable: false
    });
    expect(r.providerCalls()).toBe(0);
    expect(out.audit.cost).toBe('0.0000');
    expect('error' in out.frame! && out.frame.error.message).toMatch(/EUR.*USD/);
    // The refusal is not stored: `budget` is outside the identity, and the server's corrected
    // retry (the same prompt, an intent in USD) is served.
    r.send(
      params({ budget: { intent: { maxCost: { amount: '0.05', currency: 'USD' } } } } as never)
    );
    r.after(60_000);
    expect(r.outs.at(-1)!.audit.outcome).toBe('allowed');
    expect(r.outs.at(-1)!.audit.budgetDecision?.requestHonored ?? true).toBe(true);
  });
});

describe('the retry-loop alert counts re-presentations', () => {
  it('40 re-presentations in 10 minutes is a loop: the 41st presentation, not the 40th', () => {
    const p = uncapped();
    p.defaults.sampling = false;
    const r = rig({ policy: p });
    for (let i = 0; i < 41; i++) {
      r.send();
      r.after(1_000);
    }
    expect(r.outs.map((o) => o.audit.alert).indexOf(true)).toBe(40);
    expect(r.outs[39]!.audit.represented).toBe(39);
    expect(r.outs[39]!.audit.alert).toBe(false);
    expect(r.outs[40]!.audit.represented).toBe(40);
    expect(r.outs[40]!.audit.alert).toBe(true);
  });

  it('threshold 1: the first re-presentation is flagged, the first presentation is not', () => {
    const p = uncapped();
    p.defaults.sampling = false;
    const r = rig({ policy: p, config: { alert: { threshold: 1, windowMs: 60_000 } } });
    r.send();
    r.after(1_000);
    r.send();
    r.after(1_000);
    expect(r.outs.map((o) => o.audit.alert)).toEqual([false, true]);
  });
});

describe('a request id a connection reuses while it is running (a buggy or hostile server)', () => {
  // JSON-RPC ids are the server's to choose; nothing stops one sending id 7 for two different
  // requests at once. Each lands the decision it led, never the other's: a third request
  // waiting on the second's identity must not be answered with the first's verdict.
  for (const executor of ['actor', 'table'] as const)
    it(`a waiter gets the verdict of its own identity, and nothing is left held (${executor})`, () => {
      // X approved at once; Y denied 30 s later, after X's call has finished.
      const answers: [boolean, number][] = [
        [true, 1_000],
        [false, 30_000]
      ];
      const r = rig({
        executor,
        policy: noRateLimit(),
        consent: (_input, answer) => {
          const [approved, ms] = answers.shift() ?? [false, 1_000];
          const t = r.clock.setTimeout(() => answer(approved), ms);
          return () => r.clock.clearTimeout(t);
        }
      });
      const outs = new Map<string, string>();
      const send = (id: number, systemPrompt: string, label: string) =>
        r.host.authorize(
          {
            id,
            server: SERVER,
            connection: `${SERVER}#1`,
            params: params({ systemPrompt }),
            receivedAt: r.clock.now()
          },
          (out) => outs.set(label, out.audit.outcome)
        );
      send(7, 'X', 'x');
      r.after(10);
      send(7, 'Y', 'y'); // the same id again, another identity, while the first is running
      r.after(10);
      send(8, 'Y', 'y again'); // joins the second's decision
      r.after(120_000);
      expect(Object.fromEntries(outs)).toEqual({
        x: 'allowed',
        y: 'denied',
        'y again': 'denied'
      });
      expect(r.host.held()).toMatchObject({ flights: 0, waiters: 0 });
    });
});
