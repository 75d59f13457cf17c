/**
 * The invariant checker on hand-made streams: each guarantee holds on a clean run and breaks,
 * naming the request, on the run that violates it.
 */
import { describe, expect, it } from 'vitest';
import { record, storedDecision, T0 } from './records.testing';
import type { AuditRecord, Frame } from '../../../machine/types';
import { sdkFrameProblem } from '../conformance';
import {
  brokenLine,
  InvariantChecker,
  rowsBehind,
  type ChargeContext,
  type InvariantId,
  type InvariantResult
} from './index';
import { emptyCounters, type LaneCounters } from '../../engine/metrics';
import { DEFAULT_PROVIDER, cardsByModel } from '../../actors/provider';

const NO_LIMITS: ChargeContext = { budget: null, pool: null };
const cards = cardsByModel(DEFAULT_PROVIDER.cards);

const denial = (id: number): Frame => ({
  jsonrpc: '2.0',
  id,
  error: {
    code: -32003,
    message: 'Sampling denied',
    data: { reason: 'user.denied', server: 's', retryable: false }
  }
});
const completion = (id: number, text = 'hello'): Frame => ({
  jsonrpc: '2.0',
  id,
  result: {
    role: 'assistant',
    content: { type: 'text', text },
    model: 'example-model-v2',
    stopReason: 'endTurn'
  }
});

const decision = storedDecision;

/** A request answered: in-frame, audit record, then (unless silenced) its frame. */
function answer(
  c: InvariantChecker,
  r: AuditRecord,
  frame: Frame | null,
  opts: { silence?: boolean; charge?: ChargeContext } = {}
) {
  c.request(r.lane!, r.connection, r.requestId, r.t - r.durationMs, {
    silence: opts.silence ?? false
  });
  c.audit(r, opts.charge ?? NO_LIMITS);
  if (frame) c.frame(r.lane!, r.connection, frame, r.t);
}

/** Counters that agree with the records fed (so totals-match holds unless a test says not). */
function countersOf(records: AuditRecord[]): Record<string, LaneCounters> {
  const c = emptyCounters();
  for (const r of records) {
    if (r.silenced) c.silenced++;
    else c.frames[r.outcome]++;
    if (r.consentShown) c.consentPrompts++;
    if (r.consentSkipped) {
      c.consentSkipped++;
      c.unaskedSpendMicros += Math.round(Number(r.cost) * 1e6);
    }
    c.spendMicros += Math.round(Number(r.cost) * 1e6);
    c.tokensIn += r.tokensIn;
    c.tokensOut += r.tokensOut;
    if (r.replayed) c.replays++;
    else c.fresh++;
  }
  return { A: c };
}

function results(c: InvariantChecker, records: AuditRecord[], now = T0 + 1_000) {
  return c.results(now, countersOf(records), 180_000);
}
const of = (rs: InvariantResult[], id: InvariantId) => rs.find((r) => r.id === id)!;

