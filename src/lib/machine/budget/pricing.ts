/**
 * Rate cards, meter bases, token estimates and the cost of a token count (SPEC §6).
 *
 * All cost arithmetic is in integer micro-units (see money.ts). A price per million tokens in
 * micros times a token count, divided by a million, is usually not whole: every estimate rounds the
 * partial micro-unit UP, once, on the total, so an estimate never under-states the cost and the
 * meter (which prices cumulative totals, never chunk by chunk) never drifts from it.
 */
import { fromMicrosExact, parseMoneyAmount, toMicros } from '../money';
import type { SamplingParams } from '../types';

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

/**
 * The rate cards a host prices with when it is given none: the simulated provider's
 * (sim/actors/provider.ts) and the shipped handler's default `rateCards` (handler/options.ts).
 */
export const DEFAULT_RATE_CARDS: RateCard[] = [
  {
    model: 'example-model-v2',
    version: '2026-07-01',
    currency: 'USD',
    inputPerMtok: '3.00',
    outputPerMtok: '15.00',
    cachedInputPerMtok: '0.30'
  }
];

/** The unit a token meter's `limitApplied` is stated in (it is not a currency). */
export const TOKEN_UNIT = 'tokens';

/** Tokens per "Mtok": prices are per million tokens. */
const MTOK = 1_000_000;

export interface Prices {
  inPerMtok: number;
  outPerMtok: number;
  cachedPerMtok: number;
}

/** A card's prices in micro-units per million tokens; throws on a malformed card (a bug). */
export function pricesOf(card: RateCard): Prices {
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
  const known = bases.get(card);
  if (
    known !== undefined &&
    known.model === card.model &&
    known.version === card.version &&
    known.inputPerMtok === card.inputPerMtok &&
    known.outputPerMtok === card.outputPerMtok &&
    known.cachedInputPerMtok === card.cachedInputPerMtok
  )
    return known.basis;
  const basis = `${card.model}@${card.version}:${priceTerms(card)}`;
  bases.set(card, {
    model: card.model,
    version: card.version,
    inputPerMtok: card.inputPerMtok,
    outputPerMtok: card.outputPerMtok,
    cachedInputPerMtok: card.cachedInputPerMtok,
    basis
  });
  return basis;
}

/**
 * Each card's cost meter basis, with the members it was written from: every priced request's
 * decision carries it, and writing it (three prices formatted, joined) was a few microseconds
 * per request. Checked against the card's members on use, so a card changed in place is written
 * afresh.
 */
const bases = new WeakMap<RateCard, Omit<RateCard, 'currency'> & { basis: string }>();

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

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

function codePoints(text: string): number {
  // No high surrogate, no pair: one code point per UTF-16 unit (the regex scan is native, the
  // loop below is not — this runs over every prompt of every evaluation).
  if (!HIGH_SURROGATE.test(text)) return text.length;
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

export function assertTokens(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`${name} must be a non-negative integer token count, got ${n}`);
  }
}

/** ceil(sum of tokens × price-per-Mtok / 1e6), exact: Numbers while safe, BigInt beyond. */
export function costOf(terms: [tokens: number, perMtok: number][]): number {
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
  // Saturate rather than throw: a cost past 2^53 µ$ (9 billion units) exceeds every limit a policy
  // can state, so every comparison with a limit still comes out right, and a request with an
  // absurd maxTokens is refused on cost instead of crashing the evaluation.
  return q > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(q);
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
  // costOf's safe case without its term list (four arrays per call, several calls per request):
  // the same sum, checked the same way; anything past 2^53 goes to costOf's BigInt path.
  const a = inputTokens * p.inPerMtok;
  const b = outputTokens * p.outPerMtok;
  const c = cachedInputTokens * p.cachedPerMtok;
  const sum = a + b + c;
  if (
    a <= Number.MAX_SAFE_INTEGER &&
    b <= Number.MAX_SAFE_INTEGER &&
    c <= Number.MAX_SAFE_INTEGER &&
    sum <= Number.MAX_SAFE_INTEGER
  ) {
    const rem = sum % MTOK;
    return (sum - rem) / MTOK + (rem > 0 ? 1 : 0);
  }
  return costOf([
    [inputTokens, p.inPerMtok],
    [outputTokens, p.outPerMtok],
    [cachedInputTokens, p.cachedPerMtok]
  ]);
}
