import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { estimateCostMicros, type RateCard } from './budget';
import {
  addSpend,
  consentSkip,
  consentSkippedText,
  countRequest,
  evaluate,
  initialVolume,
  isoTime,
  pickModel,
  rollVolume,
  windowResetsAt,
  windowStart,
  type EvaluateInput,
  type Evaluation,
  type VolumeState
} from './evaluate';
import { fromMicros } from './money';
import { DEFAULT_POLICY, effectiveBlock, type PolicyBlock } from './policy';
import type { SamplingParams } from './types';

const CARD: RateCard = {
  model: 'example-model-v2',
  version: '2026-07-01',
  currency: 'USD',
  inputPerMtok: '3',
  outputPerMtok: '15'
};
const MINI: RateCard = {
  ...CARD,
  model: 'example-model-v2-mini',
  inputPerMtok: '0.30',
  outputPerMtok: '1.50'
};
const CARDS: Record<string, RateCard> = { [CARD.model]: CARD, [MINI.model]: MINI };

/** 2026-03-10T15:30:00Z: the daily budget window resets at 2026-03-11T00:00:00Z. */
const NOW = Date.parse('2026-03-10T15:30:00Z');

const BLOCK: PolicyBlock = effectiveBlock(DEFAULT_POLICY, 'docs');

/** A request of `inputTokens` tokens (4 characters each) asking for `maxTokens`. */
function request(
  inputTokens: number,
  maxTokens: number,
  extra: Partial<SamplingParams> = {}
): SamplingParams {
  return {
    messages: [{ role: 'user', content: { type: 'text', text: 'x'.repeat(inputTokens * 4) } }],
    maxTokens,
    ...extra
  };
}

function input(over: Partial<EvaluateInput> = {}, block: Partial<PolicyBlock> = {}): EvaluateInput {
  const b = { ...BLOCK, ...block };
  return {
    server: 'docs',
    params: request(1_000, 500),
    block: b,
    card: (m) => CARDS[m],
    volume: initialVolume(b, NOW),
    now: NOW,
    capScope: 'per-call',
    preflightDefault: 'reject',
    ...over
  };
}

function proceed(e: Evaluation) {
  if (e.kind !== 'proceed') throw new Error(`expected proceed, got ${JSON.stringify(e)}`);
  return e;
}

/** The RFC request: 24,000 input tokens, maxTokens 2,048, against a per-call cap of $0.05. */
const RFC = request(24_000, 2_048);

describe('windows', () => {
  it('aligns windows to multiples of windowMs since the epoch: a day resets at 00:00Z', () => {
    const day = 86_400_000;
    expect(isoTime(windowStart(NOW, day))).toBe('2026-03-10T00:00:00Z');
    expect(isoTime(windowResetsAt(NOW, day))).toBe('2026-03-11T00:00:00Z');
    expect(windowResetsAt(NOW, 60_000) - NOW).toBe(60_000); // NOW is on a minute boundary
    expect(windowStart(NOW + 59_999, 60_000)).toBe(NOW);
    expect(windowStart(-1, 1_000)).toBe(-1_000);
  });

  it('keeps milliseconds in ISO times when there are any', () => {
    expect(isoTime(NOW + 5)).toBe('2026-03-10T15:30:00.005Z');
  });

  it('throws on a window length that is not a positive integer', () => {
    expect(() => windowStart(NOW, 0)).toThrow(/windowMs/);
  });
});

