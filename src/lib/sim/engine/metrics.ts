/**
 * Per-lane metrics: running counters and time series sampled on the virtual clock. Fed by the
 * machine's outputs (audit record + path) and by the servers' own reports.
 */
import type { AuthOutput } from '../../machine/authorize';
import { copyable } from '../../machine/clone';
import { toMicros } from '../../machine/money';
import type { Outcome } from '../../machine/types';
import { OUTCOMES as OUTCOME_LIST } from '../../machine/outcome-list';
import type { ServerReport } from '../world/world';

const OUTCOMES: readonly Outcome[] = OUTCOME_LIST;

export interface LaneCounters {
  /** Requests the client received. */
  requests: number;
  /** Frames sent, by outcome (silenced denials are not frames). */
  frames: Record<Outcome, number>;
  silenced: number;
  consentPrompts: number;
  /**
   * Calls the policy would have asked about but let through unasked, their estimate at or below
   * its `askAbove` (audit `consentSkipped`), and what they cost: spend no person saw.
   */
  consentSkipped: number;
  unaskedSpendMicros: number;
  providerCalls: number;
  spendMicros: number;
  /** Spent by servers on their own provider keys (a direct lane): never on the client's bill. */
  serverSpendMicros: number;
  /** Requests evaluated afresh, versus answered from a stored decision. */
  fresh: number;
  replays: number;
  /** Denials by reason (replayed ones included). */
  denials: Record<string, number>;
  /** Presentations that tripped the retry-loop alert, and distinct identities flagged. */
  alerts: number;
  alertedIdentities: number;
  /**
   * Trimmed context: requests granted less context than asked, and how many of those servers were
   * not told (the host knows; a server told nothing presents a confident answer).
   */
  trimmed: number;
  trimmedSilently: number;
  tokensIn: number;
  tokensOut: number;
  /** What the servers did. */
  tasks: number;
  completed: number;
  abandoned: number;
  /** Completions the server knew were made with less context than it asked for. */
  degradedAware: number;
  /** Requests the servers sent again of their own accord. */
  retries: number;
  /** 2026-07-28: tool calls the host's agent loop made again after one failed at the host. */
  hostRetries: number;
  reconnects: number;
  timeouts: number;
}

/** The series a chart can plot: cumulative values at each sample time. */
export const SERIES_KEYS = [
  'requests',
  'spendMicros',
  'providerCalls',
  'consentPrompts',
  'fresh',
  'replays',
  'denied',
  'alerts',
  'abandoned',
  'silenced',
  'trimmedSilently',
  'retries',
  'hostRetries'
] as const;
export type SeriesKey = (typeof SERIES_KEYS)[number];

export interface LaneSeries {
  t: number[];
  values: Record<SeriesKey, number[]>;
}

export function emptyCounters(): LaneCounters {
  return {
    requests: 0,
    frames: Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>,
    silenced: 0,
    consentPrompts: 0,
    consentSkipped: 0,
    unaskedSpendMicros: 0,
    providerCalls: 0,
    spendMicros: 0,
    serverSpendMicros: 0,
    fresh: 0,
    replays: 0,
    denials: {},
    alerts: 0,
    alertedIdentities: 0,
    trimmed: 0,
    trimmedSilently: 0,
    tokensIn: 0,
    tokensOut: 0,
    tasks: 0,
    completed: 0,
    abandoned: 0,
    degradedAware: 0,
    retries: 0,
    hostRetries: 0,
    reconnects: 0,
    timeouts: 0
  };
}

function seriesValue(c: LaneCounters, k: SeriesKey): number {
  if (k === 'denied') return c.frames.denied + c.silenced;
  return c[k];
}

/**
 * Edge labels by state pair, made once: a request walks a handful of edges, and a label joined
 * afresh for each was a new string to build and hash per edge per request. The machine's states
 * are few, so this stays small.
 */
const edgeKeys = new Map<string, Map<string, string>>();

function edgeKey(from: string, to: string): string {
  let byTo = edgeKeys.get(from);
  if (byTo === undefined) {
    byTo = new Map();
    edgeKeys.set(from, byTo);
  }
  let k = byTo.get(to);
  if (k === undefined) {
    k = `${from}→${to}`;
    byTo.set(to, k);
  }
  return k;
}

