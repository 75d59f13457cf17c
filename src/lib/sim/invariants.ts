/**
 * The seeds' guarantees as code: a checker fed a run's frames, audit records and store changes as
 * they happen, answering at any moment which guarantees hold, with counts and the requests that
 * break them. Pure and streaming: it keeps per-request state only while a request is in flight
 * and a bounded history per identity, so a simulated day costs no more memory than the store.
 *
 * The checker is told what it cannot see in the stream (the lane's silence switch when a request
 * arrived, the budget in force when a call was charged) by its caller, `guard.ts`.
 */
import { estimateCostMicros, type RateCard } from '../machine/budget';
import { toMicros } from '../machine/money';
import type { AuditRecord, Frame, StoredDecision } from '../machine/types';
import type { LaneCounters } from './metrics';
import { lifetimeBroken, LifetimeTracker } from './lifetimes';
import { LoopTracker, type AlertSettings } from './loops';
import type { StoreEvent } from './store-tap';

export const INVARIANTS = {
  'one-frame': 'Every request gets exactly one frame and one audit record',
  'one-consent': 'At most one consent dialog per identity per store lifetime',
  'no-overdraw': 'No budget window or session pool is overdrawn',
  'call-within-limit': 'No call costs more than the limit it was given',
  'tokens-paid': 'Every token generated is paid for',
  'loops-flagged':
    'An identity presented as often as the alert threshold within its window is flagged',
  'replays-no-model':
    'Replays never ask the user or call the model; completions are never replayed',
  'verdicts-only': 'The store holds verdicts only, never a completion',
  'frames-conform': 'Every frame conforms to the MCP SDK schema',
  'totals-match': "The lane's counters equal its audit log",
  'same-bytes': 'The same scenario and seed give the same bytes'
} as const;
export type InvariantId = keyof typeof INVARIANTS;

/** `held`: no violation; `broken`: at least one; `waived`: given up on purpose (silence is on). */
export type GuaranteeStatus = 'held' | 'broken' | 'waived';

/** One request (or stored decision, or counter) that breaks a guarantee. */
export interface Offender {
  lane: string;
  /** The audit record's seq, when there is one: the audit table can show the row. */
  seq: number | null;
  /** `connection/id` of the request, when the offence is about one. */
  request: string | null;
  t: number;
  what: string;
}

export interface InvariantResult {
  id: InvariantId;
  title: string;
  status: GuaranteeStatus;
  /** One line for the panel and the CLI: "664 of 664 requests answered". */
  summary: string;
  checked: number;
  violations: number;
  /** The first offenders (at most {@link MAX_OFFENDERS}); `violations` counts them all. */
  offenders: Offender[];
}

export const MAX_OFFENDERS = 50;

/** Returns what is wrong with a frame, or null when it conforms. */
export type FrameValidator = (frame: Frame) => string | null;

/** What the checker is told about a request as it arrives. */
export interface RequestContext {
  /** The lane's silence switch when the request arrived (the machine reads it then). */
  silence: boolean;
}

/** What the checker is told about an audit record: the limits in force when it was charged. */
export interface ChargeContext {
  budget: { micros: number; windowMs: number; currency: string } | null;
  /** The connection's session pool, when the lane's cap scope is `session-pool`. */
  pool: { micros: number; currency: string } | null;
  /** The lane's retry-loop alert settings; without them, loops are not judged. */
  alert?: AlertSettings;
}

const n = (x: number): string => x.toLocaleString('en-US');
const plural = (x: number, one: string, many = `${one}s`): string =>
  `${n(x)} ${x === 1 ? one : many}`;

interface Pending {
  t: number;
  silence: boolean;
  seq: number | null;
  audited: boolean;
  tokensOut: number;
}

const STORED_KEYS = new Set([
  'server',
  'identity',
  'verdict',
  'reason',
  'retryable',
  'decidedAt',
  'expiresAt',
  'resetsAt',
  'retryAfterMs',
  'policyHash',
  'represented',
  'recent'
]);

