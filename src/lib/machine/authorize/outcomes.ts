/**
 * Pure helpers of the authorisation machine: what a verdict stores, what a frame says, what the
 * audit record holds. No clock: every time is a parameter.
 */
import { meteredCost } from '../budget';
import { denialFrame } from '../frames';
import { fromMicrosExact } from '../money';
import { DEFAULT_RETRY_AFTER_MS, expiresAtFor } from '../reasons';
import type {
  AuditRecord,
  BudgetDecision,
  IncludeContext,
  SamplingParams,
  StoredDecision
} from '../types';
import type { AuthContext, Denial, Generation } from './types';

export const EMPTY_GEN: Generation = {
  started: false,
  text: '',
  tokensOut: 0,
  cachedInputTokens: 0,
  stopReason: 'endTurn'
};

export function proceed(ctx: AuthContext) {
  const e = ctx.evaluation;
  return e && e.kind === 'proceed' ? e : null;
}

/**
 * What the call has cost so far (with `extraTokens` more output): every token generated is paid
 * for, whatever ends the call. A call that ended before the provider began answering cost nothing.
 */
export function meteredMicros(ctx: AuthContext, extraTokens = 0): number {
  const p = proceed(ctx);
  if (!p || (!ctx.gen.started && extraTokens === 0 && ctx.gen.tokensOut === 0)) return 0;
  const card = ctx.cards[p.model];
  if (!card) return 0;
  return meteredCost(card, {
    inputTokens: p.inputTokens,
    cachedInputTokens: ctx.gen.cachedInputTokens,
    outputTokens: ctx.gen.tokensOut + extraTokens
  });
}

/**
 * A transient denial tells the server when to come back (`retryAfterMs`); the stored decision
 * must not outlive that, or the server that obeys it hits the stale denial and gives up.
 */
export function boundedExpiry(
  expiresAt: number | null,
  now: number,
  retryAfterMs?: number
): number | null {
  if (retryAfterMs === undefined) return expiresAt;
  const hint = now + retryAfterMs;
  return expiresAt === null ? hint : Math.min(expiresAt, hint);
}

/**
 * Denials about *when*, not *whether*: a person's approval outlives them. A policy reason about
 * the request itself (sampling off, model, input size, currency) cannot follow an approval of the
 * same identity under the same policy; the user's own answers replace the approval.
 */
const KEEPS_APPROVAL = new Set<string>([
  'policy.rate_limit',
  'policy.budget_exhausted',
  'policy.budget_reserved',
  'policy.deadline'
]);

/** The approval this request stood on, if the lane keeps approvals and the denial is a "when". */
function approvalKept(ctx: AuthContext, d: Denial, now: number): StoredDecision['approval'] {
  if (!ctx.config.storeAllowed || !KEEPS_APPROVAL.has(d.reason)) return undefined;
  const s = ctx.stored;
  if (s && s.verdict === 'allowed' && !ctx.joined)
    return { decidedAt: s.decidedAt, expiresAt: s.expiresAt };
  if (s?.approval) return { ...s.approval };
  if (ctx.consent === 'approved')
    return { decidedAt: now, expiresAt: expiresAtFor(ctx.config.allowedTtl, now) };
  return undefined;
}

/**
 * The stored form of a denial decided at `now`, or null when its reason's TTL is `none` (never
 * stored: every presentation is evaluated afresh).
 */
export function denialDecision(ctx: AuthContext, d: Denial, now: number): StoredDecision | null {
  const rule = ctx.config.reasons[d.reason];
  if (rule.ttl.kind === 'none') return null;
  const resetsAtMs = d.resetsAt ? Date.parse(d.resetsAt) : undefined;
  const expiresAt = expiresAtFor(rule.ttl, now, resetsAtMs);
  const approval = approvalKept(ctx, d, now);
  return {
    server: ctx.request.server,
    identity: ctx.identity,
    verdict: 'denied',
    reason: d.reason,
    retryable: rule.retryable,
    decidedAt: now,
    expiresAt: boundedExpiry(expiresAt, now, d.retryAfterMs),
    ...(d.resetsAt ? { resetsAt: d.resetsAt } : {}),
    ...(d.retryAfterMs !== undefined ? { retryAfterMs: d.retryAfterMs } : {}),
    ...(rule.retryable && d.retryAfterMs !== undefined ? { retryAt: now + d.retryAfterMs } : {}),
    ...(d.message !== undefined ? { message: d.message } : {}),
    ...(approval ? { approval } : {}),
    policyHash: ctx.policyHash,
    represented: 0,
    recent: []
  };
}

/**
 * How long a replay tells the server to wait: until the instant the fresh denial named, when it
 * named one (a rate window's reset, a deadline's or a dialog's TTL, held money's release);
 * otherwise what is left of the entry, or the stored hint.
 */
export function replayRetryAfterMs(s: StoredDecision, now: number): number | undefined {
  if (s.retryAt !== undefined) return Math.max(0, s.retryAt - now);
  return s.expiresAt !== null ? Math.max(0, s.expiresAt - now) : s.retryAfterMs;
}

/** "Allowed, do not ask again": a verdict, never a completion. */
export function allowedDecision(ctx: AuthContext, now: number): StoredDecision {
  return {
    server: ctx.request.server,
    identity: ctx.identity,
    verdict: 'allowed',
    reason: null,
    retryable: false,
    decidedAt: now,
    expiresAt: expiresAtFor(ctx.config.allowedTtl, now),
    policyHash: ctx.policyHash,
    represented: 0,
    recent: []
  };
}

