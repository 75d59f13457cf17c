/**
 * The seeds' guarantees as code: a checker fed a run's frames, audit records and store changes as
 * they happen, answering at any moment which guarantees hold, with counts and the requests that
 * break them. Pure and streaming: it keeps per-request state only while a request is in flight
 * and a bounded history per identity, so a simulated day costs no more memory than the store.
 *
 * The checker is told what it cannot see in the stream (the lane's silence switch when a request
 * arrived, the budget in force when a call was charged) by its caller, `guard.ts`.
 *
 * Over 400 lines on purpose: one checker whose hooks share the in-flight and per-identity state.
 */
import { estimateCostMicros, type RateCard } from '../../../machine/budget';
import { toMicros } from '../../../machine/money';
import type { AuditRecord, Frame, SamplingParams, StoredDecision } from '../../../machine/types';
import { copyable } from '../../../machine/clone';
import type { DenialStyle } from '../../../machine/refusal-styles';
import type { LaneCounters } from '../../engine/metrics';
import { lifetimeBroken, LifetimeTracker } from '../lifetimes';
import { isLoop, LoopTracker, type AlertSettings } from '../loops';
import { dropIdle, idKey, requestCount, requestsOf, type ByRequest, type IdKey } from '../requests';
import type { StoreEvent } from '../../engine/store-tap';
import {
  INVARIANTS,
  n,
  Tally,
  type InvariantId,
  type InvariantResult,
  type Offender
} from './catalogue';
import { summarise, type Pending } from './summaries';
import { checkDenialFrame, checkExhaustedPremise, type WindowsAt } from './denial-truth';
import { checkHandover } from './handover';

/** Returns what is wrong with a frame, or null when it conforms. */
export type FrameValidator = (frame: Frame) => string | null;

/** What the checker is told about a request as it arrives. */
export interface RequestContext {
  /** The lane's silence switch when the request arrived (the machine reads it then). */
  silence: boolean;
  /** The lane's refusal style when the request arrived; default `lab`. */
  denialStyle?: DenialStyle;
}

/** What the checker is told about an audit record: the limits in force when it was charged. */
export interface ChargeContext {
  budget: { micros: number; windowMs: number; currency: string } | null;
  /** The connection's session pool, when the lane's cap scope is `session-pool`. */
  pool: { micros: number; currency: string } | null;
  /** The lane's retry-loop alert settings; without them, loops are not judged. */
  alert?: AlertSettings;
  /** The request's params as they arrived (what a budget denial's input cost is judged by). */
  params?: SamplingParams;
  /** The lane keeps approvals ("allowed, do not ask again"): an approved identity is not re-asked. */
  keepsApprovals?: boolean;
  /** What the host had actually spent in the server's budget window when the record was made. */
  spentMicros?: number;
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
  'retryAt',
  'message',
  'approval',
  'policyHash',
  'represented',
  'recent'
]);

/** Whether `d` has an own member that is not a stored decision's (checked without a list). */
function hasUnknownMember(d: object): boolean {
  for (const k in d) if (!STORED_KEYS.has(k) && Object.hasOwn(d, k)) return true;
  return false;
}

/** Where a stored decision says something it must not: an unknown member or a mixed verdict. */
export function storedDecisionProblem(d: StoredDecision): string | null {
  if (hasUnknownMember(d)) {
    const extra = Object.keys(d).filter((k) => !STORED_KEYS.has(k));
    return `holds ${extra.map((k) => `'${k}'`).join(', ')} besides the verdict`;
  }
  if (d.verdict !== 'allowed' && d.verdict !== 'denied') return `verdict '${String(d.verdict)}'`;
  if ((d.verdict === 'denied') !== (typeof d.reason === 'string'))
    return `verdict '${d.verdict}' with reason ${JSON.stringify(d.reason)}`;
  return null;
}

export interface CheckerOptions {
  /** Rate cards by model: what a token costs. */
  cards: Readonly<Record<string, RateCard>>;
  /** Validates every frame sent (the MCP SDK's schemas); without it, frames are not checked. */
  validate?: FrameValidator;
}

/**
 * The key of a (lane, server, window) spend: `lane\0server\0windowMs\0start`, as the checker's
 * maps (and snapshots) hold it. Made once per window and server, not per record: the numbers'
 * strings were a new string per charged record. A cache of strings only (the same key whatever
 * checker asks), one per lane and server.
 */
const WINDOW_KEYS = new Map<
  string,
  Map<string, { windowMs: number; start: number; key: string }>
