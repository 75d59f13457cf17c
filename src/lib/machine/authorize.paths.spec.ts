/**
 * The machine's central promise, walked exhaustively with xstate/graph: every path from a
 * received request to a final state ends in exactly one frame, or — only when the learner's
 * silence switch is on and the frame is a denial — in one recorded silence.
 */
import { describe, expect, it } from 'vitest';
import { getSimplePaths } from 'xstate/graph';
import type { RateCard } from './budget';
import {
  authorizationMachine,
  type AuthEvent,
  type AuthInput,
  type AuthorizationSnapshot
} from './authorize';
import { resolveClientConfig } from './config';
import type { Evaluation } from './evaluate';
import type { BudgetDecision, StoredDecision } from './types';

const card: RateCard = {
  model: 'example-model-v2',
  version: '2026-07-01',
  currency: 'USD',
  inputPerMtok: '3.00',
  outputPerMtok: '15.00'
};

const decision: BudgetDecision = {
  estimatedCost: { amount: '0.1027', currency: 'USD' },
  limitApplied: { amount: '0.0500', currency: 'USD' },
  limitSource: 'host_policy',
  meterBasis: 'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok',
  estimatedTokens: { input: 24000, output: 2048 }
};

const stored = (verdict: 'allowed' | 'denied'): StoredDecision => ({
  server: 's',
  identity: 's:x',
  verdict,
  reason: verdict === 'denied' ? 'user.denied' : null,
  retryable: false,
  decidedAt: 0,
  expiresAt: null,
  policyHash: 'h',
  represented: 1,
  recent: [0]
});

const proceed = (over: Partial<Extract<Evaluation, { kind: 'proceed' }>> = {}): Evaluation => ({
  kind: 'proceed',
  model: 'example-model-v2',
  inputTokens: 1000,
  maxTokens: 2048,
  context: { requested: 'allServers', applied: 'thisServer', trimmed: true },
  limitMicros: 14_000,
  limitTokens: null,
  decision,
  consent: 'ask',
  ...over
});

const events: AuthEvent[] = [
  { type: 'store.hit', decision: stored('denied'), alert: true },
  { type: 'store.hit', decision: stored('allowed'), alert: false },
  { type: 'store.miss' },
  { type: 'store.failed', error: 'quota exceeded' },
  {
    type: 'policy.evaluated',
    evaluation: { kind: 'deny', reason: 'policy.rate_limit', retryAfterMs: 5000 }
  },
  {
    type: 'policy.evaluated',
    evaluation: { kind: 'budget_exceeded', model: 'example-model-v2', decision }
  },
  { type: 'policy.evaluated', evaluation: proceed() },
  {
    type: 'policy.evaluated',
    evaluation: proceed({
      consent: 'allow',
      limitMicros: null,
      decision: null,
      context: { requested: 'none', applied: 'none', trimmed: false }
    })
  },
  { type: 'policy.evaluated', evaluation: proceed({ consent: 'deny' }) },
  { type: 'consent.answered', approved: true },
  { type: 'consent.answered', approved: false },
  { type: 'provider.started', cachedInputTokens: 0 },
  { type: 'provider.chunk', text: 'The cap ', tokens: 400 },
  { type: 'provider.chunk', text: 'x', tokens: 5000 },
  { type: 'provider.done', stopReason: 'endTurn' },
  { type: 'provider.failed', kind: 'timeout', message: 'timeout' },
  { type: 'provider.failed', kind: 'error', message: 'boom' },
  { type: 'commit.done' },
  { type: 'commit.failed', error: 'write failed' }
];

function inputFor(silence: boolean, refusalAs: 'result' | 'error'): AuthInput {
  return {
    request: {
      id: 7,
      server: 's',
      connection: 's#1',
      params: {
        messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
        maxTokens: 2048,
        includeContext: 'allServers'
      },
      receivedAt: 0
    },
    config: resolveClientConfig({ silence, refusalAs }),
    policyHash: 'h',
    cards: { [card.model]: card },
    now: () => 1_000
  };
}

function walk(silence: boolean, refusalAs: 'result' | 'error') {
  return getSimplePaths(authorizationMachine, {
    input: inputFor(silence, refusalAs),
    events,
    // Value plus what distinguishes outcomes; the chunk self-loop collapses onto one state.
    serializeState: (s: AuthorizationSnapshot) =>
      JSON.stringify({
        v: s.value,
        o: s.context.outcome,
        c: s.context.consent,
        h: !!s.context.stored,
        t: s.context.gen.tokensOut > 0
      })
  } as never);
}

describe('every terminal path of the authorisation machine', () => {
  for (const silence of [false, true]) {
    for (const refusalAs of ['result', 'error'] as const) {
      it(`ends in exactly one frame or one recorded silence (silence ${silence ? 'on' : 'off'}, refusal as ${refusalAs})`, () => {
        const paths = walk(silence, refusalAs);
        const terminal = paths.filter((p) => p.state.status === 'done');
        expect(terminal.length).toBeGreaterThan(20);
        const seen = new Set<string>();
        for (const p of terminal) {
          const out = p.state.output!;
          const final = String(p.state.value);
          seen.add(final);
          expect(out.audit).toBeTruthy();
          const frames = out.frame ? 1 : 0;
          const silences = out.audit.silenced ? 1 : 0;
          expect(frames + silences).toBe(1);
          if (final === 'silenced') {
            expect(silence).toBe(true);
            expect(out.frame).toBeNull();
            // Only -32003 frames are ever silenced: denials, and cost refusals sent as errors.
            expect(['denied', refusalAs === 'error' ? 'budget_exceeded' : 'denied']).toContain(
              out.audit.outcome
            );
          } else {
            expect(final).toBe('sent');
            expect(out.frame!.jsonrpc).toBe('2.0');
            expect(out.frame!.id).toBe(7);
          }
          // The path ends where the machine ended; a stored verdict is committed just before.
          expect(out.path.at(-1)).toBe(final);
          if (out.path.includes('committing')) expect(out.path.at(-2)).toBe('committing');
          // Denials are always stored (fresh) or come from the store (replayed).
          if (out.audit.outcome === 'denied' && !out.audit.replayed) {
            expect(out.path).toContain('committing');
          }
        }
        expect(seen.has('sent')).toBe(true);
        expect(seen.has('silenced')).toBe(silence);
      });
    }
  }

  it('reaches every state of the machine', () => {
    const paths = walk(true, 'result');
    const visited = new Set(paths.flatMap((p) => p.state.context.path));
    for (const s of Object.keys(authorizationMachine.config.states!)) expect(visited).toContain(s);
  });

  it('covers every outcome a frame can carry', () => {
    const outcomes = new Set(
      walk(false, 'result')
        .filter((p) => p.state.status === 'done')
        .map((p) => p.state.output!.audit.outcome)
    );
    expect([...outcomes].sort()).toEqual(
      [
        'allowed',
        'budget_exceeded',
        'budget_exhausted',
        'denied',
        'provider_error',
        'transport_error',
        'trimmed'
      ].sort()
    );
  });
});
