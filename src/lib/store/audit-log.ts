/**
 * The audit log (SPEC §7): one record per decision, durable, queryable in the page and exportable
 * as JSONL and CSV. It is what answers "why did the bill triple" a month later, so totals are
 * summed in integer micro-units and exports are byte-stable (fixed key and column order).
 */
import type { AuditRecord, BudgetDecision, Money } from '../machine/types';
import { fromMicros, parseMoneyAmount } from '../machine/money';
import type { MaybePromise } from './decision-store';
import { prefixRange, type Namespace } from './durable-store';
import { inTransaction, openIdbStore, storageError, type OpenResult, type UseStore } from './idb';
import { WriteBehind, type StorageFailure } from './write-behind';

// ───────────────────────────── the logs ─────────────────────────────

export interface AuditLog {
  /** Append one record; order of appends is the order of `all()`. */
  append(r: AuditRecord): MaybePromise<void>;
  all(): MaybePromise<AuditRecord[]>;
  clear(): MaybePromise<void>;
  count(): MaybePromise<number>;
}

/**
 * The in-memory log the simulation writes to: synchronous, no copies (the engine hands over a
 * fresh record per decision and never mutates it afterwards).
 */
export class MemoryAuditLog implements AuditLog {
  private records: AuditRecord[] = [];

  append(r: AuditRecord): void {
    this.records.push(r);
  }

  /** A snapshot array: callers may sort or filter it without disturbing the log's order. */
  all(): AuditRecord[] {
    return this.records.slice();
  }

  clear(): void {
    this.records = [];
  }

  count(): number {
    return this.records.length;
  }
}

/** The default database; separate from the decisions database (one object store per database). */
export const DEFAULT_AUDIT_DB = 'sampling-policy-lab-audit';
/** The object store name inside the audit database. */
export const AUDIT_STORE = 'audit';

export interface DurableAuditOptions {
  dbName?: string;
  /**
   * The key prefix of this log's records (the playground's `[runId]`): records are keyed
   * `[...namespace, n]` with `n` an append counter, so one run's log is one contiguous range.
   */
  namespace?: Namespace;
  /** Bounds the wait for a blocked or unresponsive IndexedDB (e.g. `AbortSignal.timeout(3000)`). */
  signal?: AbortSignal;
}

/** Where a durable log stands: how many records are on disk and how many only in memory. */
export interface AuditStatus {
  /** Records of this namespace on disk, as of the last committed batch. */
  saved: number;
  /** Records appended but not on disk (queued, being written, or held after a failure). */
  heldInMemory: number;
  failure: StorageFailure | null;
}

/**
 * The audit log in IndexedDB, appended through the shared write-behind (write-behind.ts):
 * `append` is synchronous and `flush()` writes every queued record in one transaction.
 *
 * Key = `[...namespace, n]`, `n` an append counter continued from the namespace's highest key at
 * `open()`, rather than the record's `seq`: seq restarts with every run and lane, so a seq key
 * would let a second run silently overwrite the first — the record that would have explained last
 * month's bill.
 *
 * `all()` and `count()` flush first, so they include every append made before the call that could
 * be written.
 */
export class DurableAuditLog implements AuditLog {
  readonly dbName: string;
  readonly namespace: Namespace;
  #store: UseStore;
  #next: number;
  #saved: number;
  readonly #writer: WriteBehind<[number, AuditRecord]>;