>();
function windowKey(lane: string, server: string, windowMs: number, start: number): string {
  let byServer = WINDOW_KEYS.get(lane);
  if (!byServer) {
    // Lanes are a scenario's few; a page that loads many scenarios starts the cache afresh.
    if (WINDOW_KEYS.size >= 64) WINDOW_KEYS.clear();
    byServer = new Map();
    WINDOW_KEYS.set(lane, byServer);
  }
  const last = byServer.get(server);
  if (last && last.windowMs === windowMs && last.start === start) return last.key;
  const key = `${lane}\u0000${server}\u0000${windowMs}\u0000${start}`;
  if (byServer.size >= 4096 && !last) byServer.clear();
  byServer.set(server, { windowMs, start, key });
  return key;
}

/** Requests answered between two drops of the connections that hold none any more. */
const SWEEP_EVERY = 4096;

/**
 * A request in flight as the checker and its guard (guard.ts) both keep it: one map of the run's
 * requests for both, not a second one beside it keyed the same way (an entry to make, find and
 * delete per request, issue #24). The guard's part: the limits and params the request arrived
 * under, which its audit record is judged by.
 */
export interface InFlight extends Pending {
  charge: ChargeContext | undefined;
  params: SamplingParams | undefined;
}

/** A copy of the requests in flight: new maps and entries (an entry changes), limits and params shared. */
function copyInFlight(m: ByRequest<InFlight>): ByRequest<InFlight> {
  const out: ByRequest<InFlight> = new Map();
  for (const [lane, byConnection] of m) {
    const c = new Map<string, Map<IdKey, InFlight>>();
    for (const [connection, byId] of byConnection) {
      const ids = new Map<IdKey, InFlight>();
      for (const [id, p] of byId) ids.set(id, { ...p });
      c.set(connection, ids);
    }
    out.set(lane, c);
  }
  return out;
}

export class InvariantChecker {
  private readonly cards: Readonly<Record<string, RateCard>>;
  private readonly validate: FrameValidator | undefined;
  private readonly t = Object.fromEntries(
    (Object.keys(INVARIANTS) as InvariantId[]).map((id) => [id, new Tally()])
  ) as Record<InvariantId, Tally>;
  /**
   * The requests in flight (requests.ts), each with its place in the order they arrived — and one
   * answered before its audit record until that record comes (`framed`: the guard's limits).
   */
  private readonly pending: ByRequest<InFlight> = new Map();
  private received = 0;
  /** Requests answered since the connections that hold none any more were last dropped. */
  private ended = 0;
  private answered = 0;
  private silenced = 0;
  /** Refusals sent in a real client's style, per lane (the lab's typed denial given up). */
  private readonly foreign = new Map<string, { style: DenialStyle; count: number }>();
  /** Spend per (lane, server, window) and per (lane, connection) pool, in micros. */
  private readonly windows = new Map<string, number>();
  private readonly overdrawn = new Set<string>();
  private readonly pools = new Map<string, number>();
  private readonly lifetimes = new LifetimeTracker();
  private readonly loops = new LoopTracker();
  /** The audit log's own totals per lane, to hold the counters against. */
  private readonly totals = new Map<string, LaneCounters>();
  private same: { checked: number; problem: string | null } | null = null;
  private replays = 0;

  constructor(opts: CheckerOptions) {
    this.cards = opts.cards;
    this.validate = opts.validate;
  }

  /** Roughly what the checker holds in memory, bytes (sim/engine/engine-size.ts). */
  approxBytes(): number {
    const entries = requestCount(this.pending) + this.windows.size + this.overdrawn.size;
    return this.lifetimes.approxBytes() + this.loops.approxBytes() + entries * 120;
  }

  /**
   * Roughly what an engine checkpoint's copy of the checker adds, bytes: as `approxBytes`, but
   * the store lifetimes the checkpoints share are counted where they changed (lifetimes.ts).
   */
  checkpointBytes(): number {
    const entries = requestCount(this.pending) + this.windows.size + this.overdrawn.size;
    return this.lifetimes.checkpointBytes() + this.loops.approxBytes() + entries * 120;
  }

  /** A request frame the client received. */
  request(lane: string, connection: string, id: string | number, t: number, ctx: RequestContext) {
    this.requestArrived(lane, connection, idKey(id), t, ctx.silence, ctx.denialStyle);
  }

