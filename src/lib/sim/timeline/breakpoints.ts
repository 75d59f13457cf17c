/**
 * Breakpoints (issue #10): pause a run when a condition first holds, and say what the decision
 * stood on.
 *
 * Conditions, one a string (the CLI's `--break`, the page's breakpoint list):
 *
 *   alert                  a presentation trips the retry-loop alert
 *   reason:CODE            a decision with that reason (reason:user.denied)
 *   outcome:OUTCOME        a decision with that outcome (outcome:budget_exceeded)
 *   denial[:SERVER]        a server's first denial (each server's, or that server's)
 *   spend>AMOUNT           a lane's spend crosses AMOUNT, in the policy's currency (spend>0.50)
 *   consent                a consent dialog opens (the request waits on the user)
 *   invariant[:ID]         a guarantee breaks (any, or that one: invariant:no-overdraw)
 *
 * Any of them may end in `@A` or `@B` to watch one lane only. Each condition fires once (for
 * `denial`, once per server): resuming runs on to the next condition that holds.
 *
 * The facts are read at the decision itself — the request's params and identity, its path through
 * the machine (the same `path` the statechart's edge counts are made from), the stored decision
 * that answered it, the policy block that applied, the budget and rate windows at that instant —
 * and the run halts after the event that made the decision (engine `halt`). `consent` holds
 * earlier, as the dialog opens: the request is mid-flight, so its facts have no outcome, frame or
 * audit record yet — the params, identity and path so far, and the windows as they stand.
 */
import { quote } from '../../machine/excerpt';
import type { AuthOutput, IncomingRequest } from '../../machine/authorize';
import { BREAK_SYNTAX } from './break-syntax';
import { fromMicros, toMicros } from '../../machine/money';
import { effectiveBlock } from '../../machine/policy/effective';
import type { PolicyBlock } from '../../machine/policy';
import type {
  AuditRecord,
  Frame,
  Outcome,
  SamplingParams,
  StoredDecision
} from '../../machine/types';
import { OUTCOMES } from '../../machine/outcome-list';
import { REASONS } from '../../machine/reasons';
import type { AskedFacts, Simulation, SimulationOptions } from '../engine/engine';
import type { RunGuard } from '../checks/guard';
import { INVARIANTS, type InvariantId, type Offender } from '../checks/invariants';
import type { LaneId } from '../../machine/vocabulary';

export type BreakCondition = { text: string; lane: LaneId | null } & (
  | { kind: 'alert' }
  | { kind: 'reason'; reason: string }
  | { kind: 'outcome'; outcome: Outcome }
  | { kind: 'denial'; server: string | null }
  | { kind: 'spend'; micros: number }
  | { kind: 'consent' }
  | { kind: 'invariant'; id: InvariantId | null }
);

export { BREAK_SYNTAX };

export type BreakParse = { ok: true; condition: BreakCondition } | { ok: false; error: string };

/** Parse one condition (see the module comment); an error says what was wrong and the syntax. */
export function parseBreak(text: string): BreakParse {
  const fail = (why: string): BreakParse => ({
    ok: false,
    error: `breakpoint ${quote(text)}: ${why} (conditions: ${BREAK_SYNTAX})`
  });
  let body = text.trim();
  let lane: LaneId | null = null;
  const at = /@([^@]*)$/.exec(body);
  if (at) {
    if (at[1] !== 'A' && at[1] !== 'B') return fail(`${quote('@' + at[1])} is not a lane (A or B)`);
    lane = at[1];
    body = body.slice(0, at.index);
  }
  const spend = /^spend\s*>\s*(.*)$/.exec(body);
  if (spend) {
    const amount = spend[1]!.trim();
    if (!/^\d{1,9}(\.\d{1,6})?$/.test(amount))
      return fail(`${quote(amount)} is not an amount such as 0.50`);
    return { ok: true, condition: { text, lane, kind: 'spend', micros: toMicros(amount) } };
  }
  const colon = body.indexOf(':');
  const kind = colon === -1 ? body : body.slice(0, colon);
  const arg = colon === -1 ? null : body.slice(colon + 1);
  const none = (k: string) => (arg === null ? null : fail(`${quote(k)} takes no argument`));
  switch (kind) {
    case 'alert':
    case 'consent':
      return none(kind) ?? { ok: true, condition: { text, lane, kind } };
    case 'reason': {
      if (!arg || !(REASONS as readonly string[]).includes(arg))
        return fail(`reason must be one of ${REASONS.join(', ')}`);
      return { ok: true, condition: { text, lane, kind, reason: arg } };
    }
    case 'outcome': {
      const outcome = OUTCOMES.find((o) => o === arg);
      if (!outcome) return fail(`outcome must be one of ${OUTCOMES.join(', ')}`);
      return { ok: true, condition: { text, lane, kind, outcome } };
    }
    case 'denial':
      if (arg === '') return fail('give a server name after denial:, or nothing');
      return { ok: true, condition: { text, lane, kind, server: arg } };
    case 'invariant': {
      if (arg === null) return { ok: true, condition: { text, lane, kind, id: null } };
      if (!Object.hasOwn(INVARIANTS, arg))
        return fail(`invariant must be one of ${Object.keys(INVARIANTS).join(', ')}`);
      return { ok: true, condition: { text, lane, kind, id: arg as InvariantId } };
    }
    default:
      return fail(`unknown condition ${quote(kind)}`);
  }
}

