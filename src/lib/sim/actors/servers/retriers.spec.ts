import { describe, expect, it } from 'vitest';
import { denialFrame, resultFrame } from '../../../machine/frames';
import { requestIdentity } from '../../../machine/identity';
import type { TextContent } from '../../../machine/types';
import { fakeRun, kinds, last, SERVER, spec, type Responder } from './fake-env';

const ok: Responder = (r) => resultFrame(r.id, { model: 'm', text: 'done' });
const silence: Responder = () => null;
const permanent: Responder = (r) =>
  denialFrame(r.id, { reason: 'policy.sampling_disabled', server: SERVER, retryable: false });
const transient: Responder = (r) =>
  denialFrame(r.id, {
    reason: 'policy.rate_limit',
    server: SERVER,
    retryable: true,
    retryAfterMs: 100
  });

/** Gaps between consecutive requests. */
function gaps(at: number[]): number[] {
  return at.slice(1).map((t, i) => t - at[i]!);
}

function promptOf(p: { messages: { content: unknown }[] }): string {
  return (p.messages[p.messages.length - 1]!.content as TextContent).text;
}

describe('naive-retrier', () => {
  it('a permanent denial: 5 retries with capped exponential backoff, then gives up', () => {
    const run = fakeRun(spec('naive-retrier', { params: { jitter: 0 } }), permanent);
    run.run(1_000_000);
    expect(run.sent).toHaveLength(6);
    // Each gap is the 10 ms frame latency plus 1, 2, 4, 8, 16 s.
    expect(gaps(run.sent.map((r) => r.at))).toEqual([1010, 2010, 4010, 8010, 16_010]);
    expect(last(run, 'task.abandoned')!.why).toMatch(/sampling_disabled.*5 retries/);
  });

  it('caps the delay at capMs and jitters it within ±jitter', () => {
    const capped = fakeRun(
      spec('naive-retrier', { params: { jitter: 0, maxRetries: 8 } }),
      permanent
    );
    capped.run(10_000_000);
    expect(gaps(capped.sent.map((r) => r.at)).slice(-3)).toEqual([30_010, 30_010, 30_010]);
    const jittered = fakeRun(spec('naive-retrier'), permanent, { seed: 9 });
    jittered.run(1_000_000);
    const g = gaps(jittered.sent.map((r) => r.at - 0)).map((x) => x - 10);
    [1000, 2000, 4000, 8000, 16_000].forEach((base, i) => {
      expect(g[i]).toBeGreaterThanOrEqual(base * 0.9);
      expect(g[i]).toBeLessThanOrEqual(base * 1.1);
    });
    expect(g.some((x, i) => x !== [1000, 2000, 4000, 8000, 16_000][i])).toBe(true);
  });

  it('ignores retryable: transient denials and silence are retried the same way', () => {
    const t = fakeRun(spec('naive-retrier', { params: { jitter: 0 } }), transient);
    t.run(1_000_000);
    expect(t.sent).toHaveLength(6);
    const s = fakeRun(spec('naive-retrier', { params: { jitter: 0 } }), silence);
    s.run(1_000_000);
    expect(s.sent).toHaveLength(6);
    expect(gaps(s.sent.map((r) => r.at)).slice(0, 2)).toEqual([6000, 7000]);
    expect(kinds(s).filter((k) => k === 'timeout')).toHaveLength(6);
  });
});

describe('tight-loop', () => {
  it('a permanent denial: keeps sending every 2 s, with no cap', () => {
    const run = fakeRun(spec('tight-loop'), permanent);
    run.run(200_000);
    expect(run.sent.length).toBe(100); // at 0, 2010, …, 99 × 2010 = 198,990
    expect(new Set(gaps(run.sent.map((r) => r.at)))).toEqual(new Set([2010]));
    expect(kinds(run)).not.toContain('task.abandoned');
    // Honest repetition: every request is the same request.
    expect(new Set(run.sent.map((r) => requestIdentity(SERVER, r.params))).size).toBe(1);
  });

  it('transient denials and silence too; maxRetries can bound it', () => {
    const t = fakeRun(spec('tight-loop', { params: { maxRetries: 3 } }), transient);
    t.run(1_000_000);
    expect(t.sent).toHaveLength(4);
    expect(kinds(t).at(-1)).toBe('task.abandoned');
    const s = fakeRun(spec('tight-loop', { params: { maxRetries: null } }), silence);
    s.run(70_000);
    expect(gaps(s.sent.map((r) => r.at))).toEqual(Array(10).fill(7000));
  });
});