  /**
   * {@link request} as the guard calls it, for every request of a run: no context object; with
   * the limits and params its audit record is to be judged by (kept in its entry, {@link inFlight}).
   */
  requestArrived(
    lane: string,
    connection: string,
    id: IdKey,
    t: number,
    silence: boolean,
    denialStyle: DenialStyle | undefined,
    charge?: ChargeContext,
    params?: SamplingParams
  ): void {
    this.received++;
    const byId = requestsOf(this.pending, lane, connection);
    const held = byId.get(id);
    const before = held !== undefined && !held.framed ? held : undefined;
    if (before)
      this.t['one-frame'].add({
        lane,
        seq: null,
        request: `${connection}/${id}`,
        t,
        what: 'a second request with an id still in flight on its connection'
      });
    // A request taking the place of one still in flight keeps that one's place in the order.
    const order = before ? before.order : this.received;
    // Every field set, in one order: one shape for every entry.
    byId.set(id, {
      t,
      silence,
      seq: null,
      audited: false,
      tokensOut: 0,
      order,
      style: denialStyle && denialStyle !== 'lab' ? denialStyle : undefined,
      refusal: false,
      framed: false,
      charge,
      params
    });
  }

  /**
   * The entry of a request as last made by {@link requestArrived}, until its frame and record
   * have both come (or its record, when it came second): the guard reads the limits it arrived
   * under from an entry not yet audited.
   */
  inFlight(lane: string, connection: string, id: IdKey): InFlight | undefined {
    return this.pending.get(lane)?.get(connection)?.get(id);
  }

  /** A request `r` is about leaves the requests in flight. */
  private settle(byId: Map<IdKey, InFlight>, id: IdKey): void {
    byId.delete(id);
    if (++this.ended >= SWEEP_EVERY) {
      this.ended = 0;
      dropIdle(this.pending);
    }
  }

  /** An offender about the frame `frame` sent at `t` (its request's audit record: `seq`). */
  private aboutFrame(
    lane: string,
    seq: number | null,
    connection: string,
    frame: Frame,
    t: number,
    what: string
  ): Offender {
    return { lane, seq, request: `${connection}/${frame.id}`, t, what };
  }

  /** An offender about audit record `r`. */
  private about(lane: string, r: AuditRecord, what: string): Offender {
    return { lane, seq: r.seq, request: `${r.connection}/${r.requestId}`, t: r.t, what };
  }

  /** An audit record, with the limits in force when its cost was charged. */
  audit(r: AuditRecord, ctx: ChargeContext): void {
    this.audited(r, ctx, ctx.params, ctx.spentMicros);
  }

  /**
   * {@link audit} as the guard calls it, for every record of a run: the request's params and the
   * money spent beside the limits (which are the same object for many records), not in them.
   */
  audited(
    r: AuditRecord,
    ctx: ChargeContext,
    params: SamplingParams | undefined,
    spentMicros: number | undefined
  ): void {
    const id = idKey(r.requestId);
    this.auditedEntry(
      r,
      id,
      this.inFlight(r.lane ?? '', r.connection, id),
      ctx,
      params,
      spentMicros
    );
  }

  /**
   * {@link audited} with its request's entry found already (`p`: {@link inFlight} of its lane or
   * '', connection and id): the guard's, which reads the limits from it first.
   */
  auditedEntry(
    r: AuditRecord,
    id: IdKey,
    p: InFlight | undefined,
    ctx: ChargeContext,
    params: SamplingParams | undefined,
    spentMicros: number | undefined
  ): void {
    const lane = r.lane ?? '';
    const cost = toMicros(r.cost);
    this.tallyTotals(lane, r, cost);
    if (!p || p.framed) {
      // Answered already: its entry was kept for this record's limits only.
      if (p) this.pending.get(lane)!.get(r.connection)!.delete(id);
      this.t['one-frame'].add(this.about(lane, r, 'an audit record for no request in flight'));
    } else if (p.audited)
      this.t['one-frame'].add(this.about(lane, r, 'a second audit record for one request'));
    else {
      p.audited = true;
      p.seq = r.seq;
      p.tokensOut = r.tokensOut;
      if (r.outcome === 'denied' || r.outcome === 'budget_exceeded') p.refusal = true;
      if (r.silenced) {
        this.settle(this.pending.get(lane)!.get(r.connection)!, id);
        if (p.silence) this.silenced++;
        else this.t['one-frame'].add(this.about(lane, r, 'no frame, and silence is off'));
      }
    }
    this.checkConsent(r, lane, ctx.keepsApprovals === true);
    // Only a fresh exhausted-budget denial makes the claim checked (denial-truth.ts).
    if (ctx.budget && spentMicros !== undefined && r.reason === 'policy.budget_exhausted')
      checkExhaustedPremise(
        this.t['denials-true'],
        r,
        params,
        ctx.budget,
        spentMicros,
        this.cards,
        (what) => this.about(lane, r, what)
      );
    this.checkSpend(r, lane, cost, ctx);
    this.checkTokens(r, lane, cost);
    if (ctx.alert) {
      const inWindow = this.loops.count(lane, r, ctx.alert);
      if (isLoop(inWindow, ctx.alert)) {
        const l = this.t['loops-flagged'];
        l.checked++;
        if (!r.alert)
          l.add(
            this.about(
              lane,
              r,
              `${r.identity} presented ${inWindow} times within ${n(ctx.alert.windowMs)} ms, not flagged`
            )
          );
      }
    }
    if (r.replayed && (r.outcome === 'denied' || r.silenced)) {
      this.t['replays-no-model'].checked++;
      this.replays++;
      if (r.consentShown || r.tokensIn > 0 || r.tokensOut > 0 || cost > 0)
        this.t['replays-no-model'].add(
          this.about(
            lane,
            r,
            `a replayed denial ${r.consentShown ? 'asked the user' : `called the model (${r.tokensIn} in, ${r.tokensOut} out, ${r.cost})`}`
          )
        );
    }
  }

