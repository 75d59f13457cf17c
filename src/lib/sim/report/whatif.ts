/**
 * What a policy would have done to real traffic: a replay of an imported trace (one whose
 * requests carry `logged`, see `trace.ts`), each request's logged outcome beside each lane's.
 *
 * Per server and in total, per lane: requests served then and refused now (by the lane's reason),
 * refused then and served now, what became of those the log shows no answer for, consent dialogs
 * and spend then (where the log says: the lab's own audit) and now, and retry-loop alerts. Pure:
 * the CLI (`lab replay`) and the page format it; the CSV and the printed table are whatif-text.ts.
 */
import { fromMicrosExact, toMicros } from '../../machine/money';
import type { AuditRecord, JsonRpcId } from '../../machine/types';
import { LANE_IDS, type LaneId } from '../input/scenario';
import type { Logged, TraceEvent } from '../input/trace';

/** Outcomes whose frame carries a completion the server could use. */
const SERVED = new Set(['allowed', 'trimmed', 'budget_exhausted']);

/** What the log shows: served (a result), refused (an error, or a cost refusal), no answer. */
export type Then = 'served' | 'refused' | 'none';

/** A logged answer as served/refused, and its label (`error -32000`, the audit's reason…). */
export function thenOf(l: Logged): { then: Then; label: string } {
  if (l.audit?.shadow) return { then: 'served', label: 'served (shadow)' };
  if (l.audit) {
    const served = SERVED.has(l.audit.outcome);
    return {
      then: served ? 'served' : 'refused',
      label: served ? l.audit.outcome : (l.audit.reason ?? l.audit.outcome)
    };
  }
  if (l.response === 'none') return { then: 'none', label: 'no answer' };
  if (l.response === 'error') return { then: 'refused', label: `error ${l.error!.code}` };
  if (l.result?.stopReason === 'budget_exceeded')
    return { then: 'refused', label: 'budget_exceeded' };
  return { then: 'served', label: 'result' };
}

/** One lane's outcome for a request: served or refused, and why; undecided when it never ran. */
export interface Now {
  now: 'served' | 'refused' | 'undecided';
  label: string;
}

function nowOf(r: AuditRecord | undefined): Now {
  if (!r) return { now: 'undecided', label: 'not decided by the end' };
  const served = SERVED.has(r.outcome);
  return {
    now: served ? 'served' : 'refused',
    label: served ? r.outcome : (r.reason ?? r.outcome)
  };
}

export interface WhatIfCounts {
  /** Sampling requests the log shows. */
  requests: number;
  then: Record<Then, number>;
  /** Per lane. */
  lanes: Record<
    LaneId,
    {
      served: number;
      refused: number;
      /** Past the run's end, or still in flight when it ended. */
      undecided: number;
      servedThenRefusedNow: number;
      /** Of those: by the lane's reason. */
      refusedNowBy: Record<string, number>;
      refusedThenServedNow: number;
      /** Of those: by what the log showed. */
      servedNowAfter: Record<string, number>;
      /** No answer in the log: what the lane did. */
      noneThen: { served: number; refused: number };
      consentNow: number;
      spendNow: string;
      alertsNow: number;
    }
  >;
  /** Known only from the lab's audit log: null when no request of the group carries it. */
  consentThen: number | null;
  spendThen: string | null;
  alertsThen: number | null;
}

/** One logged request: what the log shows, and each lane's outcome with its audit record. */
export interface WhatIfRow {
  event: TraceEvent;
  then: { then: Then; label: string };
  now: Record<LaneId, Now & { record?: AuditRecord }>;
}

/** One request whose outcome differs between the log and a lane. */
export interface WhatIfChange {
  t: number;
  server: string;
  then: string;
  lanes: Record<LaneId, string>;
}

export interface WhatIfReport {
  labels: Record<LaneId, string>;
  currency: string;
  servers: ({ server: string } & WhatIfCounts)[];
  total: WhatIfCounts;
  /** The requests whose outcome changed in either lane, in trace order (the first MAX_CHANGES). */
  changes: WhatIfChange[];
  changed: number;
}

export const MAX_CHANGES = 10_000;

