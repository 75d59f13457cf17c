import { describe, expect, it } from 'vitest';
import { inputTokensOf, preflight } from '../../../machine/budget';
import {
  budgetExceededFrame,
  budgetExhaustedFrame,
  budgetRefusalErrorFrame,
  denialFrame,
  resultFrame,
  transportErrorFrame,
  trimmedFrame
} from '../../../machine/frames';
import { requestIdentity } from '../../../machine/identity';
import { RFC_CARD, RFC_DECISION } from '../../../machine/budget/rfc-example.testing';
import { BEHAVIOURS, BEHAVIOUR_NAMES, createServer } from './behaviours';
import { fakeRun, kinds, last, SERVER, spec, type Responder } from './fake-env';

const ok: Responder = (r) => resultFrame(r.id, { model: 'm', text: 'done' });
const silence: Responder = () => null;
const permanent: Responder = (r) =>
  denialFrame(r.id, { reason: 'user.denied', server: SERVER, retryable: false });
const transient =
  (retryAfterMs?: number, resetsAt?: string): Responder =>
  (r) =>
    denialFrame(r.id, {
      reason: 'policy.rate_limit',
      server: SERVER,
      retryable: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(resetsAt === undefined ? {} : { resetsAt })
    });
/** The first `n` requests get `first`, the rest `then`. */
const firstThen =
  (n: number, first: Responder, then: Responder): Responder =>
  (r, i) =>
    i < n ? first(r, i) : then(r, i);
const trimmed: Responder = (r) =>
  trimmedFrame(r.id, {
    model: 'm',
    text: 'summary',
    context: { requested: 'allServers', applied: 'none', reason: 'policy.max_scope' }
  });

describe('well-behaved', () => {
  it('a permanent denial: one request, abandoned, degraded and says so', () => {
    const run = fakeRun(spec('well-behaved'), permanent);
    run.run(60_000);
    expect(run.sent).toHaveLength(1);
    expect(kinds(run)).toEqual(['task.started', 'task.abandoned']);
    expect(last(run, 'task.abandoned')!.why).toMatch(/user\.denied.*permanent/);
  });

  it('a transient denial: retried once after retryAfterMs, a second one abandons', () => {
    const run = fakeRun(spec('well-behaved'), firstThen(1, transient(250), ok));
    run.run(60_000);
    expect(run.sent.map((r) => r.at)).toEqual([0, 260]);
    expect(kinds(run)).toEqual(['task.started', 'retry', 'task.completed']);

    const twice = fakeRun(spec('well-behaved'), transient(250));
    twice.run(60_000);
    expect(twice.sent).toHaveLength(2);
    expect(kinds(twice)).toEqual(['task.started', 'retry', 'task.abandoned']);
  });

  it('waits 1000 ms when the denial names no delay, and until resetsAt when it names one', () => {
    const plain = fakeRun(spec('well-behaved'), firstThen(1, transient(), ok));
    plain.run(60_000);
    expect(plain.sent.map((r) => r.at)).toEqual([0, 1010]);
    const reset = fakeRun(
      spec('well-behaved'),
      firstThen(1, transient(undefined, new Date(7000).toISOString()), ok)
    );
    reset.run(60_000);
    expect(reset.sent.map((r) => r.at)).toEqual([0, 7000]);
  });

  it('silence: retried once after the timeout, then abandoned', () => {
    const run = fakeRun(spec('well-behaved'), silence);
    run.run(60_000);
    expect(run.sent.map((r) => r.at)).toEqual([0, 6000]);
    expect(kinds(run)).toEqual(['task.started', 'timeout', 'retry', 'timeout', 'task.abandoned']);
  });

  it('uses each kind of result as the frame says', () => {
    const cases: [Responder, object][] = [
      [ok, {}],
      [trimmed, { degradedAware: true }],
      [
        (r) =>
          budgetExhaustedFrame(r.id, { model: 'm', partialText: 'half', decision: RFC_DECISION }),
        { partial: true }
      ]
    ];
    for (const [responder, flags] of cases) {
      const run = fakeRun(spec('well-behaved'), responder);
      run.run(60_000);
      expect(run.sent).toHaveLength(1);
      expect(run.reports[1]).toEqual({ type: 'task.completed', task: 1, at: 10, ...flags });
    }
    const refused = fakeRun(spec('well-behaved'), (r) =>
      budgetExceededFrame(r.id, { model: 'm', decision: RFC_DECISION })
    );
    refused.run(60_000);
    expect(refused.sent).toHaveLength(1);
    expect(last(refused, 'task.abandoned')!.why).toMatch(/budget_exceeded/);
  });

  it('retries a transport error once after backoffMs', () => {
    const run = fakeRun(
      spec('well-behaved'),
      firstThen(1, (r) => transportErrorFrame(r.id), ok)
    );
    run.run(60_000);
    expect(run.sent.map((r) => r.at)).toEqual([0, 1010]);
    expect(kinds(run)).toEqual(['task.started', 'retry', 'task.completed']);
  });

  it('ignores a frame that arrives after its request timed out', () => {
    const late: Responder = (r, i) =>
      i === 0
        ? {
            frame: denialFrame(r.id, { reason: 'user.denied', server: SERVER, retryable: false }),
            afterMs: 5500
          }
        : ok(r, i);
    const run = fakeRun(spec('well-behaved'), late);
    run.run(60_000);
    // The late permanent denial (at 5500) would have abandoned the task; it is dropped instead.
    expect(run.sent).toHaveLength(2);
    expect(kinds(run)).toEqual(['task.started', 'timeout', 'retry', 'task.completed']);
  });

  it('reports a trimmed result it does not read as unawareOfTrim (readsMeta: false)', () => {
    const s = spec('well-behaved', { params: { readsMeta: false } });
    const run = fakeRun({ ...s, request: { ...s.request, includeContext: 'thisServer' } }, trimmed);
    run.run(60_000);
    expect(last(run, 'task.completed')).toEqual({
      type: 'task.completed',
      task: 1,
      unawareOfTrim: true,
      at: 10
    });
  });
});

