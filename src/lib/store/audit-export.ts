/**
 * The audit log as files (SPEC §7: exportable as JSONL and CSV) — the writing is audit-format.ts,
 * re-exported here — and the JSONL import checked against the shared vocabulary's zod schema,
 * naming the line and field of the first problem.
 */
import type { z } from 'zod';
import { parseMoneyAmount } from '../machine/money';
import type { AuditRecord } from '../machine/types';
import { AuditRecordSchema } from '../machine/vocabulary';
import { orderRecord } from './audit-format';

export * from './audit-format';

// ───────────────────────────── import ─────────────────────────────

/** A record read back must also carry amounts that parse as money, not just strings. */
const ImportedRecordSchema = AuditRecordSchema.superRefine((r, ctx) => {
  const amounts: [string, (string | number)[]][] = [[r.cost, ['cost']]];
  if (r.budgetDecision)
    amounts.push([
      r.budgetDecision.limitApplied.amount,
      ['budgetDecision', 'limitApplied', 'amount']
    ]);
  if (r.consentSkipped)
    amounts.push(
      [r.consentSkipped.estimatedCost.amount, ['consentSkipped', 'estimatedCost', 'amount']],
      [r.consentSkipped.askAbove.amount, ['consentSkipped', 'askAbove', 'amount']]
    );
  for (const [amount, path] of amounts) {
    const p = parseMoneyAmount(amount);
    if (!p.ok) ctx.addIssue({ code: 'custom', path, message: `is not a valid amount: ${p.error}` });
  }
});

function shown(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 40 ? s.slice(0, 37) + '...' : s;
}

/** The member at `path` below `v`, to show what was found there. */
function at(v: unknown, path: readonly PropertyKey[]): unknown {
  let cur = v;
  for (const k of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array'
};

/** One zod issue in the log's words: what the value must be and what it was. */
function describeIssue(issue: z.core.$ZodIssue, v: unknown): string {
  const got = at(v, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.path.length === 0) return `must be a JSON object (got ${shown(got)})`;
      return `must be ${TYPE_WORDS[issue.expected] ?? issue.expected} (got ${shown(got)})`;
    case 'too_small':
      return `must be a whole number ≥ 0 (got ${shown(got)})`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((x) => String(x)).join(', ')} (got ${shown(got)})`;
    case 'custom':
      return issue.message;
    default:
      return `${issue.message} (got ${shown(got)})`;
  }
}

/**
 * Check that `v` is an AuditRecord; on success a copy in field order (unknown members dropped, so
 * a newer build's extra fields do not break an import), otherwise the first problem found, named
 * by its path (`field 'budgetDecision.limitApplied.amount' is not a valid amount: ...`).
 */
export function validateAuditRecord(
  v: unknown
): { ok: true; record: AuditRecord } | { ok: false; error: string } {
  const r = ImportedRecordSchema.safeParse(v);
  if (r.success) return { ok: true, record: orderRecord(r.data) };
  const issue = r.error.issues[0]!;
  const message = describeIssue(issue, v);
  if (issue.path.length === 0) return { ok: false, error: `the line ${message}` };
  return { ok: false, error: `field '${issue.path.map(String).join('.')}' ${message}` };
}

export type AuditParse =
  { ok: true; records: AuditRecord[] } | { ok: false; error: string; line: number };

/**
 * Parse a JSONL audit export. Blank lines are skipped; the first bad line stops the parse with an
 * error naming its (1-based) line number and the problem, so nothing half-imported is applied.
 */
export function parseAuditJsonl(text: string): AuditParse {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const records: AuditRecord[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return { ok: false, line: i + 1, error: `line ${i + 1}: not valid JSON (${why})` };
    }
    const checked = validateAuditRecord(v);
    if (!checked.ok) return { ok: false, line: i + 1, error: `line ${i + 1}: ${checked.error}` };
    records.push(checked.record);
  }
  return { ok: true, records };
}
