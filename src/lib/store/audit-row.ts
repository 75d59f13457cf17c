/**
 * An audit row as the durable log stores it: the values of its fields in AUDIT_FIELDS order, as a
 * JSON array — not its JSONL export line, whose keys were ~half of each row's ~520 bytes, written
 * ~23,000 times a second of live play at 1000× (2 lanes × 50 servers). The nested budget decision
 * and skipped consent are positional too (money `[amount, currency]`, tokens `[input, output]`).
 *
 * A field the record does not have is written `[]` (ABSENT): JSON has no `undefined`, and `null`
 * is a value of its own (`reason`, `budgetDecision`). No field holds an array (a nested object is
 * stored as a non-empty one), so the two never meet. Absence is kept so a row reads back as the
 * record it was, and the export (which re-encodes read rows) writes the same bytes.
 */
import type { AuditRecord, BudgetDecision, Money } from '../machine/types';
import { AUDIT_FIELDS } from './audit-format';

/** A field the record does not have. Shared and never changed: JSON.stringify writes `[]`. */
const ABSENT: readonly never[] = [];

function present<T>(x: T): T | readonly never[] {
  return x === undefined ? ABSENT : x;
}

function money(m: Money): [string, string] {
  return [m.amount, m.currency];
}

function budgetValues(b: BudgetDecision): unknown[] {
  return [
    money(b.estimatedCost),
    money(b.limitApplied),
    b.limitSource,
    b.meterBasis,
    [b.estimatedTokens.input, b.estimatedTokens.output],
    b.actualCost === undefined ? ABSENT : money(b.actualCost),
    b.actualTokens === undefined ? ABSENT : [b.actualTokens.input, b.actualTokens.output],
    present(b.requestHonored)
  ];
}

/**
 * The record's values in AUDIT_FIELDS order (as `recordJson` writes them: a falsy budget decision
 * is `null`, a falsy skipped consent absent). Built as one literal: read field by field through
 * the names in AUDIT_FIELDS, the worker would look each key up at run time.
 */
export function rowValues(r: AuditRecord): unknown[] {
  const b = r.budgetDecision;
  const s = r.consentSkipped;
  return [
    present(r.seq),
    present(r.t),
    present(r.time),
    present(r.server),
    present(r.connection),
    present(r.requestId),
    present(r.identity),
    present(r.outcome),
    present(r.reason),
    present(r.retryable),
    present(r.replayed),
    present(r.represented),
    present(r.consentShown),
    present(r.consent),
    s ? [money(s.estimatedCost), money(s.askAbove)] : ABSENT,
    present(r.model),
    present(r.tokensIn),
    present(r.tokensOut),
    present(r.cost),
    present(r.currency),
    present(r.durationMs),
    present(r.contextRequested),
    present(r.contextApplied),
    b ? budgetValues(b) : null,
    present(r.silenced),
    present(r.alert),
    present(r.lane)
  ];
}

/** How a stored row reads back: each value's key, and a nested part's own keys. */
type Shape = readonly (string | readonly [string, Shape])[];
const MONEY: Shape = ['amount', 'currency'];
const TOKENS: Shape = ['input', 'output'];
const ROW: Shape = AUDIT_FIELDS.map((f) =>
  f === 'consentSkipped'
    ? [
        f,
        [
          ['estimatedCost', MONEY],
          ['askAbove', MONEY]
        ]
      ]
    : f === 'budgetDecision'
      ? [
          f,
          [
            ['estimatedCost', MONEY],
            ['limitApplied', MONEY],
            'limitSource',
            'meterBasis',
            ['estimatedTokens', TOKENS],
            ['actualCost', MONEY],
            ['actualTokens', TOKENS],
            'requestHonored'
          ]
        ]
      : f
);

/** The object `values` (stored in `shape`) holds, keys in the shape's order, absent ones left out. */
function read(values: unknown, shape: Shape, what: string): Record<string, unknown> {
  if (!Array.isArray(values) || values.length !== shape.length)
    throw new Error(`${what} is not ${shape.length} values`);
  const out: Record<string, unknown> = {};
  shape.forEach((s, i) => {
    const x: unknown = values[i];
    if (Array.isArray(x) && x.length === 0) return;
    if (typeof s === 'string') out[s] = x;
    else out[s[0]] = x === null ? null : read(x, s[1], s[0]);
  });
  return out;
}

/**
 * The record a stored row (parsed {@link rowValues}) holds, keys in AUDIT_FIELDS order; throws,
 * saying what is wrong, when it is not one.
 */
export function rowRecord(values: unknown): AuditRecord {
  return read(values, ROW, 'the row') as unknown as AuditRecord;
}
