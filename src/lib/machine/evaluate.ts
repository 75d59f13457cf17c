/**
 * The policy evaluation of one request (SPEC §2, §5, §6): a pure function from the request, the
 * server's effective policy block, the rate cards and the volume ledger to a verdict. Checks run in
 * a fixed order and the first hit wins, so the same request against the same state always gets the
 * same reason — the order is part of what a learner reads:
 *
 *   1. sampling disabled            → deny policy.sampling_disabled
 *   2. model (hints / default)      → deny policy.model_not_allowed
 *   3. rate card for the model      → deny policy.model_not_allowed
 *   4. input size                   → deny policy.input_too_large
 *   5. rate limit                   → deny policy.rate_limit (retryAfterMs)
 *   3b. intent in another currency  → deny policy.currency_unsupported (never converted)
 *   6. budget window spent          → deny policy.budget_exhausted (resetsAt); short only of
 *                                     money held for running calls → policy.budget_reserved
 *   7. context scope                → trim (never a denial)
 *   8. per-call cap / session pool  → budget_exceeded, or proceed with a limit to meter against
 *   9. consent "ask" with `askAbove` → the estimate at or below it proceeds without a dialog
 *                                     (consent "allow", with `consentSkipped` saying why)
 *
 * Evaluate never mutates its input and never counts anything: the machine commits the request to
 * the rate window and the spend to the budget window (`countRequest`, `addSpend` below), because
 * only the machine knows whether the request got as far as being counted and what it cost.
 *
 * Over 400 lines on purpose: the checks above read top to bottom in the order they run, each
 * beside the helpers only it uses; split, a reader would lose the order that decides the reason.
 */
import {
  estimateCostMicros,
  inputTokensOf,
  preflight,
  preflightTokens,
  type RateCard
} from './budget';
import { currencyMismatch, fromMicrosExact, parseMoneyAmount, toMicros } from './money';
import type { PolicyBlock } from './policy';
import type { ReasonCode } from './reasons';
import type { ClientConfig, OnExceeded } from './vocabulary';
import type {
  BudgetDecision,
  IncludeContext,
  Money,
  ModelPreferences,
  SamplingParams
} from './types';

// ───────────────────────────── windows and the volume ledger ─────────────────────────────

function assertWindow(windowMs: number): void {
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
    throw new Error(`windowMs must be a positive integer, got ${windowMs}`);
  }
}

/**
 * The start of the window containing `now`. Windows are aligned to multiples of `windowMs` since
 * the epoch (virtual ms are epoch ms), so a daily window resets at 00:00Z — the seed's
 * `resetsAt: 2026-03-11T00:00:00Z` — and every server's window resets at the same instant.
 */
export function windowStart(now: number, windowMs: number): number {
  assertWindow(windowMs);
  // Integer remainder, not floor(now / windowMs): no float division near window boundaries.
  const r = ((now % windowMs) + windowMs) % windowMs;
  return now - r;
}

/** When the window containing `now` ends (exclusive): the next window starts here. */
export function windowResetsAt(now: number, windowMs: number): number {
  return windowStart(now, windowMs) + windowMs;
}

/**
 * An ISO 8601 UTC time for a virtual ms instant, without a `.000` when the milliseconds are zero,
 * so a daily window reads `2026-03-11T00:00:00Z` exactly as in the seed. Formatting a given
 * instant; it never reads the clock.
 */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** Per-server volume counters, in virtual ms. */
export interface VolumeState {
  /** Requests already counted in the current rate window. */
  rateCount: number;
  rateWindowResetsAt: number;
  /** Spend already counted in the current budget window, in micro-units of the budget currency. */
  budgetSpentMicros: number;
  budgetWindowResetsAt: number;
}

/** Spend already drawn from the session pool (RFC open question: per-call versus pool). */
export interface CapState {
  sessionPoolSpentMicros: number;
}

/** Fresh counters for a server first seen at `now`. */
export function initialVolume(block: PolicyBlock, now: number): VolumeState {
  return {
    rateCount: 0,
    rateWindowResetsAt: block.rateLimit ? windowResetsAt(now, block.rateLimit.windowMs) : 0,
    budgetSpentMicros: 0,
    budgetWindowResetsAt: block.budget ? windowResetsAt(now, block.budget.windowMs) : 0
  };
}