describe('the volume ledger', () => {
  it('counts requests and spend, and starts a window over once it ends, without mutating', () => {
    const v0 = initialVolume(BLOCK, NOW);
    expect(v0).toEqual({
      rateCount: 0,
      rateWindowResetsAt: NOW + 60_000,
      budgetSpentMicros: 0,
      budgetWindowResetsAt: Date.parse('2026-03-11T00:00:00Z')
    });
    const v1 = addSpend(countRequest(v0, BLOCK, NOW), BLOCK, NOW, 9_000);
    expect(v1).toMatchObject({ rateCount: 1, budgetSpentMicros: 9_000 });
    expect(v0.rateCount).toBe(0);
    const later = rollVolume(v1, BLOCK, NOW + 60_000);
    expect(later).toMatchObject({
      rateCount: 0,
      rateWindowResetsAt: NOW + 120_000,
      budgetSpentMicros: 9_000
    });
    const tomorrow = rollVolume(v1, BLOCK, Date.parse('2026-03-11T00:00:00Z'));
    expect(tomorrow.budgetSpentMicros).toBe(0);
    expect(() => addSpend(v0, BLOCK, NOW, -1)).toThrow(/micros/);
  });

  it('a policy edit that changes the window length ends the window on the new boundary, spend kept', () => {
    const day = initialVolume(BLOCK, NOW); // a daily budget window, ending at midnight
    const spent = addSpend(day, BLOCK, NOW, 9_000);
    const hourly: PolicyBlock = { ...BLOCK, budget: { ...BLOCK.budget!, windowMs: 3_600_000 } };
    // Mid-hour, under the edited policy: the window in force ends on the hour, and the 9,000
    // spent still count until then (so no hour-long window can take more than its budget).
    const edited = rollVolume(spent, hourly, NOW + 10 * 60_000);
    expect(edited.budgetSpentMicros).toBe(9_000);
    expect(isoTime(edited.budgetWindowResetsAt)).toBe('2026-03-10T16:00:00Z');
    // On the hour, a new hour starts at zero (not at midnight, the old length's end).
    const next = rollVolume(edited, hourly, Date.parse('2026-03-10T16:00:00Z'));
    expect(next.budgetSpentMicros).toBe(0);
    expect(isoTime(next.budgetWindowResetsAt)).toBe('2026-03-10T17:00:00Z');
  });

  it('leaves the counters of a limit the block does not have alone', () => {
    const open: PolicyBlock = { ...BLOCK, rateLimit: null, budget: null };
    const v = initialVolume(open, NOW);
    expect(rollVolume(v, open, NOW + 10 ** 9)).toBe(v);
  });
});

describe('evaluate: the order of checks, first hit wins', () => {
  it('1. sampling disabled', () => {
    const e = evaluate(input({ params: request(99_999, 2_048) }, { sampling: false }));
    expect(e).toMatchObject({ kind: 'deny', reason: 'policy.sampling_disabled' });
  });

  it('2. hints that name no allowed model are refused, not replaced by the default', () => {
    const e = evaluate(
      input({ params: request(10, 10, { modelPreferences: { hints: [{ name: 'gpt' }] } }) })
    );
    expect(e).toEqual({
      kind: 'deny',
      reason: 'policy.model_not_allowed',
      detail: 'no hinted model (gpt) is allowed'
    });
  });

  it('2. a default model that is not allowed is refused', () => {
    const e = evaluate(input({}, { defaultModel: 'other' }));
    expect(e).toMatchObject({ kind: 'deny', reason: 'policy.model_not_allowed' });
  });

  it('3. a model without a rate card is refused: the host cannot price it', () => {
    const e = evaluate(
      input(
        { params: request(10, 10, { modelPreferences: { hints: [{ name: 'mystery' }] } }) },
        { allowedModels: ['*'] }
      )
    );
    expect(e).toEqual({
      kind: 'deny',
      reason: 'policy.model_not_allowed',
      detail: "no rate card for model 'mystery'"
    });
  });

  it('3. a model priced in another currency than the policy is refused: never converted', () => {
    const e = evaluate(
      input({ card: (m) => (m === CARD.model ? { ...CARD, currency: 'EUR' } : undefined) })
    );
    expect(e).toMatchObject({ kind: 'deny', reason: 'policy.model_not_allowed' });
    if (e.kind === 'deny') expect(e.detail).toMatch(/currency mismatch: EUR is not USD/);
  });

  it('4. input over maxInputTokens (and exactly at it, allowed)', () => {
    expect(evaluate(input({ params: request(32_001, 1) }))).toMatchObject({
      kind: 'deny',
      reason: 'policy.input_too_large'
    });
    expect(
      evaluate(input({ params: request(32_000, 1) }, { perCallCap: null, budget: null })).kind
    ).toBe('proceed');
  });

  it('5. rate limit reached: retryAfterMs until the window resets', () => {
    const volume: VolumeState = { ...initialVolume(BLOCK, NOW), rateCount: 30 };
    const e = evaluate(input({ volume, now: NOW + 15_000 }));
    expect(e).toMatchObject({ kind: 'deny', reason: 'policy.rate_limit', retryAfterMs: 45_000 });
    // One below the limit passes; so does a stale count from a window that has ended.
    expect(evaluate(input({ volume: { ...volume, rateCount: 29 } })).kind).toBe('proceed');
    expect(evaluate(input({ volume, now: NOW + 60_000 })).kind).toBe('proceed');
    expect(evaluate(input({ volume }, { rateLimit: null })).kind).toBe('proceed');
  });

  it('6. budget window spent: resetsAt is the next 00:00Z, as in the seed', () => {
    const volume: VolumeState = { ...initialVolume(BLOCK, NOW), budgetSpentMicros: 5_000_000 };
    const e = evaluate(input({ volume }));
    expect(e).toEqual({
      kind: 'deny',
      reason: 'policy.budget_exhausted',
      resetsAt: '2026-03-11T00:00:00Z',
      detail: 'the budget of 5.00 USD is spent'
    });
    expect(evaluate(input({ volume, now: Date.parse('2026-03-11T00:00:00Z') })).kind).toBe(
      'proceed'
    );
  });

  it('an earlier check wins over a later one', () => {
    const everything: VolumeState = {
      ...initialVolume(BLOCK, NOW),
      rateCount: 99,
      budgetSpentMicros: 99_000_000
    };
    const big = request(40_000, 1);
    const reasonOf = (e: Evaluation) => (e.kind === 'deny' ? e.reason : e.kind);
    expect(
      reasonOf(evaluate(input({ volume: everything, params: big }, { sampling: false })))
    ).toBe('policy.sampling_disabled');
    expect(
      reasonOf(evaluate(input({ volume: everything, params: big }, { allowedModels: [] })))
    ).toBe('policy.model_not_allowed');
    expect(reasonOf(evaluate(input({ volume: everything, params: big })))).toBe(
      'policy.input_too_large'
    );
    expect(reasonOf(evaluate(input({ volume: everything })))).toBe('policy.rate_limit');
    expect(
      reasonOf(evaluate(input({ volume: { ...everything, rateCount: 0 }, params: RFC })))
    ).toBe('policy.budget_exhausted');
  });

  it('never mutates its input', () => {
    const i = input({ params: RFC });
    const snapshot = structuredClone({ ...i, card: undefined });
    evaluate(Object.freeze(i));
    expect({ ...i, card: undefined }).toEqual(snapshot);
  });

  it('throws on an unvalidated maxTokens (the frame validator guards this)', () => {
    expect(() => evaluate(input({ params: request(10, -1) }))).toThrow(/maxTokens/);
    expect(() => evaluate(input({ params: request(10, 1.5) }))).toThrow(/maxTokens/);
  });
});