describe('context-greedy', () => {
  it('asks for allServers whatever its template says', () => {
    const s = spec('context-greedy');
    const run = fakeRun({ ...s, request: { ...s.request, includeContext: 'none' } }, ok);
    run.run(60_000);
    expect(run.sent[0]!.params.includeContext).toBe('allServers');
  });

  it('says so when told it was trimmed, and is confidently unaware when not told', () => {
    const told = fakeRun(spec('context-greedy'), trimmed);
    told.run(60_000);
    expect(last(told, 'task.completed')!.degradedAware).toBe(true);
    const notTold = fakeRun(spec('context-greedy'), ok);
    notTold.run(60_000);
    expect(last(notTold, 'task.completed')!.unawareOfTrim).toBe(true);
  });

  it('reads denials like the well-behaved server', () => {
    const p = fakeRun(spec('context-greedy'), permanent);
    p.run(60_000);
    expect(p.sent).toHaveLength(1);
    const t = fakeRun(spec('context-greedy'), transient(100));
    t.run(60_000);
    expect(t.sent).toHaveLength(2);
  });
});

// ───────────────────────────── budget-shrinker (the RFC's numbers) ─────────────────────────────

/** A host with a $0.05 per-call cap that prices each request from the rate card. */
const capped =
  (asError = false): Responder =>
  (r) => {
    const pf = preflight({
      card: RFC_CARD,
      inputTokens: inputTokensOf(r.params),
      maxTokens: r.params.maxTokens,
      limitMicros: 50_000,
      limitSource: 'host_policy'
    });
    if (pf.within) return resultFrame(r.id, { model: RFC_CARD.model, text: 'fits' });
    return asError
      ? budgetRefusalErrorFrame(r.id, { server: SERVER, decision: pf.decision })
      : budgetExceededFrame(r.id, { model: RFC_CARD.model, decision: pf.decision });
  };

function shrinker(params: Record<string, unknown>) {
  return spec('budget-shrinker', {
    params,
    request: {
      prompt: 'Write the changelog for release {n}.',
      promptTokens: 24_000,
      maxTokens: 2048
    }
  });
}

