/**
 * The audit log in a compact, columnar form for the audit table at a million rows (issue #8:
 * memory over a long session). A record object costs the page ~400 bytes; here a row is 36:
 * numbers in typed arrays and every string (server, reason, model, outcome, lane, currency,
 * consent) as an index into a dictionary, one byte each while a chunk's dictionary numbers fit
 * (it widens to 16 and then 32 bits past 256 and 65,536 values). That is enough to filter, to
 * total and to find the rows behind a guarantee without the records themselves, which stay in
 * IndexedDB (or, for the most recent ones, in the worker's memory) until a row is shown or exported.
 *
 * Bounded memory over a long run (issue #19): the rows are kept in chunks of `chunkRows`; a full
 * chunk is written to a {@link ChunkStore} (IndexedDB in the worker) and, once written, leaves
 * memory, except for a few chunks read back most recently. What stays in memory for every chunk
 * is its summary: its rows' totals and time span, so the unfiltered table (and any time window that
 * holds whole chunks) is counted and totalled without reading a chunk back. A filter reads each
 * chunk back once per query and keeps only counts; a page of rows re-reads the chunks it falls
 * in. Without a store (the unit tests' unbounded index, `lab`) every chunk stays in memory.
 *
 * A {@link AuditSelection} is one query's answer kept up to date as rows are appended: matching
 * counts and totals are extended by the new rows only, never recounted over the whole log.
 *
 * Over 400 lines on purpose: the columns, the chunks and the selections share one row format;
 * a change to how a row is stored is one change here, read with the code that reads it.
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

/** One chunk's columns: rows `0..n` of it (arrays may have room for more). */
export interface ChunkData {
  n: number;
  t: Float64Array;
  seq: Uint32Array;
  tokensIn: Uint32Array;
  tokensOut: Uint32Array;
  cost: Float64Array;
  flags: Uint8Array;
  col: Record<AuditColumn | 'consent', IdColumn>;
}

/**
 * Where full chunks go to leave memory: `put` resolves once chunk `k` is stored (the index then
 * lets it go), `get` reads it back (undefined: not there), `drop` forgets chunks `from..` (a seek
 * back cut them; fire and forget). One store serves one index.
 */
export interface ChunkStore {
  put(k: number, chunk: ChunkData): Promise<void>;
  get(k: number): Promise<ChunkData | undefined>;
  drop(from: number): void;
}

export interface AuditIndexOptions {
  /** Rows a chunk holds (65,536: 2.4 MB of columns). */
  chunkRows?: number;
  /** Chunks read back kept in memory besides the one being filled and any still being written. */
  cacheChunks?: number;
  /** Where full chunks go; null or absent: every chunk stays in memory (unbounded). */
  store?: ChunkStore | null;
}

export const DEFAULT_CHUNK_ROWS = 65_536;
export const DEFAULT_CACHE_CHUNKS = 4;

/** What is always in memory about a chunk, and its columns while they are. */
interface ChunkMeta {
  data: ChunkData | null;
  /** Its rows (equal to data.n while data is here). */
  length: number;
  /** Written to the store (its columns may leave memory). */
  stored: boolean;
  /** Every row's totals: the unfiltered answer over the chunk without its columns. */
  acc: TotalsAccumulator;
  tMin: number;
  tMax: number;
  tLast: number;
  /** When its columns were last used (for the cache's least recently used). */
  used: number;
}

function emptyChunk(cap: number): ChunkData {
  return {
    n: 0,
    t: new Float64Array(cap),
    seq: new Uint32Array(cap),
    tokensIn: new Uint32Array(cap),
    tokensOut: new Uint32Array(cap),
    cost: new Float64Array(cap),
    flags: new Uint8Array(cap),
    col: {
      server: new Uint8Array(cap),
      reason: new Uint8Array(cap),
      model: new Uint8Array(cap),
      outcome: new Uint8Array(cap),
      lane: new Uint8Array(cap),
      currency: new Uint8Array(cap),
      consent: new Uint8Array(cap)
    }
  };
}

