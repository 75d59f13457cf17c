/**
 * Budget caps (SPEC §6, the RFC): rate cards, token estimates, the pre-flight estimate and its
 * decision basis, the stream meter that stops before the chunk that would cross the cap, the
 * token-meter variant, and the deterministic shrink a server can compute from a refusal.
 *
 * All cost arithmetic is in integer micro-units (see money.ts). A price per million tokens in
 * micros times a token count, divided by a million, is usually not whole: every estimate rounds the
 * partial micro-unit UP, once, on the total, so an estimate never under-states the cost and the
 * meter (which prices cumulative totals, never chunk by chunk) never drifts from it.
 */
import {
  MICROS_PER_UNIT,
  currencyMismatch,
  fromMicros,
  fromMicrosExact,
  money,
  parseMoneyAmount,
  toMicros
} from './money';
import type { BudgetDecision, BudgetIntent, SamplingParams } from './types';

// ───────────────────────────── rate cards and the meter basis ─────────────────────────────

/** A model's prices, as the host knows them. Prices are decimal strings per million tokens. */
export interface RateCard {
  model: string;
  /** When these prices took effect, e.g. `'2026-07-01'`: part of the meter basis. */
  version: string;
  currency: string;
  inputPerMtok: string;
  outputPerMtok: string;
  /** The price of input tokens read from a warm prompt cache; absent = the input price. */
  cachedInputPerMtok?: string;
}

/** The unit a token meter's `limitApplied` is stated in (it is not a currency). */
export const TOKEN_UNIT = 'tokens';

/** Tokens per "Mtok": prices are per million tokens. */
const MTOK = 1_000_000;

interface Prices {
  inPerMtok: number;
  outPerMtok: number;
  cachedPerMtok: number;
}

/** A card's prices in micro-units per million tokens; throws on a malformed card (a bug). */
function pricesOf(card: RateCard): Prices {
  const inPerMtok = toMicros(card.inputPerMtok);
  return {
    inPerMtok,
    outPerMtok: toMicros(card.outputPerMtok),
    cachedPerMtok:
      card.cachedInputPerMtok === undefined ? inPerMtok : toMicros(card.cachedInputPerMtok)
  };
}

/**
 * A price as it appears in a meter basis: two decimals, more only when two would lose precision
 * (`3` → `3.00`, `0.075` → `0.075`), so the basis stays exact and a server can compute with it.
 */
function formatPrice(micros: number): string {
  return fromMicrosExact(micros, 2);
}

function priceTerms(card: RateCard): string {
  const p = pricesOf(card);
  const terms = [`in=${formatPrice(p.inPerMtok)}/Mtok`, `out=${formatPrice(p.outPerMtok)}/Mtok`];
  if (card.cachedInputPerMtok !== undefined)
    terms.push(`cached=${formatPrice(p.cachedPerMtok)}/Mtok`);
  return terms.join(',');
}

/**
 * The decision's meter basis for a cost meter:
 * `example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok` (plus `,cached=0.30/Mtok` when the
 * card prices cached input). The RFC leaves the grammar to the host; this one is exact and
 * machine-readable so a server can shrink deterministically from the decision alone.
 */
export function meterBasis(card: RateCard): string {
  return `${card.model}@${card.version}:${priceTerms(card)}`;
}

/**
 * The meter basis for a token meter: the limit counts input + output tokens; the prices follow
 * because the decision's `estimatedCost` is still priced from the card.
 * `example-model-v2@2026-07-01:tokens=in+out,in=3.00/Mtok,out=15.00/Mtok`.
 */
export function tokenMeterBasis(card: RateCard): string {
  return `${card.model}@${card.version}:tokens=in+out,${priceTerms(card)}`;
}

/** A meter basis read back into numbers (prices in micro-units per million tokens). */
export interface ParsedMeterBasis {
  meter: 'cost' | 'tokens';
  model: string;
  version: string;
  inPerMtokMicros: number;
  outPerMtokMicros: number;
  /** Present when the basis states a cached-input price. */
  cachedPerMtokMicros?: number;
}