/** Where a stored decision says something it must not: an unknown member or a mixed verdict. */
export function storedDecisionProblem(d: StoredDecision): string | null {
  const extra = Object.keys(d).filter((k) => !STORED_KEYS.has(k));
  if (extra.length) return `holds ${extra.map((k) => `'${k}'`).join(', ')} besides the verdict`;
  if (d.verdict !== 'allowed' && d.verdict !== 'denied') return `verdict '${String(d.verdict)}'`;
  if ((d.verdict === 'denied') !== (typeof d.reason === 'string'))
    return `verdict '${d.verdict}' with reason ${JSON.stringify(d.reason)}`;
  return null;
}

class Tally {
  checked = 0;
  violations = 0;
  readonly offenders: Offender[] = [];
  add(o: Offender): void {
    this.violations++;
    if (this.offenders.length < MAX_OFFENDERS) this.offenders.push(o);
  }
}

export interface CheckerOptions {
  /** Rate cards by model: what a token costs. */
  cards: Readonly<Record<string, RateCard>>;
  /** Validates every frame sent (the MCP SDK's schemas); without it, frames are not checked. */
  validate?: FrameValidator;
}

export class InvariantChecker {
  readonly #cards: Readonly<Record<string, RateCard>>;
  readonly #validate: FrameValidator | undefined;
  readonly #t = Object.fromEntries(
    (Object.keys(INVARIANTS) as InvariantId[]).map((id) => [id, new Tally()])
  ) as Record<InvariantId, Tally>;
  readonly #pending = new Map<string, Pending>();
  #received = 0;
  #answered = 0;
  #silenced = 0;
  /** Spend per (lane, server, window) and per (lane, connection) pool, in micros. */
  readonly #windows = new Map<string, number>();
  readonly #overdrawn = new Set<string>();
  readonly #pools = new Map<string, number>();
  readonly #lifetimes = new LifetimeTracker();
  readonly #loops = new LoopTracker();
  /** The audit log's own totals per lane, to hold the counters against. */
  readonly #totals = new Map<string, LaneCounters>();
  #same: { checked: number; problem: string | null } | null = null;
  #replays = 0;

  constructor(opts: CheckerOptions) {
    this.#cards = opts.cards;
    this.#validate = opts.validate;
  }

  /** A request frame the client received. */
  request(lane: string, connection: string, id: string | number, t: number, ctx: RequestContext) {
    const key = `${lane}\u0000${connection}\u0000${String(id)}`;
    this.#received++;
    if (this.#pending.has(key))
      this.#t['one-frame'].add({
        lane,
        seq: null,
        request: `${connection}/${id}`,
        t,
        what: 'a second request with an id still in flight on its connection'
      });
    this.#pending.set(key, { t, silence: ctx.silence, seq: null, audited: false, tokensOut: 0 });
  }

  /** An audit record, with the limits in force when its cost was charged. */
  audit(r: AuditRecord, ctx: ChargeContext): void {
    const lane = r.lane ?? '';
    const request = `${r.connection}/${r.requestId}`;
    const key = `${lane}\u0000${r.connection}\u0000${String(r.requestId)}`;
    const at = (what: string): Offender => ({ lane, seq: r.seq, request, t: r.t, what });
    this.#tallyTotals(lane, r);
    const p = this.#pending.get(key);
    if (!p) this.#t['one-frame'].add(at('an audit record for no request in flight'));
    else if (p.audited) this.#t['one-frame'].add(at('a second audit record for one request'));
    else {
      p.audited = true;
      p.seq = r.seq;
      p.tokensOut = r.tokensOut;
      if (r.silenced) {
        this.#pending.delete(key);
        if (p.silence) this.#silenced++;
        else this.#t['one-frame'].add(at('no frame, and silence is off'));
      }
    }
    const cost = toMicros(r.cost);
    this.#checkConsent(r, lane, at);
    this.#checkSpend(r, lane, cost, ctx, at);
    this.#checkTokens(r, cost, at);
    if (ctx.alert) {
      const { inWindow, loop } = this.#loops.presented(lane, r, ctx.alert);
      if (loop) {
        const l = this.#t['loops-flagged'];
        l.checked++;
        if (!r.alert)
          l.add(
            at(
              `${r.identity} presented ${inWindow} times within ${n(ctx.alert.windowMs)} ms, not flagged`
            )
          );
      }
    }
    if (r.replayed && (r.outcome === 'denied' || r.silenced)) {
      this.#t['replays-no-model'].checked++;
      this.#replays++;
      if (r.consentShown || r.tokensIn > 0 || r.tokensOut > 0 || cost > 0)
        this.#t['replays-no-model'].add(
          at(
            `a replayed denial ${r.consentShown ? 'asked the user' : `called the model (${r.tokensIn} in, ${r.tokensOut} out, ${r.cost})`}`
          )
        );
    }
  }

  /** The one response frame the client sent for a request. */
  frame(lane: string, connection: string, frame: Frame, t: number): void {
    const key = `${lane}\u0000${connection}\u0000${String(frame.id)}`;
    const request = `${connection}/${frame.id}`;
    const p = this.#pending.get(key);
    const seq = p?.seq ?? null;
    const at = (what: string): Offender => ({ lane, seq, request, t, what });
    if (!p) this.#t['one-frame'].add(at('a frame for no request in flight (a second frame?)'));
    else {
      this.#pending.delete(key);
      if (p.audited) this.#answered++;
      else this.#t['one-frame'].add(at('a frame sent before its audit record'));
    }
    if (this.#validate) {
      this.#t['frames-conform'].checked++;
      const problem = this.#validate(frame);
      if (problem) this.#t['frames-conform'].add(at(problem));
    }
    if ('result' in frame && frame.result.content.text.length > 0) {
      this.#t['replays-no-model'].checked++;
      if (!p || p.tokensOut === 0)
        this.#t['replays-no-model'].add(at('a completion sent without a model call of its own'));
    }
  }

  /** A change to a lane's decision store, at virtual time `t`. */
  store(lane: string, t: number, e: StoreEvent): void {
    if (e.type === 'commit') {
      const v = this.#t['verdicts-only'];
      v.checked++;
      const problem = storedDecisionProblem(e.decision);
      if (problem)
        v.add({
          lane,
          seq: null,
          request: null,
          t,
          what: `the decision for ${e.decision.identity} ${problem}`
        });
    }
    this.#lifetimes.store(lane, t, e);
  }

  /** Two runs of the same scenario and seed, digested: their bytes must be equal. */
  sameBytes(a: { frames: string; audit: string }, b: { frames: string; audit: string }): void {
    const problem =
      a.frames !== b.frames
        ? 'frames.jsonl differs between two runs'
        : a.audit !== b.audit
          ? 'audit.jsonl differs between two runs'
          : null;
    this.#same = { checked: 2, problem };
  }

  #checkConsent(r: AuditRecord, lane: string, at: (what: string) => Offender): void {
    if (!r.consentShown) return;
    const c = this.#t['one-consent'];
    c.checked++;
    const broken = this.#lifetimes.dialog(lane, r);
    if (broken) c.add(at(lifetimeBroken(broken)));
  }

  #checkSpend(
    r: AuditRecord,
    lane: string,
    cost: number,
    ctx: ChargeContext,
    at: (what: string) => Offender
  ): void {
    const o = this.#t['no-overdraw'];
    if (cost > 0 && ctx.budget && ctx.budget.currency === r.currency) {
      const { windowMs, micros } = ctx.budget;
      const start = r.t - (((r.t % windowMs) + windowMs) % windowMs);
      const key = `${lane}\u0000${r.server}\u0000${windowMs}\u0000${start}`;
      if (!this.#windows.has(key)) o.checked++;
      const spent = (this.#windows.get(key) ?? 0) + cost;
      this.#windows.set(key, spent);
      if (spent > micros && !this.#overdrawn.has(key)) {
        this.#overdrawn.add(key);
        o.add(
          at(
            `${r.server}'s window from ${new Date(start).toISOString()} spent ${spent} µ$ of ${micros} µ$`
          )
        );
      }
    }
    if (cost > 0 && ctx.pool && ctx.pool.currency === r.currency) {
      const key = `${lane}\u0000${r.connection}`;
      if (!this.#pools.has(key)) o.checked++;
      const spent = (this.#pools.get(key) ?? 0) + cost;
      this.#pools.set(key, spent);
      if (spent > ctx.pool.micros && spent - cost <= ctx.pool.micros)
        o.add(at(`${r.connection}'s session pool spent ${spent} µ$ of ${ctx.pool.micros} µ$`));
    }
    const d = r.budgetDecision;
    const l = this.#t['call-within-limit'];
    if (d?.actualCost && d.actualCost.currency === d.limitApplied.currency) {
      l.checked++;
      const actual = toMicros(d.actualCost.amount);
      const limit = toMicros(d.limitApplied.amount);
      if (actual > limit)
        l.add(at(`cost ${d.actualCost.amount} against a limit of ${d.limitApplied.amount}`));
    }
  }

  #checkTokens(r: AuditRecord, cost: number, at: (what: string) => Offender): void {
    if (r.tokensOut <= 0) return;
    const t = this.#t['tokens-paid'];
    t.checked++;
    const card = r.model ? this.#cards[r.model] : undefined;
    if (!card) {
      t.add(at(`${r.tokensOut} tokens out from '${r.model}', which has no rate card`));
      return;
    }
    // The least these tokens can cost: output at its price, input all read from the cache (or
    // all fresh, whichever is cheaper). The meter may charge more; never less.
    const cachedIsCheaper =
      card.cachedInputPerMtok !== undefined &&
      toMicros(card.cachedInputPerMtok) < toMicros(card.inputPerMtok);
    const least = cachedIsCheaper
      ? estimateCostMicros(card, 0, r.tokensOut, r.tokensIn)
      : estimateCostMicros(card, r.tokensIn, r.tokensOut);
    if (cost < least)
      t.add(at(`${r.tokensIn} in + ${r.tokensOut} out charged ${r.cost}, at least ${least} µ$`));
  }

  #tallyTotals(lane: string, r: AuditRecord): void {
    let c = this.#totals.get(lane);
    if (!c) {
      c = { frames: {}, silenced: 0 } as LaneCounters;
      c.consentPrompts = c.spendMicros = c.tokensIn = c.tokensOut = c.replays = c.fresh = 0;
      this.#totals.set(lane, c);
    }
    if (r.silenced) c.silenced++;
    else c.frames[r.outcome] = (c.frames[r.outcome] ?? 0) + 1;
    if (r.consentShown) c.consentPrompts++;
    c.spendMicros += toMicros(r.cost);
    c.tokensIn += r.tokensIn;
    c.tokensOut += r.tokensOut;
    if (r.replayed) c.replays++;
    else c.fresh++;
  }

  /**
   * The guarantees as they stand at virtual time `now`. `counters` are the lanes' own counters
   * (held against the audit log); `stuckAfterMs` is how long a request may stay unanswered before
   * it counts as never answered (the machine's own timeouts bound every wait).
   */
  results(now: number, counters: Record<string, LaneCounters>, stuckAfterMs: number) {
    const out: InvariantResult[] = [];
    const t = this.#t;
    // One frame: the requests still in flight, and those that waited too long.
    const frame = new Tally();
    frame.violations = t['one-frame'].violations;
    frame.offenders.push(...t['one-frame'].offenders);
    let inFlight = 0;
    for (const [key, p] of this.#pending) {
      const [lane = '', connection = '', id = ''] = key.split('\u0000');
      const o = { lane, seq: p.seq, request: `${connection}/${id}`, t: p.t };
      if (p.audited) frame.add({ ...o, what: 'an audit record but no frame' });
      else if (now - p.t > stuckAfterMs)
        frame.add({ ...o, what: `no answer after ${n(now - p.t)} ms` });
      else inFlight++;
    }
    const decided = this.#received - inFlight;
    const flight = inFlight ? ` (${n(inFlight)} in flight)` : '';
    out.push(
      frame.violations
        ? this.#result(
            'one-frame',
            frame,
            decided,
            `${plural(frame.violations, 'request')} without exactly one frame${flight}`
          )
        : this.#silenced
          ? {
              ...this.#result(
                'one-frame',
                frame,
                decided,
                `${plural(this.#silenced, 'request')} got no frame — silence is on${flight}`
              ),
              status: 'waived'
            }
          : this.#result(
              'one-frame',
              frame,
              decided,
              `${n(this.#answered)} of ${n(decided)} requests answered${flight}`
            )
    );
    const c = t['one-consent'];
    out.push(
      this.#result(
        'one-consent',
        c,
        c.checked,
        c.violations
          ? `${plural(c.violations, 'consent dialog')} repeated within a store lifetime`
          : `${plural(c.checked, 'consent dialog')}, none repeated`
      )
    );
    const o = t['no-overdraw'];
    out.push(
      this.#result(
        'no-overdraw',
        o,
        o.checked,
        o.violations
          ? `${plural(o.violations, 'window')} overdrawn`
          : `no window overdrawn (${plural(o.checked, 'window')} charged)`
      )
    );
    const l = t['call-within-limit'];
    out.push(
      this.#result(
        'call-within-limit',
        l,
        l.checked,
        l.violations
          ? `${plural(l.violations, 'call')} over its limit`
          : l.checked
            ? `${n(l.checked)} of ${n(l.checked)} metered calls within their limit`
            : 'no metered calls'
      )
    );
    const tp = t['tokens-paid'];
    out.push(
      this.#result(
        'tokens-paid',
        tp,
        tp.checked,
        `${n(tp.checked - tp.violations)} of ${n(tp.checked)} calls that generated tokens paid for them`
      )
    );
    const lf = t['loops-flagged'];
    out.push(
      this.#result(
        'loops-flagged',
        lf,
        lf.checked,
        lf.checked
          ? `${n(lf.checked - lf.violations)} of ${n(lf.checked)} presentations in a retry loop flagged`
          : 'no retry loop yet'
      )
    );
    const r = t['replays-no-model'];
    out.push(
      this.#result(
        'replays-no-model',
        r,
        r.checked,
        r.violations
          ? `${plural(r.violations, 'stored answer')} reached the user or the model`
          : `${plural(this.#replays, 'stored denial')} sent, no model call; ${plural(r.checked - this.#replays, 'completion')}, each its own call`
      )
    );
    const v = t['verdicts-only'];
    out.push(
      this.#result(
        'verdicts-only',
        v,
        v.checked,
        `${n(v.checked - v.violations)} of ${n(v.checked)} stored decisions hold verdicts only`
      )
    );
    if (this.#validate) {
      const f = t['frames-conform'];
      out.push(
        this.#result(
          'frames-conform',
          f,
          f.checked,
          `${n(f.checked - f.violations)} of ${n(f.checked)} frames conform`
        )
      );
    }
    out.push(this.#totalsResult(now, counters));
    if (this.#same) {
      const s = new Tally();
      s.checked = 2;
      if (this.#same.problem)
        s.add({ lane: '', seq: null, request: null, t: now, what: this.#same.problem });
      out.push(
        this.#result(
          'same-bytes',
          s,
          2,
          this.#same.problem ?? 'two runs, byte-identical frames and audit'
        )
      );
    }
    return out;
  }

  #totalsResult(now: number, counters: Record<string, LaneCounters>): InvariantResult {
    const tally = new Tally();
    for (const [lane, c] of Object.entries(counters)) {
      const a = this.#totals.get(lane);
      tally.checked++;
      const pairs: [string, number, number][] = [
        ['consent prompts', c.consentPrompts, a?.consentPrompts ?? 0],
        ['spend (µ$)', c.spendMicros, a?.spendMicros ?? 0],
        ['tokens in', c.tokensIn, a?.tokensIn ?? 0],
        ['tokens out', c.tokensOut, a?.tokensOut ?? 0],
        ['replays', c.replays, a?.replays ?? 0],
        ['fresh evaluations', c.fresh, a?.fresh ?? 0],
        ['silenced', c.silenced, a?.silenced ?? 0]
      ];
      for (const [o, x] of Object.entries(c.frames))
        pairs.push([`${o} frames`, x, a?.frames[o as keyof LaneCounters['frames']] ?? 0]);
      for (const [name, shown, logged] of pairs)
        if (shown !== logged)
          tally.add({
            lane,
            seq: null,
            request: null,
            t: now,
            what: `lane ${lane} shows ${n(shown)} ${name}, its audit log ${n(logged)}`
          });
    }
    return this.#result(
      'totals-match',
      tally,
      tally.checked,
      tally.violations
        ? `${plural(tally.violations, 'counter')} differ from the audit log`
        : `every counter of ${plural(tally.checked, 'lane')} matches its audit log`
    );
  }

  #result(id: InvariantId, t: Tally, checked: number, summary: string): InvariantResult {
    return {
      id,
      title: INVARIANTS[id],
      status: t.violations ? 'broken' : 'held',
      summary,
      checked,
      violations: t.violations,
      offenders: t.offenders.slice()
    };
  }
}