/**
 * The counters as they stand at `now`: a window that has ended starts over at zero with its next
 * reset time. Evaluate reads the ledger through this, so stale counters handed in by a caller
 * never refuse a request the current window would allow. A limit the block does not have leaves
 * its counters untouched.
 */
export function rollVolume(volume: VolumeState, block: PolicyBlock, now: number): VolumeState {
  let v = volume;
  if (block.rateLimit) {
    const due = windowResetsAt(now, block.rateLimit.windowMs);
    if (now >= v.rateWindowResetsAt) v = { ...v, rateCount: 0, rateWindowResetsAt: due };
    // A policy edit changed the window's length: the window in force ends on the new length's
    // boundary, and what it counted still counts until then (never less strict than either).
    else if (v.rateWindowResetsAt !== due) v = { ...v, rateWindowResetsAt: due };
  }
  if (block.budget) {
    const due = windowResetsAt(now, block.budget.windowMs);
    if (now >= v.budgetWindowResetsAt)
      v = { ...v, budgetSpentMicros: 0, budgetWindowResetsAt: due };
    // As above: the spend so far stays counted, and the window ends where the new length says.
    // Without this the old window ran on to its own end and then started afresh mid-way through
    // the new length's window, letting that window take more than its budget (found by the
    // time-travel fuzz: a fork that changed a lane's budget window).
    else if (v.budgetWindowResetsAt !== due) v = { ...v, budgetWindowResetsAt: due };
  }
  return v;
}

/** The ledger after counting one request at `now` (a new object; the input is untouched). */
export function countRequest(volume: VolumeState, block: PolicyBlock, now: number): VolumeState {
  const v = rollVolume(volume, block, now);
  // A literal of VolumeState's four members (in its order), not a spread: one allocation with a
  // stable shape, once per request.
  return {
    rateCount: v.rateCount + 1,
    rateWindowResetsAt: v.rateWindowResetsAt,
    budgetSpentMicros: v.budgetSpentMicros,
    budgetWindowResetsAt: v.budgetWindowResetsAt
  };
}

/** The ledger after spending `micros` at `now` (a new object; the input is untouched). */
export function addSpend(
  volume: VolumeState,
  block: PolicyBlock,
  now: number,
  micros: number
): VolumeState {
  if (!Number.isSafeInteger(micros) || micros < 0) {
    throw new Error(`addSpend: micros must be a non-negative integer, got ${micros}`);
  }
  const v = rollVolume(volume, block, now);
  // Saturate: a total past 2^53 µ$ is past every budget, and must not lose exactness by wrapping.
  return {
    rateCount: v.rateCount,
    rateWindowResetsAt: v.rateWindowResetsAt,
    budgetSpentMicros: Math.min(v.budgetSpentMicros + micros, Number.MAX_SAFE_INTEGER),
    budgetWindowResetsAt: v.budgetWindowResetsAt
  };
}

// ───────────────────────────── the evaluation ─────────────────────────────

export interface EvaluateInput {
  server: string;
  params: SamplingParams;
  /** The server's effective block (`effectiveBlock(policy, server)`). */
  block: PolicyBlock;
  /** The rate card of a model, or undefined when the host cannot price it. */
  card: (model: string) => RateCard | undefined;
  volume: VolumeState;
  /**
   * Money held against the server's budget window for calls still running (their estimates), in
   * micro-units: a call granted now must not be granted what they may still spend. Held money is
   * not spent — a window short only of what is held refuses with `policy.budget_reserved`
   * (retryable), never `policy.budget_exhausted`.
   */
  heldMicros?: number;
  /** The earliest virtual ms by which some held call will have finished (its latest end). */
  heldUntil?: number | null;
  /** Virtual ms (epoch-based). */
  now: number;
  /**
   * This presentation joined an allowed decision of the same identity that was in flight: that
   * one was counted toward the rate limit for both, so this one is neither checked nor counted.
   */
  rateCounted?: boolean;
  /** Per-call caps from the policy, or one pool per session replacing them (RFC open question). */
  capScope: ClientConfig['capScope'];
  /** The pool's size; required when capScope is 'session-pool'. */
  sessionPool?: Money;
  capState?: CapState;
  /** What to do over the cap when the request states no `budget.onExceeded`. */
  preflightDefault: OnExceeded;
}