/**
 * Read a meter basis produced by `meterBasis` / `tokenMeterBasis`. Parsed from the right, because
 * model names may contain `:` or `@` (`llama3:8b`) while versions and price terms do not.
 * Another host's grammar is a value-level error, never a throw: the basis comes over the wire.
 */
export function parseMeterBasis(
  s: string
): { ok: true; basis: ParsedMeterBasis } | { ok: false; error: string } {
  const fail = (why: string) => ({ ok: false as const, error: `meter basis "${s}": ${why}` });
  const colon = s.lastIndexOf(':');
  if (colon < 0) return fail('expected model@version:terms');
  const head = s.slice(0, colon);
  const at = head.lastIndexOf('@');
  if (at <= 0 || at === head.length - 1) return fail('expected model@version before the colon');
  let meter: 'cost' | 'tokens' = 'cost';
  const prices: Partial<Record<'in' | 'out' | 'cached', number>> = {};
  for (const term of s.slice(colon + 1).split(',')) {
    const eq = term.indexOf('=');
    const key = term.slice(0, eq);
    const value = term.slice(eq + 1);
    if (eq < 0) return fail(`term "${term}" is not key=value`);
    if (key === 'tokens') {
      if (value !== 'in+out') return fail(`unknown token meter "${value}"`);
      meter = 'tokens';
      continue;
    }
    if (key !== 'in' && key !== 'out' && key !== 'cached') return fail(`unknown term "${key}"`);
    if (prices[key] !== undefined) return fail(`"${key}" appears twice`);
    if (!value.endsWith('/Mtok')) return fail(`price "${value}" is not per Mtok`);
    const amount = parseMoneyAmount(value.slice(0, -'/Mtok'.length));
    if (!amount.ok) return fail(amount.error);
    prices[key] = amount.micros;
  }
  if (prices.in === undefined || prices.out === undefined) return fail('needs both in= and out=');
  return {
    ok: true,
    basis: {
      meter,
      model: head.slice(0, at),
      version: head.slice(at + 1),
      inPerMtokMicros: prices.in,
      outPerMtokMicros: prices.out,
      ...(prices.cached === undefined ? {} : { cachedPerMtokMicros: prices.cached })
    }
  };
}

// ───────────────────────────── token estimates ─────────────────────────────

/**
 * A deterministic stand-in tokenizer: ceil(characters / 4), characters counted as Unicode code
 * points (an emoji is one character, not two UTF-16 units). Real tokenizers differ per model;
 * what matters here is that the same text always gives the same count, in the browser and in Node,
 * and that the count grows with the text, so the shrink arithmetic and the caps are checkable.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(codePoints(text) / 4);
}

function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point: skip the low half.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * The input tokens of a request: the system prompt and every text block of every message, counted
 * together (one rounding, not one per block). Non-text blocks count zero in this simulator, and
 * malformed content (a server's, so never trusted) is skipped rather than thrown on.
 */
export function inputTokensOf(params: SamplingParams): number {
  let chars = typeof params.systemPrompt === 'string' ? codePoints(params.systemPrompt) : 0;
  const messages: unknown = params.messages;
  if (Array.isArray(messages)) {
    for (const m of messages as unknown[]) {
      const content = (m as { content?: unknown } | null)?.content;
      const blocks: unknown[] = Array.isArray(content) ? content : [content];
      for (const b of blocks) {
        if (b && typeof b === 'object' && (b as { type?: unknown }).type === 'text') {
          const text = (b as { text?: unknown }).text;
          if (typeof text === 'string') chars += codePoints(text);
        }
      }
    }
  }
  return Math.ceil(chars / 4);
}

// ───────────────────────────── cost ─────────────────────────────

function assertTokens(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`${name} must be a non-negative integer token count, got ${n}`);
  }
}

