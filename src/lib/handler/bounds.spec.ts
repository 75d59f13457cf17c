/**
 * A hostile server meets a bounded handler (issue #20 item 7): floods of distinct requests and
 * one identity forever keep what the handler holds bounded — the alert's presentation history,
 * in-flight joins, the store, the audit queue — while the rate limit and the retry-loop alert
 * still work; `conn.close()` frees what the connection held; a store or audit write that fails
 * fails its request closed with -32603 and a log line, never a silent allow.
 *
 * The flood is scaled to what a unit test does in a second or two (tens of thousands of requests
 * straight into `conn.handle`, in waves), with the bounds lowered where a default would need more.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../machine/policy';
import type { StoredDecision } from '../machine/types';
import { ConnectionDecisionStore } from '../store/connection-store';
import type { DecisionStore } from '../store/decision-store';
import type { HandlerAuditRecord } from './audit';
import type { HandlerErrorContext } from './guard';
import { createSamplingPolicy, type SamplingPolicyOptions } from './handler';
import type { ConsentAnswer } from './sources';
import { ask, deferred, outcome, pair, until } from './sdk-pair.testing';

function lab(over: Partial<SamplingPolicyOptions> = {}) {
  const t = {
    consents: 0,
    samples: 0,
    records: [] as HandlerAuditRecord[],
    errors: [] as { message: string; where: HandlerErrorContext }[],
    policy: undefined as unknown as ReturnType<typeof createSamplingPolicy>
  };
  t.policy = createSamplingPolicy({
    policy: defaultPolicy(),
    consent: () => (t.consents++, 'allow'),
    sample: (_p, { model }) => {
      t.samples++;
      return { content: { type: 'text', text: 'ok' }, model, usage: { outputTokens: 1 } };
    },
    audit: (r) => void t.records.push(r),
    onError: (e, where) => void t.errors.push({ message: e.message, where }),
    ...over
  });
  return t;
}

type Got = Awaited<ReturnType<typeof outcome>>;
const reason = (g: Got) => (g.error?.data as { reason?: string } | undefined)?.reason;

describe('a flood of distinct requests', () => {
  it('keeps history, joins, store and audit queue bounded; the rate limit holds; past the store bound it fails closed', async () => {
    // The default policy's rate limit (30) over a day, not a minute: windows are aligned to the
    // clock, and a flood that ran across a minute's end under load was allowed 60.
    const policy = defaultPolicy();
    policy.defaults.rateLimit = { requests: 30, windowMs: 86_400_000 };
    const t = lab({ policy, limits: { maxStoredDecisions: 5_000 } });
    const conn = t.policy.connect('everything');
    const got: Got[] = [];
    // Waves as large as a connection may have in flight (limits.maxInFlight, 1,000).
    const WAVES = 12;
    const WAVE = 1_000;
    let maxPresentations = 0;
    for (let w = 0; w < WAVES; w++) {
      const wave = Array.from({ length: WAVE }, (_, i) =>
        outcome(conn.handle({ params: ask(`request ${w * WAVE + i}`) }))
      );
      got.push(...(await Promise.all(wave)));
      const s = t.policy.stats();
      // Between waves nothing is held for requests already answered.
      expect(s).toMatchObject({ inFlight: 0, flights: 0, waiters: 0, auditQueue: 0 });
      expect(s.storedDecisions).toBeLessThanOrEqual(5_000);
      maxPresentations = Math.max(maxPresentations, s.presentations);
    }
    expect(got).toHaveLength(WAVES * WAVE);
    // The alert's history is bounded by identities (10,000), not by requests (12,000).
    expect(maxPresentations).toBe(10_000);
    // The rate limit (30 a day) still holds: 30 allowed after 30 dialogs, the rest refused.
    expect(got.filter((g) => g.result).length).toBe(30);
    expect(t.consents).toBe(30);
    const limited = got.filter(
      (g) => g.error?.code === -32003 && reason(g) === 'policy.rate_limit'
    );
    // Each refusal is stored (60 s) until the store is full; after that the decision cannot be
    // kept and the request fails closed.
    expect(limited.length).toBe(5_000 - 30);
    const closed = got.filter((g) => g.error?.code === -32603);
    expect(closed.length).toBe(WAVES * WAVE - 5_000);
    expect(closed[0]!.error?.message).toMatch(/decision could not be stored.*maxStoredDecisions/);
    expect(t.errors.filter((e) => e.where.kind === 'store')).toHaveLength(closed.length);
    // Every request has its record; the failed-closed ones say so.
    expect(t.records).toHaveLength(WAVES * WAVE);
    expect(t.records.filter((r) => r.failedClosed).length).toBe(closed.length);
    conn.close();
    expect(t.policy.stats()).toMatchObject({ connections: 0, storedDecisions: 0, inFlight: 0 });
    await t.policy.close();
  });
});

describe('one identity forever', () => {
  it('in-flight joins stop at maxInFlight (the rest refused at once, logged once); close frees everything', async () => {
    const dialog = deferred<ConsentAnswer>();
    const t = lab({
      consent: () => (t.consents++, dialog.promise),
      limits: { maxInFlight: 1_000 }
    });
    const conn = t.policy.connect('everything');
    const calls = Array.from({ length: 1_500 }, () => outcome(conn.handle({ params: ask() })));
    await until(() => t.consents === 1, 'the dialog is open');
    expect(t.policy.stats()).toMatchObject({
      inFlight: 1_000,
      refusedInFlight: 500,
      flights: 1,
      waiters: 999
    });
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0]!.where).toMatchObject({ kind: 'flood', connection: 'everything#1' });
    conn.close();
    const got = await Promise.all(calls);
    expect(got.filter((g) => g.error?.code === -32603)).toHaveLength(1_500);
    // No presentation was left to lead a fresh decision on the closed connection.
    expect(t.consents).toBe(1);
    expect(t.samples).toBe(0);
    expect(t.policy.stats()).toMatchObject({
      connections: 0,
      inFlight: 0,
      flights: 0,
      waiters: 0,
      storedDecisions: 0,
      auditQueue: 0
    });
    await t.policy.close();
  });

  it('after a denial, the retry-loop alert trips at the 41st presentation; the store answers every one', async () => {
    const t = lab({ consent: () => (t.consents++, 'deny') });
    const conn = t.policy.connect('everything');
    for (let i = 0; i < 100; i++) {
      const g = await outcome(conn.handle({ params: ask() }));
      expect(reason(g)).toBe('user.denied');
    }
    expect(t.consents).toBe(1);
    expect(t.records.map((r) => r.alert).indexOf(true)).toBe(40);
    expect(t.records.slice(40).every((r) => r.alert)).toBe(true);
    expect(t.policy.stats()).toMatchObject({ storedDecisions: 1, presentations: 1, flights: 0 });
    await t.policy.close();
  });
});

/** A connection-scoped memory store whose commits fail as a full or read-only disk would. */
function failingStore(how: 'throw' | 'reject', message: string): DecisionStore {
  const inner = new ConnectionDecisionStore();
  return {
    scope: 'connection',
    lookup: (...a) => inner.lookup(...a),
    commit: (_c: string, _d: StoredDecision) => {
      if (how === 'throw') throw new Error(message);
      return Promise.reject(new Error(message));
    },
    invalidateServer: (s) => inner.invalidateServer(s),
    closeConnection: (s, c) => inner.closeConnection(s, c),
    sweep: (n) => inner.sweep(n),
    entries: () => inner.entries(),
    count: () => inner.count(),
    clear: () => inner.clear()
  };
}

