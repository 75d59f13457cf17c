/**
 * The audit log as files (SPEC §7: exportable as JSONL and CSV): a fixed field order so the same
 * record always serialises to the same bytes, and the CSV guarded against formula injection.
 * Without the import's check (audit-export.ts, which validates with zod): the playground's worker
 * writes and exports the log, and its first load carries no zod (issue #24).
 */
import type { AuditRecord, BudgetDecision, Money } from '../machine/types';

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

/**
 * `JSON.stringify(orderRecord(r))`, made faster: one object literal in {@link AUDIT_FIELDS} order
 * (undefined fields are left out by JSON.stringify, as orderRecord leaves them out); built field
 * by field, the copy took about as long as the JSON (audit-chunks.spec.ts holds both equal). Every
 * exported row goes through it. The durable audit log once stored each row as this line (it now
 * stores the values alone: audit-row.ts). Writing the JSON by hand (strings and numbers
 * concatenated) ran 2–3× faster in Node but slowed live play in Chromium by a fifth (bench:ui
 * 896× → 729×): its ~80 concatenations a row are as many heap strings, flattened again later.
 */
export function recordJson(r: AuditRecord): string {
  const b = r.budgetDecision;
  const s = r.consentSkipped;
  const o: { [F in (typeof AUDIT_FIELDS)[number]]: unknown } = {
    seq: r.seq,
    t: r.t,
    time: r.time,
    server: r.server,
    connection: r.connection,
    requestId: r.requestId,
    identity: r.identity,
    outcome: r.outcome,
    reason: r.reason,
    retryable: r.retryable,
    replayed: r.replayed,
    represented: r.represented,
    consentShown: r.consentShown,
    consent: r.consent,
    consentSkipped: s
      ? { estimatedCost: orderMoney(s.estimatedCost), askAbove: orderMoney(s.askAbove) }
      : undefined,
    model: r.model,
    tokensIn: r.tokensIn,
    tokensOut: r.tokensOut,
    cost: r.cost,
    currency: r.currency,
    durationMs: r.durationMs,
    contextRequested: r.contextRequested,
    contextApplied: r.contextApplied,
    budgetDecision: b
      ? {
          estimatedCost: orderMoney(b.estimatedCost),
          limitApplied: orderMoney(b.limitApplied),
          limitSource: b.limitSource,
          meterBasis: b.meterBasis,
          estimatedTokens: { input: b.estimatedTokens.input, output: b.estimatedTokens.output },
          actualCost: b.actualCost === undefined ? undefined : orderMoney(b.actualCost),
          actualTokens:
            b.actualTokens === undefined
              ? undefined
              : { input: b.actualTokens.input, output: b.actualTokens.output },
          requestHonored: b.requestHonored
        }
      : null,
    silenced: r.silenced,
    alert: r.alert,
    lane: r.lane
  };
  return JSON.stringify(o);
}

/** One JSON object per line, keys in {@link AUDIT_FIELDS} order, each line ending in `\n`. */
export function toJsonl(records: readonly AuditRecord[]): string {
  let out = '';
  for (const r of records) out += recordJson(r) + '\n';
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