  /**
   * The one response frame the client sent for a request; `windows`: the host's rate and budget
   * windows for its server at `t`, when the frame makes a claim about one (see denial-truth.ts).
   */
  frame(lane: string, connection: string, frame: Frame, t: number, windows?: WindowsAt): void {
    const id = idKey(frame.id);
    const byId = this.pending.get(lane)?.get(connection);
    const held = byId?.get(id);
    const p = held !== undefined && !held.framed ? held : undefined;
    const seq = p?.seq ?? null;
    if (!p)
      this.t['one-frame'].add(
        this.aboutFrame(
          lane,
          seq,
          connection,
          frame,
          t,
          'a frame for no request in flight (a second frame?)'
        )
      );
    else if (p.audited) {
      this.settle(byId!, id);
      // A refusal sent as an error in a real client's style: no reason a server can branch on.
      if (p.style && p.refusal && 'error' in frame) {
        const f = this.foreign.get(lane) ?? { style: p.style, count: 0 };
        f.style = p.style;
        f.count++;
        this.foreign.set(lane, f);
      }
      this.answered++;
    } else {
      // No longer in flight; its record, when it comes, is still judged by the limits it arrived
      // under (and is then a record for no request in flight).
      p.framed = true;
      this.t['one-frame'].add(
        this.aboutFrame(lane, seq, connection, frame, t, 'a frame sent before its audit record')
      );
    }
    if (windows)
      checkDenialFrame(this.t['denials-true'], frame, t, windows, (what) =>
        this.aboutFrame(lane, seq, connection, frame, t, what)
      );
    if (this.validate) {
      this.t['frames-conform'].checked++;
      const problem = this.validate(frame);
      if (problem)
        this.t['frames-conform'].add(this.aboutFrame(lane, seq, connection, frame, t, problem));
    }
    if ('result' in frame && frame.result.content.text.length > 0) {
      this.t['replays-no-model'].checked++;
      if (!p || p.tokensOut === 0)
        this.t['replays-no-model'].add(
          this.aboutFrame(
            lane,
            seq,
            connection,
            frame,
            t,
            'a completion sent without a model call of its own'
          )
        );
    }
  }