/** The stored decision behind a request: the one that answered it, or the one it wrote. */
export interface StoredFacts {
  /** True when this request was answered from the store (a replay). */
  answered: boolean;
  verdict: StoredDecision['verdict'];
  reason: string | null;
  decidedAt: string;
  /** Null: it does not expire (a session-long decision). */
  expiresAt: string | null;
  ttlLeftMs: number | null;
  represented: number;
}

export interface WindowFacts {
  windowMs: number;
  resetsAt: string;
}

/** What a paused run shows: the decision and what it stood on. */
export interface BreakFacts {
  condition: string;
  lane: LaneId;
  t: number;
  time: string;
  /** Clock events run, with `t` the run's exact position (a restore can return here). */
  events: number;
  request: {
    id: string | number;
    server: string;
    connection: string;
    receivedAt: string;
    params: SamplingParams;
  };
  identity: string;
  /** `decided`: the request has its answer; `consent`: its dialog is open, waiting on the user. */
  phase: 'decided' | 'consent';
  /** Null while the request waits on the user (the `consent` phase). */
  outcome: Outcome | null;
  reason: string | null;
  /** The states the request went through, in order (so far, in the `consent` phase). */
  path: string[];
  /** The same as statechart edges, "from→to" (the labels whose counts the statechart shows). */
  edges: string[];
  frame: Frame | null;
  /** Null while the request waits on the user. */
  audit: AuditRecord | null;
  stored: StoredFacts | null;
  policyBlock: PolicyBlock;
  budgetWindow: (WindowFacts & { amount: string; currency: string; spent: string }) | null;
  rateWindow: (WindowFacts & { requests: number; counted: number }) | null;
  /** The lane's spend so far. */
  laneSpend: string;
  /** For an `invariant` condition: the guarantee that broke and its first offender. */
  invariant?: { id: InvariantId; summary: string; offender: Offender | null };
}

/** Whether a condition holds; for `invariant`, the guarantee that broke. */
type Holds = boolean | { id: InvariantId; summary: string; offender: Offender | null };

const iso = (t: number) => new Date(t).toISOString();

/**
 * Watches a run's decisions for its conditions; at the first that holds, records the facts and
 * halts the engine. Wrap the simulation's options with `options()`, then `attach` the engine.
 */
export class BreakpointWatcher {
  hit: BreakFacts | null = null;
  readonly #fired = new Set<BreakCondition>();
  readonly #denied = new Map<BreakCondition, Set<string>>();
  #sim: Simulation | null = null;
  #awaiting: { lane: LaneId; request: IncomingRequest; out: AuthOutput } | null = null;

  constructor(
    readonly conditions: readonly BreakCondition[],
    readonly guard: RunGuard | null = null
  ) {}

  options(next: SimulationOptions = {}): SimulationOptions {
    return {
      ...next,
      onDecision: (lane, request, out) => {
        next.onDecision?.(lane, request, out);
        // A guarantee is judged on the frame too, which leaves after the decision: wait for it.
        // None to watch (live play, mostly): no record per request (its frame follows at once, in
        // the same step, so no condition can be set in between).
        if (out.frame && this.conditions.length > 0) this.#awaiting = { lane, request, out };
        this.#decided(lane, request, out, !out.frame);
      },
      onFrame: (l) => {
        next.onFrame?.(l);
        const w = this.#awaiting;
        if (!w || l.direction !== 'out' || l.frame !== w.out.frame) return;
        this.#awaiting = null;
        this.#decided(w.lane, w.request, w.out, true);
      },
      onConsentAsked: (lane, request, asked) => {
        next.onConsentAsked?.(lane, request, asked);
        this.#asked(lane, request, asked);
      }
    };
  }

  /** A dialog opened: `consent` holds now, with the request waiting on the user. */
  #asked(lane: LaneId, request: IncomingRequest, asked: AskedFacts): void {
    const sim = this.#sim;
    if (!sim || this.hit) return;
    for (const c of this.conditions) {
      if (c.kind !== 'consent' || this.#fired.has(c) || (c.lane && c.lane !== lane)) continue;
      this.#fired.add(c);
      this.hit = this.#facts(sim, c, lane, request, asked.identity, asked.path, null, true);
      sim.halt();
      return;
    }
  }

  attach(sim: Simulation): Simulation {
    this.#sim = sim;
    return sim;
  }

  /** Go on from a pause: the condition that fired stays spent; the others keep watching. */
  resume(): void {
    this.hit = null;
  }