describe('reconnector', () => {
  it('a denial: disconnects, reconnects after 300 ms and sends the same request again', () => {
    const run = fakeRun(spec('reconnector'), (r, i) => (i < 2 ? permanent(r, i) : ok(r, i)));
    run.run(60_000);
    expect(run.log).toEqual(['disconnect@10', 'connect@310', 'disconnect@320', 'connect@620']);
    expect(run.sent.map((r) => [r.at, r.connection])).toEqual([
      [0, 1],
      [310, 2],
      [620, 3]
    ]);
    expect(new Set(run.sent.map((r) => JSON.stringify(r.params))).size).toBe(1);
    expect(kinds(run)).toEqual([
      'task.started',
      'reconnect',
      'retry',
      'reconnect',
      'retry',
      'task.completed'
    ]);
  });

  it('transient denials too, up to maxReconnects; silence it reads like the well-behaved', () => {
    const t = fakeRun(spec('reconnector', { params: { maxReconnects: 3 } }), transient);
    t.run(60_000);
    expect(t.sent).toHaveLength(4);
    expect(last(t, 'task.abandoned')!.why).toMatch(/3 reconnects/);
    const s = fakeRun(spec('reconnector'), silence);
    s.run(60_000);
    expect(s.sent).toHaveLength(2);
    expect(s.log).toEqual([]);
  });
});

describe('prompt-mutator', () => {
  it('a denial: each retry differs from the original by exactly one character', () => {
    const run = fakeRun(spec('prompt-mutator'), permanent);
    run.run(1_000_000);
    expect(run.sent).toHaveLength(101);
    const original = Array.from(promptOf(run.sent[0]!.params));
    for (const r of run.sent.slice(1)) {
      const p = Array.from(promptOf(r.params));
      expect(p).toHaveLength(original.length);
      expect(p.filter((c, i) => c !== original[i])).toHaveLength(1);
    }
    // Every one of them is a fresh identity: identity catches nothing that is trying.
    expect(new Set(run.sent.map((r) => requestIdentity(SERVER, r.params))).size).toBe(101);
    expect(gaps(run.sent.map((r) => r.at))[0]).toBe(1010);
    expect(last(run, 'task.abandoned')!.why).toMatch(/100 retries/);
  });

  // Found by a new user's run: tasks 1–4 of "Summarise account {n}." all mutated their digit to
  // 'a' ("account a."), so 6 of the 404 presentations were replays of another task's retry.
  it('never repeats an identity across tasks, even where their prompts differ in one character', () => {
    const run = fakeRun(
      spec('prompt-mutator', {
        request: { prompt: 'Summarise account {n}.', maxTokens: 64 },
        intervalMs: 1,
        tasks: 4
      }),
      permanent
    );
    run.run(10_000_000);
    expect(run.sent).toHaveLength(404);
    expect(new Set(run.sent.map((r) => requestIdentity(SERVER, r.params))).size).toBe(404);
  });

  it('transient denials and silence too', () => {
    const t = fakeRun(spec('prompt-mutator', { params: { maxRetries: 4 } }), transient);
    t.run(1_000_000);
    expect(t.sent).toHaveLength(5);
    const s = fakeRun(spec('prompt-mutator', { params: { maxRetries: 2 } }), silence);
    s.run(1_000_000);
    expect(s.sent.map((r) => r.at)).toEqual([0, 6000, 12_000]);
  });
});

describe('serialiser-variant', () => {
  const s = spec('serialiser-variant', {
    request: { prompt: 'Résumé of ticket {n}', includeContext: 'thisServer', maxTokens: 64 }
  });

  it('a denial: the same request through four serialisers, one canonical identity', () => {
    const run = fakeRun(s, permanent);
    run.run(1_000_000);
    expect(run.sent).toHaveLength(21);
    expect(run.sent.slice(0, 5).map((r) => r.style)).toEqual([
      {},
      { reverseKeys: true },
      { nfd: true },
      { reverseKeys: true, nfd: true },
      {}
    ]);
    expect(new Set(run.sent.map((r) => JSON.stringify(r.params))).size).toBe(1);
    expect(new Set(run.sent.map((r) => requestIdentity(SERVER, r.wire))).size).toBe(1);
    const raw = run.sent
      .slice(0, 4)
      .map((r) => requestIdentity(SERVER, r.wire, { canonicalize: false }));
    expect(new Set(raw).size).toBe(4);
  });

  it('silence and transient denials too, every intervalMs', () => {
    const t = fakeRun({ ...s, params: { maxRetries: 3 } }, transient);
    t.run(1_000_000);
    expect(gaps(t.sent.map((r) => r.at))).toEqual([1010, 1010, 1010]);
    const q = fakeRun({ ...s, params: { maxRetries: 2 } }, silence);
    q.run(1_000_000);
    expect(q.sent).toHaveLength(3);
    expect(kinds(q).at(-1)).toBe('task.abandoned');
  });
});