describe('budget-shrinker', () => {
  it('the host prices the first request as the RFC does', () => {
    const run = fakeRun(shrinker({}), capped());
    run.run(1000);
    expect(inputTokensOf(run.sent[0]!.params)).toBe(24_000);
    const d = preflight({
      card: RFC_CARD,
      inputTokens: 24_000,
      maxTokens: 2048,
      limitMicros: 50_000,
      limitSource: 'host_policy'
    });
    expect(d.decision.estimatedCost.amount).toBe(RFC_DECISION.estimatedCost.amount);
  });

  it('naive: retries at ~48 % of the input (11,683 tokens), is refused again, gives up', () => {
    const run = fakeRun(shrinker({ mode: 'naive' }), capped());
    run.run(60_000);
    expect(run.sent.map((r) => inputTokensOf(r.params))).toEqual([24_000, 11_680]);
    expect(run.sent[1]!.params.maxTokens).toBe(2048);
    expect(kinds(run)).toEqual(['task.started', 'retry', 'task.abandoned']);
    expect(last(run, 'task.abandoned')!.why).toMatch(/again at 11680/);
  });

  it('exact: retries at ≤ 6,426 tokens from the meter basis, and fits', () => {
    const run = fakeRun(shrinker({ mode: 'exact' }), capped());
    run.run(60_000);
    const shrunk = inputTokensOf(run.sent[1]!.params);
    expect(shrunk).toBeLessThanOrEqual(6426);
    expect(shrunk).toBe(6426);
    expect(kinds(run)).toEqual(['task.started', 'retry', 'task.completed']);
  });

  it('reads the decision from the error form of the refusal too', () => {
    const run = fakeRun(shrinker({ mode: 'exact' }), capped(true));
    run.run(60_000);
    expect(run.sent).toHaveLength(2);
    expect(last(run, 'task.completed')).toBeDefined();
  });

  it('asks for exactly an advertised ceiling, unless told not to', () => {
    const ceiling = { amount: '0.25', currency: 'USD' };
    const run = fakeRun(shrinker({}), ok, { ceiling });
    run.run(1000);
    expect(run.sent[0]!.params.budget).toEqual({
      intent: { maxCost: ceiling },
      onExceeded: 'reject'
    });
    const off = fakeRun(shrinker({ useCeiling: false }), ok, { ceiling });
    off.run(1000);
    expect(off.sent[0]!.params.budget).toBeUndefined();
  });

  it("one lane's ceiling stays in its requests: the other lane, same template, asks without", () => {
    // Both lanes build their requests from one template, and built params are shared.
    const s = shrinker({});
    const ceiling = { amount: '0.25', currency: 'USD' };
    const advertised = fakeRun(s, ok, { ceiling });
    advertised.run(1000);
    const plain = fakeRun(s, ok);
    plain.run(1000);
    expect(advertised.sent[0]!.params.budget?.intent?.maxCost).toEqual(ceiling);
    expect(plain.sent[0]!.params.budget).toBeUndefined();
  });
});

describe('timeout-sensitive', () => {
  it('silence: sends again 500 ms after each timeout, 30 times, then gives up', () => {
    const run = fakeRun(spec('timeout-sensitive'), silence);
    run.run(1_000_000);
    expect(run.sent).toHaveLength(31);
    expect(run.sent.slice(0, 3).map((r) => r.at)).toEqual([0, 5500, 11_000]);
    expect(last(run, 'task.abandoned')!.why).toMatch(/30 retries/);
  });

  it('a denial frame: stops on a permanent one, retries a transient one once', () => {
    const p = fakeRun(spec('timeout-sensitive'), permanent);
    p.run(60_000);
    expect(p.sent).toHaveLength(1);
    expect(kinds(p)).toEqual(['task.started', 'task.abandoned']);
    const t = fakeRun(spec('timeout-sensitive'), transient(100));
    t.run(60_000);
    expect(t.sent).toHaveLength(2);
  });
});

