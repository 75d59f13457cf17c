/**
 * 2026-07-28 (SEP-2322): a server's sampling request is an `input_required` round of the host's
 * own tool call. A result goes back in the next round as before; a refusal fails the tool call at
 * the host, the server hears nothing, and the host's agent loop decides whether to call again.
 */
import { describe, expect, it } from 'vitest';
import { budgetExceededFrame, denialFrame, resultFrame } from '../../../machine/frames';
import { MAX_INPUT_ROUNDS } from './base';
import { fakeRun, kinds, last, SERVER, spec, type FakeOptions, type Responder } from './fake-env';

const mrtr: FakeOptions = { protocol: '2026-07-28', hostRetries: 2, hostRetryDelayMs: 2000 };
const ok: Responder = (r) => resultFrame(r.id, { model: 'm', text: 'done' });
const denied: Responder = (r) =>
  denialFrame(r.id, { reason: 'user.denied', server: SERVER, retryable: false });

/**
 * The fake env delivers every frame to `onFrame`; under 2026-07-28 the lane turns a refusal into
 * `onToolCallFailed` instead. This responder does what the lane does.
 */
function asLane(respond: Responder): Responder {
  return (r, i) => {
    const f = respond(r, i);
    if (f !== null && !('frame' in f) && 'error' in f) {
      queueFailure.push(r.id);
      return null;
    }
    return f;
  };
}
let queueFailure: number[] = [];

function runMrtr(behaviour: string, respond: Responder, opts: FakeOptions = mrtr) {
  queueFailure = [];
  const run = fakeRun(
    spec(behaviour, { params: behaviour === 'naive-retrier' ? { jitter: 0 } : {} }),
    asLane(respond),
    opts
  );
  // Deliver each host-side failure as the lane does: as its own event, 10 ms on.
  const step = (until: number) => {
    for (let t = 0; t <= until; t += 10) {
      run.run(t);
      for (const id of queueFailure.splice(0)) run.agent.onToolCallFailed(id);
    }
  };
  return { run, step };
}

describe('a refused round under 2026-07-28', () => {
  it.each(['well-behaved', 'naive-retrier', 'tight-loop', 'reconnector', 'prompt-mutator'])(
    '%s: never hears the refusal; the host calls the tool again twice, then gives up',
    (behaviour) => {
      const { run, step } = runMrtr(behaviour, denied);
      step(60_000);
      // 1 call + 2 host retries, 2 s apart; the server's own retry logic never ran.
      expect(run.sent).toHaveLength(3);
      expect(kinds(run).filter((k) => k === 'retry')).toEqual([]);
      expect(kinds(run).filter((k) => k === 'host.retry')).toHaveLength(2);
      expect(run.log).toEqual([]);
      expect(last(run, 'task.abandoned')!.why).toBe(
        'its tool call failed at the host 3 times; the host gave up (the server never heard why)'
      );
      // Every call asks the same thing: the mutator never learned to mutate.
      expect(new Set(run.sent.map((r) => JSON.stringify(r.params))).size).toBe(1);
    }
  );

  it('with hostRetries 0 the task ends at the first refusal', () => {
    const { run, step } = runMrtr('naive-retrier', denied, { ...mrtr, hostRetries: 0 });
    step(60_000);
    expect(run.sent).toHaveLength(1);
    expect(kinds(run)).toEqual(['task.started', 'task.abandoned']);
  });

  it('a result is used as before; there is no server-side timeout to retry on', () => {
    const { run, step } = runMrtr('well-behaved', (r) => ({
      frame: ok(r, 0) as never,
      afterMs: 20_000
    }));
    step(60_000);
    expect(kinds(run)).toEqual(['task.started', 'task.completed']);
    expect(run.sent).toHaveLength(1);
  });

  it(`the host fails a tool call after ${MAX_INPUT_ROUNDS} rounds (the SDK's default)`, () => {
    // A cost refusal is a result: the naive retrier reads it and asks again, each time in a new
    // round of the same tool call, until the host's SDK stops the call.
    const refusedOnCost: Responder = (r) =>
      budgetExceededFrame(r.id, {
        model: 'm',
        decision: {
          estimatedCost: { amount: '0.1027', currency: 'USD' },
          limitApplied: { amount: '0.0500', currency: 'USD' },
          limitSource: 'host_policy',
          meterBasis: 'm@1:in=3.00/Mtok,out=15.00/Mtok',
          estimatedTokens: { input: 24000, output: 2048 }
        }
      });
    queueFailure = [];
    const run = fakeRun(
      spec('naive-retrier', { params: { jitter: 0, baseMs: 10, capMs: 10, maxRetries: 100 } }),
      refusedOnCost,
      mrtr
    );
    run.run(600_000);
    // Three calls (1 + 2 host retries) of 10 rounds each; the server's retries within them.
    expect(run.sent).toHaveLength(3 * MAX_INPUT_ROUNDS);
    expect(kinds(run).filter((k) => k === 'host.retry')).toHaveLength(2);
    expect(kinds(run).filter((k) => k === 'retry')).toHaveLength(3 * (MAX_INPUT_ROUNDS - 1));
    expect(last(run, 'task.abandoned')!.why).toMatch(/failed at the host 3 times/);
  });
});
