/**
 * The host's guarantees on the edges issue #7 measured: in-flight presentations join (one consent
 * dialog per identity), the retry-loop alert outlives stored entries and reads live settings,
 * streamed tokens are paid for whatever ends the call, and no step that throws or hangs leaves a
 * request without its one frame and record.
 */
import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../machine/policy';
import { ConnectionDecisionStore } from '../store/connection-store';
import type { ProviderSource } from './driver';
import type { VirtualClock } from '../sim/world/clock';
import { noRateLimit, params, rig, SERVER, uncapped } from '../sim/actors/host-rig.testing';
import { SharedDecisionStore } from '../store/shared-store';

describe('in-flight presentations join the evaluation', () => {
  for (const scope of ['connection', 'durable'] as const) {
    it(`a 5 s timeout-sensitive server against a user taking 200 s: one dialog (${scope})`, () => {
      const r = rig({
        store: scope === 'durable' ? new SharedDecisionStore() : new ConnectionDecisionStore(),
        answer: false,
        answerAfterMs: 200_000
      });
      // The first presentation and 8 retries, every 5 s, while the dialog is open.
      for (let i = 0; i < 9; i++) {
        r.send();
        r.clock.runUntil(r.clock.now() + 5_000);
      }
      r.clock.runUntil(r.clock.now() + 300_000);
      expect(r.prompts).toHaveLength(1);
      expect(r.outs).toHaveLength(9);
      const joined = r.outs.filter((o) => o.audit.replayed);
      expect(joined).toHaveLength(8);
      expect(joined.map((o) => o.audit.represented)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // The dialog timed out (the user took 200 s of a 60 s dialog): not the person's "no".
      expect(r.outs.every((o) => o.audit.reason === 'user.timeout')).toBe(true);
      expect(r.providerCalls()).toBe(0);
      // The dialog timed out (the user took 200 s of a 60 s dialog): stored for one timeout only.
      expect(r.outs.find((o) => !o.audit.replayed)!.audit.consent).toBe('timeout');
    });
  }

  it('an allowed verdict lets each joiner call the model itself, with one rate-limit count', () => {
    const policy = defaultPolicy();
    policy.defaults.rateLimit = { requests: 1, windowMs: 600_000 };
    const r = rig({ policy, answer: true, answerAfterMs: 10_000, config: { storeAllowed: false } });
    r.send();
    r.clock.runUntil(r.clock.now() + 2_000);
    r.send();
    r.clock.runUntil(r.clock.now() + 120_000);
    expect(r.prompts).toHaveLength(1);
    expect(r.outs.map((o) => o.audit.outcome)).toEqual(['allowed', 'allowed']);
    // Both called the model: the store holds verdicts, never completions.
    expect(r.providerCalls()).toBe(2);
  });

  it('connection scope: a presentation on another connection does not join', () => {
    const r = rig({ store: new ConnectionDecisionStore(), answer: false, answerAfterMs: 30_000 });
    r.send(params(), `${SERVER}#1`);
    r.clock.runUntil(r.clock.now() + 1_000);
    r.send(params(), `${SERVER}#2`);
    r.clock.runUntil(r.clock.now() + 120_000);
    expect(r.prompts).toHaveLength(2);
  });
});

describe("the seed's test_retry_cannot_bypass_denial", () => {
  it('the same refused request twice: one prompt, no provider call, represented == 1', () => {
    const policy = defaultPolicy();
    // A budget window the first approved call spends; the adversary's request then meets it.
    policy.servers[SERVER] = {
      budget: { amount: '0.0010', currency: 'USD', windowMs: 86_400_000 }
    };
    policy.defaults.perCallCap = null;
    const r = rig({ policy, answer: true, config: { preflightDefault: 'truncate' } });
    r.send(params({ systemPrompt: 'Warm-up: spend the window.' }));
    r.clock.runUntil(r.clock.now() + 60_000);
    expect(r.prompts).toHaveLength(1);
    const callsBefore = r.providerCalls();

    // The adversary's input alone (600 tokens, 0.0018) is more than the window has left.
    const M = [
      { role: 'user' as const, content: { type: 'text' as const, text: 'x'.repeat(2_400) } }
    ];
    r.send(params({ includeContext: 'allServers', messages: M }));
    r.clock.runUntil(r.clock.now() + 10_000);
    const first = r.outs.at(-1)!.frame!;
    expect('error' in first && first.error.data).toMatchObject({
      reason: 'policy.budget_exhausted'
    });
    r.send(params({ includeContext: 'allServers', messages: M }));
    r.clock.runUntil(r.clock.now() + 10_000);
    const second = r.outs.at(-1)!;
    expect('error' in second.frame! && second.frame.error.data).toEqual(
      'error' in first && first.error.data
    );
    expect(r.prompts).toHaveLength(1); // the user was asked once
    expect(r.providerCalls()).toBe(callsBefore); // nothing was spent on either
    expect(second.audit.represented).toBe(1);
  });
});

describe('the retry-loop alert outlives the stored decision', () => {
  it('a tight loop every 2 s, consent deny, user.denied TTL 60 s: flagged', () => {
    const r = rig({
      policy: noRateLimit(),
      answer: false,
      answerAfterMs: 100,
      config: { reasons: { 'user.denied': { ttl: { kind: 'ms', ms: 60_000 } } } }
    });
    for (let t = 0; t <= 600_000; t += 2_000) {
      r.send();
      r.clock.runUntil(r.clock.now() + 2_000);
    }
    expect(r.outs).toHaveLength(301);
    // Each stored denial lives 60 s, so a fresh dialog every minute; the loop is flagged anyway.
    expect(r.prompts.length).toBeGreaterThan(5);
    const firstAlert = r.outs.findIndex((o) => o.audit.alert);
    expect(firstAlert).toBe(40); // re-presented 40 times in 10 minutes: the 41st presentation
    expect(r.outs.filter((o) => o.audit.alert).length).toBeGreaterThan(250);
  });

  it('reads the lane’s alert settings live', () => {
    const r = rig({ policy: noRateLimit(), answer: false, answerAfterMs: 100 });
    for (let i = 0; i < 5; i++) {
      r.send();
      r.clock.runUntil(r.clock.now() + 1_000);
    }
    expect(r.outs.some((o) => o.audit.alert)).toBe(false);
    r.host.config = { ...r.host.config, alert: { threshold: 3, windowMs: 600_000 } };
    r.send();
    r.clock.runUntil(r.clock.now() + 1_000);
    expect(r.outs.at(-1)!.audit.alert).toBe(true);
  });

  it('keeps the history by count, not by window, so a widened window still sees the past', () => {
    const r = rig({ policy: noRateLimit(), answer: false, answerAfterMs: 10 });
    for (let i = 0; i < 50; i++) {
      r.send(params({ systemPrompt: `mutated ${i}` }));
      r.clock.runUntil(r.clock.now() + 700_000);
    }
    // Each identity left its 10-minute window, but a learner may widen the window to an hour:
    // the history keeps them, bounded by its identity cap (presentations.spec.ts tests the cap).
    expect(r.host.presentations.size).toBe(50);
    expect(r.host.presentations.maxIdentities).toBe(10_000);
    // One re-presentation within the hour is a loop at threshold 1.
    r.host.config = { ...r.host.config, alert: { threshold: 1, windowMs: 3_600_000 } };
    r.send(params({ systemPrompt: 'mutated 49' }));
    r.clock.runUntil(r.clock.now() + 1_000);
    expect(r.outs.at(-1)!.audit.alert).toBe(true);
  });
});

/** A provider streaming 50-token chunks every `intervalMs`, never finishing on its own. */
const slowStream =
  (intervalMs: number) =>
  (clock: VirtualClock): ProviderSource =>
  (_input, emit) => {
    let live = true;
    clock.setTimeout(() => {
      if (!live) return;
      emit({ type: 'provider.started', cachedInputTokens: 0 });
      const tick = () => {
        if (!live) return;
        emit({ type: 'provider.chunk', text: 'word ', tokens: 50 });
        clock.setTimeout(tick, intervalMs);
      };
      tick();
    }, 0);
    return () => {
      live = false;
    };
  };

describe('every token generated is paid for', () => {
  it('a deadline after 750 output tokens charges them: audit, and the budget window', () => {
    const r = rig({
      config: { deadlineMs: 30_000 },
      answer: true,
      answerAfterMs: 0,
      policy: uncapped(),
      provider: slowStream(2_000) // 50 tokens per 2 s: 15 chunks (750 tokens) before 30 s
    });
    r.send(params({ maxTokens: 4_000 }));
    r.clock.runUntil(r.clock.now() + 120_000);
    const a = r.outs[0]!.audit;
    expect(a.reason).toBe('policy.deadline');
    expect(a.tokensOut).toBe(750);
    // Input (input tokens × $3/Mtok) plus 750 × $15/Mtok = 11,250 µ$ of output.
    const micros = Math.round(Number(a.cost) * 1e6);
    expect(micros).toBe(a.tokensIn * 3 + 11_250);
    expect(r.host.spentMicros(SERVER)).toBe(micros);
  });

  it('a cancellation mid-stream charges what was streamed, with one -32603 frame', () => {
    const r = rig({
      answer: true,
      answerAfterMs: 0,
      policy: uncapped(),
      provider: slowStream(1_000)
    });
    const h = r.send(params({ maxTokens: 4_000 }));
    r.clock.runUntil(r.clock.now() + 4_500);
    h.cancel();
    r.clock.runUntil(r.clock.now() + 60_000);
    expect(r.outs).toHaveLength(1);
    const out = r.outs[0]!;
    expect(out.frame).toMatchObject({ error: { code: -32603 } });
    expect(out.audit.tokensOut).toBeGreaterThan(0);
    expect(Number(out.audit.cost)).toBeGreaterThan(0);
    expect(r.host.spentMicros(SERVER)).toBe(Math.round(Number(out.audit.cost) * 1e6));
  });
});

describe('no path without a frame', () => {
  const broken = (what: string) => () => {
    throw new Error(`${what} broke`);
  };

  it('a consent source that throws: one -32603 frame, no data, an audit record; the run goes on', () => {
    const r = rig({ consent: broken('consent') });
    r.send();
    r.send(params({ systemPrompt: 'another' }));
    r.clock.runUntil(r.clock.now() + 10_000);
    expect(r.outs).toHaveLength(2);
    for (const o of r.outs) {
      expect(o.frame).toMatchObject({ error: { code: -32603 } });
      expect(o.frame && 'error' in o.frame && o.frame.error.data).toBeUndefined();
      expect(o.audit.budgetDecision).toBeNull();
      expect(o.audit.outcome).toBe('provider_error');
    }
  });

  it('a provider that throws, and a store whose lookup and commit throw', () => {
    const store = new ConnectionDecisionStore();
    store.lookup = broken('lookup');
    store.commit = broken('commit');
    const r = rig({ store, answer: false, provider: () => broken('provider') });
    r.send();
    r.clock.runUntil(r.clock.now() + 10_000);
    // The lookup failed: evaluated afresh; the user said no; the commit failed: still one frame.
    expect(r.outs).toHaveLength(1);
    expect(r.outs[0]!.audit.reason).toBe('user.denied');
    const r2 = rig({ answer: true, answerAfterMs: 0, provider: () => broken('provider') });
    r2.send();
    r2.clock.runUntil(r2.clock.now() + 10_000);
    expect(r2.outs).toHaveLength(1);
    expect(r2.outs[0]!.frame).toMatchObject({ error: { code: -32603 } });
  });

  it('a hung store: the lookup times out on the virtual clock and the request is answered', () => {
    const store = new ConnectionDecisionStore();
    store.lookup = () => new Promise<null>(() => {}) as never;
    const r = rig({ store, answer: false, answerAfterMs: 100 });
    r.send();
    r.clock.runUntil(r.clock.now() + 60_000);
    expect(r.outs).toHaveLength(1);
    expect(r.outs[0]!.audit.reason).toBe('user.denied');
  });

  it('maxTokens 9,000,000,000,000,000: refused on cost, never a crash', () => {
    const r = rig();
    r.send(params({ maxTokens: 9_000_000_000_000_000 }));
    r.clock.runUntil(r.clock.now() + 10_000);
    expect(r.outs).toHaveLength(1);
    expect(r.outs[0]!.audit.outcome).toBe('budget_exceeded');
  });
});

describe('smaller points', () => {
  it('budget_exhausted keeps _meta.context when the context was also trimmed', () => {
    const policy = noRateLimit();
    policy.defaults.perCallCap = { amount: '0.0010', currency: 'USD' };
    const r = rig({
      policy,
      answer: true,
      answerAfterMs: 0,
      config: { preflightDefault: 'truncate' },
      provider: slowStream(100)
    });
    r.send(params({ includeContext: 'allServers', maxTokens: 4_000 }));
    r.clock.runUntil(r.clock.now() + 60_000);
    const f = r.outs[0]!.frame!;
    expect(r.outs[0]!.audit.outcome).toBe('budget_exhausted');
    expect('result' in f && f.result._meta?.context).toEqual({
      requested: 'allServers',
      applied: 'thisServer',
      reason: 'policy.max_scope'
    });
  });

  it('a consent timeout is not a session-long "no": the user is asked again after one timeout', () => {
    const r = rig({ policy: noRateLimit(), answer: null });
    r.send();
    r.clock.runUntil(r.clock.now() + 61_000);
    expect(r.outs[0]!.audit.consent).toBe('timeout');
    expect(r.outs[0]!.frame).toMatchObject({ error: { data: { retryable: true } } });
    r.send();
    r.clock.runUntil(r.clock.now() + 1_000);
    expect(r.outs[1]!.audit.replayed).toBe(true);
    r.clock.runUntil(r.clock.now() + 60_000);
    r.send();
    r.clock.runUntil(r.clock.now() + 1_000);
    expect(r.prompts).toHaveLength(2);
  });
});