describe('shared mechanics', () => {
  it.each(BEHAVIOUR_NAMES)('%s: a success is one request, completed', (name) => {
    const run = fakeRun(spec(name), ok);
    run.run(60_000);
    expect(run.sent).toHaveLength(1);
    expect(kinds(run)).toEqual(['task.started', 'task.completed']);
  });

  it('waits out a closed connection without counting a retry', () => {
    const run = fakeRun(spec('well-behaved', { startAfterMs: 100 }), ok);
    run.env.disconnect();
    run.later(1200, () => run.env.connect());
    run.run(60_000);
    expect(run.sent).toHaveLength(1);
    expect(run.sent[0]!).toMatchObject({ at: 1600, attempts: 1 });
    expect(kinds(run)).toEqual(['task.started', 'task.completed']);
  });

  it('starts tasks after startAfterMs, up to tasks, each a distinct request', () => {
    const run = fakeRun(
      spec('well-behaved', { tasks: 5, startAfterMs: 1000, intervalMs: 2000 }),
      ok
    );
    run.run(10_000_000);
    const started = run.reports.filter((r) => r.type === 'task.started');
    expect(started.map((r) => r.task)).toEqual([1, 2, 3, 4, 5]);
    expect(started[0]!.at).toBe(1000);
    expect(new Set(run.sent.map((r) => requestIdentity(SERVER, r.params))).size).toBe(5);
  });

  it('is deterministic: the same seed gives the same requests, times and reports', () => {
    const go = (seed: number) => {
      const s = spec('naive-retrier', { tasks: 8, intervalMs: 3000 });
      const run = fakeRun(s, firstThen(20, permanent, ok), { seed });
      run.run(1_000_000);
      return JSON.stringify({ sent: run.sent, reports: run.reports });
    };
    expect(go(7)).toBe(go(7));
    expect(go(7)).not.toBe(go(8));
  });

  it('keeps arrival times independent of how often the server retried', () => {
    const arrivals = (responder: Responder) => {
      const run = fakeRun(spec('naive-retrier', { tasks: 6, intervalMs: 3000 }), responder, {
        seed: 3
      });
      run.run(1_000_000);
      return run.reports.filter((r) => r.type === 'task.started').map((r) => r.at);
    };
    expect(arrivals(permanent)).toEqual(arrivals(ok));
  });
});

describe('the registry', () => {
  it('has the nine behaviours of SPEC §8, each described with its defaults', () => {
    expect([...BEHAVIOUR_NAMES]).toEqual([
      'well-behaved',
      'naive-retrier',
      'tight-loop',
      'reconnector',
      'prompt-mutator',
      'context-greedy',
      'budget-shrinker',
      'serialiser-variant',
      'timeout-sensitive'
    ]);
    for (const name of BEHAVIOUR_NAMES) {
      expect(BEHAVIOURS[name]!.describe.length).toBeGreaterThan(20);
      expect(BEHAVIOURS[name]!.defaults).toHaveProperty('readsMeta', true);
    }
    expect(BEHAVIOURS['naive-retrier']!.defaults).toMatchObject({
      baseMs: 1000,
      factor: 2,
      capMs: 30_000,
      maxRetries: 5,
      jitter: 0.1
    });
  });

  it('rejects an unknown behaviour by name, listing the valid ones, and a bad parameter', () => {
    const env = fakeRun(spec('well-behaved'), ok).env;
    expect(() => createServer(env, spec('polite-ish'))).toThrow(
      /unknown behaviour 'polite-ish'.*well-behaved, naive-retrier/
    );
    expect(() => createServer(env, spec('toString'))).toThrow(/unknown behaviour/);
    expect(() => createServer(env, spec('naive-retrier', { params: { baseMs: 'soon' } }))).toThrow(
      /server 'srv' \(naive-retrier\): parameter 'baseMs' must be a non-negative number, got "soon"/
    );
    expect(() => createServer(env, spec('budget-shrinker', { params: { mode: 'vibes' } }))).toThrow(
      /'naive', 'exact'/
    );
    expect(() =>
      createServer(env, spec('tight-loop', { tasks: undefined, intervalMs: 0 }))
    ).toThrow(/intervalMs must be positive/);
  });
});