describe('one-frame', () => {
  it('holds when every request gets one frame, and counts them', () => {
    const c = new InvariantChecker({ cards });
    const rs = [1, 2, 3].map((id) => record({ requestId: id }));
    for (const r of rs) answer(c, r, denial(r.requestId as number));
    const x = of(results(c, rs), 'one-frame');
    expect(x.status).toBe('held');
    expect(x.summary).toBe('3 of 3 requests answered');
  });

  it('breaks on a second frame, a frame without a record, and a request left unanswered', () => {
    const c = new InvariantChecker({ cards });
    const r = record({ requestId: 1 });
    answer(c, r, denial(1));
    c.frame('A', 's#1', denial(1), T0); // a second frame
    c.request('A', 's#1', 2, T0, { silence: false });
    c.frame('A', 's#1', denial(2), T0); // no audit record first
    c.request('A', 's#1', 3, T0, { silence: false }); // never answered
    const x = of(c.results(T0 + 600_000, countersOf([r]), 180_000), 'one-frame');
    expect(x.status).toBe('broken');
    expect(x.violations).toBe(3);
    expect(x.offenders.map((o) => [o.request, o.what])).toEqual([
      ['s#1/1', 'a frame for no request in flight (a second frame?)'],
      ['s#1/2', 'a frame sent before its audit record'],
      ['s#1/3', 'no answer after 600,000 ms']
    ]);
  });

  it('a request answered before its record is in flight no more, and its late record is named', () => {
    const c = new InvariantChecker({ cards });
    const limits: ChargeContext = { budget: null, pool: null };
    c.requestArrived('A', 's#1', 1, T0, false, 'lab', limits, undefined);
    c.frame('A', 's#1', denial(1), T0); // no audit record first
    const before = of(c.results(T0 + 10_000, {}, 180_000), 'one-frame');
    expect(before.summary).toBe('1 request without exactly one frame');
    // The guard still reads the limits the request arrived under, for the record to come.
    expect(c.inFlight('A', 's#1', 1)?.charge).toBe(limits);
    const r = record({ requestId: 1 });
    c.audit(r, NO_LIMITS);
    expect(c.inFlight('A', 's#1', 1)).toBeUndefined();
    const x = of(c.results(T0 + 600_000, countersOf([r]), 180_000), 'one-frame');
    expect(x.offenders.map((o) => [o.request, o.what])).toEqual([
      ['s#1/1', 'a frame sent before its audit record'],
      ['s#1/1', 'an audit record for no request in flight']
    ]);
  });

  it('a request still within its timeouts is in flight, not lost', () => {
    const c = new InvariantChecker({ cards });
    c.request('A', 's#1', 1, T0, { silence: false });
    const x = of(c.results(T0 + 10_000, {}, 180_000), 'one-frame');
    expect(x.status).toBe('held');
    expect(x.summary).toBe('0 of 0 requests answered (1 in flight)');
  });

  it('silence the learner switched on is waived and counted; silence while off is broken', () => {
    const on = new InvariantChecker({ cards });
    const rs = [1, 2].map((id) => record({ requestId: id, silenced: true }));
    for (const r of rs) answer(on, r, null, { silence: true });
    const waived = of(results(on, rs), 'one-frame');
    expect(waived.status).toBe('waived');
    expect(waived.summary).toBe('2 requests got no frame — silence is on');
    expect(rowsBehind('one-frame', 'waived', rs[0]!)).toBe(true);
    expect(rowsBehind('one-frame', 'waived', record())).toBe(false);

    const off = new InvariantChecker({ cards });
    answer(off, rs[0]!, null, { silence: false });
    const broken = of(results(off, rs.slice(0, 1)), 'one-frame');
    expect(broken.status).toBe('broken');
    expect(broken.offenders[0]).toMatchObject({
      seq: rs[0]!.seq,
      what: 'no frame, and silence is off'
    });
  });
});

describe('one-consent', () => {
  const dialog = (over: Partial<AuditRecord>) =>
    record({ consentShown: true, consent: 'denied', durationMs: 3_000, ...over });

  it('a retry that arrives while the first dialog is open gets a second dialog: broken', () => {
    const c = new InvariantChecker({ cards });
    c.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    const first = dialog({ requestId: 1, t: T0 + 200_000, durationMs: 200_000 });
    const retry = dialog({ requestId: 2, t: T0 + 205_000, durationMs: 200_000 - 5_000 });
    answer(c, retry, denial(2));
    answer(c, first, denial(1));
    const x = of(results(c, [first, retry]), 'one-consent');
    expect(x.status).toBe('broken');
    expect(x.offenders[0]!.what).toMatch(/second consent dialog while dialog/);
  });

  it('a dialog while a stored decision is live is broken; after it expires, asking again is fine', () => {
    const c = new InvariantChecker({ cards });
    c.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    const first = dialog({ requestId: 1, t: T0 + 3_000 });
    c.store('A', T0 + 3_000, {
      type: 'commit',
      scope: 'durable',
      connection: 's#1',
      decision: decision({ expiresAt: T0 + 63_000 })
    });
    answer(c, first, denial(1));
    const early = dialog({ requestId: 2, t: T0 + 30_000 });
    answer(c, early, denial(2));
    const late = dialog({ requestId: 3, t: T0 + 70_000 });
    answer(c, late, denial(3));
    const x = of(results(c, [first, early, late]), 'one-consent');
    expect(x.violations).toBe(1);
    expect(x.offenders[0]!.seq).toBe(early.seq);
    expect(x.summary).toBe('1 consent dialog repeated within a store lifetime');
  });

  it('a reconnect (connection scope), a policy edit or a new store starts a new lifetime', () => {
    const c = new InvariantChecker({ cards });
    c.store('A', T0, { type: 'opened', scope: 'connection', held: [] });
    const commit = (t: number, connection: string) =>
      c.store('A', t, { type: 'commit', scope: 'connection', connection, decision: decision() });
    const a = dialog({ requestId: 1, t: T0 + 3_000 });
    commit(T0 + 3_000, 's#1');
    answer(c, a, denial(1));
    const b = dialog({ requestId: 1, connection: 's#2', t: T0 + 10_000 });
    commit(T0 + 10_000, 's#2');
    answer(c, b, denial(1));
    c.store('A', T0 + 20_000, { type: 'invalidate', server: 's' });
    const d = dialog({ requestId: 2, connection: 's#2', t: T0 + 30_000 });
    answer(c, d, denial(2));
    c.store('A', T0 + 40_000, { type: 'opened', scope: 'durable', held: [] });
    const e = dialog({ requestId: 3, connection: 's#2', t: T0 + 50_000 });
    answer(c, e, denial(3));
    const x = of(results(c, [a, b, d, e]), 'one-consent');
    expect(x.status).toBe('held');
    expect(x.summary).toBe('4 consent dialogs, none repeated');
  });
});