export type Evaluation =
  | {
      kind: 'deny';
      reason: ReasonCode;
      /** ISO time the refusal stops applying (budget windows). */
      resetsAt?: string;
      /** How long a retry should wait (rate limit, held money). */
      retryAfterMs?: number;
      /** The frame's words, when the reason's default would say less than the host knows. */
      message?: string;
      /** Why, in words, for the audit log and the inspector; never the classification. */
      detail?: string;
    }
  | { kind: 'budget_exceeded'; model: string; decision: BudgetDecision }
  | {
      kind: 'proceed';
      model: string;
      /** Input tokens of the request (system prompt + message text). */
      inputTokens: number;
      maxTokens: number;
      context: { requested: IncludeContext; applied: IncludeContext; trimmed: boolean };
      /** Meter the stream against this many micro-units (stop before the crossing chunk), or null. */
      limitMicros: number | null;
      /** Meter the stream against this many tokens, input + output, or null. */
      limitTokens: number | null;
      /** The budget decision to report, whenever a limit applies. */
      decision: BudgetDecision | null;
      consent: 'ask' | 'allow' | 'deny';
      /**
       * Present when the block says "ask" but the estimate was at or below `askAbove`, so
       * `consent` is "allow": the figures the audit record keeps as the basis.
       */
      consentSkipped?: ConsentSkipped;
    };

/** Why a call the policy would have asked about went ahead without a dialog (`askAbove`). */
export interface ConsentSkipped {
  /** The pre-flight estimate: input × input price + maxTokens × output price, cold cache. */
  estimatedCost: Money;
  /** The policy's threshold it was at or below. */
  askAbove: Money;
}

/**
 * Whether consent is skipped for a call priced at `card`: only under consent "ask", only with a
 * threshold in the card's own currency (never converted; a mismatch asks), and only when the
 * estimate — the same one the budget decision states and the handler's `consent` callback
 * receives — is at or below it. The estimate assumes the whole `maxTokens` is used, so a call
 * later truncated by a cap was still judged on what it asked for: never cheaper than it is.
 */
export function consentSkip(
  block: Pick<PolicyBlock, 'consent' | 'askAbove'>,
  card: RateCard | undefined,
  inputTokens: number,
  maxTokens: number
): ConsentSkipped | null {
  const t = block.askAbove;
  // No rate card, no estimate: a call whose cost is unknown is not cheap.
  if (block.consent !== 'ask' || !t || !card) return null;
  if (t.currency !== card.currency) return null;
  const threshold = parseMoneyAmount(t.amount);
  if (!threshold.ok) return null;
  const estimate = estimateCostMicros(card, inputTokens, maxTokens);
  if (estimate > threshold.micros) return null;
  return {
    estimatedCost: { amount: fromMicrosExact(estimate), currency: card.currency },
    askAbove: { amount: t.amount, currency: t.currency }
  };
}

/** A skipped dialog in words: "estimate 0.0012 USD ≤ askAbove 0.002 USD". */
export function consentSkippedText(s: ConsentSkipped): string {
  return `estimate ${s.estimatedCost.amount} ${s.estimatedCost.currency} ≤ askAbove ${s.askAbove.amount} ${s.askAbove.currency}`;
}

const CONTEXT_RANK: Record<IncludeContext, number> = { none: 0, thisServer: 1, allServers: 2 };

function deny(
  reason: ReasonCode,
  detail: string,
  extra: { resetsAt?: string; retryAfterMs?: number; message?: string } = {}
): Evaluation {
  return { kind: 'deny', reason, ...extra, detail };
}

/** With held money but no running call's end known (a caller's bug), wait this long. */
const DEFAULT_HELD_WAIT_MS = 1_000;

/**
 * Money held for running calls stands between this one and the window: retry once they end. A
 * function of its own, not a closure made per evaluation for the few that need it.
 */
function reserved(input: EvaluateInput, now: number, detail: string): Evaluation {
  return deny('policy.budget_reserved', detail, {
    retryAfterMs: Math.max(1, (input.heldUntil ?? now + DEFAULT_HELD_WAIT_MS) - now)
  });
}

/** The currency of the request's advisory `budget.intent.maxCost`, when it names one. */
function intentCurrencyOf(params: SamplingParams): string | null {
  const maxCost: unknown = params.budget?.intent?.maxCost;
  if (!maxCost || typeof maxCost !== 'object') return null;
  const c = (maxCost as { currency?: unknown }).currency;
  return typeof c === 'string' ? c : null;
}