/** True when a trace is an imported one (some request carries `logged`). */
export function isImportedTrace(trace: readonly TraceEvent[]): boolean {
  return trace.some((e) => e.type === 'request' && e.logged !== undefined);
}

function emptyCounts(): WhatIfCounts {
  const lane = () => ({
    served: 0,
    refused: 0,
    undecided: 0,
    servedThenRefusedNow: 0,
    refusedNowBy: {},
    refusedThenServedNow: 0,
    servedNowAfter: {},
    noneThen: { served: 0, refused: 0 },
    consentNow: 0,
    spendNow: '0',
    alertsNow: 0
  });
  return {
    requests: 0,
    then: { served: 0, refused: 0, none: 0 },
    lanes: { A: lane(), B: lane() },
    consentThen: null,
    spendThen: null,
    alertsThen: null
  };
}

const bump = (m: Record<string, number>, k: string) => void (m[k] = (m[k] ?? 0) + 1);

/**
 * Collects what a replay needs (hook its two callbacks into the run's options), then computes the
 * report. Records and sends may arrive in either order.
 */
export class WhatIfCollector {
  readonly #sent = new Map<TraceEvent, Partial<Record<LaneId, string>>>();
  readonly #records = new Map<string, AuditRecord>();

  onTraceRequest = (lane: LaneId, e: TraceEvent, connection: string, id: JsonRpcId): void => {
    let m = this.#sent.get(e);
    if (!m) this.#sent.set(e, (m = {}));
    m[lane] = `${lane}\u0000${connection}\u0000${String(id)}`;
  };

  /** The currency of the first record: the run's rate card's. */
  #currency: string | null = null;

  onAudit = (r: AuditRecord): void => {
    this.#currency ??= r.currency;
    this.#records.set(`${r.lane}\u0000${r.connection}\u0000${String(r.requestId)}`, r);
  };

  /**
   * Each logged request of `trace` with what the log shows and each lane's outcome (the lane's
   * audit record, when it decided one): the rows the report counts.
   */
  rows(trace: readonly TraceEvent[]): WhatIfRow[] {
    const out: WhatIfRow[] = [];
    for (const e of trace) {
      if (e.type !== 'request' || !e.logged) continue;
      const sent = this.#sent.get(e) ?? {};
      const now = {} as WhatIfRow['now'];
      for (const lane of LANE_IDS) {
        const key = sent[lane];
        const record = key === undefined ? undefined : this.#records.get(key);
        now[lane] = { ...nowOf(record), ...(record ? { record } : {}) };
      }
      out.push({ event: e, then: thenOf(e.logged), now });
    }
    return out;
  }

  report(trace: readonly TraceEvent[], labels: Record<LaneId, string>): WhatIfReport {
    const currency =
      this.#currency ?? trace.find((e) => e.logged?.audit)?.logged?.audit?.currency ?? 'USD';
    const byServer = new Map<string, WhatIfCounts>();
    const total = emptyCounts();
    const micros = new Map<WhatIfCounts, { then: number; now: Record<LaneId, number> }>();
    const money = (c: WhatIfCounts) => {
      let m = micros.get(c);
      if (!m) micros.set(c, (m = { then: 0, now: { A: 0, B: 0 } }));
      return m;
    };
    const changes: WhatIfChange[] = [];
    let changed = 0;
    for (const { event: e, then, now } of this.rows(trace)) {
      let s = byServer.get(e.server);
      if (!s) byServer.set(e.server, (s = emptyCounts()));
      const audit = e.logged!.audit;
      for (const c of [s, total]) {
        c.requests++;
        c.then[then.then]++;
        if (audit) {
          c.consentThen = (c.consentThen ?? 0) + (audit.consentShown ? 1 : 0);
          c.alertsThen = (c.alertsThen ?? 0) + (audit.alert ? 1 : 0);
          if (audit.currency === currency) {
            money(c).then += toMicros(audit.cost);
            c.spendThen = '';
          }
        }
        for (const lane of LANE_IDS) {
          const l = c.lanes[lane];
          const n = now[lane];
          if (n.now === 'undecided') {
            l.undecided++;
            continue;
          }
          l[n.now]++;
          if (then.then === 'served' && n.now === 'refused') {
            l.servedThenRefusedNow++;
            bump(l.refusedNowBy, n.label);
          } else if (then.then === 'refused' && n.now === 'served') {
            l.refusedThenServedNow++;
            bump(l.servedNowAfter, then.label);
          } else if (then.then === 'none') l.noneThen[n.now]++;
          const r = n.record!;
          if (r.consentShown) l.consentNow++;
          if (r.alert) l.alertsNow++;
          if (r.currency === currency) money(c).now[lane] += toMicros(r.cost);
        }
      }
      if (changedRow({ event: e, then, now })) {
        changed++;
        if (changes.length < MAX_CHANGES)
          changes.push({
            t: e.t,
            server: e.server,
            then: then.label,
            lanes: { A: now.A.label, B: now.B.label }
          });
      }
    }
    for (const [c, m] of micros) {
      if (c.spendThen !== null) c.spendThen = fromMicrosExact(m.then);
      for (const lane of LANE_IDS) c.lanes[lane].spendNow = fromMicrosExact(m.now[lane]);
    }
    return {
      labels,
      currency,
      servers: [...byServer].map(([server, c]) => ({ server, ...c })),
      total,
      changes,
      changed
    };
  }
}

