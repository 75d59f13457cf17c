/**
 * The audit log in a compact, columnar form for the audit table at a million rows (issue #8:
 * memory over a long session). A record object costs the page ~400 bytes; here a row is 36:
 * numbers in typed arrays and every string (server, reason, model, outcome, lane, currency,
 * consent) as an index into a dictionary, one byte each while the dictionary has at most 256
 * values (it widens to 16 and then 32 bits past that). That is enough to filter, to total and to find the rows
 * behind a guarantee without the records themselves, which stay in IndexedDB (or, for the most
 * recent ones, in the worker's memory) until a row is shown or exported.
 *
 * A {@link AuditSelection} is one query's answer kept up to date as rows are appended: matching
 * rows and totals are extended by the new rows only, never recounted over the whole log.
 */
import { fromMicros, parseMoneyAmount } from '../machine/money';
import type { AuditRecord } from '../machine/types';
import { NONE_KEY, type AuditQuery, type AuditTotals } from './audit-query';

/** A string column's values, each stored once; rows hold the value's number. */
class Dict {
  readonly values: string[] = [];
  readonly #ids = new Map<string, number>();

  id(v: string): number {
    let n = this.#ids.get(v);
    if (n === undefined) {
      n = this.values.length;
      this.values.push(v);
      this.#ids.set(v, n);
    }
    return n;
  }

  /** The value's number, or -1 when no row has it (yet). */
  find(v: string): number {
    return this.#ids.get(v) ?? -1;
  }

  /** The values in code-unit order (the same in every browser and in Node). */
  sorted(): string[] {
    return [...this.values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

/** A typed array that doubles when full. */
function grow<T extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(
  a: T,
  need: number
): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2, 1024));
  b.set(a);
  return b;
}

/** A column of dictionary numbers, as narrow as its dictionary allows. */
type IdColumn = Uint8Array | Uint16Array | Uint32Array;

/** The column, widened if `id` does not fit it (8 → 16 → 32 bits): the rows keep their numbers. */
function fit(a: IdColumn, id: number): IdColumn {
  if (a instanceof Uint8Array && id > 0xff) return fit(Uint16Array.from(a), id);
  if (a instanceof Uint16Array && id > 0xffff) return Uint32Array.from(a);
  return a;
}

const CONSENT_SHOWN = 1;
const REPLAYED = 2;
const ALERT = 4;
const SILENCED = 8;
const INVALID_COST = 16;
const ACTUAL_COST = 32;

export type AuditColumn = 'server' | 'reason' | 'model' | 'outcome' | 'lane' | 'currency';

const STRING_COLUMNS = [
  'server',
  'reason',
  'model',
  'outcome',
  'lane',
  'currency',
  'consent'
] as const satisfies readonly (AuditColumn | 'consent')[];

/** The values each filter can take: what the table's selects offer. */
export type AuditOptions = Record<AuditColumn, string[]>;

/** The fields {@link rowsBehind}-style predicates read, rebuilt from the columns. */
export interface AuditRowFacts {
  seq: number;
  lane: string | null;
  outcome: string;
  consent: string;
  consentShown: boolean;
  replayed: boolean;
  alert: boolean;
  silenced: boolean;
  tokensOut: number;
  costMicros: number;
  hasActualCost: boolean;
}

