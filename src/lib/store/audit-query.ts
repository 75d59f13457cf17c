/**
 * Asking the audit log questions (SPEC §7: filter and group by server, reason, model, time window;
 * totals). Pure functions over records; costs are summed in integer micro-units, so the totals
 * never drift the way float sums do.
 */
import type { AuditRecord } from '../machine/types';
import { fromMicros, parseMoneyAmount } from '../machine/money';

/** The group key and filter value standing for a null reason, model or an absent lane. */
export const NONE_KEY = '(none)';

/** A filter: every given member must match. `from` is inclusive and `to` exclusive (virtual ms on `t`). */
export interface AuditQuery {
  server?: string;
  /** A reason code, or {@link NONE_KEY} for records without one. */
  reason?: string;
  /** A model name, or {@link NONE_KEY} for records where no model ran. */
  model?: string;
  outcome?: string;
  from?: number;
  to?: number;
  /** A lane id, or {@link NONE_KEY} for records without a lane. */
  lane?: string;
}

function keyOf(v: string | null | undefined): string {
  return v ?? NONE_KEY;
}

/**
 * The records matching `q`, in their original order. Half-open time windows ([from, to)) tile
 * without counting a boundary record twice.
 */
export function queryAudit(records: readonly AuditRecord[], q: AuditQuery): AuditRecord[] {
  return records.filter(
    (r) =>
      (q.server === undefined || r.server === q.server) &&
      (q.reason === undefined || keyOf(r.reason) === q.reason) &&
      (q.model === undefined || keyOf(r.model) === q.model) &&
      (q.outcome === undefined || r.outcome === q.outcome) &&
      (q.lane === undefined || keyOf(r.lane) === q.lane) &&
      (q.from === undefined || r.t >= q.from) &&
      (q.to === undefined || r.t < q.to)
  );
}

export interface AuditTotals {
  count: number;
  tokensIn: number;
  tokensOut: number;
  /** Sum of `cost` in integer micro-units: never a float sum. */
  costMicros: number;
  /** `costMicros` as a decimal string with 4 decimals. */
  cost: string;
  /** The currencies seen, sorted. More than one means `cost` adds unlike units — show it, do not hide it. */
  currencies: string[];
  byOutcome: Record<string, number>;
  /** Keyed by reason code; records without a reason under {@link NONE_KEY}. */
  byReason: Record<string, number>;
  consentPrompts: number;
  replays: number;
  alerts: number;
  silenced: number;
  /** Records whose `cost` is not a decimal amount (hand-edited imports): counted as zero. */
  invalidCosts: number;
}

function addCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, n] of Object.entries(b)) out[k] = (out[k] ?? 0) + n;
  return out;
}

/**
 * The totals of two runs of records laid end to end: equal to `auditTotals(a.concat(b))`, so
 * totals can grow with the log (and be counted in slices) instead of re-reading every row.
 */
export function mergeTotals(a: AuditTotals, b: AuditTotals): AuditTotals {
  const costMicros = a.costMicros + b.costMicros;
  return {
    count: a.count + b.count,
    tokensIn: a.tokensIn + b.tokensIn,
    tokensOut: a.tokensOut + b.tokensOut,
    costMicros,
    cost: fromMicros(costMicros, 4),
    currencies: [...new Set([...a.currencies, ...b.currencies])].sort(),
    byOutcome: addCounts(a.byOutcome, b.byOutcome),
    byReason: addCounts(a.byReason, b.byReason),
    consentPrompts: a.consentPrompts + b.consentPrompts,
    replays: a.replays + b.replays,
    alerts: a.alerts + b.alerts,
    silenced: a.silenced + b.silenced,
    invalidCosts: a.invalidCosts + b.invalidCosts
  };
}

/** Totals over `records`; costs are summed as integer micro-units. */
export function auditTotals(records: readonly AuditRecord[]): AuditTotals {
  let tokensIn = 0;
  let tokensOut = 0;
  let costMicros = 0;
  let consentPrompts = 0;
  let replays = 0;
  let alerts = 0;
  let silenced = 0;
  let invalidCosts = 0;
  const currencies = new Set<string>();
  const byOutcome: Record<string, number> = {};
  const byReason: Record<string, number> = {};
  for (const r of records) {
    tokensIn += r.tokensIn;
    tokensOut += r.tokensOut;
    const c = parseMoneyAmount(r.cost);
    if (c.ok) costMicros += c.micros;
    else invalidCosts += 1;
    currencies.add(r.currency);
    if (r.consentShown) consentPrompts += 1;
    if (r.replayed) replays += 1;
    if (r.alert) alerts += 1;
    if (r.silenced) silenced += 1;
    byOutcome[r.outcome] = (byOutcome[r.outcome] ?? 0) + 1;
    const reason = keyOf(r.reason);
    byReason[reason] = (byReason[reason] ?? 0) + 1;
  }
  return {
    count: records.length,
    tokensIn,
    tokensOut,
    costMicros,
    cost: fromMicros(costMicros, 4),
    currencies: [...currencies].sort(),
    byOutcome,
    byReason,
    consentPrompts,
    replays,
    alerts,
    silenced,
    invalidCosts
  };
}

export type AuditGroupBy = 'server' | 'reason' | 'model' | 'outcome' | 'lane';

/**
 * Totals per value of `by`, sorted by key (code-unit order, not locale order, so the result is the
 * same in every browser and in Node). Null reasons/models and absent lanes group under {@link NONE_KEY}.
 */
export function groupAudit(
  records: readonly AuditRecord[],
  by: AuditGroupBy
): { key: string; totals: AuditTotals }[] {
  const groups = new Map<string, AuditRecord[]>();
  for (const r of records) {
    const key = keyOf(r[by]);
    const g = groups.get(key);
    if (g === undefined) groups.set(key, [r]);
    else g.push(r);
  }
  return [...groups.keys()]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((key) => ({ key, totals: auditTotals(groups.get(key) ?? []) }));
}