/**
 * The audit rows behind a guarantee that holds: what the audit table shows when the learner
 * follows the panel's link. (A broken guarantee links to its offenders instead.)
 */
export function rowsBehind(id: InvariantId, status: GuaranteeStatus, r: AuditRecord): boolean {
  switch (id) {
    case 'one-frame':
      return status === 'waived' ? r.silenced : true;
    case 'one-consent':
      return r.consentShown;
    case 'no-overdraw':
      return toMicros(r.cost) > 0;
    case 'call-within-limit':
      return r.budgetDecision?.actualCost !== undefined;
    case 'tokens-paid':
      return r.tokensOut > 0;
    case 'loops-flagged':
      return r.alert;
    case 'replays-no-model':
      return r.replayed || (r.tokensOut > 0 && !r.silenced);
    case 'verdicts-only':
      // The presentations that stored a verdict: fresh denials and approvals.
      return !r.replayed && (r.outcome === 'denied' || r.consent === 'approved');
    case 'frames-conform':
      return !r.silenced;
    case 'totals-match':
    case 'same-bytes':
      return true;
  }
}

/** The first broken guarantee as one line: `name: what (lane A, request c#1/4, audit seq 9)`. */
export function brokenLine(results: readonly InvariantResult[]): string | null {
  const r = results.find((x) => x.status === 'broken');
  if (!r) return null;
  const o = r.offenders[0];
  const where = o
    ? [
        o.lane ? `lane ${o.lane}` : '',
        o.request ? `request ${o.request}` : '',
        o.seq !== null ? `audit seq ${o.seq}` : ''
      ]
        .filter(Boolean)
        .join(', ')
    : '';
  return `invariant ${r.id} broken: ${o?.what ?? r.summary}${where ? ` (${where})` : ''}${r.violations > 1 ? `, and ${n(r.violations - 1)} more` : ''}`;
}