describe('one-consent across a policy edit', () => {
  it('a decision committed under the old policy after an edit starts no lifetime', () => {
    const c = new InvariantChecker({ cards });
    c.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    const commit = (t: number, policyHash: string) =>
      c.store('A', t, {
        type: 'commit',
        scope: 'durable',
        connection: 's#1',
        decision: decision({ policyHash })
      });
    const dialog = (id: number, t: number) =>
      record({ requestId: id, t, consentShown: true, consent: 'denied', durationMs: 3_000 });
    commit(T0 + 1_000, 'old');
    c.store('A', T0 + 2_000, { type: 'invalidate', server: 's' });
    // Asked under the old policy, answered after the edit: stale in the store, so no lifetime.
    const straddling = dialog(1, T0 + 4_000);
    commit(T0 + 4_000, 'old');
    answer(c, straddling, denial(1));
    const next = dialog(2, T0 + 10_000);
    commit(T0 + 10_000, 'new');
    answer(c, next, denial(2));
    const again = dialog(3, T0 + 20_000);
    answer(c, again, denial(3));
    const x = of(results(c, [straddling, next, again]), 'one-consent');
    expect(x.violations).toBe(1);
    expect(x.offenders[0]!.seq).toBe(again.seq);
  });
});

describe('one-consent: a dialog open across an edit', () => {
  it('ends its lifetime at the edit, though its record arrives after (found by the fuzz test)', () => {
    const c = new InvariantChecker({ cards });
    c.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    const dialog = (id: number, t: number, durationMs: number) =>
      record({ requestId: id, t, consentShown: true, consent: 'timeout', durationMs });
    c.store('A', T0 + 1, { type: 'invalidate', server: 's' });
    // Asked before the edit, timed out a minute later; a retry after the edit asked afresh.
    const after = dialog(2, T0 + 2_000, 1_700);
    answer(c, after, denial(2));
    const before = dialog(1, T0 + 60_000, 60_000);
    answer(c, before, denial(1));
    expect(of(results(c, [after, before]), 'one-consent').status).toBe('held');
    // Without the edit, the same two dialogs are a repeat.
    const d = new InvariantChecker({ cards });
    d.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    answer(d, after, denial(2));
    answer(d, before, denial(1));
    expect(of(results(d, [after, before]), 'one-consent').violations).toBe(1);
  });
});