describe('evaluate: model selection', () => {
  const allowed = {
    allowedModels: ['example-model-v2', 'example-model-v2-mini'],
    defaultModel: 'example-model-v2'
  };
  const pick = (...names: (string | undefined)[]) =>
    pickModel({ hints: names.map((name) => (name === undefined ? {} : { name })) }, allowed);

  it('takes the first hint that names an allowed model, exactly or as a substring', () => {
    expect(pick('example-model-v2-mini')).toEqual({ ok: true, model: 'example-model-v2-mini' });
    expect(pick('mini')).toEqual({ ok: true, model: 'example-model-v2-mini' });
    expect(pick('gpt', 'mini', 'example-model-v2')).toEqual({
      ok: true,
      model: 'example-model-v2-mini'
    });
    // An exact match beats a substring match of the same hint.
    expect(pick('example-model-v2')).toEqual({ ok: true, model: 'example-model-v2' });
    expect(pick('Mini').ok).toBe(false); // case-sensitive, deterministic
  });

  it('uses the default model when no hint carries a name', () => {
    expect(pickModel(undefined, allowed)).toEqual({ ok: true, model: 'example-model-v2' });
    expect(pick(undefined)).toEqual({ ok: true, model: 'example-model-v2' });
    expect(pick('')).toEqual({ ok: true, model: 'example-model-v2' });
  });

  it('"*" allows any hinted model by its own name', () => {
    expect(
      pickModel({ hints: [{ name: 'anything' }] }, { allowedModels: ['*'], defaultModel: 'd' })
    ).toEqual({
      ok: true,
      model: 'anything'
    });
    expect(pickModel({}, { allowedModels: ['*'], defaultModel: 'd' })).toEqual({
      ok: true,
      model: 'd'
    });
  });

  it('the picked model is the one priced and reported', () => {
    const params = request(1_000, 500, { modelPreferences: { hints: [{ name: 'mini' }] } });
    const e = proceed(evaluate(input({ params }, { allowedModels: allowed.allowedModels })));
    expect(e.model).toBe('example-model-v2-mini');
    expect(e.decision?.meterBasis).toMatch(/^example-model-v2-mini@/);
  });
});