export function buildDenialFrame(
  ctx: AuthContext,
  d: Pick<Denial, 'reason' | 'resetsAt' | 'message'>,
  retryable: boolean,
  retryAfterMs?: number
) {
  // One literal, the absent members undefined (denialFrame reads each by name and skips an
  // undefined one), not spreads of conditional literals: those built two objects and the argument
  // member by member on every denial, replayed ones included (about half of live play's requests).
  return denialFrame(ctx.request.id, {
    reason: d.reason,
    server: ctx.request.server,
    retryable,
    resetsAt: d.resetsAt ? d.resetsAt : undefined,
    retryAfterMs: retryable ? (retryAfterMs ?? DEFAULT_RETRY_AFTER_MS) : undefined,
    message: d.message ? d.message : undefined
  });
}

/**
 * The decision with what the call actually cost, exact to the micro-unit. `Object.assign`, not
 * `{ ...decision, actualCost, actualTokens }`: V8 (Node 20) adds keys to a spread copy through a
 * new hidden class each time, over ten times slower (measured: ~4.7 µs against ~0.4 µs, once per
 * completed call). The same keys in the same order either way.
 */
export function withActual(
  decision: BudgetDecision,
  ctx: AuthContext,
  micros: number
): BudgetDecision {
  const p = proceed(ctx);
  return Object.assign({}, decision, {
    actualCost: { amount: fromMicrosExact(micros), currency: decision.estimatedCost.currency },
    actualTokens: { input: p ? p.inputTokens : 0, output: ctx.gen.tokensOut }
  });
}

export function contextRequested(params: SamplingParams): IncludeContext {
  const c = params.includeContext;
  return c === 'thisServer' || c === 'allServers' ? c : 'none';
}

/**
 * The basis of a dialog skipped for a cheap call (`askAbove`), when that is why none was shown:
 * not when a stored approval stood in for it (a person did answer for this identity), and not
 * when the call never got as far as the provider.
 */
function consentSkippedOf(
  ctx: AuthContext,
  p: ReturnType<typeof proceed>
): AuditRecord['consentSkipped'] {
  const s = p?.consentSkipped;
  if (!s || ctx.stored?.verdict === 'allowed' || !ctx.path.includes('calling')) return undefined;
  return { estimatedCost: { ...s.estimatedCost }, askAbove: { ...s.askAbove } };
}

/** The largest instant a Date holds, either side of 1970 (ECMA-262 TimeClip). */
const MAX_TIME = 8.64e15;
/** The last second `isoTime` formatted: its ms instant and its text up to the milliseconds. */
let isoSecond = NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()`, formatting the date and time once per second: records come in
 * runs within a second, and the whole formatting was about a microsecond and a half of every
 * request's. The milliseconds are the text's last three digits before the `Z` in every year
 * format (`+275760-…` too), and `ms - second` is what the Date shows for them, before 1970 as well.
 */
export function isoTime(time: number): string {
  // The Date's own instant: a fractional time is cut toward zero (TimeClip).
  const ms = Math.trunc(time);
  // Outside what a Date holds (and NaN): the Date's own RangeError.
  if (!(ms >= -MAX_TIME && ms <= MAX_TIME)) return new Date(time).toISOString();
  const second = Math.floor(ms / 1000) * 1000;
  if (second !== isoSecond) {
    isoPrefix = new Date(second).toISOString().slice(0, -4);
    isoSecond = second;
  }
  const m = ms - second;
  return isoPrefix + (m < 10 ? '00' : m < 100 ? '0' : '') + m + 'Z';
}

export function buildAudit(ctx: AuthContext): AuditRecord {
  const now = ctx.at;
  const p = proceed(ctx);
  const model =
    ctx.evaluation &&
    (ctx.evaluation.kind === 'proceed' || ctx.evaluation.kind === 'budget_exceeded')
      ? ctx.evaluation.model
      : null;
  const card = model ? ctx.cards[model] : undefined;
  const frame = ctx.frame;
  const isDenial = !!frame && 'error' in frame && frame.error.code === -32003;
  const data =
    isDenial && frame && 'error' in frame
      ? (frame.error.data as { reason?: string; retryable?: boolean })
      : null;
  const calledProvider = ctx.path.includes('calling');
  const record: AuditRecord = {
    seq: 0,
    t: now,
    time: isoTime(now),
    server: ctx.request.server,
    connection: ctx.request.connection,
    requestId: ctx.request.id,
    identity: ctx.identity,
    outcome: ctx.outcome ?? 'provider_error',
    reason: data?.reason ?? null,
    retryable: data?.retryable ?? null,
    replayed: ctx.replayed,
    represented: ctx.stored?.represented ?? 0,
    consentShown: ctx.path.includes('consenting'),
    consent: ctx.consent,
    model,
    tokensIn: calledProvider && p ? p.inputTokens : 0,
    tokensOut: calledProvider ? ctx.gen.tokensOut : 0,
    cost: fromMicrosExact(ctx.costMicros),
    currency: card?.currency ?? 'USD',
    durationMs: now - ctx.request.receivedAt,
    contextRequested: contextRequested(ctx.request.params),
    contextApplied: p ? p.context.applied : null,
    budgetDecision: ctx.budgetDecision,
    silenced: ctx.config.silence && isDenial,
    alert: ctx.alert
  };
  // Set afterwards, not spread into the literal: a literal with a spread is built member by
  // member at run time rather than copied from its template (measured: most of this function's
  // time), and exports order the keys anyway (`orderRecord`). The same keys in the same order.
  if (ctx.lane) record.lane = ctx.lane;
  const skipped = consentSkippedOf(ctx, p);
  if (skipped) record.consentSkipped = skipped;
  return record;
}