describe('money', () => {
  const budget: ChargeContext = {
    budget: { micros: 30_000, windowMs: 1_800_000, currency: 'USD' },
    pool: null
  };
  const call = (over: Partial<AuditRecord>) =>
    record({
      outcome: 'allowed',
      reason: null,
      model: 'example-model-v2',
      tokensIn: 100,
      tokensOut: 1_000,
      cost: '0.015300',
      ...over
    });

  it('a window overdrawn is broken, with the server and the window; the next window starts at zero', () => {
    const c = new InvariantChecker({ cards });
    const rs = [
      call({ requestId: 1, t: T0 + 1_000 }),
      call({ requestId: 2, t: T0 + 2_000 }),
      call({ requestId: 3, t: T0 + 1_800_000 })
    ];
    for (const r of rs) answer(c, r, completion(r.requestId as number), { charge: budget });
    const x = of(results(c, rs), 'no-overdraw');
    expect(x.status).toBe('broken');
    expect(x.violations).toBe(1);
    expect(x.offenders[0]).toMatchObject({ seq: rs[1]!.seq, request: 's#1/2' });
    expect(x.offenders[0]!.what).toBe(
      "s's window from 2026-03-10T09:00:00.000Z spent 30600 µ$ of 30000 µ$"
    );
    expect(brokenLine(results(c, rs))).toBe(
      "invariant no-overdraw broken: s's window from 2026-03-10T09:00:00.000Z spent 30600 µ$ of 30000 µ$ (lane A, request s#1/2, audit seq " +
        rs[1]!.seq +
        ')'
    );
  });

  it('tokens streamed and not charged are broken (the deadline case)', () => {
    const c = new InvariantChecker({ cards });
    const paid = call({ requestId: 1 });
    const free = call({
      requestId: 2,
      outcome: 'denied',
      reason: 'policy.deadline',
      cost: '0.0000',
      tokensOut: 750
    });
    answer(c, paid, completion(1));
    answer(c, free, denial(2));
    const x = of(results(c, [paid, free]), 'tokens-paid');
    expect(x.status).toBe('broken');
    expect(x.summary).toBe('1 of 2 calls that generated tokens paid for them');
    expect(x.offenders[0]!.seq).toBe(free.seq);
  });

  it('a call above its limitApplied is broken', () => {
    const c = new InvariantChecker({ cards });
    const d = {
      estimatedCost: { amount: '0.0100', currency: 'USD' },
      limitApplied: { amount: '0.0140', currency: 'USD' },
      limitSource: 'host_policy' as const,
      meterBasis: 'm',
      estimatedTokens: { input: 1, output: 1 }
    };
    const ok = call({
      requestId: 1,
      budgetDecision: { ...d, actualCost: { amount: '0.0140', currency: 'USD' } }
    });
    const over = call({
      requestId: 2,
      budgetDecision: { ...d, actualCost: { amount: '0.0141', currency: 'USD' } }
    });
    answer(c, ok, completion(1));
    answer(c, over, completion(2));
    const x = of(results(c, [ok, over]), 'call-within-limit');
    expect(x.violations).toBe(1);
    expect(x.offenders[0]!.what).toBe('cost 0.0141 against a limit of 0.0140');
  });
});

describe('loops-flagged', () => {
  const alert = { threshold: 2, windowMs: 10_000 };
  const at = (id: number, t: number, flagged: boolean) =>
    record({ requestId: id, t: T0 + t, identity: 's:loop', alert: flagged });

  it('the presentation that reaches the threshold within the window must be flagged', () => {
    const c = new InvariantChecker({ cards });
    const rs = [at(1, 0, false), at(2, 4_000, false), at(3, 8_000, false), at(4, 30_000, false)];
    for (const r of rs)
      answer(c, r, denial(r.requestId as number), { charge: { ...NO_LIMITS, alert } });
    const x = of(results(c, rs), 'loops-flagged');
    expect(x.status).toBe('broken');
    expect(x.summary).toBe('0 of 1 presentations in a retry loop flagged');
    expect(x.offenders[0]).toMatchObject({
      seq: rs[2]!.seq,
      what: 's:loop presented 3 times within 10,000 ms, not flagged'
    });
  });

  it('holds when the loop is flagged, and presentations spread wider than the window are no loop', () => {
    const c = new InvariantChecker({ cards });
    const rs = [at(1, 0, false), at(2, 4_000, false), at(3, 8_000, true), at(4, 20_000, false)];
    for (const r of rs)
      answer(c, r, denial(r.requestId as number), { charge: { ...NO_LIMITS, alert } });
    const x = of(results(c, rs), 'loops-flagged');
    expect(x.status).toBe('held');
    expect(x.summary).toBe('1 of 1 presentations in a retry loop flagged');
  });
});

