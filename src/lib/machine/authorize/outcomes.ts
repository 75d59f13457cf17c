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

/** The stored form of a denial decided at `now`. */
export function denialDecision(ctx: AuthContext, d: Denial, now: number): StoredDecision {
  const rule = ctx.config.reasons[d.reason];
  const resetsAtMs = d.resetsAt ? Date.parse(d.resetsAt) : undefined;
  const expiresAt = d.ttlMs !== undefined ? now + d.ttlMs : expiresAtFor(rule.ttl, now, resetsAtMs);
  return {
    server: ctx.request.server,
    identity: ctx.identity,
    verdict: 'denied',
    reason: d.reason,
    retryable: d.retryable ?? rule.retryable,
    decidedAt: now,
    expiresAt: boundedExpiry(expiresAt, now, d.retryAfterMs),
    ...(d.resetsAt ? { resetsAt: d.resetsAt } : {}),
    ...(d.retryAfterMs !== undefined ? { retryAfterMs: d.retryAfterMs } : {}),
    policyHash: ctx.policyHash,
    represented: 0,
    recent: []
  };
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
  return denialFrame(ctx.request.id, {
    reason: d.reason,
    server: ctx.request.server,
    retryable,
    ...(d.resetsAt ? { resetsAt: d.resetsAt } : {}),
    ...(retryable ? { retryAfterMs: retryAfterMs ?? DEFAULT_RETRY_AFTER_MS } : {}),
    ...(d.message ? { message: d.message } : {})
  });
}

/** The decision with what the call actually cost, exact to the micro-unit. */
export function withActual(
  decision: BudgetDecision,
  ctx: AuthContext,
  micros: number
): BudgetDecision {
  const p = proceed(ctx);
  return {
    ...decision,
    actualCost: { amount: fromMicrosExact(micros), currency: decision.estimatedCost.currency },
    actualTokens: { input: p ? p.inputTokens : 0, output: ctx.gen.tokensOut }
  };
}

export function contextRequested(params: SamplingParams): IncludeContext {
  const c = params.includeContext;
  return c === 'thisServer' || c === 'allServers' ? c : 'none';
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
  return {
    seq: 0,
    t: now,
    time: new Date(now).toISOString(),
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
    alert: ctx.alert,
    ...(ctx.lane ? { lane: ctx.lane } : {})
  };
}