/** The first `n` rows of `d` in arrays of their own, with room for `cap` (a chunk to fill again). */
function copyChunk(d: ChunkData, n: number, cap: number): ChunkData {
  const take = <T extends Float64Array | IdColumn>(a: T): T => {
    const b = new (a.constructor as new (n: number) => T)(cap);
    b.set(a.subarray(0, n));
    return b;
  };
  const col = {} as ChunkData['col'];
  for (const k of STRING_COLUMNS) col[k] = take(d.col[k]);
  return {
    n,
    t: take(d.t),
    seq: take(d.seq),
    tokensIn: take(d.tokensIn),
    tokensOut: take(d.tokensOut),
    cost: take(d.cost),
    flags: take(d.flags),
    col
  };
}

function chunkBytes(d: ChunkData): number {
  let n = d.t.byteLength + d.seq.byteLength + d.tokensIn.byteLength;
  n += d.tokensOut.byteLength + d.cost.byteLength + d.flags.byteLength;
  for (const k of STRING_COLUMNS) n += d.col[k].byteLength;
  return n;
}

/** Whether row `j` of a chunk matches (column filters and time window are checked before). */
export type RowPredicate = (d: ChunkData, j: number) => boolean;

/** A query compiled against the dictionaries as they are now (null: a value no row has yet). */
interface Matcher {
  want: [AuditColumn, number][];
  lo: number;
  hi: number;
  extra: RowPredicate | undefined;
}

export class AuditIndex {
  readonly chunkRows: number;
  readonly cacheChunks: number;
  readonly #store: ChunkStore | null;
  #size = 0;
  #chunks: ChunkMeta[] = [];
  /** Chunks being read back (one read each, however many ask). */
  #loading = new Map<number, Promise<ChunkData>>();
  #clock = 0;
  /** Bumped by every truncate: a read back begun before it is not for these chunks. */
  #epoch = 0;
  /** Why a chunk could not be written (it then stays in memory), or null. */
  spillFailure: string | null = null;
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
  /** The first and the last row's simulated time (0 while empty). */
  firstT = 0;
  lastT = 0;

  constructor(opts: AuditIndexOptions = {}) {
    this.chunkRows = Math.max(1, Math.floor(opts.chunkRows ?? DEFAULT_CHUNK_ROWS));
    this.cacheChunks = Math.max(0, Math.floor(opts.cacheChunks ?? DEFAULT_CACHE_CHUNKS));
    this.#store = opts.store ?? null;
  }

  get size(): number {
    return this.#size;
  }

  get chunkCount(): number {
    return this.#chunks.length;
  }