export class AuditIndex {
  #size = 0;
  #t = new Float64Array(0);
  #seq = new Uint32Array(0);
  #tokensIn = new Uint32Array(0);
  #tokensOut = new Uint32Array(0);
  #cost = new Float64Array(0);
  #flags = new Uint8Array(0);
  #col: Record<AuditColumn | 'consent', IdColumn> = {
    server: new Uint8Array(0),
    reason: new Uint8Array(0),
    model: new Uint8Array(0),
    outcome: new Uint8Array(0),
    lane: new Uint8Array(0),
    currency: new Uint8Array(0),
    consent: new Uint8Array(0)
  };
  readonly dict: Record<AuditColumn | 'consent', Dict> = {
    server: new Dict(),
    reason: new Dict(),
    model: new Dict(),
    outcome: new Dict(),
    lane: new Dict(),
    currency: new Dict(),
    consent: new Dict()
  };
  /** The first record's wall-clock text (the time window is measured from it). */
  firstTime: string | null = null;

  get size(): number {
    return this.#size;
  }

  /** Bytes held by the columns (what a row costs here, for the benchmark's figures). */
  get bytes(): number {
    let n = this.#t.byteLength + this.#seq.byteLength + this.#tokensIn.byteLength;
    n += this.#tokensOut.byteLength + this.#cost.byteLength + this.#flags.byteLength;
    for (const c of Object.values(this.#col)) n += c.byteLength;
    return n;
  }

  /** Keep the first `rows` rows (a seek back restored in place); later appends overwrite. */
  truncate(rows: number): void {
    if (rows >= this.#size) return;
    this.#size = Math.max(0, rows);
    if (this.#size === 0) this.firstTime = null;
  }

  append(r: AuditRecord): void {
    const i = this.#size;
    const need = i + 1;
    this.#t = grow(this.#t, need);
    this.#seq = grow(this.#seq, need);
    this.#tokensIn = grow(this.#tokensIn, need);
    this.#tokensOut = grow(this.#tokensOut, need);
    this.#cost = grow(this.#cost, need);
    this.#flags = grow(this.#flags, need);
    for (const k of STRING_COLUMNS) this.#col[k] = grow(this.#col[k], need);
    this.#t[i] = r.t;
    this.#seq[i] = r.seq;
    this.#tokensIn[i] = r.tokensIn;
    this.#tokensOut[i] = r.tokensOut;
    const c = parseMoneyAmount(r.cost);
    this.#cost[i] = c.ok ? c.micros : 0;
    this.#flags[i] =
      (r.consentShown ? CONSENT_SHOWN : 0) |
      (r.replayed ? REPLAYED : 0) |
      (r.alert ? ALERT : 0) |
      (r.silenced ? SILENCED : 0) |
      (c.ok ? 0 : INVALID_COST) |
      (r.budgetDecision?.actualCost !== undefined ? ACTUAL_COST : 0);
    this.#setId('server', i, r.server);
    this.#setId('reason', i, r.reason ?? NONE_KEY);
    this.#setId('model', i, r.model ?? NONE_KEY);
    this.#setId('outcome', i, r.outcome);
    this.#setId('lane', i, r.lane ?? NONE_KEY);
    this.#setId('currency', i, r.currency);
    this.#setId('consent', i, r.consent);
    if (i === 0) this.firstTime = r.time;
    this.#size = need;
  }

  #setId(k: AuditColumn | 'consent', i: number, v: string): void {
    const id = this.dict[k].id(v);
    const col = fit(this.#col[k], id);
    this.#col[k] = col;
    col[i] = id;
  }

  t(i: number): number {
    return this.#t[i]!;
  }

  /** A row's facts for the Guarantees panel's "rows behind" predicates. */
  facts(i: number): AuditRowFacts {
    const f = this.#flags[i]!;
    const lane = this.dict.lane.values[this.#col.lane[i]!]!;
    return {
      seq: this.#seq[i]!,
      lane: lane === NONE_KEY ? null : lane,
      outcome: this.dict.outcome.values[this.#col.outcome[i]!]!,
      consent: this.dict.consent.values[this.#col.consent[i]!]!,
      consentShown: (f & CONSENT_SHOWN) !== 0,
      replayed: (f & REPLAYED) !== 0,
      alert: (f & ALERT) !== 0,
      silenced: (f & SILENCED) !== 0,
      tokensOut: this.#tokensOut[i]!,
      costMicros: this.#cost[i]!,
      hasActualCost: (f & ACTUAL_COST) !== 0
    };
  }

  options(): AuditOptions {
    return {
      server: this.dict.server.sorted(),
      reason: this.dict.reason.sorted(),
      model: this.dict.model.sorted(),
      outcome: this.dict.outcome.sorted(),
      lane: this.dict.lane.sorted(),
      currency: this.dict.currency.sorted()
    };
  }

  /**
   * Rows `from..size` matching `q` (and `extra`), passed to `each`. Filter values are looked up
   * in the dictionaries here, on every call: a value no row had may appear in later rows.
   */
  scan(
    q: AuditQuery,
    from: number,
    each: (i: number) => void,
    extra?: (i: number) => boolean
  ): void {
    const want: [IdColumn, number][] = [];
    const cols: [keyof AuditQuery & AuditColumn, AuditColumn][] = [
      ['server', 'server'],
      ['reason', 'reason'],
      ['model', 'model'],
      ['outcome', 'outcome'],
      ['lane', 'lane']
    ];
    for (const [key, col] of cols) {
      const v = q[key];
      if (v === undefined) continue;
      const id = this.dict[col].find(v);
      if (id < 0) return;
      want.push([this.#col[col], id]);
    }
    const lo = q.from ?? -Infinity;
    const hi = q.to ?? Infinity;
    const t = this.#t;
    const n = this.#size;
    outer: for (let i = from; i < n; i++) {
      const ti = t[i]!;
      if (ti < lo || ti >= hi) continue;
      for (const [c, id] of want) if (c[i] !== id) continue outer;
      if (extra && !extra(i)) continue;
      each(i);
    }
  }

  /** Add row `i` to running totals. */
  addTo(acc: TotalsAccumulator, i: number): void {
    const f = this.#flags[i]!;
    acc.count += 1;
    acc.tokensIn += this.#tokensIn[i]!;
    acc.tokensOut += this.#tokensOut[i]!;
    acc.costMicros += this.#cost[i]!;
    if (f & INVALID_COST) acc.invalidCosts += 1;
    if (f & CONSENT_SHOWN) acc.consentPrompts += 1;
    if (f & REPLAYED) acc.replays += 1;
    if (f & ALERT) acc.alerts += 1;
    if (f & SILENCED) acc.silenced += 1;
    bump(acc.byOutcome, this.#col.outcome[i]!);
    bump(acc.byReason, this.#col.reason[i]!);
    bump(acc.byCurrency, this.#col.currency[i]!);
  }

  /** Running totals in the shape `auditTotals` gives (equal to it over the same rows). */
  totalsOf(acc: TotalsAccumulator): AuditTotals {
    const named = (counts: number[], d: Dict) => {
      const out: Record<string, number> = {};
      counts.forEach((n, id) => {
        if (n > 0) out[d.values[id]!] = n;
      });
      return out;
    };
    return {
      count: acc.count,
      tokensIn: acc.tokensIn,
      tokensOut: acc.tokensOut,
      costMicros: acc.costMicros,
      cost: fromMicros(acc.costMicros, 4),
      currencies: Object.keys(named(acc.byCurrency, this.dict.currency)).sort(),
      byOutcome: named(acc.byOutcome, this.dict.outcome),
      byReason: named(acc.byReason, this.dict.reason),
      consentPrompts: acc.consentPrompts,
      replays: acc.replays,
      alerts: acc.alerts,
      silenced: acc.silenced,
      invalidCosts: acc.invalidCosts
    };
  }
}

function bump(counts: number[], id: number): void {
  while (counts.length <= id) counts.push(0);
  counts[id]! += 1;
}

export interface TotalsAccumulator {
  count: number;
  tokensIn: number;
  tokensOut: number;
  costMicros: number;
  invalidCosts: number;
  consentPrompts: number;
  replays: number;
  alerts: number;
  silenced: number;
  byOutcome: number[];
  byReason: number[];
  byCurrency: number[];
}

export function emptyAccumulator(): TotalsAccumulator {
  return {
    count: 0,
    tokensIn: 0,
    tokensOut: 0,
    costMicros: 0,
    invalidCosts: 0,
    consentPrompts: 0,
    replays: 0,
    alerts: 0,
    silenced: 0,
    byOutcome: [],
    byReason: [],
    byCurrency: []
  };
}

/**
 * One query's live answer over an index: the matching rows (as row numbers) and their totals,
 * extended by `update()` with the rows appended since — work per update is proportional to the
 * new rows, so totals stay exact over every row without recounting a million of them.
 */
export class AuditSelection {
  readonly index: AuditIndex;
  readonly query: AuditQuery;
  readonly #extra: ((i: number) => boolean) | undefined;
  #rows = new Uint32Array(0);
  #length = 0;
  #scanned = 0;
  readonly #acc = emptyAccumulator();

  constructor(index: AuditIndex, query: AuditQuery, extra?: (i: number) => boolean) {
    this.index = index;
    this.query = query;
    this.#extra = extra;
    this.update();
  }

  /** Take in rows appended to the index since the last call. */
  update(): void {
    const index = this.index;
    if (this.#scanned >= index.size) return;
    index.scan(
      this.query,
      this.#scanned,
      (i) => {
        this.#rows = grow(this.#rows, this.#length + 1);
        this.#rows[this.#length++] = i;
        index.addTo(this.#acc, i);
      },
      this.#extra
    );
    this.#scanned = index.size;
  }

  /** How many rows match. */
  get length(): number {
    return this.#length;
  }

  /** The row number (position in the log) of the `k`-th match. */
  at(k: number): number {
    return this.#rows[k]!;
  }

  /** The row numbers of matches `from..to` (a copy). */
  slice(from: number, to: number): Uint32Array {
    return this.#rows.slice(Math.max(0, from), Math.min(this.#length, to));
  }

  totals(): AuditTotals {
    return this.index.totalsOf(this.#acc);
  }
}
