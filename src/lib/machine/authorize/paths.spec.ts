/**
 * The machine's central promise, walked exhaustively with xstate/graph: every path from a
 * received request to a final state ends in exactly one frame, or — only when the learner's
 * silence switch is on and the frame is a denial — in one recorded silence.
 *
 * The walk sends every event the machine declares: the listed actor events, the delayed events
 * (consent timeout, deadline, the waiting states' timeouts) and each invoked actor's error event.
 * A reachable state that no event moves on is a stuck request, and fails the test; the edges the
 * walk took are checked against every transition in the machine definition.
 */
import { describe, expect, it } from 'vitest';
import type { AnyStateNode } from 'xstate';
import { getAdjacencyMap, getShortestPaths } from 'xstate/graph';
import { RFC_CARD, RFC_DECISION } from '../budget/rfc-example.testing';
import { resolveClientConfig } from '../config';
import type { Evaluation } from '../evaluate';
import type { StoredDecision } from '../types';
import { authorizationMachine, type AuthorizationSnapshot } from './machine';
import type { AuthEvent, AuthInput } from './types';

const card = RFC_CARD;
const decision = RFC_DECISION;

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
  recent: []
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

const at = 1_000;
type Plain = AuthEvent extends infer E ? (E extends unknown ? Omit<E, 'at'> : never) : never;
const listed: Plain[] = [
  { type: 'store.hit', decision: stored('denied'), alert: true },
  { type: 'store.hit', decision: stored('allowed'), alert: false },
  { type: 'store.hit', decision: stored('allowed'), alert: false, joined: true },
  { type: 'store.miss', alert: false },
  { type: 'store.failed', error: 'quota exceeded', alert: false },
  { type: 'store.joining' },
  {
    type: 'policy.evaluated',
    evaluation: { kind: 'deny', reason: 'policy.rate_limit', retryAfterMs: 5000 }
  },
  {
    type: 'policy.evaluated',
    // A reason whose TTL is `none`: denied, and nothing to store.
    evaluation: { kind: 'deny', reason: 'policy.currency_unsupported' }
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
  { type: 'commit.failed', error: 'write failed' },
  { type: 'request.cancelled' }
];

const states = (): AnyStateNode[] =>
  Object.values(authorizationMachine.root.states) as AnyStateNode[];

/** Every event type the machine declares, with the listed payloads where it has them. */
function allEvents(): AuthEvent[] {
  const out: AuthEvent[] = listed.map((e) => ({ ...e, at }) as AuthEvent);
  const listedTypes = new Set(listed.map((e) => e.type));
  const declared = new Set<string>();
  for (const node of [authorizationMachine.root as AnyStateNode, ...states()])
    for (const type of node.transitions.keys()) declared.add(type);
  for (const type of declared) {
    if (listedTypes.has(type as Plain['type'])) continue;
    // Delayed events (`xstate.after.*`) and actor errors (`xstate.error.actor.*`).
    out.push({ type, error: new Error('the actor threw') } as unknown as AuthEvent);
  }
  return out;
}

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
    cards: { [card.model]: card }
  };
}

// Value plus what distinguishes outcomes; the chunk self-loop collapses onto one state.
const serializeState = (s: AuthorizationSnapshot) =>
  JSON.stringify({
    v: s.value,
    o: s.context.outcome,
    c: s.context.consent,
    h: s.context.stored?.verdict ?? null,
    j: s.context.joined,
    w: s.context.waitingForFlight,
    f: s.context.failure !== null,
    e: s.context.storeError !== null,
    g: s.context.gen.started,
    t: s.context.gen.tokensOut > 0
  });

/** One adjacency step, as xstate/graph reports it (its types erase the machine's). */
type Step = { state: unknown; event: { type: string } };
const adjacency = (silence: boolean, refusalAs: 'result' | 'error') =>
  Object.entries(getAdjacencyMap(authorizationMachine, options(silence, refusalAs))).map(
    ([key, v]) => ({
      key,
      state: v.state as AuthorizationSnapshot,
      steps: Object.values(v.transitions as Record<string, Step>).map((t) => ({
        type: t.event.type,
        to: t.state as AuthorizationSnapshot
      }))
    })
  );

const options = (silence: boolean, refusalAs: 'result' | 'error') =>
  ({
    input: inputFor(silence, refusalAs),
    events: allEvents(),
    serializeState,
    // A finished request takes no more events (the pure transition function would still apply
    // root-level ones to a done snapshot; a live actor ignores them).
    stopWhen: (s: AuthorizationSnapshot) => s.status === 'done'
  }) as never;

/** An edge: source state, event type, target states (`·` for a transition that stays). */
const edgeKey = (source: string, type: string, targets: string) =>
  `${source} --${type}--> ${targets}`;

