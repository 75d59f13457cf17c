/**
 * Money as decimal strings with a currency, compared as integer micro-units (SPEC §6).
 *
 * A float never holds an amount: `0.1 + 0.2` is not `0.3`, and a budget check that is off by one
 * ulp refuses (or admits) the call it should not. Every amount is parsed once into an integer count
 * of micro-units (1e-6 of the currency unit), compared and summed as integers, and formatted back
 * to a decimal string only for display and for frames. A JavaScript number holds integers exactly
 * up to 2^53, i.e. about 9.007 billion units of currency in micros — far beyond any budget here;
 * amounts above that are rejected rather than silently rounded.
 */
import { quote } from './excerpt';
import type { Money } from './types';

/** Micro-units per unit of currency. */
export const MICROS_PER_UNIT = 1_000_000;

/** How many decimals an amount may carry: one more would be a fraction of a micro-unit. */
const MAX_DECIMALS = 6;

/**
 * The grammar of an amount: digits, optionally a point and one to six digits. No sign (a budget,
 * a cap or a price is never negative), no exponent (`1e-3` is how floats leak in), no bare `.5`
 * or `5.` (ambiguous to a human reader of a policy). Shared with the policy schema so the JSON
 * Schema the editor validates against carries the same `pattern`.
 */
export const AMOUNT_PATTERN = /^\d+(\.\d{1,6})?$/;

/** ISO 4217 style currency code: three upper-case letters. */
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;

/**
 * Amounts parsed, by their text (bounded: cleared when full). Only valid amounts are kept, so an
 * amount's text always parses to the same micros: the grammar and the arithmetic are pure.
 */
const PARSED_MAX = 4_096;
const parsed = new Map<string, number>();

/** The same few amounts (rate-card prices, limits, "0.0000") are parsed on every request. */
function remember(amount: string, micros: number): void {
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(amount, micros);
}

export type MoneyParse = { ok: true; micros: number } | { ok: false; error: string };

/**
 * Parse a decimal amount string into integer micro-units, or say precisely what is wrong with it.
 * Accepts `"0.05"`, `"3"`, `"0.1027"`, `"12.000001"`; rejects signs, exponents, more than six
 * decimals, empty strings, non-strings and amounts too large to hold exactly.
 */
export function parseMoneyAmount(s: unknown): MoneyParse {
  if (typeof s !== 'string') {
    return { ok: false, error: `an amount is a decimal string such as "0.05", got ${typeOf(s)}` };
  }
  // An amount already parsed: a fresh result from the number (the caller owns it). A request's
  // policy check parses the same few amounts (its budget, its askAbove) each time: the match,
  // split and pad were ~6 MB/s of the sim worker's garbage in live play (bench:profile:worker
  // --heap) and ~0.7 % of its time.
  const known = parsed.get(s);
  if (known !== undefined) return { ok: true, micros: known };
  const m = AMOUNT_PATTERN.exec(s);
  if (!m) return { ok: false, error: explainBadAmount(s) };
  const [whole, frac = ''] = s.split('.') as [string, string?];
  // Pad the fraction to six digits, so "0.05" is 050000 micros, not 5.
  const micros = Number(whole) * MICROS_PER_UNIT + Number(frac.padEnd(MAX_DECIMALS, '0'));
  if (!Number.isSafeInteger(micros)) {
    return { ok: false, error: `amount ${quote(s)} is too large to hold exactly` };
  }
  remember(s, micros);
  return { ok: true, micros };
}