/**
 * The measures of the report (the page's what-if rows) that one lane's outcome for one request
 * is counted in: `requests`, `served`, `refused`, `none` (no answer logged),
 * `servedThenRefusedNow` and `by:<reason>`, `refusedThenServedNow` and `after:<label>`,
 * `noneThen`, `consent`, `spend`, `alerts`. Empty when the lane never decided it.
 */
export function measuresOf(row: WhatIfRow, lane: LaneId): string[] {
  const n = row.now[lane];
  if (n.now === 'undecided' || !n.record) return [];
  const out = ['requests', n.now];
  const then = row.then.then;
  if (then === 'none') out.push('none', 'noneThen');
  else if (then === 'served' && n.now === 'refused')
    out.push('servedThenRefusedNow', `by:${n.label}`);
  else if (then === 'refused' && n.now === 'served')
    out.push('refusedThenServedNow', `after:${row.then.label}`);
  if (n.record.consentShown) out.push('consent');
  if (toMicros(n.record.cost) > 0) out.push('spend');
  if (n.record.alert) out.push('alerts');
  return out;
}

/** Whether a request changed outcome in a lane (the report's `changes`). */
export function changedRow(row: WhatIfRow): boolean {
  return LANE_IDS.some((l) => row.now[l].now !== 'undecided' && row.now[l].now !== row.then.then);
}

/**
 * The audit rows behind each measure of the report, per server ('' for all servers), and behind
 * the changed requests (each lane's row of each): as `lane NUL seq` keys, the form the page's
 * audit filter takes (protocol.ts `AuditFocusSpec`). They name the rows of the run the report
 * was made from: the same in any run of the same scenario and trace (the engine is
 * deterministic), not in one whose lanes were edited along the way.
 */
export interface WhatIfAuditRows {
  /** Group ('' for all servers) → measure → `lane NUL seq` keys. */
  measures: Map<string, Map<string, string[]>>;
  changed: string[];
}

export function whatIfAuditRows(rows: readonly WhatIfRow[]): WhatIfAuditRows {
  const measures = new Map<string, Map<string, string[]>>();
  const changed: string[] = [];
  const add = (group: string, measure: string, key: string) => {
    let g = measures.get(group);
    if (!g) measures.set(group, (g = new Map()));
    let keys = g.get(measure);
    if (!keys) g.set(measure, (keys = []));
    keys.push(key);
  };
  for (const row of rows) {
    const isChanged = changedRow(row);
    for (const lane of LANE_IDS) {
      const r = row.now[lane].record;
      if (!r) continue;
      const key = `${lane}\u0000${r.seq}`;
      for (const m of measuresOf(row, lane)) {
        add(row.event.server, m, key);
        add('', m, key);
      }
      if (isChanged) changed.push(key);
    }
  }
  return { measures, changed };
}
