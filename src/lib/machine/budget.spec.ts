import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  chunkCrosses,
  estimateCostMicros,
  estimateTokens,
  exactShrink,
  exactShrinkInputTokens,
  inputTokensOf,
  intentHonored,
  meterBasis,
  meteredCost,
  naiveShrinkInputTokens,
  naiveShrinkRatio,
  parseMeterBasis,
  preflight,
  preflightTokens,
  tokenMeterBasis,
  type RateCard
} from './budget';
import { fromMicros } from './money';
import type { SamplingParams } from './types';

/** The RFC's rate card: $3 / $15 per million tokens. */
const CARD: RateCard = {
  model: 'example-model-v2',
  version: '2026-07-01',
  currency: 'USD',
  inputPerMtok: '3',
  outputPerMtok: '15'
};

/** The RFC's refusal: 24,000 input tokens, maxTokens 2,048, limit $0.05. */
const rfcRefusal = () =>
  preflight({
    card: CARD,
    inputTokens: 24_000,
    maxTokens: 2_048,
    limitMicros: 50_000,
    limitSource: 'host_policy'
  });

describe('meter basis', () => {
  it('is exactly the RFC string, with two decimals', () => {
    expect(meterBasis(CARD)).toBe('example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok');
  });

  it('states the cached-input price when the card has one', () => {
    expect(meterBasis({ ...CARD, cachedInputPerMtok: '0.3' })).toBe(
      'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok,cached=0.30/Mtok'
    );
  });

  it('keeps sub-cent prices exact rather than rounding them to two decimals', () => {
    expect(meterBasis({ ...CARD, inputPerMtok: '0.075' })).toBe(
      'example-model-v2@2026-07-01:in=0.075/Mtok,out=15.00/Mtok'
    );
  });

  it('parses back into prices in micros per Mtok', () => {
    expect(parseMeterBasis(meterBasis({ ...CARD, cachedInputPerMtok: '0.30' }))).toEqual({
      ok: true,
      basis: {
        meter: 'cost',
        model: 'example-model-v2',
        version: '2026-07-01',
        inPerMtokMicros: 3_000_000,
        outPerMtokMicros: 15_000_000,
        cachedPerMtokMicros: 300_000
      }
    });
  });

  it('parses model names containing ":" and "@" from the right', () => {
    const r = parseMeterBasis(meterBasis({ ...CARD, model: 'org@llama3:8b' }));
    expect(r).toMatchObject({ ok: true, basis: { model: 'org@llama3:8b', version: '2026-07-01' } });
  });

  it('reads the token-meter basis', () => {
    expect(tokenMeterBasis(CARD)).toBe(
      'example-model-v2@2026-07-01:tokens=in+out,in=3.00/Mtok,out=15.00/Mtok'
    );
    expect(parseMeterBasis(tokenMeterBasis(CARD))).toMatchObject({
      ok: true,
      basis: { meter: 'tokens' }
    });
  });

  it.each([
    ['no-colon', /model@version:terms/],
    ['m:in=3.00/Mtok,out=15.00/Mtok', /model@version/],
    ['m@v:in=3.00/Mtok', /both in= and out=/],
    ['m@v:in=3.00/Mtok,out=15.00/Mtok,fx=1', /unknown term "fx"/],
    ['m@v:in=3.00/tok,out=15.00/Mtok', /not per Mtok/],
    ['m@v:in=3.00/Mtok,in=3.00/Mtok,out=1/Mtok', /twice/],
    ['m@v:in=-3/Mtok,out=15.00/Mtok', /sign/],
    ['m@v:in', /not key=value/]
  ])('refuses %j as a value', (s, why) => {
    const r = parseMeterBasis(s);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(why);
  });
});

describe('token estimates', () => {
  it('is ceil(characters / 4)', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('x'.repeat(96_000))).toBe(24_000);
  });

  it('counts code points, not UTF-16 units', () => {
    expect(estimateTokens('😀😀😀😀')).toBe(1);
    expect(estimateTokens('é'.normalize('NFD'))).toBe(1); // two code points, still one token
  });

  it('counts the system prompt and every text block of every message, once', () => {
    const params: SamplingParams = {
      systemPrompt: 'abc',
      messages: [
        { role: 'user', content: { type: 'text', text: 'defgh' } },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'ij' },
            { type: 'image', data: 'AAAA', mimeType: 'image/png' }
          ]
        }
      ],
      maxTokens: 10
    };
    expect(inputTokensOf(params)).toBe(3); // 10 characters → ceil(10 / 4)
  });

  it('skips malformed content instead of throwing on a server’s input', () => {
    const params = {
      messages: [null, { role: 'user', content: { type: 'text', text: 42 } }, { role: 'user' }],
      maxTokens: 1
    } as unknown as SamplingParams;
    expect(inputTokensOf(params)).toBe(0);
  });
});