/** ceil(sum of tokens × price-per-Mtok / 1e6), exact: Numbers while safe, BigInt beyond. */
function costOf(terms: [tokens: number, perMtok: number][]): number {
  let sum = 0;
  let safe = true;
  for (const [t, p] of terms) {
    const product = t * p;
    // A float product ≥ 2^53 is inexact; monotone rounding makes this check reliable.
    if (product > Number.MAX_SAFE_INTEGER) safe = false;
    sum += product;
  }
  if (safe && sum <= Number.MAX_SAFE_INTEGER) {
    const rem = sum % MTOK;
    return (sum - rem) / MTOK + (rem > 0 ? 1 : 0);
  }
  let big = 0n;
  for (const [t, p] of terms) big += BigInt(t) * BigInt(p);
  const q = big / BigInt(MTOK) + (big % BigInt(MTOK) > 0n ? 1n : 0n);
  const out = Number(q);
  if (!Number.isSafeInteger(out)) throw new Error('cost exceeds the safe integer range of micros');
  return out;
}

/**
 * The cost in integer micro-units of `inputTokens` input tokens at the input price, `outputTokens`
 * at the output price, and `cachedInputTokens` further input tokens read from a warm prompt cache
 * at the cached price (the input price when the card has none). The three counts are disjoint:
 * total input = inputTokens + cachedInputTokens. Partial micro-units round up.
 *
 * RFC numbers: 24,000 × $3/Mtok + 2,048 × $15/Mtok = 72,000 + 30,720 = 102,720 µ$ ("0.1027").
 */
export function estimateCostMicros(
  card: RateCard,
  inputTokens: number,
  outputTokens: number,
  cachedInputTokens = 0
): number {
  assertTokens('inputTokens', inputTokens);
  assertTokens('outputTokens', outputTokens);
  assertTokens('cachedInputTokens', cachedInputTokens);
  const p = pricesOf(card);
  return costOf([
    [inputTokens, p.inPerMtok],
    [outputTokens, p.outPerMtok],
    [cachedInputTokens, p.cachedPerMtok]
  ]);
}

// ───────────────────────────── pre-flight ─────────────────────────────

/**
 * Whether the server's advisory intent covers the estimate. No intent (or no `maxCost`) is
 * trivially honoured; an intent in another currency or with a malformed amount cannot be
 * honoured, because amounts are never converted. Advisory only: it never decides anything.
 */
export function intentHonored(
  intent: BudgetIntent['intent'] | undefined,
  estimateMicros: number,
  currency: string
): boolean {
  const maxCost = intent?.maxCost;
  if (!maxCost) return true;
  if (currencyMismatch(maxCost.currency, currency)) return false;
  const parsed = parseMoneyAmount(maxCost.amount);
  return parsed.ok && parsed.micros >= estimateMicros;
}

export interface PreflightInput {
  card: RateCard;
  /** Input tokens billed at the input price. */
  inputTokens: number;
  /** The request's `maxTokens`: the estimate assumes the whole allowance is used. */
  maxTokens: number;
  /** The enforced limit in micro-units of the card's currency. */
  limitMicros: number;
  limitSource: BudgetDecision['limitSource'];
  /** Further input tokens expected from a warm cache (usually 0: a pre-flight assumes cold). */
  cachedInputTokens?: number;
  /** The request's advisory `budget.intent`, recorded as `requestHonored`. */
  intent?: BudgetIntent['intent'];
}

export interface PreflightResult {
  /** True when the estimate is within the limit (estimate ≤ limit). */
  within: boolean;
  estimateMicros: number;
  decision: BudgetDecision;
}

/**
 * The pre-flight check of a cost meter: estimate = input × input price + maxTokens × output price,
 * compared with the limit in micro-units. `estimatedCost` is shown at 4 decimals (half up, as in
 * the RFC's `0.1027`); `limitApplied` is at least 4 decimals and exact, because it is the figure a
 * server sizes its retry against and a rounded limit would send it back over.
 */
export function preflight(input: PreflightInput): PreflightResult {
  const { card, inputTokens, maxTokens, limitMicros, limitSource } = input;
  const cached = input.cachedInputTokens ?? 0;
  const estimateMicros = estimateCostMicros(card, inputTokens, maxTokens, cached);
  return {
    within: estimateMicros <= limitMicros,
    estimateMicros,
    decision: {
      estimatedCost: money(estimateMicros, card.currency),
      limitApplied: { amount: fromMicrosExact(limitMicros), currency: card.currency },
      limitSource,
      meterBasis: meterBasis(card),
      estimatedTokens: { input: inputTokens + cached, output: maxTokens },
      requestHonored: intentHonored(input.intent, estimateMicros, card.currency)
    }
  };
}