describe('evaluate: context', () => {
  it('trims a wider request to maxContext and says so', () => {
    const e = proceed(
      evaluate(input({ params: request(10, 10, { includeContext: 'allServers' }) }))
    );
    expect(e.context).toEqual({ requested: 'allServers', applied: 'thisServer', trimmed: true });
  });

  it('grants a request within maxContext as asked; absent means none', () => {
    expect(
      proceed(evaluate(input({ params: request(10, 10, { includeContext: 'thisServer' }) })))
        .context
    ).toEqual({
      requested: 'thisServer',
      applied: 'thisServer',
      trimmed: false
    });
    expect(proceed(evaluate(input())).context).toEqual({
      requested: 'none',
      applied: 'none',
      trimmed: false
    });
    expect(
      proceed(
        evaluate(
          input(
            { params: request(10, 10, { includeContext: 'thisServer' }) },
            { maxContext: 'none' }
          )
        )
      ).context
    ).toEqual({ requested: 'thisServer', applied: 'none', trimmed: true });
  });
});

describe('evaluate: caps (the RFC)', () => {
  it('refuses the RFC request pre-flight with the RFC decision', () => {
    const e = evaluate(input({ params: RFC }));
    expect(e).toEqual({
      kind: 'budget_exceeded',
      model: 'example-model-v2',
      decision: {
        estimatedCost: { amount: '0.10272', currency: 'USD' },
        limitApplied: { amount: '0.0500', currency: 'USD' },
        limitSource: 'host_policy',
        meterBasis: 'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok',
        estimatedTokens: { input: 24_000, output: 2_048 },
        requestHonored: true
      }
    });
  });

  it('records the advisory intent without letting it decide', () => {
    const params = { ...RFC, budget: { intent: { maxCost: { amount: '0.05', currency: 'USD' } } } };
    const e = evaluate(input({ params }));
    expect(e.kind).toBe('budget_exceeded');
    if (e.kind === 'budget_exceeded') expect(e.decision.requestHonored).toBe(false);
    // A generous intent does not lift the host's limit.
    const generous = {
      ...RFC,
      budget: { intent: { maxCost: { amount: '2.00', currency: 'USD' } } }
    };
    const g = evaluate(input({ params: generous }));
    expect(g.kind).toBe('budget_exceeded');
    if (g.kind === 'budget_exceeded') expect(g.decision.requestHonored).toBe(true);
  });

  /** 10,000 input tokens (30,000 µ$) + 2,048 output (30,720 µ$) = 0.0607 > 0.05; the input fits. */
  const OVER = request(10_000, 2_048);

  it('truncate (asked by the request): proceeds with the limit to meter against', () => {
    const e = proceed(evaluate(input({ params: { ...OVER, budget: { onExceeded: 'truncate' } } })));
    expect(e).toMatchObject({
      limitMicros: 50_000,
      limitTokens: null,
      inputTokens: 10_000,
      maxTokens: 2_048
    });
    expect(e.decision?.estimatedCost.amount).toBe('0.06072');
  });

  it('truncate (client default when the request says nothing); the request’s own choice wins', () => {
    expect(evaluate(input({ params: OVER })).kind).toBe('budget_exceeded');
    expect(evaluate(input({ params: OVER, preflightDefault: 'truncate' })).kind).toBe('proceed');
    const rejecting = { ...OVER, budget: { onExceeded: 'reject' as const } };
    expect(evaluate(input({ params: rejecting, preflightDefault: 'truncate' })).kind).toBe(
      'budget_exceeded'
    );
  });

  it('truncate cannot shorten the input: an input that alone costs more than the limit is refused', () => {
    // 20,000 input tokens × $3/Mtok = 60,000 µ$ > 50,000 before the first output token.
    const params = { ...request(20_000, 10), budget: { onExceeded: 'truncate' as const } };
    expect(evaluate(input({ params })).kind).toBe('budget_exceeded');
    // The RFC request too: its input alone is 0.0720 against 0.0500.
    expect(evaluate(input({ params: RFC, preflightDefault: 'truncate' })).kind).toBe(
      'budget_exceeded'
    );
  });

  it('within the cap: proceeds, with the decision to report', () => {
    const e = proceed(evaluate(input()));
    expect(e.limitMicros).toBe(50_000);
    expect(e.decision).toMatchObject({
      limitSource: 'host_policy',
      estimatedCost: { amount: '0.0105' }
    });
    expect(e.consent).toBe('ask');
  });

  it('the remaining budget window caps the per-call cap when it is tighter', () => {
    const volume: VolumeState = { ...initialVolume(BLOCK, NOW), budgetSpentMicros: 4_970_000 };
    const e = evaluate(input({ volume }));
    const p = proceed(e);
    expect(p.limitMicros).toBe(30_000);
    expect(p.decision?.limitSource).toBe('budget_window');
    expect(p.decision?.limitApplied.amount).toBe('0.0300');
    // And refuses what the cap alone would have allowed. With money left for the input but not
    // the estimate: a cost refusal with the remainder as the limit (a server can shrink to it;
    // not stored, since maxTokens is outside the identity).
    const volume2: VolumeState = { ...volume, budgetSpentMicros: 4_995_000 };
    const r = evaluate(input({ volume: volume2 }));
    expect(r).toMatchObject({
      kind: 'budget_exceeded',
      decision: { limitSource: 'budget_window', limitApplied: { amount: '0.0050' } }
    });
    // Only when the remainder cannot pay even for the input is the window exhausted until reset.
    const volume3: VolumeState = { ...volume, budgetSpentMicros: 4_999_999 };
    expect(evaluate(input({ volume: volume3 }))).toMatchObject({
      kind: 'deny',
      reason: 'policy.budget_exhausted',
      resetsAt: isoTime(volume3.budgetWindowResetsAt)
    });
  });

  it('$4.98 of $5.00 spent: a 2,000-token call is a cost refusal, not exhausted until midnight', () => {
    const volume: VolumeState = { ...initialVolume(BLOCK, NOW), budgetSpentMicros: 4_980_000 };
    const r = evaluate(input({ volume, params: request(1_000, 2_000) }, { perCallCap: null }));
    expect(r).toMatchObject({
      kind: 'budget_exceeded',
      decision: { limitSource: 'budget_window', limitApplied: { amount: '0.0200' } }
    });
  });

  it('a token cap is priced at the rate card: the window remainder still binds the call', () => {
    // 10,000 input + 2,048 output tokens fit a 20,000-token cap, but the window has 0.0400 left.
    const volume: VolumeState = { ...initialVolume(BLOCK, NOW), budgetSpentMicros: 4_960_000 };
    const block = { perCallCap: { tokens: 20_000 } };
    const r = evaluate(input({ volume, params: request(10_000, 2_048) }, block));
    expect(r).toMatchObject({
      kind: 'budget_exceeded',
      decision: { limitSource: 'budget_window', limitApplied: { amount: '0.0400' } }
    });
    const t = proceed(
      evaluate(
        input({ volume, params: request(1_000, 2_048), preflightDefault: 'truncate' }, block)
      )
    );
    expect(t).toMatchObject({ limitTokens: 20_000, limitMicros: 40_000 });
  });

  it('no cap: the budget window is the limit; no cap and no window: no limit at all', () => {
    const p = proceed(evaluate(input({ params: RFC }, { perCallCap: null })));
    expect(p.limitMicros).toBe(5_000_000);
    expect(p.decision?.limitSource).toBe('budget_window');
    const free = proceed(evaluate(input({ params: RFC }, { perCallCap: null, budget: null })));
    expect(free).toMatchObject({ limitMicros: null, limitTokens: null, decision: null });
  });

  it('a token cap compares input + maxTokens with the token limit', () => {
    const block = { perCallCap: { tokens: 20_000 } };
    const e = evaluate(input({ params: RFC }, block));
    expect(e).toMatchObject({
      kind: 'budget_exceeded',
      decision: {
        limitSource: 'token_meter',
        limitApplied: { amount: '20000', currency: 'tokens' }
      }
    });
    const ok = proceed(evaluate(input({ params: request(10_000, 2_048) }, block)));
    // The token cap is metered in tokens; the budget window still bounds the money.
    expect(ok).toMatchObject({ limitTokens: 20_000, limitMicros: 5_000_000 });
    // Truncate: proceed to meter tokens, unless the input alone is over.
    const t = proceed(
      evaluate(
        input({ params: RFC, preflightDefault: 'truncate' }, { perCallCap: { tokens: 25_000 } })
      )
    );
    expect(t.limitTokens).toBe(25_000);
    expect(evaluate(input({ params: RFC, preflightDefault: 'truncate' }, block)).kind).toBe(
      'budget_exceeded'
    );
  });

  it('a token cap is blind to price: a call the cost cap refuses passes the token cap', () => {
    const pricey: RateCard = { ...CARD, inputPerMtok: '30', outputPerMtok: '150' };
    const params = request(5_000, 1_000);
    const viaCost = evaluate(input({ params, card: () => pricey }));
    const viaTokens = evaluate(
      input({ params, card: () => pricey }, { perCallCap: { tokens: 8_000 } })
    );
    expect(viaCost.kind).toBe('budget_exceeded'); // 0.30 > 0.05
    expect(viaTokens.kind).toBe('proceed'); // 6,000 ≤ 8,000 tokens
  });

  it('session pool: the pool’s remainder is the limit, whatever the per-call cap says', () => {
    const pool = { amount: '1.00', currency: 'USD' };
    const e = proceed(
      evaluate(
        input({
          params: RFC,
          capScope: 'session-pool',
          sessionPool: pool,
          capState: { sessionPoolSpentMicros: 400_000 }
        })
      )
    );
    expect(e.limitMicros).toBe(600_000);
    expect(e.decision?.limitSource).toBe('session_pool');
    const drained = evaluate(
      input({
        params: RFC,
        capScope: 'session-pool',
        sessionPool: pool,
        capState: { sessionPoolSpentMicros: 950_000 }
      })
    );
    expect(drained).toMatchObject({
      kind: 'budget_exceeded',
      decision: { limitSource: 'session_pool', limitApplied: { amount: '0.0500' } }
    });
    expect(() => evaluate(input({ capScope: 'session-pool' }))).toThrow(/sessionPool/);
  });

  it('passes the consent setting through', () => {
    expect(proceed(evaluate(input({}, { consent: 'deny' }))).consent).toBe('deny');
    expect(proceed(evaluate(input({}, { consent: 'allow' }))).consent).toBe('allow');
  });

  it('never proceeds over a money limit it should have refused, nor past the window (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30_000 }),
        fc.integer({ min: 0, max: 8_000 }),
        fc.integer({ min: 0, max: 5_000_000 }),
        fc.integer({ min: 1, max: 200_000 }),
        fc.constantFrom<'reject' | 'truncate'>('reject', 'truncate'),
        (inTok, maxTok, spent, capMicros, mode) => {
          const volume: VolumeState = { ...initialVolume(BLOCK, NOW), budgetSpentMicros: spent };
          const cap = { amount: fromMicros(capMicros, 6), currency: 'USD' };
          const e = evaluate(
            input(
              { params: request(inTok, maxTok), volume, preflightDefault: mode },
              { perCallCap: cap }
            )
          );
          const remaining = 5_000_000 - spent;
          const estimate = estimateCostMicros(CARD, inTok, maxTok);
          if (e.kind === 'deny') {
            expect(e.reason).toBe(
              inTok > 32_000 ? 'policy.input_too_large' : 'policy.budget_exhausted'
            );
            return;
          }
          const limit = Math.min(capMicros, remaining);
          if (e.kind === 'budget_exceeded') {
            expect(estimate).toBeGreaterThan(limit);
            return;
          }
          expect(e.limitMicros).toBe(limit);
          if (mode === 'reject') expect(estimate).toBeLessThanOrEqual(limit);
          else expect(estimateCostMicros(CARD, inTok, 0)).toBeLessThanOrEqual(limit);
        }
      )
    );
  });
});