describe('estimateCostMicros', () => {
  it('prices the RFC request at 102,720 µ$ ("0.1027")', () => {
    expect(estimateCostMicros(CARD, 24_000, 0)).toBe(72_000);
    expect(estimateCostMicros(CARD, 0, 2_048)).toBe(30_720);
    expect(estimateCostMicros(CARD, 24_000, 2_048)).toBe(102_720);
    expect(fromMicros(estimateCostMicros(CARD, 24_000, 2_048))).toBe('0.1027');
  });

  it('rounds a partial micro-unit up, once, on the total', () => {
    const cheap: RateCard = { ...CARD, inputPerMtok: '0.30', outputPerMtok: '0.30' };
    expect(estimateCostMicros(cheap, 1, 0)).toBe(1); // 0.3 µ$ → 1
    expect(estimateCostMicros(cheap, 5, 5)).toBe(3); // 1.5 + 1.5 = 3.0, not 2 + 2
  });

  it('stays exact beyond 2^53 intermediate products', () => {
    const pricey: RateCard = { ...CARD, inputPerMtok: '100', outputPerMtok: '100' };
    // 1e9 tokens × 1e8 µ$/Mtok = 1e17 (> 2^53) / 1e6 = 1e11 µ$.
    expect(estimateCostMicros(pricey, 1_000_000_000, 0)).toBe(100_000_000_000);
    expect(estimateCostMicros(pricey, 1_000_000_001, 0)).toBe(100_000_000_100);
  });

  it('prices cached input at the cached price, or the input price without one', () => {
    const cached: RateCard = { ...CARD, cachedInputPerMtok: '0.30' };
    expect(estimateCostMicros(cached, 1_000, 0, 20_000)).toBe(3_000 + 6_000);
    expect(estimateCostMicros(CARD, 1_000, 0, 20_000)).toBe(3_000 + 60_000);
  });

  it('throws on a negative or fractional token count (a bug)', () => {
    expect(() => estimateCostMicros(CARD, -1, 0)).toThrow(/inputTokens/);
    expect(() => estimateCostMicros(CARD, 0, 1.5)).toThrow(/outputTokens/);
  });
});

describe('pre-flight', () => {
  it('refuses the RFC request with the RFC decision, exactly', () => {
    const r = rfcRefusal();
    expect(r.within).toBe(false);
    expect(r.estimateMicros).toBe(102_720);
    expect(r.decision).toEqual({
      estimatedCost: { amount: '0.10272', currency: 'USD' },
      limitApplied: { amount: '0.0500', currency: 'USD' },
      limitSource: 'host_policy',
      meterBasis: 'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok',
      estimatedTokens: { input: 24_000, output: 2_048 },
      requestHonored: true
    });
  });

  it('is within when the estimate equals the limit', () => {
    const r = preflight({
      card: CARD,
      inputTokens: 24_000,
      maxTokens: 2_048,
      limitMicros: 102_720,
      limitSource: 'budget_window'
    });
    expect(r.within).toBe(true);
    expect(r.decision.limitSource).toBe('budget_window');
  });

  it('states an odd limit exactly, so a server never sizes against a rounded-up limit', () => {
    const r = preflight({
      card: CARD,
      inputTokens: 1,
      maxTokens: 1,
      limitMicros: 397_280,
      limitSource: 'budget_window'
    });
    expect(r.decision.limitApplied.amount).toBe('0.39728');
  });

  it('records whether the advisory intent covers the estimate, and decides nothing with it', () => {
    const withIntent = (amount: string, currency = 'USD') =>
      preflight({
        card: CARD,
        inputTokens: 24_000,
        maxTokens: 2_048,
        limitMicros: 200_000,
        limitSource: 'host_policy',
        intent: { maxCost: { amount, currency } }
      });
    expect(withIntent('0.05').decision.requestHonored).toBe(false);
    expect(withIntent('0.05').within).toBe(true); // the host limit decides, not the intent
    expect(withIntent('0.20').decision.requestHonored).toBe(true);
    expect(withIntent('0.1027').decision.requestHonored).toBe(false); // 102,700 < 102,720
    expect(withIntent('0.20', 'EUR').decision.requestHonored).toBe(false); // never converted
    expect(withIntent('lots').decision.requestHonored).toBe(false);
    expect(intentHonored(undefined, 1, 'USD')).toBe(true);
    expect(intentHonored({}, 1, 'USD')).toBe(true);
  });

  it('counts cached input in the estimated input tokens', () => {
    const r = preflight({
      card: { ...CARD, cachedInputPerMtok: '0.30' },
      inputTokens: 1_000,
      cachedInputTokens: 20_000,
      maxTokens: 0,
      limitMicros: 1_000_000,
      limitSource: 'host_policy'
    });
    expect(r.estimateMicros).toBe(9_000);
    expect(r.decision.estimatedTokens.input).toBe(21_000);
  });
});