export interface PreflightTokensInput {
  card: RateCard;
  inputTokens: number;
  maxTokens: number;
  /** The enforced limit in tokens: input + output. */
  limitTokens: number;
  cachedInputTokens?: number;
  intent?: BudgetIntent['intent'];
}

export interface PreflightTokensResult {
  /** True when input + maxTokens ≤ the token limit. */
  within: boolean;
  estimateTokens: number;
  estimateMicros: number;
  decision: BudgetDecision;
}

/**
 * The token-meter variant (the RFC's open question "cost or token meter"): the limit counts tokens,
 * input + output, and says nothing about money — verifiable, and blind to price, which is the
 * trade-off the playground shows. The decision keeps the same shape so a server reads one format:
 * - `limitSource: 'token_meter'`, `limitApplied: { amount: "<tokens>", currency: "tokens" }`;
 * - the compared figure is `estimatedTokens.input + estimatedTokens.output`;
 * - `estimatedCost` is still money, priced from the card (a cost is a cost, whatever the meter),
 *   so `actualCost` added after the run stays in the same currency;
 * - `meterBasis` is `tokenMeterBasis(card)`.
 */
export function preflightTokens(input: PreflightTokensInput): PreflightTokensResult {
  const { card, inputTokens, maxTokens, limitTokens } = input;
  assertTokens('limitTokens', limitTokens);
  const cached = input.cachedInputTokens ?? 0;
  const estimateMicros = estimateCostMicros(card, inputTokens, maxTokens, cached);
  const estimateTokens = inputTokens + cached + maxTokens;
  return {
    within: estimateTokens <= limitTokens,
    estimateTokens,
    estimateMicros,
    decision: {
      estimatedCost: money(estimateMicros, card.currency),
      limitApplied: { amount: String(limitTokens), currency: TOKEN_UNIT },
      limitSource: 'token_meter',
      meterBasis: tokenMeterBasis(card),
      estimatedTokens: { input: inputTokens + cached, output: maxTokens },
      requestHonored: intentHonored(input.intent, estimateMicros, card.currency)
    }
  };
}

// ───────────────────────────── the stream meter ─────────────────────────────

/**
 * Meters a chunked stream against a limit. The host asks `wouldCross(chunk)` before accepting each
 * chunk and stops BEFORE the one that would cross, so the actual cost never exceeds the limit and
 * the partial content already accepted is kept (`budget_exhausted`).
 */
export interface StreamMeter {
  readonly meter: 'cost' | 'tokens';
  /** True when accepting a chunk of `chunkTokens` output tokens would take the meter over its limit. */
  wouldCross(chunkTokens: number): boolean;
  /** Count a chunk in. Throws if it would cross: the caller must have asked `wouldCross` first. */
  accept(chunkTokens: number): void;
  /** The actual cost so far in micro-units (input + output accepted), whatever the meter counts. */
  readonly actualMicros: number;
  /** Output tokens accepted so far. */
  readonly outputTokens: number;
  /** Total input tokens (billed + cached). */
  readonly inputTokens: number;
  /** The limit in micro-units (cost meter) or null. */
  readonly limitMicros: number | null;
  /** The limit in tokens (token meter) or null. */
  readonly limitTokens: number | null;
}

export interface MeterInput {
  card: RateCard;
  inputTokens: number;
  /** The cap in micro-units; null meters without a limit (the cost is still tracked). */
  limitMicros: number | null;
  cachedInputTokens?: number;
}

/**
 * A cost meter. RFC numbers: 1,000 input tokens at $3/Mtok (3,000 µ$), chunks of 400 output tokens
 * at $15/Mtok (6,000 µ$ each), cap 0.0140: after the first chunk the actual is 0.0090; the second
 * would make it 0.0150, so the host stops there with 0.0090 spent.
 */