/**
 * The model for a request. Hints are tried in order; for each, an allowed model it names exactly,
 * then an allowed model it is a substring of (MCP hints are substring-friendly: "sonnet" names
 * "claude-sonnet-4"), then — when "*" is allowed — the hint itself. Case-sensitive, so the choice
 * is deterministic. Without named hints: the default model, if it is allowed. Hints present but
 * none allowed is a refusal, not a silent fallback to the default: the server asked for something.
 */
export function pickModel(
  prefs: ModelPreferences | undefined,
  block: Pick<PolicyBlock, 'allowedModels' | 'defaultModel'>
): { ok: true; model: string } | { ok: false; detail: string } {
  // Loops over the lists as they are, not the filtered copies (`named`: allowed without '*';
  // `names`: the hints' non-empty string names) that read more plainly: this runs twice per
  // request, and the copies were most of its time. The same answers, in the same order.
  const hints: unknown = prefs?.hints;
  const allowed = block.allowedModels;
  const any = allowed.includes('*');
  let hinted = false;
  if (Array.isArray(hints)) {
    for (const h of hints as unknown[]) {
      const name = hintName(h);
      if (name === null) continue;
      hinted = true;
      if (name !== '*' && allowed.includes(name)) return { ok: true, model: name };
      for (const m of allowed) if (m !== '*' && m.includes(name)) return { ok: true, model: m };
      if (any) return { ok: true, model: name };
    }
  }
  if (!hinted) {
    if (any || (block.defaultModel !== '*' && allowed.includes(block.defaultModel)))
      return { ok: true, model: block.defaultModel };
    return { ok: false, detail: `the default model '${block.defaultModel}' is not allowed` };
  }
  const names: string[] = [];
  for (const h of hints as unknown[]) {
    const name = hintName(h);
    if (name !== null) names.push(name);
  }
  return { ok: false, detail: `no hinted model (${names.join(', ')}) is allowed` };
}

/** A model hint's name, when it is a non-empty string. */
function hintName(h: unknown): string | null {
  const n = h && typeof h === 'object' ? (h as { name?: unknown }).name : undefined;
  return typeof n === 'string' && n.length > 0 ? n : null;
}

/**
 * The currencies of the money the host would price against — the budget window's, then the
 * session pool's or the per-call cap's — for the currency check: at most two, so named, not
 * listed (an array pushed to was a store for seventeen, every evaluation).
 */
function budgetCurrency(input: EvaluateInput): string | null {
  return input.block.budget ? input.block.budget.currency : null;
}

function capCurrency(input: EvaluateInput): string | null {
  const cap = input.block.perCallCap;
  if (input.capScope === 'session-pool')
    return input.sessionPool ? input.sessionPool.currency : null;
  return cap && 'amount' in cap ? cap.currency : null;
}

/**
 * Evaluate one request. See the module comment for the order. `maxTokens` must already be
 * validated (a non-negative safe integer) by the frame validator in front of this: a malformed
 * request never reaches policy, so here it is a broken invariant and throws.
 */