/** Why an amount string failed the grammar, in words a policy author can act on. */
function explainBadAmount(s: string): string {
  if (s.trim() === '') return 'an amount must not be empty; write a decimal such as "0.05"';
  if (s !== s.trim()) return `amount ${quote(s)} has surrounding whitespace`;
  if (/^[+-]/.test(s))
    return `amount ${quote(s)} has a sign; amounts are never negative and carry no sign`;
  if (/[eE]/.test(s))
    return `amount ${quote(s)} uses exponent notation; write it out, e.g. "0.001"`;
  if (/^\d+\.\d{7,}$/.test(s)) {
    return `amount ${quote(s)} has more than ${MAX_DECIMALS} decimals (the smallest unit is 0.000001)`;
  }
  if (/^\.\d+$/.test(s) || /^\d+\.$/.test(s)) {
    return `amount ${quote(s)} needs digits on both sides of the point, e.g. "0.5" or "5.0"`;
  }
  return `amount ${quote(s)} is not a decimal string such as "0.05"`;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

/**
 * Parse an amount for internal use, where the string was already validated (a policy that passed
 * its schema, a rate card shipped with the product). Throws: a bad amount here is a bug, not input.
 */
export function toMicros(amount: string): number {
  const micros = parsed.get(amount);
  if (micros !== undefined) return micros;
  const r = parseMoneyAmount(amount);
  if (!r.ok) throw new Error(`toMicros: ${r.error}`);
  return r.micros;
}

/** How `fromMicros` rounds when the requested decimals drop digits. */
export type Rounding = 'half-up' | 'down' | 'up';

/**
 * Format micro-units as a decimal string with exactly `decimals` decimals (0..6).
 * Rounding is half up by default (`102720` → `"0.1027"`, `9000` → `"0.0090"`); `'down'` and `'up'`
 * exist for figures that must never be overstated (a limit) or understated (an estimate).
 * Negative values keep their sign and round symmetrically (half away from zero), which only
 * matters for differences; amounts themselves are never negative.
 */
export function fromMicros(micros: number, decimals = 4, rounding: Rounding = 'half-up'): string {
  if (!Number.isSafeInteger(micros)) {
    throw new Error(`fromMicros: ${micros} is not a safe integer count of micro-units`);
  }
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new Error(
      `fromMicros: decimals must be an integer in 0..${MAX_DECIMALS}, got ${decimals}`
    );
  }
  if (micros < 0) return '-' + fromMicros(-micros, decimals, rounding);
  const step = 10 ** (MAX_DECIMALS - decimals);
  const rem = micros % step;
  let q = (micros - rem) / step;
  if (rem !== 0) {
    if (rounding === 'up' || (rounding === 'half-up' && rem * 2 >= step)) q += 1;
  }
  const scale = 10 ** decimals;
  const whole = Math.floor(q / scale);
  if (decimals === 0) return String(whole);
  const frac = String(q % scale).padStart(decimals, '0');
  return `${whole}.${frac}`;
}

/**
 * Format micro-units with at least `minDecimals` decimals and as many more (up to six) as it
 * takes to be exact: `50000` → `"0.0500"`, `397280` → `"0.39728"`. For figures a reader computes
 * with, such as a limit a server sizes its retry against, where rounding would mislead.
 */
export function fromMicrosExact(micros: number, minDecimals = 4): string {
  if (minDecimals === 4) {
    const known = exact.get(micros);
    if (known !== undefined) return known;
  }
  let decimals = minDecimals;
  while (decimals < MAX_DECIMALS && micros % 10 ** (MAX_DECIMALS - decimals) !== 0) decimals++;
  const out = fromMicros(micros, decimals);
  if (minDecimals === 4) {
    if (exact.size >= PARSED_MAX) exact.clear();
    exact.set(micros, out);
  }
  return out;
}

/**
 * `fromMicrosExact(micros)` at the default four decimals, by amount: a request's record and
 * decision format the same few amounts over and over (a limit, the estimate for a prompt size, a
 * cost), about a quarter of a microsecond each. Bounded as `parsed` is.
 */
const exact = new Map<number, string>();

/** A `Money` value from micro-units, formatted at `decimals` (half up). */
export function money(amountMicros: number, currency: string, decimals = 4): Money {
  return { amount: fromMicros(amountMicros, decimals), currency };
}

/** True when `s` is a three-letter upper-case currency code. */
export function isCurrencyCode(s: unknown): s is string {
  return typeof s === 'string' && CURRENCY_PATTERN.test(s);
}

/**
 * Null when the two currencies match, otherwise a sentence saying they do not. There is no
 * conversion anywhere: the RFC says a host that cannot price a request in the currency named
 * should refuse rather than convert, and comparing micros across currencies is meaningless.
 */
export function currencyMismatch(a: string, b: string): string | null {
  return a === b ? null : `currency mismatch: ${a} is not ${b} (amounts are never converted)`;
}

export type MoneyCompare = { ok: true; cmp: -1 | 0 | 1 } | { ok: false; error: string };

/** Compare two `Money` values: refuses (as a value) on a currency mismatch or a bad amount. */
export function compareMoney(a: Money, b: Money): MoneyCompare {
  const mismatch = currencyMismatch(a.currency, b.currency);
  if (mismatch) return { ok: false, error: mismatch };
  const x = parseMoneyAmount(a.amount);
  if (!x.ok) return x;
  const y = parseMoneyAmount(b.amount);
  if (!y.ok) return y;
  return { ok: true, cmp: x.micros < y.micros ? -1 : x.micros > y.micros ? 1 : 0 };
}