export class LaneMetrics {
  readonly counters = emptyCounters();
  readonly series: LaneSeries = {
    t: [],
    values: Object.fromEntries(SERIES_KEYS.map((k) => [k, [] as number[]])) as Record<
      SeriesKey,
      number[]
    >
  };
  /** Counts per machine edge, "from→to": the statechart's live labels. */
  readonly edges: Record<string, number> = {};
  // Not #private: the generic copier (clone.ts) copies it.
  private readonly alerted = new Set<string>();

  /** The client received a request. */
  request(): void {
    this.counters.requests++;
  }

  /** The machine finished a request. */
  decided(out: AuthOutput, annotateTrim: boolean): void {
    const c = this.counters;
    const a = out.audit;
    if (a.silenced) c.silenced++;
    else c.frames[a.outcome]++;
    if (a.consentShown) c.consentPrompts++;
    if (a.consentSkipped) {
      c.consentSkipped++;
      // The record's cost is what the lane charges for it (`charge`), so the two always agree.
      c.unaskedSpendMicros += toMicros(a.cost);
    }
    if (out.path.includes('calling')) c.providerCalls++;
    if (a.replayed) c.replays++;
    else c.fresh++;
    if (a.reason && (a.outcome === 'denied' || a.outcome === 'budget_exceeded')) {
      c.denials[a.reason] = (c.denials[a.reason] ?? 0) + 1;
    }
    if (a.alert) {
      c.alerts++;
      if (!this.alerted.has(a.identity)) {
        this.alerted.add(a.identity);
        c.alertedIdentities++;
      }
    }
    if (a.outcome === 'trimmed') {
      c.trimmed++;
      if (!annotateTrim) c.trimmedSilently++;
    }
    c.tokensIn += a.tokensIn;
    c.tokensOut += a.tokensOut;
    for (let i = 1; i < out.path.length; i++) {
      const k = edgeKey(out.path[i - 1]!, out.path[i]!);
      this.edges[k] = (this.edges[k] ?? 0) + 1;
    }
  }

  charge(micros: number): void {
    this.counters.spendMicros += micros;
  }

  /** A server reported on its own work. */
  report(r: ServerReport): void {
    const c = this.counters;
    switch (r.type) {
      case 'task.started':
        c.tasks++;
        break;
      case 'task.completed':
        c.completed++;
        if (r.degradedAware) c.degradedAware++;
        break;
      case 'task.abandoned':
        c.abandoned++;
        break;
      case 'retry':
        c.retries++;
        break;
      case 'host.retry':
        c.hostRetries++;
        break;
      case 'reconnect':
        c.reconnects++;
        break;
      case 'timeout':
        c.timeouts++;
        break;
    }
  }

  /** Append one sample of every series at virtual time `t`. */
  sample(t: number): void {
    this.series.t.push(t);
    for (const k of SERIES_KEYS) this.series.values[k].push(seriesValue(this.counters, k));
  }

  /**
   * The series as shown at virtual time `now`: the samples, then one point of the counters as
   * they are now when `now` is past the last sample. Why: samples fall every few simulated
   * seconds, so a paused run (or a breakpoint) would otherwise chart fewer consent prompts than
   * the lanes table beside it counts. The stored series is not changed.
   */
  seriesAt(now: number): LaneSeries {
    const s = this.series;
    const last = s.t.at(-1) ?? -Infinity;
    if (now <= last) return s;
    const values = {} as Record<SeriesKey, number[]>;
    for (const k of SERIES_KEYS) values[k] = [...s.values[k], seriesValue(this.counters, k)];
    return { t: [...s.t, now], values };
  }
}

// A copy has its own counters, series, edge counts and alerted identities (plain data, copied into
// a constructed instance's fields, so they keep the shapes the hot paths are used to). The edge
// labels are a module-wide cache of immutable strings, never in an instance.
copyable(LaneMetrics, { name: 'metrics.LaneMetrics', blank: () => new LaneMetrics() });