export function createMeter(input: MeterInput): StreamMeter {
  const { card, inputTokens, limitMicros } = input;
  const cached = input.cachedInputTokens ?? 0;
  estimateCostMicros(card, inputTokens, 0, cached); // validates the counts and the card up front
  let out = 0;
  const costAt = (output: number) => estimateCostMicros(card, inputTokens, output, cached);
  const wouldCross = (chunk: number) => {
    assertTokens('chunkTokens', chunk);
    return limitMicros !== null && costAt(out + chunk) > limitMicros;
  };
  return {
    meter: 'cost',
    wouldCross,
    accept(chunk) {
      if (wouldCross(chunk)) throw new Error('meter: accepting this chunk would cross the limit');
      out += chunk;
    },
    get actualMicros() {
      return costAt(out);
    },
    get outputTokens() {
      return out;
    },
    inputTokens: inputTokens + cached,
    limitMicros,
    limitTokens: null
  };
}

export interface TokenMeterInput {
  card: RateCard;
  inputTokens: number;
  /** The cap in tokens, input + output. */
  limitTokens: number;
  cachedInputTokens?: number;
}

/** A token meter: stops before the chunk that would take input + output over `limitTokens`. */
export function createTokenMeter(input: TokenMeterInput): StreamMeter {
  const { card, inputTokens, limitTokens } = input;
  const cached = input.cachedInputTokens ?? 0;
  assertTokens('limitTokens', limitTokens);
  estimateCostMicros(card, inputTokens, 0, cached);
  let out = 0;
  const wouldCross = (chunk: number) => {
    assertTokens('chunkTokens', chunk);
    return inputTokens + cached + out + chunk > limitTokens;
  };
  return {
    meter: 'tokens',
    wouldCross,
    accept(chunk) {
      if (wouldCross(chunk)) throw new Error('meter: accepting this chunk would cross the limit');
      out += chunk;
    },
    get actualMicros() {
      return estimateCostMicros(card, inputTokens, out, cached);
    },
    get outputTokens() {
      return out;
    },
    inputTokens: inputTokens + cached,
    limitMicros: null,
    limitTokens
  };
}

// ───────────────────────────── deterministic shrink ─────────────────────────────

/** Basis points: the naive ratio is quoted to four decimals (48.68 %). */
const BP = 10_000;

/** The decision's limit and estimate as comparable integers, or null when they are not. */
function limitAndEstimate(decision: BudgetDecision): { limit: number; estimate: number } | null {
  // A decision may come over the wire: token counts that are not counts make it unusable.
  const { input, output } = decision.estimatedTokens;
  for (const n of [input, output]) if (!Number.isSafeInteger(n) || n < 0) return null;
  if (decision.limitApplied.currency === TOKEN_UNIT) {
    if (!/^\d+$/.test(decision.limitApplied.amount)) return null;
    const limit = Number(decision.limitApplied.amount);
    if (!Number.isSafeInteger(limit)) return null;
    return { limit, estimate: decision.estimatedTokens.input + decision.estimatedTokens.output };
  }
  if (currencyMismatch(decision.limitApplied.currency, decision.estimatedCost.currency))
    return null;
  const limit = parseMoneyAmount(decision.limitApplied.amount);
  const estimate = parseMoneyAmount(decision.estimatedCost.amount);
  if (!limit.ok || !estimate.ok) return null;
  return { limit: limit.micros, estimate: estimate.micros };
}

function ratioBp(decision: BudgetDecision): number | null {
  const le = limitAndEstimate(decision);
  if (!le || le.estimate <= 0) return null;
  return Math.min(BP, Math.floor((le.limit * BP) / le.estimate));
}

/**
 * The naive shrink a server reads off a refusal: limit / estimate, rounded down to four decimals
 * (and never above 1). RFC numbers: 0.0500 / 0.1027 → 0.4868, "retry at ~48 % of the input".
 * It is wrong in a useful way: it scales the whole estimate, but only the input shrinks — the
 * output side (maxTokens × output price) stays, so the retry is refused again.
 * Null when the decision's figures are unusable (unparseable, other currency, zero estimate).
 * For a token-meter decision the ratio is limit tokens / (input + output).
 */
