/**
 * The table executor builds a run's first context itself (fast.ts, `firstContext`: one literal)
 * instead of calling the flow's `context` (an `Object.assign` V8 makes a dictionary-mode object
 * of). The two must give the same context — the same keys in the same order, equal values, its
 * objects made afresh — on every input; and a flow whose context differs must not use the
 * literal. sim/engine/executors.spec.ts then runs whole requests both ways (table and XState actor).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveClientConfig } from '../config';
import { buildTable, FastRun, startContext, tableOf, type StepClock } from './fast';
import { authorizationFlow } from './flow';
import { authorizationMachine } from './machine';
import type { StoredDecision } from '../types';
import type { AuthContext, AuthInput } from './types';

const config = resolveClientConfig({});

const inputArb = fc.record({
  id: fc.oneof(fc.string(), fc.integer()),
  server: fc.string({ minLength: 1 }),
  connection: fc.string({ minLength: 1 }),
  text: fc.string(),
  maxTokens: fc.nat(),
  receivedAt: fc.oneof(fc.nat(), fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 })),
  policyHash: fc.string({ minLength: 1, maxLength: 16 }),
  lane: fc.option(fc.string({ minLength: 1 }), { nil: undefined })
});

interface Generated {
  id: string | number;
  server: string;
  connection: string;
  text: string;
  maxTokens: number;
  receivedAt: number;
  policyHash: string;
  lane: string | undefined;
}

function inputOf(g: Generated) {
  const input: AuthInput = {
    request: {
      id: g.id,
      server: g.server,
      connection: g.connection,
      params: {
        messages: [{ role: 'user', content: { type: 'text', text: g.text } }],
        maxTokens: g.maxTokens
      },
      receivedAt: g.receivedAt
    },
    config,
    policyHash: g.policyHash,
    cards: {},
    ...(g.lane !== undefined ? { lane: g.lane } : {})
  };
  return input;
}

/** Keys in order, and each value: the same one, or (objects) an equal one made afresh. */
function expectSameContext(direct: AuthContext, flow: AuthContext): void {
  expect(Object.keys(direct)).toEqual(Object.keys(flow));
  const d = direct as unknown as Record<string, unknown>;
  const f = flow as unknown as Record<string, unknown>;
  for (const k of Object.keys(flow)) {
    if (typeof f[k] === 'object' && f[k] !== null && !Object.isFrozen(f[k])) {
      expect(d[k], k).toEqual(f[k]);
      // Each run's mutable parts are its own (`gen`, `path`), as the flow makes them.
      if (k === 'gen' || k === 'path') expect(d[k], k).not.toBe(f[k]);
    } else expect(Object.is(d[k], f[k]), k).toBe(true);
  }
}

describe("the table executor's first context", () => {
  const table = buildTable(authorizationMachine);

  it('is built directly for the authorisation flow as it is', () => {
    expect(table.direct).toBe(true);
  });

  it("equals the flow's own on generated inputs, with and without a lane (fixed seed)", () => {
    fc.assert(
      fc.property(inputArb, (g) => {
        const input = inputOf(g);
        const { ctx, shape } = startContext(table, input);
        expect(shape).toBe(g.lane !== undefined ? 2 : 1);
        expectSameContext(ctx, authorizationFlow.context(input));
      }),
      { seed: 20_261_202, numRuns: 300 }
    );
  });

  it("takes the flow's own context for an input with members of its own", () => {
    const input = { ...inputOf({ ...sampleInput }), extra: 1 } as AuthInput;
    const { ctx, shape } = startContext(table, input);
    expect(shape).toBe(0);
    expect((ctx as unknown as { extra: number }).extra).toBe(1);
    expect(ctx).toEqual(authorizationFlow.context(input));
  });

  it('is not used for a flow whose first context differs from the literal', () => {
    const changed = [
      {
        ...authorizationFlow,
        context: (i: AuthInput) => ({ ...authorizationFlow.context(i), costMicros: 1 })
      },
      {
        ...authorizationFlow,
        context: (i: AuthInput) =>
          Object.assign(authorizationFlow.context(i), { extra: true }) as AuthContext
      }
    ];
    for (const flow of changed) {
      const t = tableOf(flow);
      expect(t.direct).toBe(false);
      const input = inputOf({ ...sampleInput });
      expect(startContext(t, input).ctx).toEqual(flow.context(input));
    }
  });
});

const sampleInput: Generated = {
  id: 7,
  server: 'everything',
  connection: 'everything#1',
  text: 'Summarise.',
  maxTokens: 200,
  receivedAt: 1_764_000_000_000,
  policyHash: '0123456789abcdef',
  lane: undefined
};

/**
 * A run writes into its own context (fast.ts, `owned`) and pushes onto its own path; an action
 * that throws must still report the context as it was before the event (as an XState actor's
 * snapshot), not one with the event's first writes in it.
 */
describe("the table executor's context on a failing event", () => {
  const clock: StepClock = { setTimer: () => 0, clearTimeout: () => {} };
  const denied = { verdict: 'denied', reason: 'user.denied' } as StoredDecision;

  function failOnReplay(lane: string | undefined) {
    // The replay's own reducer throws, after the event's `stamp` and `rememberLookup` and the
    // new state's `trace` have written.
    const flow = {
      ...authorizationFlow,
      reducers: {
        ...authorizationFlow.reducers,
        prepareReplay: (): never => {
          throw new Error('replay broke');
        }
      }
    };
    let seen: AuthContext | undefined;
    let reported: { error: unknown; ctx: AuthContext | undefined } | undefined;
    const run = new FastRun(
      tableOf(flow),
      {
        lookupDecision: ({ port }) => {
          // The context as it stands before the hit: what the failure must report.
          seen = { ...run.context!, path: [...run.context!.path] };
          port.send({ type: 'store.hit', decision: denied, alert: true, at: 5_000 });
        }
      },
      clock,
      inputOf({ ...sampleInput, lane }),
      {
        complete: () => {},
        error: (error, ctx) => (reported = { error, ctx })
      }
    );
    run.start();
    return { seen, reported };
  }

  it('reports the context before the event, without its writes', () => {
    for (const lane of [undefined, 'lane-a']) {
      const { seen, reported } = failOnReplay(lane);
      expect(String(reported?.error)).toContain('replay broke');
      expect(seen?.path).toEqual(['identifying', 'lookingUp']);
      expect(reported?.ctx).toEqual(seen);
      expect(Object.keys(reported!.ctx!)).toEqual(Object.keys(seen!));
      expect(reported?.ctx?.at).toBe(sampleInput.receivedAt);
      expect(reported?.ctx?.stored).toBe(null);
    }
  });
});