  private constructor(store: UseStore, dbName: string, ns: Namespace, next: number, saved: number) {
    this.#store = store;
    this.dbName = dbName;
    this.namespace = ns;
    this.#next = next;
    this.#saved = saved;
    this.#writer = new WriteBehind<[number, AuditRecord]>({
      noun: 'audit record(s)',
      storeName: AUDIT_STORE,
      write: (batch) =>
        inTransaction<void>(this.#store, 'readwrite', (s, done) => {
          for (const [n, record] of batch) s.put(record, [...this.namespace, n]);
          done(undefined);
        }),
      committed: (batch) => {
        this.#saved += batch.length;
      }
    });
  }

  /** Open (or create) the audit database; `{ ok: false, error }` in plain words when unavailable. */
  static async open(opts: DurableAuditOptions = {}): Promise<OpenResult<DurableAuditLog>> {
    const dbName = opts.dbName ?? DEFAULT_AUDIT_DB;
    const opened = await openIdbStore(dbName, AUDIT_STORE, opts.signal);
    if (!opened.ok) return opened;
    return DurableAuditLog.attach(opened.store, dbName, opts.namespace ?? []);
  }

  /** A log over an already-open database (the worker opens it once and keeps one log per run). */
  static async attach(
    store: UseStore,
    dbName: string,
    ns: Namespace
  ): Promise<OpenResult<DurableAuditLog>> {
    try {
      const [last, count] = await inTransaction<[number | null, number]>(
        store,
        'readonly',
        (s, done) => {
          const range = prefixRange(ns);
          // The highest key, read with one reverse cursor step instead of loading every key.
          const req = s.openKeyCursor(range, 'prev');
          req.onsuccess = () => {
            const key = req.result?.key;
            const n = Array.isArray(key) ? key[ns.length] : undefined;
            const counted = s.count(range);
            counted.onsuccess = () => done([typeof n === 'number' ? n : null, counted.result]);
          };
        }
      );
      return {
        ok: true,
        store: new DurableAuditLog(store, dbName, ns, last === null ? 0 : last + 1, count)
      };
    } catch (err) {
      return {
        ok: false,
        kind: 'failed',
        error: storageError(`read the audit log in '${dbName}'`, err, AUDIT_STORE).message
      };
    }
  }

  /** Records appended but not yet committed to IndexedDB (including a batch being written now). */
  get pendingWrites(): number {
    return this.#writer.pending;
  }

  status(): AuditStatus {
    return {
      saved: this.#saved,
      heldInMemory: this.#writer.pending,
      failure: this.#writer.failure
    };
  }

  /** Queue one record; it is copied now, so later changes to the caller's object are not logged. */
  append(r: AuditRecord): void {
    this.#writer.enqueue([this.#next, orderRecord(r)]);
    this.#next += 1;
  }

  /**
   * Write every queued record in one transaction. Resolves true once everything appended before
   * the call is on disk; false when storage has failed (see `status().failure`). Never rejects.
   */
  flush(): Promise<boolean> {
    return this.#writer.flush();
  }

  /** Try again after a failure: write everything held in memory since. */
  retry(): Promise<boolean> {
    return this.#writer.retry();
  }

  /** Point at a freshly opened database (after the old connection was lost) before a retry. */
  reattach(store: UseStore): void {
    this.#store = store;
  }

  /** Mark the log failed from outside (the worker's time limit on a write that never settles). */
  fail(failure: StorageFailure): void {
    this.#writer.fail(failure);
  }

  async all(): Promise<AuditRecord[]> {
    await this.flush();
    try {
      return await inTransaction<AuditRecord[]>(this.#store, 'readonly', (s, done) => {
        const req = s.getAll(prefixRange(this.namespace));
        req.onsuccess = () => done(req.result as AuditRecord[]);
      });
    } catch (err) {
      throw storageError(`read the audit log in '${this.dbName}'`, err, AUDIT_STORE);
    }
  }

  async count(): Promise<number> {
    await this.flush();
    try {
      return await inTransaction<number>(this.#store, 'readonly', (s, done) => {
        const req = s.count(prefixRange(this.namespace));
        req.onsuccess = () => done(req.result);
      });
    } catch (err) {
      throw storageError(`count the audit log in '${this.dbName}'`, err, AUDIT_STORE);
    }
  }

  /** Drop every record of this namespace, queued or stored. Keys keep counting up, never reused. */
  async clear(): Promise<void> {
    this.#writer.discardAll();
    await this.#writer.flush();
    try {
      await inTransaction<void>(this.#store, 'readwrite', (s, done) => {
        const range = prefixRange(this.namespace);
        if (range === undefined) s.clear();
        else s.delete(range);
        done(undefined);
      });
      this.#saved = 0;
    } catch (err) {
      throw storageError(`clear the audit log in '${this.dbName}'`, err, AUDIT_STORE);
    }
  }
}

// ───────────────────────────── field order ─────────────────────────────

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
    else if (r[f] !== undefined) out[f] = r[f];
  }
  return out as unknown as AuditRecord;
}

// ───────────────────────────── query ─────────────────────────────

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

// ───────────────────────────── export ─────────────────────────────

/** One JSON object per line, keys in {@link AUDIT_FIELDS} order, each line ending in `\n`. */
export function toJsonl(records: readonly AuditRecord[]): string {
  let out = '';
  for (const r of records) out += JSON.stringify(orderRecord(r)) + '\n';
  return out;
}