  /** A change to a lane's decision store, at virtual time `t`. */
  /** A store change; `currentHash`: the server's policy hash now, when the caller knows it. */
  store(lane: string, t: number, e: StoreEvent, currentHash?: string): void {
    if (e.type === 'commit') {
      const v = this.t['verdicts-only'];
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
    if (e.type === 'opened') checkHandover(this.t['no-future-decisions'], lane, t, e.held);
    this.lifetimes.store(lane, t, e, currentHash);
  }

  /** Two runs of the same scenario and seed, digested: their bytes must be equal. */
  sameBytes(a: { frames: string; audit: string }, b: { frames: string; audit: string }): void {
    const problem =
      a.frames !== b.frames
        ? 'frames.jsonl differs between two runs'
        : a.audit !== b.audit
          ? 'audit.jsonl differs between two runs'
          : null;
    this.same = { checked: 2, problem };
  }

  private checkConsent(r: AuditRecord, lane: string, keepsApprovals: boolean): void {
    if (!r.consentShown) return;
    const c = this.t['one-consent'];
    c.checked++;
    const broken = this.lifetimes.dialog(lane, r, keepsApprovals);
    if (broken) c.add(this.about(lane, r, lifetimeBroken(broken)));
  }

  private checkSpend(r: AuditRecord, lane: string, cost: number, ctx: ChargeContext): void {
    const o = this.t['no-overdraw'];
    if (cost > 0 && ctx.budget && ctx.budget.currency === r.currency) {
      const { windowMs, micros } = ctx.budget;
      const start = r.t - (((r.t % windowMs) + windowMs) % windowMs);
      const key = windowKey(lane, r.server, windowMs, start);
      if (!this.windows.has(key)) o.checked++;
      const spent = (this.windows.get(key) ?? 0) + cost;
      this.windows.set(key, spent);
      if (spent > micros && !this.overdrawn.has(key)) {
        this.overdrawn.add(key);
        o.add(
          this.about(
            lane,
            r,
            `${r.server}'s window from ${new Date(start).toISOString()} spent ${spent} µ$ of ${micros} µ$`
          )
        );
      }
    }
    if (cost > 0 && ctx.pool && ctx.pool.currency === r.currency) {
      const key = `${lane}\u0000${r.connection}`;
      if (!this.pools.has(key)) o.checked++;
      const spent = (this.pools.get(key) ?? 0) + cost;
      this.pools.set(key, spent);
      if (spent > ctx.pool.micros && spent - cost <= ctx.pool.micros)
        o.add(
          this.about(
            lane,
            r,
            `${r.connection}'s session pool spent ${spent} µ$ of ${ctx.pool.micros} µ$`
          )
        );
    }
    const d = r.budgetDecision;
    const l = this.t['call-within-limit'];
    if (d?.actualCost && d.actualCost.currency === d.limitApplied.currency) {
      l.checked++;
      const actual = toMicros(d.actualCost.amount);
      const limit = toMicros(d.limitApplied.amount);
      if (actual > limit)
        l.add(
          this.about(
            lane,
            r,
            `cost ${d.actualCost.amount} against a limit of ${d.limitApplied.amount}`
          )
        );
    }
  }

  private checkTokens(r: AuditRecord, lane: string, cost: number): void {
    if (r.tokensOut <= 0) return;
    const t = this.t['tokens-paid'];
    t.checked++;
    const card = r.model ? this.cards[r.model] : undefined;
    if (!card) {
      t.add(
        this.about(lane, r, `${r.tokensOut} tokens out from '${r.model}', which has no rate card`)
      );
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
      t.add(
        this.about(
          lane,
          r,
          `${r.tokensIn} in + ${r.tokensOut} out charged ${r.cost}, at least ${least} µ$`
        )
      );
  }

  private tallyTotals(lane: string, r: AuditRecord, cost: number): void {
    let c = this.totals.get(lane);
    if (!c) {
      c = { frames: {}, silenced: 0 } as LaneCounters;
      c.consentPrompts = c.spendMicros = c.tokensIn = c.tokensOut = c.replays = c.fresh = 0;
      c.consentSkipped = c.unaskedSpendMicros = 0;
      this.totals.set(lane, c);
    }
    if (r.silenced) c.silenced++;
    else c.frames[r.outcome] = (c.frames[r.outcome] ?? 0) + 1;
    if (r.consentShown) c.consentPrompts++;
    if (r.consentSkipped) {
      c.consentSkipped++;
      c.unaskedSpendMicros += cost;
    }
    c.spendMicros += cost;
    c.tokensIn += r.tokensIn;
    c.tokensOut += r.tokensOut;
    if (r.replayed) c.replays++;
    else c.fresh++;
  }

  /**
   * The guarantees as they stand at virtual time `now`: see {@link summarise}.
   */
  results(
    now: number,
    counters: Record<string, LaneCounters>,
    stuckAfterMs: number
  ): InvariantResult[] {
    return summarise(
      {
        tallies: this.t,
        pending: this.pending,
        received: this.received,
        answered: this.answered,
        silenced: this.silenced,
        foreign: this.foreign,
        replays: this.replays,
        same: this.same,
        totals: this.totals,
        validating: this.validate !== undefined
      },
      now,
      counters,
      stuckAfterMs
    );
  }
}

// A copy goes on checking exactly as the original would: its own tallies, requests in flight,
// spend, trackers and totals (its members are TypeScript private, not #private, for the generic
// copier). The rate cards and the frame validator are shared (immutable), and so are the limits
// and params its requests in flight arrived with.
copyable(InvariantChecker, {
  name: 'invariants.InvariantChecker',
  fields: {
    cards: 'shared',
    validate: 'shared',
    pending: { fresh: (c: InvariantChecker) => copyInFlight(c['pending']) }
  },
  blank: () => new InvariantChecker({ cards: {} })
});