describe('the stream meter', () => {
  const money = (limitMicros: number | null) => ({ limitMicros, limitTokens: null });
  const at = (outputTokens: number, cachedInputTokens = 0) => ({
    inputTokens: 1_000,
    cachedInputTokens,
    outputTokens
  });

  it('stops before the chunk that would cross 0.0140, with 0.0090 spent (RFC)', () => {
    expect(meteredCost(CARD, at(0))).toBe(3_000);
    expect(chunkCrosses(CARD, money(14_000), at(0), 400)).toBe(false);
    expect(fromMicros(meteredCost(CARD, at(400)))).toBe('0.0090');
    expect(chunkCrosses(CARD, money(14_000), at(400), 400)).toBe(true); // 15,000 > 14,000
    expect(fromMicros(estimateCostMicros(CARD, 1_000, 800))).toBe('0.0150');
  });

  it('lets a smaller chunk through when it fits exactly', () => {
    expect(chunkCrosses(CARD, money(14_000), at(400), 333)).toBe(false); // 13,995
    expect(chunkCrosses(CARD, money(14_000), at(400), 334)).toBe(true); // 14,010
  });

  it('meters without a limit when both limits are null', () => {
    expect(chunkCrosses(CARD, money(null), at(1_000_000), 1_000_000)).toBe(false);
    expect(meteredCost(CARD, at(1_000_000))).toBe(3_000 + 15_000_000);
  });

  it('prices cached input on a warm cache (cached tokens are part of the input)', () => {
    const card = { ...CARD, cachedInputPerMtok: '0.30' };
    const r = { inputTokens: 11_000, cachedInputTokens: 10_000, outputTokens: 0 };
    expect(meteredCost(card, r)).toBe(3_000 + 3_000);
  });

  it('stops at whichever limit comes first when both a token cap and money bind', () => {
    const both = { limitMicros: 10_000, limitTokens: 1_800 };
    expect(chunkCrosses(CARD, both, at(400), 400)).toBe(true); // money: 3,000 + 12,000 > 10,000
    expect(chunkCrosses(CARD, { ...both, limitMicros: 100_000 }, at(400), 400)).toBe(false);
    expect(chunkCrosses(CARD, { ...both, limitMicros: 100_000 }, at(800), 400)).toBe(true); // tokens
  });

  it('rejects a malformed chunk size', () => {
    expect(() => chunkCrosses(CARD, money(14_000), at(0), -1)).toThrow(/outputTokens/);
  });

  it('saturates instead of throwing on a cost past 2^53 µ$ (an absurd maxTokens is refused, not a crash)', () => {
    expect(estimateCostMicros(CARD, 0, 9_000_000_000_000_000 - 1)).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('the token meter (RFC open question: cost or token meter)', () => {
  it('refuses pre-flight on input + maxTokens over the token limit', () => {
    const r = preflightTokens({
      card: CARD,
      inputTokens: 24_000,
      maxTokens: 2_048,
      limitTokens: 20_000
    });
    expect(r.within).toBe(false);
    expect(r.estimateTokens).toBe(26_048);
    expect(r.decision).toEqual({
      estimatedCost: { amount: '0.10272', currency: 'USD' },
      limitApplied: { amount: '20000', currency: 'tokens' },
      limitSource: 'token_meter',
      meterBasis: 'example-model-v2@2026-07-01:tokens=in+out,in=3.00/Mtok,out=15.00/Mtok',
      estimatedTokens: { input: 24_000, output: 2_048 },
      requestHonored: true
    });
  });

  it('is blind to price: the same tokens pass on a model ten times the price', () => {
    const pricey: RateCard = { ...CARD, inputPerMtok: '30', outputPerMtok: '150' };
    const a = preflightTokens({
      card: CARD,
      inputTokens: 10_000,
      maxTokens: 2_000,
      limitTokens: 12_000
    });
    const b = preflightTokens({
      card: pricey,
      inputTokens: 10_000,
      maxTokens: 2_000,
      limitTokens: 12_000
    });
    expect(a.within && b.within).toBe(true);
    expect(b.estimateMicros).toBe(10 * a.estimateMicros);
  });

  it('stops the stream before the chunk that would cross the token limit', () => {
    const tokens = { limitMicros: null, limitTokens: 1_800 };
    const r = { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 800 };
    expect(chunkCrosses(CARD, tokens, r, 400)).toBe(true);
    expect(chunkCrosses(CARD, tokens, r, 0)).toBe(false);
    expect(meteredCost(CARD, r)).toBe(3_000 + 12_000); // money is still tracked for the audit
  });
});

describe('deterministic shrink (RFC numbers)', () => {
  // The estimate is exact ("0.10272", not the RFC's rounded "0.1027"), so the naive ratio reads
  // 0.4867 rather than the RFC's 0.4868: still "retry at ~48 %", still refused again.
  it('naive: limit / estimate ≈ 0.4867, "retry at ~48 %" → 11,680 input tokens', () => {
    const { decision } = rfcRefusal();
    expect(naiveShrinkRatio(decision)).toBe(0.4867);
    expect(naiveShrinkInputTokens(decision)).toBe(11_680);
  });

  it('the naive retry is refused again: the output side does not shrink', () => {
    const { decision } = rfcRefusal();
    const retry = preflight({
      card: CARD,
      inputTokens: naiveShrinkInputTokens(decision)!,
      maxTokens: 2_048,
      limitMicros: 50_000,
      limitSource: 'host_policy'
    });
    expect(retry.within).toBe(false);
    expect(retry.estimateMicros).toBe(11_680 * 3 + 30_720); // 65,760 > 50,000
    expect(retry.decision.estimatedCost.amount).toBe('0.06576');
  });

  it('exact, from the meter basis alone: 6,426 input tokens (≈ 26.8 %)', () => {
    const { decision } = rfcRefusal();
    const r = exactShrink(decision);
    expect(r).toMatchObject({ ok: true, inputTokens: 6_426 });
    if (r.ok) expect(r.ratio).toBeCloseTo(0.268, 3);
    expect(exactShrinkInputTokens(decision)).toBe(6_426);
    expect(exactShrinkInputTokens(decision, CARD)).toBe(6_426);
  });

  it('the exact retry passes, and one more token would not', () => {
    const at = (inputTokens: number) =>
      preflight({
        card: CARD,
        inputTokens,
        maxTokens: 2_048,
        limitMicros: 50_000,
        limitSource: 'host_policy'
      });
    expect(at(6_426).within).toBe(true);
    expect(at(6_426).estimateMicros).toBe(49_998);
    expect(at(6_427).within).toBe(false);
    expect(at(6_427).estimateMicros).toBe(50_001);
    // A refusal never shows estimate ≤ limit: not "0.0500" against "0.0500".
    expect(at(6_427).decision.estimatedCost.amount).toBe('0.050001');
    expect(at(6_427).decision.limitApplied.amount).toBe('0.0500');
  });

  it('refuses as a value when the output alone exceeds the limit', () => {
    const { decision } = preflight({
      card: CARD,
      inputTokens: 24_000,
      maxTokens: 4_000, // 60,000 µ$ of output > 50,000
      limitMicros: 50_000,
      limitSource: 'host_policy'
    });
    const r = exactShrink(decision);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/output side alone.*shrink maxTokens/);
    expect(exactShrinkInputTokens(decision)).toBeNull();
  });

  it('refuses as a value when the basis cannot be read or the card is in another currency', () => {
    const { decision } = rfcRefusal();
    expect(exactShrink({ ...decision, meterBasis: 'vendor-contract-7' }).ok).toBe(false);
    expect(exactShrink(decision, { ...CARD, currency: 'EUR' }).ok).toBe(false);
    expect(
      naiveShrinkRatio({ ...decision, estimatedCost: { amount: '0', currency: 'USD' } })
    ).toBeNull();
    expect(
      naiveShrinkRatio({ ...decision, limitApplied: { amount: '0.05', currency: 'EUR' } })
    ).toBeNull();
  });

  it('never grows a request that already fits', () => {
    const { decision } = preflight({
      card: CARD,
      inputTokens: 1_000,
      maxTokens: 100,
      limitMicros: 50_000,
      limitSource: 'host_policy'
    });
    expect(exactShrinkInputTokens(decision)).toBe(1_000);
    expect(naiveShrinkRatio(decision)).toBe(1);
  });

  it('shrinks against a token-meter decision too', () => {
    const { decision } = preflightTokens({
      card: CARD,
      inputTokens: 24_000,
      maxTokens: 2_048,
      limitTokens: 20_000
    });
    expect(exactShrinkInputTokens(decision)).toBe(20_000 - 2_048);
    const garbled = { ...decision, limitApplied: { amount: '', currency: 'tokens' } };
    expect(exactShrinkInputTokens(garbled)).toBeNull();
    const fractional = { ...decision, estimatedTokens: { input: 1.5, output: 2_048 } };
    expect(exactShrinkInputTokens(fractional)).toBeNull();
    expect(naiveShrinkInputTokens(fractional)).toBeNull();
    expect(naiveShrinkInputTokens(decision)).toBe(Math.floor((24_000 * 7678) / 10_000));
  });

  it('exact shrink fits and one more token does not, for any prices (property)', () => {
    const price = fc.integer({ min: 1, max: 200_000_000 }); // up to $200/Mtok, in micros
    fc.assert(
      fc.property(
        price,
        price,
        fc.integer({ min: 1, max: 2_000_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 5_000_000 }),
        (inP, outP, input, output, limit) => {
          const card: RateCard = {
            ...CARD,
            inputPerMtok: fromMicros(inP, 6),
            outputPerMtok: fromMicros(outP, 6)
          };
          const { decision, within } = preflight({
            card,
            inputTokens: input,
            maxTokens: output,
            limitMicros: limit,
            limitSource: 'host_policy'
          });
          const n = exactShrinkInputTokens(decision);
          if (n === null) {
            // No input size fits: even zero input is over the limit.
            expect(estimateCostMicros(card, 0, output)).toBeGreaterThan(limit);
            return;
          }
          expect(n).toBeLessThanOrEqual(input);
          expect(estimateCostMicros(card, n, output)).toBeLessThanOrEqual(limit);
          if (!within) expect(estimateCostMicros(card, n + 1, output)).toBeGreaterThan(limit);
          else expect(n).toBe(input);
        }
      )
    );
  });
});

describe('prompt-cache state (the RFC criticism)', () => {
  it('a cheaper model without a warm cache can cost more over a series than the dearer model with one', () => {
    // Ten calls sharing a 20,000-token prefix, each adding 500 new tokens and answering in 300.
    const dear: RateCard = { ...CARD, model: 'dear', cachedInputPerMtok: '0.30' };
    const cheap: RateCard = {
      ...CARD,
      model: 'cheap',
      inputPerMtok: '1.00',
      outputPerMtok: '5.00'
    };
    const calls = 10;
    const prefix = 20_000;
    const fresh = 500;
    const out = 300;

    // The dear model: the first call is cold, then the prefix is read from cache.
    let dearTotal = estimateCostMicros(dear, prefix + fresh, out);
    for (let i = 1; i < calls; i++) dearTotal += estimateCostMicros(dear, fresh, out, prefix);

    // The cheap substitute pays cold-cache input on every call (no cache on this model).
    let cheapTotal = 0;
    for (let i = 0; i < calls; i++) cheapTotal += estimateCostMicros(cheap, prefix + fresh, out);

    // Per call, cold, the cheap model is a third of the price...
    expect(estimateCostMicros(cheap, prefix + fresh, out)).toBeLessThan(
      estimateCostMicros(dear, prefix + fresh, out) / 2
    );
    // ...and over the series it costs more: "downgrade to fit the budget" is not reliably cheaper.
    expect(fromMicros(dearTotal)).toBe('0.1740'); // 66,000 + 9 × 12,000
    expect(fromMicros(cheapTotal)).toBe('0.2200'); // 10 × 22,000
    expect(cheapTotal).toBeGreaterThan(dearTotal);
  });
});
