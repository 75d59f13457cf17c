/**
 * The audit log as files (SPEC §7: exportable as JSONL and CSV): a fixed field order so the same
 * record always serialises to the same bytes, the CSV guarded against formula injection, and the
 * JSONL import checked against the shared vocabulary's zod schema, naming the line and field of
 * the first problem.
 */
import type { z } from 'zod';
import { parseMoneyAmount } from '../machine/money';
import type { AuditRecord, BudgetDecision, Money } from '../machine/types';
import { AuditRecordSchema } from '../machine/vocabulary';

/** Every AuditRecord field in export order. The check below breaks the build if one is missing. */
export const AUDIT_FIELDS = [
  'seq',
  't',
  'time',
  'server',
  'connection',
  'requestId',
  'identity',
  'outcome',
  'reason',
  'retryable',
  'replayed',
  'represented',
  'consentShown',
  'consent',
  'consentSkipped',
  'model',
  'tokensIn',
  'tokensOut',
  'cost',
  'currency',
  'durationMs',
  'contextRequested',
  'contextApplied',
  'budgetDecision',
  'silenced',
  'alert',
  'lane'
] as const satisfies readonly (keyof AuditRecord)[];

type MissingAuditField = Exclude<keyof AuditRecord, (typeof AUDIT_FIELDS)[number]>;
/** Compile-time: a field added to AuditRecord must be added to AUDIT_FIELDS (and so to exports). */
const _everyFieldExported: [MissingAuditField] extends [never] ? true : MissingAuditField = true;
void _everyFieldExported;

function orderMoney(m: Money): Money {
  return { amount: m.amount, currency: m.currency };
}

function orderBudget(b: BudgetDecision): BudgetDecision {
  const out: BudgetDecision = {
    estimatedCost: orderMoney(b.estimatedCost),
    limitApplied: orderMoney(b.limitApplied),
    limitSource: b.limitSource,
    meterBasis: b.meterBasis,
    estimatedTokens: { input: b.estimatedTokens.input, output: b.estimatedTokens.output }
  };
  if (b.actualCost !== undefined) out.actualCost = orderMoney(b.actualCost);
  if (b.actualTokens !== undefined)
    out.actualTokens = { input: b.actualTokens.input, output: b.actualTokens.output };
  if (b.requestHonored !== undefined) out.requestHonored = b.requestHonored;
  return out;
}

/**
 * A copy of `r` with its keys in {@link AUDIT_FIELDS} order (nested budget too) and nothing else,
 * so the same record always serialises to the same bytes (SPEC §8: byte-identical audit records).
 */
export function orderRecord(r: AuditRecord): AuditRecord {
  const out = {} as Record<string, unknown>;
  for (const f of AUDIT_FIELDS) {
    if (f === 'budgetDecision') out[f] = r.budgetDecision ? orderBudget(r.budgetDecision) : null;
    else if (f === 'consentSkipped') {
      const s = r.consentSkipped;
      if (s)
        out[f] = { estimatedCost: orderMoney(s.estimatedCost), askAbove: orderMoney(s.askAbove) };
    } else if (r[f] !== undefined) out[f] = r[f];
  }
  return out as unknown as AuditRecord;
}

/** One JSON object per line, keys in {@link AUDIT_FIELDS} order, each line ending in `\n`. */
export function toJsonl(records: readonly AuditRecord[]): string {
  let out = '';
  for (const r of records) out += JSON.stringify(orderRecord(r)) + '\n';
  return out;
}

/**
 * The CSV columns: every top-level field but `budgetDecision`, which is flattened into `budget_*`,
 * and `consentSkipped`, flattened into the last two (amounts in the record's `currency`: a dialog
 * is only skipped when the threshold is in the rate card's currency).
 */
export const CSV_COLUMNS = [
  ...AUDIT_FIELDS.filter((f) => f !== 'budgetDecision' && f !== 'consentSkipped'),
  'budget_estimatedCost',
  'budget_limitApplied',
  'budget_currency',
  'budget_limitSource',
  'budget_meterBasis',
  'budget_estimatedTokensIn',
  'budget_estimatedTokensOut',
  'budget_actualCost',
  'budget_actualTokensIn',
  'budget_actualTokensOut',
  'budget_requestHonored',
  'consentSkipped_estimatedCost',
  'consentSkipped_askAbove'
] as const;

type Cell = string | number | boolean | null | undefined;

/** A plain decimal number written as a string (`"0.0123"`, `"-1"`): data, not a formula. */
const NUMERIC_TEXT = /^[+-]?\d+(\.\d+)?$/;
/**
 * Leading characters a spreadsheet reads as the start of a formula. `=`, `+`, `-`, `@` per the
 * brief, plus tab and CR, which OWASP lists because some spreadsheets skip them before parsing.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell. Strings are untrusted (server names, request ids, reasons): a leading formula
 * character gets a `'` so a spreadsheet shows the text instead of running it, and any comma,
 * quote, CR or LF puts the cell in quotes with quotes doubled (RFC 4180).
 */
export function csvCell(v: Cell): string {
  if (v === null || v === undefined) return '';
  let s = String(v);
  if (typeof v === 'string' && FORMULA_START.test(s) && !NUMERIC_TEXT.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

/** A budget amount: bare when in the budget's currency, with its currency when it differs (never lost). */
function budgetAmount(m: Money | undefined, currency: string): string | undefined {
  if (m === undefined) return undefined;
  return m.currency === currency ? m.amount : `${m.amount} ${m.currency}`;
}

function csvRow(r: AuditRecord): string {
  const b = r.budgetDecision;
  const bc = b?.estimatedCost.currency ?? '';
  const flat: Record<string, Cell> = b
    ? {
        budget_estimatedCost: b.estimatedCost.amount,
        budget_limitApplied: budgetAmount(b.limitApplied, bc),
        budget_currency: bc,
        budget_limitSource: b.limitSource,
        budget_meterBasis: b.meterBasis,
        budget_estimatedTokensIn: b.estimatedTokens.input,
        budget_estimatedTokensOut: b.estimatedTokens.output,
        budget_actualCost: budgetAmount(b.actualCost, bc),
        budget_actualTokensIn: b.actualTokens?.input,
        budget_actualTokensOut: b.actualTokens?.output,
        budget_requestHonored: b.requestHonored
      }
    : {};
  const s = r.consentSkipped;
  if (s) {
    flat['consentSkipped_estimatedCost'] = s.estimatedCost.amount;
    flat['consentSkipped_askAbove'] = s.askAbove.amount;
  }
  return CSV_COLUMNS.map((c) =>
    csvCell(c.includes('_') ? flat[c] : (r[c as keyof AuditRecord] as Cell))
  ).join(',');
}

/**
 * RFC 4180 CSV: a header row naming every column, CRLF line endings (including after the last
 * row), nested budget decision flattened into `budget_*` columns, and formula-injection guarded.
 */
export function toCsv(records: readonly AuditRecord[]): string {
  let out = CSV_COLUMNS.join(',') + '\r\n';
  for (const r of records) out += csvRow(r) + '\r\n';
  return out;
}

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