export function naiveShrinkRatio(decision: BudgetDecision): number | null {
  const bp = ratioBp(decision);
  return bp === null ? null : bp / BP;
}

/** floor(input × naive ratio): 11,683 of 24,000 for the RFC numbers. Null as `naiveShrinkRatio`. */
export function naiveShrinkInputTokens(decision: BudgetDecision): number | null {
  const bp = ratioBp(decision);
  return bp === null ? null : Math.floor((decision.estimatedTokens.input * bp) / BP);
}

export type ExactShrink =
  { ok: true; inputTokens: number; ratio: number } | { ok: false; error: string };

/**
 * The exact shrink: the largest input token count n with n × input price + output × output price
 * ≤ limit, the output (maxTokens) held fixed, never more than the original input. The prices come
 * from `card` when given, else from parsing the decision's meter basis, so a server can compute it
 * from the decision alone. All input is priced at the full input price: a retry cannot count on a
 * warm cache. Exact integer arithmetic — since estimates round up once on the total,
 * ceil(x / 1e6) ≤ L ⇔ x ≤ L × 1e6, so n = floor((L × 1e6 − output × outPrice) / inPrice).
 *
 * RFC numbers: (50,000 × 1e6 − 2,048 × 15e6) / 3e6 = 6,426.67 → 6,426 tokens (26.8 % of 24,000):
 * 6,426 × 3 + 30,720 = 49,998 µ$ ≤ 50,000; 6,427 would cost 50,001.
 * For a token-meter decision n = limit − output. Refused as a value when the output alone exceeds
 * the limit (shrink maxTokens instead), or when the basis cannot be read.
 */
export function exactShrink(decision: BudgetDecision, card?: RateCard): ExactShrink {
  const le = limitAndEstimate(decision);
  if (!le) return { ok: false, error: 'the decision has no usable limit and estimate' };
  const original = decision.estimatedTokens.input;
  const output = decision.estimatedTokens.output;
  const ratioOf = (n: number) => ({
    ok: true as const,
    inputTokens: n,
    ratio: original > 0 ? n / original : 1
  });
  if (decision.limitApplied.currency === TOKEN_UNIT) {
    const n = le.limit - output;
    if (n < 0)
      return { ok: false, error: `the output side alone (${output} tokens) exceeds the limit` };
    return ratioOf(Math.min(n, original));
  }
  let inPrice: number;
  let outPrice: number;
  if (card) {
    if (currencyMismatch(card.currency, decision.limitApplied.currency)) {
      return { ok: false, error: currencyMismatch(card.currency, decision.limitApplied.currency)! };
    }
    const p = pricesOf(card);
    inPrice = p.inPerMtok;
    outPrice = p.outPerMtok;
  } else {
    const parsed = parseMeterBasis(decision.meterBasis);
    if (!parsed.ok) return parsed;
    inPrice = parsed.basis.inPerMtokMicros;
    outPrice = parsed.basis.outPerMtokMicros;
  }
  const room = BigInt(le.limit) * BigInt(MICROS_PER_UNIT) - BigInt(output) * BigInt(outPrice);
  if (room < 0n) {
    const outputCost = fromMicros(costOf([[output, outPrice]]));
    return {
      ok: false,
      error: `the output side alone (${output} tokens, ${outputCost}) exceeds the limit ${decision.limitApplied.amount}: shrink maxTokens`
    };
  }
  if (inPrice === 0) return ratioOf(original); // free input: any size fits
  const n = room / BigInt(inPrice);
  return ratioOf(n > BigInt(original) ? original : Number(n));
}

/** `exactShrink(...).inputTokens`, or null when no input size fits or the basis is unreadable. */
export function exactShrinkInputTokens(decision: BudgetDecision, card?: RateCard): number | null {
  const r = exactShrink(decision, card);
  return r.ok ? r.inputTokens : null;
}