/** Every transition in the machine definition (root-level ones from any state, as `*`). */
function definedEdges(): Set<string> {
  const edges = new Set<string>();
  const targets = (t: { target?: readonly AnyStateNode[] }) =>
    t.target && t.target.length > 0 ? t.target.map((n) => n.key).join(',') : '·';
  for (const [type, defs] of (authorizationMachine.root as AnyStateNode).transitions)
    for (const d of defs) edges.add(edgeKey('*', type, targets(d)));
  for (const node of states()) {
    for (const [type, defs] of node.transitions)
      for (const d of defs) edges.add(edgeKey(node.key, type, targets(d)));
    for (const d of node.always ?? []) edges.add(edgeKey(node.key, 'always', targets(d)));
  }
  return edges;
}

/** The edges one step took, read off the trace the machine keeps of the states it entered. */
function stepEdges(from: AuthorizationSnapshot, type: string, to: AuthorizationSnapshot) {
  const before = from.context.path;
  const entered = to.context.path.slice(before.length);
  const source = String(from.value);
  if (entered.length === 0) return [edgeKey(source, type, '·')];
  const out = [edgeKey(source, type, entered[0]!), edgeKey('*', type, entered[0]!)];
  for (let i = 1; i < entered.length; i++)
    out.push(edgeKey(entered[i - 1]!, 'always', entered[i]!));
  return out;
}

const variants = [false, true].flatMap((silence) =>
  (['result', 'error'] as const).map((refusalAs) => ({ silence, refusalAs }))
);

describe('every path of the authorisation machine', () => {
  for (const { silence, refusalAs } of variants) {
    it(`ends in exactly one frame or one recorded silence (silence ${silence ? 'on' : 'off'}, refusal as ${refusalAs})`, () => {
      const paths = getShortestPaths(authorizationMachine, options(silence, refusalAs));
      const terminal = paths.filter((p) => p.state.status === 'done');
      expect(terminal.length).toBeGreaterThan(30);
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
          expect(['denied', refusalAs === 'error' ? 'budget_exceeded' : 'denied']).toContain(
            out.audit.outcome
          );
        } else {
          expect(final).toBe('sent');
          expect(out.frame!.jsonrpc).toBe('2.0');
          expect(out.frame!.id).toBe(7);
        }
        expect(out.path.at(-1)).toBe(final);
        // A stored verdict is committed just before its frame (unless the request was cancelled
        // while the commit ran: then the internal-error frame follows it).
        if (out.path.includes('committing'))
          expect(out.path.at(-2)).toBe(out.path.includes('erring') ? 'erring' : 'committing');
        if (out.audit.outcome === 'denied' && !out.audit.replayed) {
          expect(out.path).toContain('committing');
        }
        // A step that threw, hung or was cancelled: -32603, no data, no budget decision.
        if (out.path.includes('erring')) {
          expect(out.frame).toMatchObject({ error: { code: -32603 } });
          expect(out.frame && 'error' in out.frame && out.frame.error.data).toBeFalsy();
          expect(out.audit.budgetDecision).toBeNull();
        }
        // A transport or provider failure never carries a budget decision or a policy reason.
        if (out.frame && 'error' in out.frame && out.frame.error.code !== -32003) {
          expect(out.frame.error.data).toBeUndefined();
        }
      }
      expect(seen.has('sent')).toBe(true);
      expect(seen.has('silenced')).toBe(silence);
    });
  }

  it('never gets stuck: every reachable state that is not final has a way on', () => {
    for (const { silence, refusalAs } of variants) {
      const stuck: string[] = [];
      for (const { key, state, steps } of adjacency(silence, refusalAs)) {
        if (state.status === 'done') continue;
        if (!steps.some((t) => serializeState(t.to) !== key)) stuck.push(key);
      }
      expect(stuck).toEqual([]);
    }
  });

  it('covers every edge of the machine definition', () => {
    const defined = definedEdges();
    const walked = new Set<string>();
    let paths = 0;
    for (const { silence, refusalAs } of variants) {
      paths += getShortestPaths(authorizationMachine, options(silence, refusalAs)).length;
      const adj = adjacency(silence, refusalAs);
      // The eventless edges taken before any event, read off the initial state's trace.
      const trace = adj[0]!.state.context.path;
      for (let i = 1; i < trace.length; i++)
        walked.add(edgeKey(trace[i - 1]!, 'always', trace[i]!));
      for (const { state, steps } of adj)
        for (const t of steps) for (const e of stepEdges(state, t.type, t.to)) walked.add(e);
    }
    const missing = [...defined].filter((e) => !walked.has(e));
    console.log(
      `path walk: ${paths} paths, ${defined.size} edges defined, ${defined.size - missing.length} walked`
    );
    expect(missing).toEqual([]);
  });

  it('reaches every state of the machine', () => {
    const paths = getShortestPaths(authorizationMachine, options(true, 'result'));
    const visited = new Set(paths.flatMap((p) => p.state.context.path));
    for (const s of Object.keys(authorizationMachine.config.states!)) expect(visited).toContain(s);
  });

  it('covers every outcome a frame can carry', () => {
    const outcomes = new Set(
      getShortestPaths(authorizationMachine, options(false, 'result'))
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
