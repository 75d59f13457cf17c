/**
 * `denials-true`: a denial says what is true (issue #18). Two claims a server acts on are checked
 * against the host's own windows and the money actually spent:
 *
 * - `policy.budget_exhausted` means the window cannot pay even for the input. A fresh one issued
 *   while the money *spent* in the window still covered the input (the shortfall was money held
 *   for calls still running) is stored until the reset and tells the server "do not retry":
 *   a premise that was false.
 * - A rate-limit denial's `retryAfterMs`, fresh or replayed, names the rate window's reset, and
 *   an exhausted window's `resetsAt` names the budget window's: a replay that says "12 s" while
 *   the window resets in 550 s sends an obedient server back into the same refusal.
 */
import { estimateCostMicros, inputTokensOf, type RateCard } from '../../../machine/budget';
import { isoTime } from '../../../machine/evaluate';
import type { AuditRecord, Frame, SamplingParams } from '../../../machine/types';
import { n, type Offender, type Tally } from './catalogue';

/** The host's windows for the frame's server at the frame's instant (virtual ms). */
export interface WindowsAt {
  rateResetsAt: number | null;
  budgetResetsAt: number | null;
}

/** The reasons whose claims {@link checkDenialFrame} holds against the windows. */
export const WINDOW_REASONS = new Set(['policy.rate_limit', 'policy.budget_exhausted']);

/** The denial data of a -32003 frame whose reason makes a claim about a window, or null. */
export function windowClaim(
  frame: Frame
): { reason: string; retryAfterMs?: number; resetsAt?: string } | null {
  if (!('error' in frame) || frame.error.code !== -32003) return null;
  const data = frame.error.data as { reason?: unknown } | undefined;
  return data && typeof data.reason === 'string' && WINDOW_REASONS.has(data.reason)
    ? (data as { reason: string })
    : null;
}

/** A window claim in a frame sent at `t` against the host's windows then. */
export function checkDenialFrame(
  tally: Tally,
  frame: Frame,
  t: number,
  windows: WindowsAt,
  at: (what: string) => Offender
): void {
  const claim = windowClaim(frame);
  if (!claim) return;
  if (claim.reason === 'policy.rate_limit' && windows.rateResetsAt !== null) {
    if (claim.retryAfterMs === undefined) return; // not retryable: it names no time
    tally.checked++;
    const truth = windows.rateResetsAt - t;
    if (claim.retryAfterMs !== truth)
      tally.add(
        at(
          `a rate-limit denial says retryAfterMs ${n(claim.retryAfterMs)}, the window resets in ${n(truth)} ms`
        )
      );
  } else if (claim.reason === 'policy.budget_exhausted' && windows.budgetResetsAt !== null) {
    tally.checked++;
    const truth = isoTime(windows.budgetResetsAt);
    if (claim.resetsAt !== truth)
      tally.add(
        at(`an exhausted-budget denial says resetsAt ${claim.resetsAt}, the window resets ${truth}`)
      );
  }
}

/**
 * A fresh `policy.budget_exhausted` against the money spent in its window (`spent`, in micros,
 * as the checker counted it from the audit log) and the budget in force when it arrived: the
 * input, priced at the dearest card (no false alarm whatever model was picked), must not fit.
 */
export function checkExhaustedPremise(
  tally: Tally,
  r: AuditRecord,
  params: SamplingParams | undefined,
  budget: { micros: number },
  spent: number,
  cards: Readonly<Record<string, RateCard>>,
  at: (what: string) => Offender
): void {
  if (r.replayed || r.reason !== 'policy.budget_exhausted' || !params) return;
  tally.checked++;
  const tokens = inputTokensOf(params);
  let dearest = 0;
  for (const card of Object.values(cards))
    dearest = Math.max(dearest, estimateCostMicros(card, tokens, 0));
  if (spent + dearest <= budget.micros)
    tally.add(
      at(
        `budget_exhausted while the window had ${n(budget.micros - spent)} µ$ unspent, enough for the input (${n(dearest)} µ$)`
      )
    );
}
