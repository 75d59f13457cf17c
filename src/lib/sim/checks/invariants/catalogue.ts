/**
 * The seeds' guarantees, named: what each promises, how a result reads, and the audit rows behind
 * one. Shared by the checker (checker.ts), the CLI's one-line verdict and the Guarantees panel.
 */
import { toMicros } from '../../../machine/money';
import type { AuditRecord } from '../../../machine/types';
import { copyable } from '../../../machine/clone';

export const INVARIANTS = {
  'one-frame': 'Every request gets exactly one frame and one audit record',
  'one-consent': 'At most one consent dialog per identity per store lifetime',
  'no-overdraw': 'No budget window or session pool is overdrawn',
  'call-within-limit': 'No call costs more than the limit it was given',
  'tokens-paid': 'Every token generated is paid for',
  'loops-flagged':
    'An identity re-presented as often as the alert threshold within its window is flagged',
  'replays-no-model':
    'Replays never ask the user or call the model; completions are never replayed',
  'verdicts-only': 'The store holds verdicts only, never a completion',
  'denials-true':
    'Denials say what is true: an exhausted window could not pay, a replay names the window’s reset',
  'no-future-decisions': 'A run is never handed stored decisions decided after its clock',
  'frames-conform': 'Every frame conforms to the MCP SDK schema',
  'refusals-typed':
    'Every refusal carries a reason a server can branch on (-32003 with data.reason)',
  'totals-match': "The lane's counters equal its audit log",
  'same-bytes': 'The same scenario and seed give the same bytes'
} as const;
export type InvariantId = keyof typeof INVARIANTS;

/** `held`: no violation; `broken`: at least one; `waived`: given up on purpose (silence is on). */
export type GuaranteeStatus = 'held' | 'broken' | 'waived';

/** One request (or stored decision, or counter) that breaks a guarantee. */
export interface Offender {
  lane: string;
  /** The audit record's seq, when there is one: the audit table can show the row. */
  seq: number | null;
  /** `connection/id` of the request, when the offence is about one. */
  request: string | null;
  t: number;
  what: string;
}

export interface InvariantResult {
  id: InvariantId;
  title: string;
  status: GuaranteeStatus;
  /** One line for the panel and the CLI: "664 of 664 requests answered". */
  summary: string;
  checked: number;
  violations: number;
  /** The first offenders (at most {@link MAX_OFFENDERS}); `violations` counts them all. */
  offenders: Offender[];
}

export const MAX_OFFENDERS = 50;

/**
 * A number as the panel writes it: 12,345. One formatter for every call: `toLocaleString` builds
 * a new `Intl.NumberFormat` each time (ECMA-402 defines it as exactly that), which was ~4 % of the
 * worker's live play (the panel's summaries are written for every snapshot). Same text either way.
 */
const EN_US = new Intl.NumberFormat('en-US');
/**
 * A whole number's digits grouped by three here, without the formatter: the summaries write ~25
 * counts per snapshot, and each `format` call cost ~1.5 µs (live play, issue #24). Anything else
 * (a fraction, -0, a number too big to be exact) is the formatter's.
 */
export const n = (x: number): string => {
  if (!Number.isSafeInteger(x) || Object.is(x, -0)) return EN_US.format(x);
  const digits = String(x < 0 ? -x : x);
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return x < 0 ? `-${out}` : out;
};
export const plural = (x: number, one: string, many = `${one}s`): string =>
  `${n(x)} ${x === 1 ? one : many}`;

/** One guarantee's count of checks and violations, keeping the first offenders. */
export class Tally {
  checked = 0;
  violations = 0;
  readonly offenders: Offender[] = [];
  add(o: Offender): void {
    this.violations++;
    if (this.offenders.length < MAX_OFFENDERS) this.offenders.push(o);
  }
}

// A copy has its own counts and offenders (at most MAX_OFFENDERS).
copyable(Tally, { name: 'invariants.Tally', blank: () => new Tally() });

/**
 * The audit rows behind a guarantee that holds: what the audit table shows when the learner
 * follows the panel's link. (A broken guarantee links to its offenders instead.)
 */
export function rowsBehind(id: InvariantId, status: GuaranteeStatus, r: AuditRecord): boolean {
  switch (id) {
    case 'one-frame':
      return status === 'waived' ? r.silenced : true;
    case 'one-consent':
      return r.consentShown;
    case 'no-overdraw':
      return toMicros(r.cost) > 0;
    case 'call-within-limit':
      return r.budgetDecision?.actualCost !== undefined;
    case 'tokens-paid':
      return r.tokensOut > 0;
    case 'loops-flagged':
      return r.alert;
    case 'replays-no-model':
      return r.replayed || (r.tokensOut > 0 && !r.silenced);
    case 'verdicts-only':
      // The presentations that stored a verdict: fresh denials and approvals.
      return !r.replayed && (r.outcome === 'denied' || r.consent === 'approved');
    case 'frames-conform':
      return !r.silenced;
    case 'refusals-typed':
      return !r.silenced && (r.outcome === 'denied' || r.outcome === 'budget_exceeded');
    case 'denials-true':
      return r.reason === 'policy.budget_exhausted' || r.reason === 'policy.rate_limit';
    case 'no-future-decisions':
      return false; // a store's hand-over, not a request: no audit row stands behind it
    case 'totals-match':
    case 'same-bytes':
      return true;
  }
}

/** The first broken guarantee as one line: `name: what (lane A, request c#1/4, audit seq 9)`. */
export function brokenLine(results: readonly InvariantResult[]): string | null {
  const r = results.find((x) => x.status === 'broken');
  if (!r) return null;
  const o = r.offenders[0];
  const where = o
    ? [
        o.lane ? `lane ${o.lane}` : '',
        o.request ? `request ${o.request}` : '',
        o.seq !== null ? `audit seq ${o.seq}` : ''
      ]
        .filter(Boolean)
        .join(', ')
    : '';
  return `invariant ${r.id} broken: ${o?.what ?? r.summary}${where ? ` (${where})` : ''}${r.violations > 1 ? `, and ${n(r.violations - 1)} more` : ''}`;
}