describe('a write that fails fails closed', () => {
  it.each([
    ['throws', 'throw', 'ENOSPC: no space left on device, write'],
    ['rejects', 'reject', "EACCES: permission denied, open '/var/lib/decisions.jsonl'"]
  ] as const)(
    'a store whose commit %s: the server gets -32603, not the sampled answer; the log says why',
    async (_what, how, message) => {
      const t = lab({ store: failingStore(how, message) });
      const p = await pair(t.policy);
      const allowed = await outcome(p.server.createMessage(ask()));
      expect(t.samples).toBe(1);
      expect(allowed.result).toBeUndefined();
      expect(allowed.error).toMatchObject({ code: -32603 });
      expect(allowed.error?.message).toContain(`the decision could not be stored: ${message}`);
      expect(allowed.error?.data).toBeUndefined();
      expect(t.errors).toEqual([
        {
          message: `the decision could not be stored: ${message}`,
          where: { kind: 'store', server: 'everything', connection: 'everything#1', requestId: 0 }
        }
      ]);
      expect(t.records[0]).toMatchObject({
        outcome: 'allowed',
        failedClosed: { code: -32603, message: `the decision could not be stored: ${message}` }
      });
      await p.close();
      await t.policy.close();
    }
  );

  it('an audit path that cannot be written: -32603 and a log line (the default logger)', async () => {
    const lines: string[] = [];
    const original = console.error;
    console.error = (...a: unknown[]) => void lines.push(a.map(String).join(' '));
    try {
      // A directory where the file should be: every append fails (EISDIR), as a read-only path would.
      const t = lab({ audit: mkdtempSync(`${tmpdir()}/audit-dir-`), onError: undefined });
      const p = await pair(t.policy);
      const got = await outcome(p.server.createMessage(ask()));
      expect(got.error?.code).toBe(-32603);
      expect(got.error?.message).toMatch(/the audit record could not be written: EISDIR/);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^sampling-policy-lab: audit failure on everything#1 request 0: the audit record could not be written: EISDIR.*\(answered -32603, nothing served\)$/
      );
      await p.close();
      await t.policy.close();
    } finally {
      console.error = original;
    }
  });
});