export function evaluate(input: EvaluateInput): Evaluation {
  const { block, params, now } = input;
  const maxTokens = params.maxTokens;
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 0) {
    throw new Error(
      `evaluate: maxTokens must be a validated non-negative integer, got ${maxTokens}`
    );
  }

  // 1. Sampling at all.
  if (!block.sampling) {
    return deny('policy.sampling_disabled', `sampling is disabled for '${input.server}'`);
  }

  // 2–3. The model, and whether the host can price it in the policy's currency.
  const picked = pickModel(params.modelPreferences, block);
  if (!picked.ok) return deny('policy.model_not_allowed', picked.detail);
  const model = picked.model;
  const card = input.card(model);
  if (!card) return deny('policy.model_not_allowed', `no rate card for model '${model}'`);
  // Amounts are never converted (the RFC): a model the host cannot price in the policy's
  // currency is a model this policy cannot allow.
  const budgetIn = budgetCurrency(input);
  const budgetMismatch = budgetIn === null ? null : currencyMismatch(card.currency, budgetIn);
  if (budgetMismatch)
    return deny('policy.model_not_allowed', `model '${model}': ${budgetMismatch}`);
  const capIn = capCurrency(input);
  const capMismatch = capIn === null ? null : currencyMismatch(card.currency, capIn);
  if (capMismatch) return deny('policy.model_not_allowed', `model '${model}': ${capMismatch}`);
  // 3b. The server's advisory intent names a currency: "a host that cannot price a request in the
  // currency a server named should refuse rather than convert" (the RFC).
  const intentCurrency = intentCurrencyOf(params);
  if (intentCurrency !== null && intentCurrency !== card.currency) {
    return deny(
      'policy.currency_unsupported',
      `the budget intent is in ${intentCurrency}; this host prices '${model}' in ${card.currency} and never converts`,
      {
        message: `Sampling denied: server '${input.server}' named a budget in ${intentCurrency}; this host prices in ${card.currency} and never converts amounts`
      }
    );
  }

  // 4. Input size.
  const inputTokens = inputTokensOf(params);
  if (inputTokens > block.maxInputTokens) {
    return deny(
      'policy.input_too_large',
      `input of ${inputTokens} tokens exceeds maxInputTokens ${block.maxInputTokens}`
    );
  }

  // 5–6. Volume: counts requests and spend regardless of content (SPEC §5).
  const volume = rollVolume(input.volume, block, now);
  if (!input.rateCounted && block.rateLimit && volume.rateCount >= block.rateLimit.requests) {
    return deny(
      'policy.rate_limit',
      `${volume.rateCount} of ${block.rateLimit.requests} requests used in this window`,
      { retryAfterMs: Math.max(0, volume.rateWindowResetsAt - now) }
    );
  }
  let windowRemaining: number | null = null;
  /** What the window has left before held money: what "exhausted" is judged against. */
  let unheldRemaining = 0;
  const held = Math.max(0, input.heldMicros ?? 0);
  if (block.budget) {
    const amount = toMicros(block.budget.amount);
    if (volume.budgetSpentMicros >= amount) {
      return deny(
        'policy.budget_exhausted',
        `the budget of ${block.budget.amount} ${block.budget.currency} is spent`,
        {
          resetsAt: isoTime(volume.budgetWindowResetsAt)
        }
      );
    }
    unheldRemaining = amount - volume.budgetSpentMicros;
    if (volume.budgetSpentMicros + held >= amount) {
      return reserved(
        input,
        now,
        `the ${fromMicrosExact(unheldRemaining)} ${block.budget.currency} left in the budget window is held for calls still running`
      );
    }
    windowRemaining = amount - volume.budgetSpentMicros - held;
  }

  // 7. Context: never a denial; a wider request is trimmed and the result says so.
  const requested = params.includeContext ?? 'none';
  const requestedRank = CONTEXT_RANK[requested] ?? CONTEXT_RANK.allServers;
  const trimmed = requestedRank > CONTEXT_RANK[block.maxContext];
  const context = { requested, applied: trimmed ? block.maxContext : requested, trimmed };

  // 8. The cap.
  const onExceeded =
    params.budget?.onExceeded === 'reject' || params.budget?.onExceeded === 'truncate'
      ? params.budget.onExceeded
      : input.preflightDefault;
  const intent = params.budget?.intent;
  // 9. Consent. Judged here, after every check that can refuse, so a cheap call is never
  // exempt from a limit: it only stands in for the dialog, as "allow" does.
  const skipped = consentSkip(block, card, inputTokens, maxTokens);
  const consent = block.consent;

  // Every host limit in money bounds the call, and the least of them applies (SPEC §6): the
  // window's remainder, the per-call money cap or the session pool, and a token cap priced at
  // the rate card. A token cap is also metered in tokens, so the stream stops at whichever comes
  // first; the window is never overdrawn, whatever the meter.
  const cap = block.perCallCap;
  const limits: { micros: number; source: BudgetDecision['limitSource'] }[] = [];
  if (input.capScope === 'session-pool') {
    if (!input.sessionPool)
      throw new Error("evaluate: capScope 'session-pool' needs a sessionPool");
    const spent = input.capState?.sessionPoolSpentMicros ?? 0;
    limits.push({
      micros: Math.max(0, toMicros(input.sessionPool.amount) - spent),
      source: 'session_pool'
    });
  } else if (cap && 'amount' in cap) {
    limits.push({ micros: toMicros(cap.amount), source: 'host_policy' });
  }
  if (windowRemaining !== null) limits.push({ micros: windowRemaining, source: 'budget_window' });
  const tokenCap = input.capScope === 'per-call' && cap && 'tokens' in cap ? cap.tokens : null;

  if (tokenCap !== null) {
    const pf = preflightTokens({ card, inputTokens, maxTokens, limitTokens: tokenCap, intent });
    if (!pf.within && (onExceeded === 'reject' || inputTokens > tokenCap)) {
      return { kind: 'budget_exceeded', model, decision: pf.decision };
    }
    // The money limits still bind: fall through when one of them is tighter than the token cap.
    const tokenCapMicros = preflight({
      card,
      inputTokens,
      maxTokens: Math.max(0, Math.min(maxTokens, tokenCap - inputTokens)),
      limitMicros: 0,
      limitSource: 'token_meter'
    }).estimateMicros;
    const least = limits.reduce<number | null>(
      (m, l) => (m === null || l.micros < m ? l.micros : m),
      null
    );
    if (least === null || least >= tokenCapMicros) {
      return proceedWith(
        model,
        inputTokens,
        maxTokens,
        context,
        consent,
        skipped,
        least,
        tokenCap,
        pf.decision
      );
    }
  }

  let binding: { micros: number; source: BudgetDecision['limitSource'] } | null = null;
  for (const l of limits) if (binding === null || l.micros < binding.micros) binding = l;
  if (binding === null) {
    return proceedWith(model, inputTokens, maxTokens, context, consent, skipped, null, null, null);
  }
  const limitMicros = binding.micros;
  const limitSource = binding.source;

  const pf = preflight({ card, inputTokens, maxTokens, limitMicros, limitSource, intent });
  if (!pf.within) {
    // Truncation can shorten the output, never the input: when the input alone costs more than
    // the limit, running the call would overspend before the first chunk, so refuse pre-flight.
    const inputAlone = preflight({ card, inputTokens, maxTokens: 0, limitMicros, limitSource });
    // The window cannot pay even for the input: the window is what ran out, so say so with the
    // reason a server can wait on (stored until resetsAt). With money left for a smaller call,
    // it is a cost refusal with the remainder as the limit, which a server can shrink against
    // (and which is not stored: maxTokens is outside the identity).
    if (!inputAlone.within && limitSource === 'budget_window' && block.budget) {
      // Only held money stands between this call's input and the window: that is "later".
      const unheld = preflight({
        card,
        inputTokens,
        maxTokens: 0,
        limitMicros: unheldRemaining,
        limitSource
      });
      if (unheld.within) {
        return reserved(
          input,
          now,
          `the ${fromMicrosExact(limitMicros)} ${block.budget.currency} not held for running calls cannot pay for this call's input; ${fromMicrosExact(unheldRemaining)} will be once they finish`
        );
      }
      return deny(
        'policy.budget_exhausted',
        `the ${fromMicrosExact(limitMicros)} ${block.budget.currency} left in the budget window cannot pay for this call's input`,
        { resetsAt: isoTime(volume.budgetWindowResetsAt) }
      );
    }
    if (onExceeded === 'reject' || !inputAlone.within) {
      return { kind: 'budget_exceeded', model, decision: pf.decision };
    }
  }
  return proceedWith(
    model,
    inputTokens,
    maxTokens,
    context,
    consent,
    skipped,
    limitMicros,
    tokenCap,
    pf.decision
  );
}

/**
 * A `proceed` evaluation, written as one literal per shape (with and without `consentSkipped`):
 * its keys in the order the evaluation always had — kind, model, tokens, context, consent, the
 * skipped dialog's basis if any, then the limits. Why: built as a base object and
 * `Object.assign({}, base, limits)` it was three objects and a copy key by key per request.
 */
function proceedWith(
  model: string,
  inputTokens: number,
  maxTokens: number,
  context: { requested: IncludeContext; applied: IncludeContext; trimmed: boolean },
  consent: 'ask' | 'allow' | 'deny',
  skipped: ConsentSkipped | null,
  limitMicros: number | null,
  limitTokens: number | null,
  decision: BudgetDecision | null
): Evaluation {
  if (skipped)
    return {
      kind: 'proceed',
      model,
      inputTokens,
      maxTokens,
      context,
      consent: 'allow',
      consentSkipped: skipped,
      limitMicros,
      limitTokens,
      decision
    };
  return {
    kind: 'proceed',
    model,
    inputTokens,
    maxTokens,
    context,
    consent,
    limitMicros,
    limitTokens,
    decision
  };
}