describe('askAbove: cheap calls go ahead without a dialog', () => {
  // The default request: 1,000 input tokens at $3/Mtok + 500 maxTokens at $15/Mtok = $0.0105.
  const usd = (amount: string) => ({ askAbove: { amount, currency: 'USD' } });

  it('an estimate at the threshold is not asked, and the evaluation says why', () => {
    const e = proceed(evaluate(input({}, usd('0.0105'))));
    expect(e.consent).toBe('allow');
    expect(e.consentSkipped).toEqual({
      estimatedCost: { amount: '0.0105', currency: 'USD' },
      askAbove: { amount: '0.0105', currency: 'USD' }
    });
    // The same estimate the budget decision states (and the handler's consent callback gets).
    expect(e.decision?.estimatedCost).toEqual(e.consentSkipped?.estimatedCost);
    expect(consentSkippedText(e.consentSkipped!)).toBe('estimate 0.0105 USD ≤ askAbove 0.0105 USD');
  });

  it('below the threshold: not asked; one micro-unit above it: asked', () => {
    expect(proceed(evaluate(input({}, usd('0.02')))).consent).toBe('allow');
    const above = proceed(evaluate(input({}, usd('0.010499'))));
    expect(above.consent).toBe('ask');
    expect(above.consentSkipped).toBeUndefined();
  });

  it('judges the whole maxTokens allowance, not what a call usually uses', () => {
    // Same prompt, so the same identity: maxTokens is outside it, and decides the estimate.
    expect(proceed(evaluate(input({ params: request(1_000, 500) }, usd('0.0105')))).consent).toBe(
      'allow'
    );
    expect(proceed(evaluate(input({ params: request(1_000, 501) }, usd('0.0105')))).consent).toBe(
      'ask'
    );
  });

  it('a threshold in another currency than the rate card never applies: asked, not converted', () => {
    const e = proceed(evaluate(input({}, { askAbove: { amount: '100', currency: 'EUR' } })));
    expect(e.consent).toBe('ask');
    expect(e.consentSkipped).toBeUndefined();
  });

  it('a call with no estimate is not cheap', () => {
    const block = { ...BLOCK, ...usd('100') };
    expect(consentSkip(block, undefined, 1, 1)).toBeNull();
    // In evaluation a model without a rate card is refused before consent is considered.
    const e = evaluate(input({ card: () => undefined }, usd('100')));
    expect(e).toMatchObject({ kind: 'deny', reason: 'policy.model_not_allowed' });
  });

  it('null or absent: always ask (policies written before askAbove mean what they meant)', () => {
    expect(proceed(evaluate(input({}, { askAbove: null }))).consent).toBe('ask');
    expect('askAbove' in BLOCK).toBe(false);
    expect(proceed(evaluate(input())).consent).toBe('ask');
  });

  it('only replaces "ask": a standing deny stays a denial, allow stays allow with no basis', () => {
    const deny = proceed(evaluate(input({}, { consent: 'deny', ...usd('1') })));
    expect(deny.consent).toBe('deny');
    expect(deny.consentSkipped).toBeUndefined();
    const allow = proceed(evaluate(input({}, { consent: 'allow', ...usd('1') })));
    expect(allow.consent).toBe('allow');
    expect(allow.consentSkipped).toBeUndefined();
  });

  it('never skips the rate limit', () => {
    const b = { ...BLOCK, ...usd('1') };
    const volume: VolumeState = { ...initialVolume(b, NOW), rateCount: 30 };
    expect(evaluate(input({ volume }, usd('1')))).toMatchObject({
      kind: 'deny',
      reason: 'policy.rate_limit'
    });
  });

  it('never skips a spent budget window', () => {
    const b = { ...BLOCK, ...usd('1') };
    const volume: VolumeState = { ...initialVolume(b, NOW), budgetSpentMicros: 5_000_000 };
    expect(evaluate(input({ volume }, usd('1')))).toMatchObject({
      kind: 'deny',
      reason: 'policy.budget_exhausted'
    });
  });

  it('never skips the per-call cap: over it is a cost refusal, whatever the threshold', () => {
    // The RFC request estimates $0.10272 against the $0.05 cap; a $1 threshold does not help it.
    expect(evaluate(input({ params: RFC }, usd('1'))).kind).toBe('budget_exceeded');
  });

  it('a truncated call is judged on its estimate, not on the limit that truncates it', () => {
    // Over the $0.05 cap, truncated to it: a $0.06 threshold would cover the limit, not the ask.
    const params = { ...request(1_000, 5_000), budget: { onExceeded: 'truncate' as const } };
    const e = proceed(evaluate(input({ params }, usd('0.06'))));
    expect(e.limitMicros).toBe(50_000);
    expect(e.consent).toBe('ask');
  });
});