  /** Bytes of columns in memory now (what the index costs, for the benchmark's figures). */
  get bytes(): number {
    let n = 0;
    for (const c of this.#chunks) if (c.data) n += chunkBytes(c.data);
    return n;
  }

  /** Chunks whose columns are in memory now. */
  get residentChunks(): number {
    return this.#chunks.filter((c) => c.data !== null).length;
  }

  /** Chunks written to the store. */
  get storedChunks(): number {
    return this.#chunks.filter((c) => c.stored).length;
  }

  /** Rows `[start, end)` of chunk `k`. */
  chunkRange(k: number): [number, number] {
    const start = k * this.chunkRows;
    return [start, start + (this.#chunks[k]?.length ?? 0)];
  }

  /** Chunk `k`'s columns if they are in memory now (no read). */
  resident(k: number): ChunkData | null {
    const c = this.#chunks[k];
    if (!c?.data) return null;
    c.used = ++this.#clock;
    return c.data;
  }

  /** Chunk `k`'s columns, read back from the store if they left memory. */
  load(k: number): Promise<ChunkData> {
    const here = this.resident(k);
    if (here) return Promise.resolve(here);
    const meta = this.#chunks[k];
    if (!meta || !this.#store) return Promise.reject(new Error(`no audit index chunk ${k}`));
    let p = this.#loading.get(k);
    if (!p) {
      const epoch = this.#epoch;
      const [lo, hi] = this.chunkRange(k);
      p = this.#store
        .get(k)
        .then(
          (d) => {
            if (d === undefined) throw new Error('not there');
            return d;
          },
          (err: unknown) => {
            throw new Error(err instanceof Error ? err.message : String(err));
          }
        )
        .then(
          (d) => {
            if (epoch === this.#epoch && this.#chunks[k] === meta && meta.stored) {
              meta.data = d;
              meta.used = ++this.#clock;
              this.#trim();
            }
            return d;
          },
          (err: unknown) => {
            const why = err instanceof Error ? err.message.replace(/\.$/, '') : String(err);
            throw new Error(
              `the audit table's index of rows ${(lo + 1).toLocaleString('en-US')}–${hi.toLocaleString('en-US')} could not be read back from this browser's storage (${why})`
            );
          }
        )
        .finally(() => {
          if (this.#loading.get(k) === p) this.#loading.delete(k);
        });
      this.#loading.set(k, p);
    }
    return p;
  }

  /**
   * Keep the first `rows` rows (a seek back restored in place); later appends overwrite. The
   * chunk the cut falls in is read back if it left memory, and is filled again from there.
   */
  async truncate(rows: number): Promise<void> {
    if (rows >= this.#size) return;
    rows = Math.max(0, rows);
    const C = this.chunkRows;
    const k = Math.floor(rows / C);
    const keep = rows - k * C;
    let cut: ChunkData | null = null;
    if (keep > 0) cut = await this.load(k);
    if (rows >= this.#size) return;
    this.#epoch += 1;
    this.#loading.clear();
    this.#chunks.length = keep > 0 ? k + 1 : k;
    if (cut) {
      const meta = this.#newMeta(copyChunk(cut, keep, C));
      this.#chunks[k] = meta;
      for (let j = 0; j < keep; j++) this.#summarise(meta, meta.data!, j);
    }
    this.#store?.drop(k);
    this.#size = rows;
    if (rows === 0) {
      this.firstTime = null;
      this.firstT = 0;
      this.lastT = 0;
    } else this.lastT = this.#chunks[this.#chunks.length - 1]!.tLast;
  }

  #newMeta(data: ChunkData): ChunkMeta {
    return {
      data,
      length: data.n,
      stored: false,
      acc: emptyAccumulator(),
      tMin: Infinity,
      tMax: -Infinity,
      tLast: 0,
      used: ++this.#clock
    };
  }

  /** Row `j` of `d` into its chunk's summary. */
  #summarise(meta: ChunkMeta, d: ChunkData, j: number): void {
    const t = d.t[j]!;
    if (t < meta.tMin) meta.tMin = t;
    if (t > meta.tMax) meta.tMax = t;
    meta.tLast = t;
    this.addTo(meta.acc, d, j);
  }

  append(r: AuditRecord): void {
    const C = this.chunkRows;
    const i = this.#size;
    const k = Math.floor(i / C);
    let meta = this.#chunks[k];
    if (!meta) {
      meta = this.#newMeta(emptyChunk(Math.min(C, 1024)));
      this.#chunks[k] = meta;
    }
    const d = meta.data!;
    const j = i - k * C;
    const need = j + 1;
    if (need > d.t.length) {
      const cap = Math.min(C, Math.max(need, d.t.length * 2));
      d.t = grow(d.t, cap);
      d.seq = grow(d.seq, cap);
      d.tokensIn = grow(d.tokensIn, cap);
      d.tokensOut = grow(d.tokensOut, cap);
      d.cost = grow(d.cost, cap);
      d.flags = grow(d.flags, cap);
      for (const c of STRING_COLUMNS) d.col[c] = grow(d.col[c], cap);
    }
    d.t[j] = r.t;
    d.seq[j] = r.seq;
    d.tokensIn[j] = r.tokensIn;
    d.tokensOut[j] = r.tokensOut;
    const c = parseMoneyAmount(r.cost);
    d.cost[j] = c.ok ? c.micros : 0;
    d.flags[j] =
      (r.consentShown ? CONSENT_SHOWN : 0) |
      (r.replayed ? REPLAYED : 0) |
      (r.alert ? ALERT : 0) |
      (r.silenced ? SILENCED : 0) |
      (c.ok ? 0 : INVALID_COST) |
      (r.budgetDecision?.actualCost !== undefined ? ACTUAL_COST : 0);
    this.#setId(d, 'server', j, r.server);
    this.#setId(d, 'reason', j, r.reason ?? NONE_KEY);
    this.#setId(d, 'model', j, r.model ?? NONE_KEY);
    this.#setId(d, 'outcome', j, r.outcome);
    this.#setId(d, 'lane', j, r.lane ?? NONE_KEY);
    this.#setId(d, 'currency', j, r.currency);
    this.#setId(d, 'consent', j, r.consent);
    d.n = need;
    meta.length = need;
    this.#summarise(meta, d, j);
    if (i === 0) {
      this.firstTime = r.time;
      this.firstT = r.t;
    }
    this.lastT = r.t;
    this.#size = i + 1;
    if (need === C) this.#spill(k, meta);
  }

  #setId(d: ChunkData, k: AuditColumn | 'consent', j: number, v: string): void {
    const id = this.dict[k].id(v);
    const col = fit(d.col[k], id);
    d.col[k] = col;
    col[j] = id;
  }

  /** Write full chunk `k` to the store; once written, its columns may leave memory. */
  #spill(k: number, meta: ChunkMeta): void {
    const store = this.#store;
    if (!store) return;
    const epoch = this.#epoch;
    store.put(k, meta.data!).then(
      () => {
        if (epoch !== this.#epoch || this.#chunks[k] !== meta) return;
        meta.stored = true;
        this.#trim();
      },
      (err: unknown) => {
        // It stays in memory (nothing else holds it), and the index says so.
        this.spillFailure ??= err instanceof Error ? err.message.replace(/\.$/, '') : String(err);
      }
    );
  }

  /** Let stored chunks' columns go, all but the `cacheChunks` used most recently. */
  #trim(): void {
    const last = this.#chunks.length - 1;
    const held = this.#chunks.filter((c, k) => c.data && c.stored && k !== last);
    if (held.length <= this.cacheChunks) return;
    held.sort((a, b) => a.used - b.used);
    for (const c of held.slice(0, held.length - this.cacheChunks)) c.data = null;
  }

  /** Chunk `k`'s summary: its rows' totals and times. */
  summary(k: number): { length: number; acc: TotalsAccumulator; tMin: number; tMax: number } {
    return this.#chunks[k]!;
  }

  /** Row `j` of chunk `d`: its time. */
  tOf(d: ChunkData, j: number): number {
    return d.t[j]!;
  }

  /** Row `j` of chunk `d`: the facts the Guarantees panel's "rows behind" predicates read. */
  facts(d: ChunkData, j: number): AuditRowFacts {
    const f = d.flags[j]!;
    const lane = this.dict.lane.values[d.col.lane[j]!]!;
    return {
      seq: d.seq[j]!,
      lane: lane === NONE_KEY ? null : lane,
      outcome: this.dict.outcome.values[d.col.outcome[j]!]!,
      consent: this.dict.consent.values[d.col.consent[j]!]!,
      consentShown: (f & CONSENT_SHOWN) !== 0,
      replayed: (f & REPLAYED) !== 0,
      alert: (f & ALERT) !== 0,
      silenced: (f & SILENCED) !== 0,
      tokensOut: d.tokensOut[j]!,
      costMicros: d.cost[j]!,
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
   * `q` against the dictionaries as they are now: null when a filter names a value no row has
   * (yet: a later row may have it, so compile again after appends).
   */
  matcher(q: AuditQuery, extra?: RowPredicate): Matcher | null {
    const want: [AuditColumn, number][] = [];
    for (const col of ['server', 'reason', 'model', 'outcome', 'lane'] as const) {
      const v = q[col];
      if (v === undefined) continue;
      const id = this.dict[col].find(v);
      if (id < 0) return null;
      want.push([col, id]);
    }
    return { want, lo: q.from ?? -Infinity, hi: q.to ?? Infinity, extra };
  }

  /** Whether a matcher takes every row of chunk `k` without looking at them. */
  wholeChunk(m: Matcher, k: number): boolean {
    const c = this.#chunks[k]!;
    return m.want.length === 0 && !m.extra && c.tMin >= m.lo && c.tMax < m.hi;
  }

  /** Whether a matcher takes no row of chunk `k` (by its time span). */
  noneOfChunk(m: Matcher, k: number): boolean {
    const c = this.#chunks[k]!;
    return c.length === 0 || c.tMax < m.lo || c.tMin >= m.hi;
  }

  /** Rows `from..to` of chunk data `d` (chunk-local) that match, passed to `each` (local). */
  scanChunk(m: Matcher, d: ChunkData, from: number, to: number, each: (j: number) => void): void {
    const t = d.t;
    const cols = m.want.map(([c, id]) => [d.col[c], id] as const);
    const { lo, hi, extra } = m;
    outer: for (let j = from; j < to; j++) {
      const tj = t[j]!;
      if (tj < lo || tj >= hi) continue;
      for (const [c, id] of cols) if (c[j] !== id) continue outer;
      if (extra && !extra(d, j)) continue;
      each(j);
    }
  }

  /** Add row `j` of `d` to running totals. */
  addTo(acc: TotalsAccumulator, d: ChunkData, j: number): void {
    const f = d.flags[j]!;
    acc.count += 1;
    acc.tokensIn += d.tokensIn[j]!;
    acc.tokensOut += d.tokensOut[j]!;
    acc.costMicros += d.cost[j]!;
    if (f & INVALID_COST) acc.invalidCosts += 1;
    if (f & CONSENT_SHOWN) acc.consentPrompts += 1;
    if (f & REPLAYED) acc.replays += 1;
    if (f & ALERT) acc.alerts += 1;
    if (f & SILENCED) acc.silenced += 1;
    bump(acc.byOutcome, d.col.outcome[j]!);
    bump(acc.byReason, d.col.reason[j]!);
    bump(acc.byCurrency, d.col.currency[j]!);
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

/** `from`'s counts added into `into`. */
export function mergeAccumulator(into: TotalsAccumulator, from: TotalsAccumulator): void {
  into.count += from.count;
  into.tokensIn += from.tokensIn;
  into.tokensOut += from.tokensOut;
  into.costMicros += from.costMicros;
  into.invalidCosts += from.invalidCosts;
  into.consentPrompts += from.consentPrompts;
  into.replays += from.replays;
  into.alerts += from.alerts;
  into.silenced += from.silenced;
  const add = (a: number[], b: number[]) => {
    while (a.length < b.length) a.push(0);
    b.forEach((n, i) => (a[i]! += n));
  };
  add(into.byOutcome, from.byOutcome);
  add(into.byReason, from.byReason);
  add(into.byCurrency, from.byCurrency);
}

/**
 * One query's live answer over an index: how many rows match in each chunk, and their totals,
 * extended by `update()` with the rows appended since — work per update is proportional to the
 * new rows, so totals stay exact over every row without recounting a million of them. Built with
 * {@link AuditSelection.over}, which reads back the chunks it cannot answer from their summaries.
 * The matching rows themselves are found again when asked for (`slice`), chunk by chunk.
 */
export class AuditSelection {
  readonly index: AuditIndex;
  readonly query: AuditQuery;
  readonly #extra: RowPredicate | undefined;
  /** Matching rows per chunk, over the rows scanned. */
  #counts: number[] = [];
  /** Chunks whose every row matched, by their summaries (their rows are a range). */
  #whole: boolean[] = [];
  #length = 0;
  #scanned = 0;
  readonly #acc = emptyAccumulator();

  private constructor(index: AuditIndex, query: AuditQuery, extra?: RowPredicate) {
    this.index = index;
    this.query = query;
    this.#extra = extra;
  }

  /** A selection of the rows in memory only (an empty index, or one that never spills). */
  static now(index: AuditIndex, query: AuditQuery, extra?: RowPredicate): AuditSelection {
    const sel = new AuditSelection(index, query, extra);
    sel.update();
    return sel;
  }

  /** A selection over every row, reading back chunks that left memory. */
  static async over(
    index: AuditIndex,
    query: AuditQuery,
    extra?: RowPredicate
  ): Promise<AuditSelection> {
    const sel = new AuditSelection(index, query, extra);
    await sel.#fill();
    return sel;
  }

  async #fill(): Promise<void> {
    const index = this.index;
    const C = index.chunkRows;
    for (;;) {
      // Chunks answered by their summaries, or in memory, at once; the next other one read back.
      const m = index.matcher(this.query, this.#extra);
      while (this.#scanned < index.size) {
        const k = Math.floor(this.#scanned / C);
        const [lo, hi] = index.chunkRange(k);
        const local = this.#scanned - lo;
        if (local === 0 && hi - lo === C && m && index.wholeChunk(m, k)) {
          this.#take(k, index.summary(k).acc, hi - lo, true);
          this.#scanned = hi;
          continue;
        }
        if (local === 0 && hi - lo === C && (!m || index.noneOfChunk(m, k))) {
          this.#take(k, null, 0, false);
          this.#scanned = hi;
          continue;
        }
        const d = index.resident(k);
        if (!d) break;
        this.#scanIn(k, d, local, hi - lo);
        this.#scanned = hi;
      }
      if (this.#scanned >= index.size) return;
      const k = Math.floor(this.#scanned / C);
      const d = await index.load(k);
      const [lo, hi] = index.chunkRange(k);
      this.#scanIn(k, d, this.#scanned - lo, hi - lo);
      this.#scanned = hi;
    }
  }

  #take(k: number, acc: TotalsAccumulator | null, n: number, whole: boolean): void {
    while (this.#counts.length <= k) {
      this.#counts.push(0);
      this.#whole.push(false);
    }
    this.#counts[k] = n;
    this.#whole[k] = whole;
    this.#length += n;
    if (acc) mergeAccumulator(this.#acc, acc);
  }

  #scanIn(k: number, d: ChunkData, from: number, to: number): void {
    while (this.#counts.length <= k) {
      this.#counts.push(0);
      this.#whole.push(false);
    }
    this.#whole[k] = false;
    const m = this.index.matcher(this.query, this.#extra);
    if (!m) return;
    this.index.scanChunk(m, d, from, to, (j) => {
      this.#counts[k]! += 1;
      this.#length += 1;
      this.index.addTo(this.#acc, d, j);
    });
  }

  /** Take in rows appended to the index since the last call (they are in memory). */
  update(): void {
    const index = this.index;
    const C = index.chunkRows;
    while (this.#scanned < index.size) {
      const k = Math.floor(this.#scanned / C);
      const [lo, hi] = index.chunkRange(k);
      const d = index.resident(k);
      if (!d) throw new Error('the audit index lost rows it had just taken in');
      this.#scanIn(k, d, this.#scanned - lo, hi - lo);
      this.#scanned = hi;
    }
  }

  /** How many rows match. */
  get length(): number {
    return this.#length;
  }

  /** The row numbers (positions in the log) of matches `from..to`, reading chunks back as needed. */
  async slice(from: number, to: number): Promise<Uint32Array> {
    from = Math.max(0, from);
    to = Math.min(this.#length, to);
    const out = new Uint32Array(Math.max(0, to - from));
    const index = this.index;
    let before = 0;
    let o = 0;
    for (let k = 0; k < this.#counts.length && o < out.length; k++) {
      const n = this.#counts[k]!;
      if (before + n <= from || n === 0) {
        before += n;
        continue;
      }
      const skip = Math.max(0, from - before);
      const take = Math.min(n - skip, out.length - o);
      const [lo] = index.chunkRange(k);
      if (this.#whole[k]) {
        for (let j = 0; j < take; j++) out[o++] = lo + skip + j;
      } else {
        const d = index.resident(k) ?? (await index.load(k));
        const m = index.matcher(this.query, this.#extra);
        let seen = 0;
        const end = Math.min(index.chunkRange(k)[1], this.#scanned) - lo;
        if (m)
          index.scanChunk(m, d, 0, end, (j) => {
            if (seen >= skip && seen < skip + take) out[o++] = lo + j;
            seen += 1;
          });
      }
      before += n;
    }
    return out.subarray(0, o);
  }

  /**
   * The last matching rows, at most `max` and none below `minRow`, from chunks in memory only
   * (ascending), and the match number of the first of them.
   */
  tail(max: number, minRow: number): { rows: number[]; start: number } {
    const index = this.index;
    const C = index.chunkRows;
    const m = index.matcher(this.query, this.#extra);
    const rows: number[] = [];
    if (m) {
      let i = this.#scanned - 1;
      outer: while (i >= minRow && rows.length < max) {
        const k = Math.floor(i / C);
        const d = index.resident(k);
        if (!d) break;
        const lo = k * C;
        for (; i >= Math.max(lo, minRow); i--) {
          const j = i - lo;
          let hit = false;
          index.scanChunk(m, d, j, j + 1, () => (hit = true));
          if (hit) {
            rows.push(i);
            if (rows.length >= max) break outer;
          }
        }
      }
    }
    rows.reverse();
    return { rows, start: this.#length - rows.length };
  }

  totals(): AuditTotals {
    return this.index.totalsOf(this.#acc);
  }
}