describe('replays, the store, conformance and the counters', () => {
  it('a replayed denial that reached the model, or a completion with no call of its own, is broken', () => {
    const c = new InvariantChecker({ cards });
    const replay = record({
      requestId: 1,
      replayed: true,
      tokensIn: 10,
      tokensOut: 5,
      model: 'example-model-v2',
      cost: '0.000200'
    });
    const canned = record({ requestId: 2, outcome: 'allowed', reason: null });
    answer(c, replay, denial(1));
    answer(c, canned, completion(2));
    const x = of(results(c, [replay, canned]), 'replays-no-model');
    expect(x.violations).toBe(2);
    expect(x.offenders.map((o) => o.what)).toEqual([
      'a replayed denial called the model (10 in, 5 out, 0.000200)',
      'a completion sent without a model call of its own'
    ]);
  });

  it('a stored decision carrying content is broken', () => {
    const c = new InvariantChecker({ cards });
    c.store('A', T0, { type: 'commit', scope: 'durable', connection: 's#1', decision: decision() });
    const leaky = { ...decision({ verdict: 'allowed', reason: null }), text: 'the completion' };
    c.store('A', T0, { type: 'commit', scope: 'durable', connection: 's#1', decision: leaky });
    const x = of(results(c, []), 'verdicts-only');
    expect(x.summary).toBe('1 of 2 stored decisions hold verdicts only');
    expect(x.offenders[0]!.what).toBe("the decision for s:abc holds 'text' besides the verdict");
  });

  it('a store handed over holding decisions from after the clock breaks no-future-decisions', () => {
    const c = new InvariantChecker({ cards });
    // A run with nothing handed over does not list it.
    c.store('B', T0, { type: 'opened', scope: 'durable', held: [] });
    expect(results(c, []).some((r) => r.id === 'no-future-decisions')).toBe(false);
    // A reload's namespace at t: its decisions of t and before are the run's own.
    const t = T0 + 60_000;
    c.store('B', t, {
      type: 'opened',
      scope: 'durable',
      held: [decision({ decidedAt: T0 }), decision({ identity: 's:def', decidedAt: t })]
    });
    // Held: not listed (a re-simulation of the same timeline hands nothing over: handover.ts).
    expect(results(c, []).some((r) => r.id === 'no-future-decisions')).toBe(false);
    // Handed to a fresh clock: a decision from later is a future the run has not lived.
    c.store('B', T0, {
      type: 'opened',
      scope: 'durable',
      held: [decision({ identity: 's:ghi', decidedAt: t })]
    });
    const x = of(results(c, []), 'no-future-decisions');
    expect(x).toMatchObject({ status: 'broken', violations: 1, checked: 3 });
    expect(x.summary).toBe(
      "1 of 3 stored decisions handed over were decided after the run's clock"
    );
    expect(x.offenders[0]!.what).toBe(
      `the store handed over at ${new Date(T0).toISOString()} holds the decision for s:ghi, decided 60,000 ms later`
    );
  });

  it('frames are held to the MCP SDK schema', () => {
    const c = new InvariantChecker({ cards, validate: sdkFrameProblem });
    const good = record({ requestId: 1 });
    const bad = record({ requestId: 2 });
    answer(c, good, denial(1));
    answer(c, bad, { jsonrpc: '2.0', id: 2, error: { code: 'oops' } } as unknown as Frame);
    const x = of(results(c, [good, bad]), 'frames-conform');
    expect(x.summary).toBe('1 of 2 frames conform');
    expect(x.offenders[0]!.what).toMatch(/^not a JSON-RPC error: /);
  });

  it('a counter that disagrees with the audit log is broken, naming the counter', () => {
    const c = new InvariantChecker({ cards });
    const r = record({ requestId: 1, consentShown: true, consent: 'denied' });
    answer(c, r, denial(1));
    const counters = countersOf([r]);
    counters.A!.consentPrompts = 0;
    const x = of(c.results(T0, counters, 1), 'totals-match');
    expect(x.offenders[0]!.what).toBe('lane A shows 0 consent prompts, its audit log 1');
  });

  it('the spend no person saw must match the audit records that skipped a dialog', () => {
    const c = new InvariantChecker({ cards });
    const skipped = {
      estimatedCost: { amount: '0.0021', currency: 'USD' },
      askAbove: { amount: '0.005', currency: 'USD' }
    };
    const r = record({ requestId: 1, consentSkipped: skipped });
    answer(c, r, denial(1));
    const counters = countersOf([r]);
    expect(of(c.results(T0, counters, 1), 'totals-match').status).toBe('held');
    counters.A!.consentSkipped = 0;
    const x = of(c.results(T0, counters, 1), 'totals-match');
    expect(x.offenders[0]!.what).toBe(
      'lane A shows 0 dialogs skipped under askAbove, its audit log 1'
    );
  });

  it('two runs with different bytes break same-bytes', () => {
    const c = new InvariantChecker({ cards });
    c.sameBytes({ frames: 'a', audit: 'b' }, { frames: 'a', audit: 'c' });
    const x = of(results(c, []), 'same-bytes');
    expect(x.status).toBe('broken');
    expect(x.offenders[0]!.what).toBe('audit.jsonl differs between two runs');
  });
});