  /** `judged`: the request's frame has been sent (or there is none): guarantees may be read. */
  #decided(lane: LaneId, request: IncomingRequest, out: AuthOutput, judged: boolean): void {
    const sim = this.#sim;
    if (!sim || this.hit || this.conditions.length === 0) return;
    for (const c of this.conditions) {
      if (c.kind === 'consent' || this.#fired.has(c) || (c.lane && c.lane !== lane)) continue;
      // Guarantees once the frame is out; everything else at the decision itself.
      const now = c.kind === 'invariant' ? judged : !judged || !out.frame;
      if (!now) continue;
      const holds = this.#holds(c, lane, out);
      if (!holds) continue;
      if (c.kind !== 'denial' || c.server !== null) this.#fired.add(c);
      this.hit = this.#facts(sim, c, lane, request, out.audit.identity, out.path, out, holds);
      sim.halt();
      return;
    }
  }

  /** Whether `c` holds for this decision; for `invariant`, the guarantee that broke. */
  #holds(c: BreakCondition, lane: LaneId, out: AuthOutput): Holds {
    const a = out.audit;
    switch (c.kind) {
      case 'alert':
        return a.alert;
      case 'reason':
        return a.reason === c.reason;
      case 'outcome':
        return a.outcome === c.outcome;
      case 'consent':
        return false; // held as the dialog opens (#asked)
      case 'denial': {
        if (a.outcome !== 'denied' || (c.server !== null && a.server !== c.server)) return false;
        let seen = this.#denied.get(c);
        if (!seen) this.#denied.set(c, (seen = new Set()));
        const key = `${lane}\u0000${a.server}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      }
      case 'spend': {
        const spent = this.#sim!.lanes[lane].metrics.counters.spendMicros;
        return spent > c.micros && spent - Math.max(0, toMicros(a.cost)) <= c.micros;
      }
      case 'invariant': {
        if (!this.guard) return false;
        const broken = this.guard
          .results()
          .find((r) => r.status === 'broken' && (c.id === null || r.id === c.id));
        if (!broken) return false;
        return { id: broken.id, summary: broken.summary, offender: broken.offenders[0] ?? null };
      }
    }
  }

  #facts(
    sim: Simulation,
    c: BreakCondition,
    lane: LaneId,
    request: IncomingRequest,
    identity: string,
    path: readonly string[],
    out: AuthOutput | null,
    holds: Holds
  ): BreakFacts {
    const host = sim.lanes[lane].host;
    const now = sim.now;
    const a = out?.audit ?? null;
    const block = effectiveBlock(host.policy, request.server);
    const volume = host.volumeAt(request.server, now);
    const facts: BreakFacts = {
      condition: c.text,
      lane,
      t: now,
      time: iso(now),
      events: sim.events,
      request: {
        id: request.id,
        server: request.server,
        connection: request.connection,
        receivedAt: iso(request.receivedAt),
        params: request.params
      },
      identity,
      phase: out ? 'decided' : 'consent',
      outcome: a?.outcome ?? null,
      reason: a?.reason ?? null,
      path: [...path],
      edges: path.slice(1).map((s, i) => `${path[i]}→${s}`),
      frame: out?.frame ?? null,
      audit: a,
      stored: storedFacts(sim, lane, request, identity, a?.replayed ?? false, now),
      policyBlock: block,
      budgetWindow: block.budget
        ? {
            amount: block.budget.amount,
            currency: block.budget.currency,
            windowMs: block.budget.windowMs,
            spent: fromMicros(volume.budgetSpentMicros, 6),
            resetsAt: iso(volume.budgetWindowResetsAt)
          }
        : null,
      rateWindow: block.rateLimit
        ? {
            requests: block.rateLimit.requests,
            windowMs: block.rateLimit.windowMs,
            counted: volume.rateCount,
            resetsAt: iso(volume.rateWindowResetsAt)
          }
        : null,
      laneSpend: fromMicros(sim.lanes[lane].metrics.counters.spendMicros, 6)
    };
    if (typeof holds === 'object') facts.invariant = holds;
    return facts;
  }
}

function storedFacts(
  sim: Simulation,
  lane: LaneId,
  request: IncomingRequest,
  identity: string,
  replayed: boolean,
  now: number
): StoredFacts | null {
  const host = sim.lanes[lane].host;
  const entries = host.store.entries();
  if (!Array.isArray(entries)) return null; // an asynchronous store: not readable mid-event
  const hash = host.policyHashFor(request.server);
  const d = entries.find(
    (e) => e.server === request.server && e.identity === identity && e.policyHash === hash
  );
  if (!d) return null;
  return {
    answered: replayed,
    verdict: d.verdict,
    reason: d.reason,
    decidedAt: iso(d.decidedAt),
    expiresAt: d.expiresAt === null ? null : iso(d.expiresAt),
    ttlLeftMs: d.expiresAt === null ? null : Math.max(0, d.expiresAt - now),
    represented: d.represented
  };
}