/** The CSV columns: every top-level field but `budgetDecision`, which is flattened into `budget_*`. */
export const CSV_COLUMNS = [
  ...AUDIT_FIELDS.filter((f) => f !== 'budgetDecision'),
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
  'budget_requestHonored'
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
  const budget: Record<string, Cell> = b
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
  return CSV_COLUMNS.map((c) =>
    csvCell(c.startsWith('budget_') ? budget[c] : (r[c as keyof AuditRecord] as Cell))
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

const OUTCOMES = [
  'allowed',
  'trimmed',
  'denied',
  'budget_exceeded',
  'budget_exhausted',
  'transport_error',
  'provider_error'
] as const satisfies readonly AuditRecord['outcome'][];
const CONSENTS = [
  'approved',
  'denied',
  'timeout',
  'not-asked'
] as const satisfies readonly AuditRecord['consent'][];
const CONTEXTS = [
  'none',
  'thisServer',
  'allServers'
] as const satisfies readonly AuditRecord['contextRequested'][];
const LIMIT_SOURCES = [
  'host_policy',
  'budget_window',
  'session_pool',
  'token_meter'
] as const satisfies readonly BudgetDecision['limitSource'][];

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 40 ? s.slice(0, 37) + '...' : s;
}

/** What is wrong and where: `path` is the member chain below the checked value. */
interface Problem {
  path: string[];
  message: string;
}

/** A check returns null when the value is fine. */
type Check = (v: unknown) => Problem | null;

/** A leaf check from a predicate and what the value must be; the message shows what it got. */
const leaf =
  (ok: (v: unknown) => boolean, mustBe: string): Check =>
  (v) =>
    ok(v) ? null : { path: [], message: `must be ${mustBe} (got ${describe(v)})` };

const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

const str = leaf((v) => typeof v === 'string', 'a string');
const strOrNull = leaf((v) => v === null || typeof v === 'string', 'a string or null');
const bool = leaf((v) => typeof v === 'boolean', 'true or false');
const boolOrNull = leaf((v) => v === null || typeof v === 'boolean', 'true, false or null');
const num = leaf((v) => typeof v === 'number' && Number.isFinite(v), 'a number');
const count = leaf(isCount, 'a whole number ≥ 0');
const oneOf = (allowed: readonly string[], nullable = false): Check =>
  leaf(
    (v) => (nullable && v === null) || (typeof v === 'string' && allowed.includes(v)),
    `one of ${allowed.join(', ')}${nullable ? ' or null' : ''}`
  );
const amount: Check = (v) => {
  const p = parseMoneyAmount(v);
  return p.ok ? null : { path: [], message: `is not a valid amount: ${p.error}` };
};
const optional =
  (c: Check): Check =>
  (v) =>
    v === undefined ? null : c(v);

/** An object check: each member's problem is reported under its name. */
const object =
  (members: Record<string, Check>, what: string, nullable = false): Check =>
  (v) => {
    if (nullable && v === null) return null;
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      return {
        path: [],
        message: `must be ${what}${nullable ? ' or null' : ''} (got ${describe(v)})`
      };
    const o = v as Record<string, unknown>;
    for (const [name, check] of Object.entries(members)) {
      const p = check(o[name]);
      if (p) return { path: [name, ...p.path], message: p.message };
    }
    return null;
  };

const money = object({ amount, currency: str }, 'an object {amount, currency}');
const tokens = object({ input: count, output: count }, 'an object {input, output}');

/**
 * Typed as every key of BudgetDecision, so a field added there fails to compile here — and the
 * same change must then be made in `orderBudget` and the CSV `budget_*` columns.
 */
const BUDGET_CHECKS: Record<keyof BudgetDecision, Check> = {
  estimatedCost: money,
  limitApplied: money,
  limitSource: oneOf(LIMIT_SOURCES),
  meterBasis: str,
  estimatedTokens: tokens,
  actualCost: optional(money),
  actualTokens: optional(tokens),
  requestHonored: optional(bool)
};

const RECORD_CHECKS: Record<(typeof AUDIT_FIELDS)[number], Check> = {
  seq: count,
  t: num,
  time: str,
  server: str,
  connection: str,
  requestId: leaf(
    (v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)),
    'a string or a number'
  ),
  identity: str,
  outcome: oneOf(OUTCOMES),
  reason: strOrNull,
  retryable: boolOrNull,
  replayed: bool,
  represented: count,
  consentShown: bool,
  consent: oneOf(CONSENTS),
  model: strOrNull,
  tokensIn: count,
  tokensOut: count,
  cost: amount,
  currency: str,
  durationMs: num,
  contextRequested: oneOf(CONTEXTS),
  contextApplied: oneOf(CONTEXTS, true),
  budgetDecision: object(BUDGET_CHECKS, 'a budget decision object', true),
  silenced: bool,
  alert: bool,
  lane: optional(str)
};

const checkRecord = object(RECORD_CHECKS, 'a JSON object');

/**
 * Check that `v` is an AuditRecord; on success a copy in field order (unknown members dropped, so
 * a newer build's extra fields do not break an import), otherwise the first problem found, named
 * by its path (`field 'budgetDecision.limitApplied.amount' is not a valid amount: ...`).
 */
export function validateAuditRecord(
  v: unknown
): { ok: true; record: AuditRecord } | { ok: false; error: string } {
  const p = checkRecord(v);
  if (p === null) return { ok: true, record: orderRecord(v as AuditRecord) };
  if (p.path.length === 0) return { ok: false, error: `the line ${p.message}` };
  return { ok: false, error: `field '${p.path.join('.')}' ${p.message}` };
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
