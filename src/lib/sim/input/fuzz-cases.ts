/**
 * Test support: random valid scenarios and the edits a learner makes during their run, for
 * fast-check. The guarantees fuzz (fuzz-scenarios.spec.ts) checks every guarantee on them; the
 * fast path's equivalence test (machine/authorize/fast.equivalence.spec.ts) runs them on both
 * executors. Imported by tests only.
 */
import fc from 'fast-check';
import type { ClientConfigInput } from '../../machine/config';
import type { LaneId } from '../../machine/vocabulary';
import { parsePolicy } from '../../machine/policy';
import { REASONS } from '../../machine/reasons';
import { DENIAL_STYLES } from '../../machine/refusal-styles';
import type { Simulation } from '../engine/engine';

// ───────────────────────────── the space of valid scenarios ─────────────────────────────

/** `flat`: spread evenly over the range, not biased to its ends as fast-check's integers are. */
const amount = (lo: number, hi: number, flat = false) => {
  const micros = fc.integer({ min: lo, max: hi });
  return (flat ? fc.noBias(micros) : micros).map((m) => (m / 1_000_000).toFixed(6));
};

const ttl = fc.oneof(
  fc.constant({ kind: 'session' as const }),
  fc.constant({ kind: 'window' as const }),
  fc.record({ kind: fc.constant('ms' as const), ms: fc.integer({ min: 100, max: 120_000 }) })
);

const reasons = fc.dictionary(
  fc.constantFrom(...REASONS),
  fc.record({ retryable: fc.boolean(), ttl }, { requiredKeys: [] }),
  { maxKeys: 3 }
);

export const clientArb = fc.record(
  {
    store: fc.constantFrom('connection', 'durable'),
    reasons,
    silence: fc.boolean(),
    canonicalize: fc.boolean(),
    annotateTrim: fc.boolean(),
    storeAllowed: fc.boolean(),
    allowedTtl: ttl,
    consentTimeoutMs: fc.integer({ min: 500, max: 90_000 }),
    deadlineMs: fc.integer({ min: 500, max: 60_000 }),
    alert: fc.record({
      threshold: fc.integer({ min: 1, max: 40 }),
      windowMs: fc.integer({ min: 1_000, max: 600_000 })
    }),
    refusalAs: fc.constantFrom('result', 'error'),
    capScope: fc.constantFrom('per-call', 'session-pool'),
    sessionPool: fc.record({ amount: amount(1_000, 200_000), currency: fc.constant('USD') }),
    advertiseCeiling: fc.boolean(),
    preflightDefault: fc.constantFrom('reject', 'truncate'),
    denialStyle: fc.constantFrom(...DENIAL_STYLES),
    protocol: fc.constantFrom('2025-11-25', '2026-07-28'),
    hostRetries: fc.integer({ min: 0, max: 4 }),
    hostRetryDelayMs: fc.integer({ min: 10, max: 30_000 })
  },
  { requiredKeys: ['store'] }
);

export const policyBlockArb = fc.record({
  sampling: fc.constantFrom(true, true, true, false),
  allowedModels: fc.constantFrom(['example-model-v2'], ['*'], ['example-model-lite']),
  defaultModel: fc.constant('example-model-v2'),
  maxInputTokens: fc.integer({ min: 50, max: 32_000 }),
  maxContext: fc.constantFrom('none', 'thisServer', 'allServers'),
  rateLimit: fc.option(
    fc.record({
      requests: fc.integer({ min: 1, max: 30 }),
      windowMs: fc.integer({ min: 5_000, max: 600_000 })
    })
  ),
  budget: fc.option(
    fc.record({
      amount: amount(0, 100_000),
      currency: fc.constant('USD'),
      windowMs: fc.integer({ min: 30_000, max: 3_600_000 })
    })
  ),
  perCallCap: fc.option(
    fc.oneof(
      fc.record({ amount: amount(1, 60_000), currency: fc.constant('USD') }),
      fc.record({ tokens: fc.integer({ min: 10, max: 20_000 }) })
    )
  ),
  consent: fc.constantFrom('ask', 'ask', 'allow', 'deny'),
  // Across the fuzzed requests' estimates (up to about $0.15), so calls fall each side; now
  // and then in a currency no card prices, which must never skip a dialog.
  askAbove: fc.option(
    fc.record({
      amount: amount(0, 100_000, true),
      currency: fc.constantFrom('USD', 'USD', 'USD', 'EUR')
    })
  )
});

const lane = (label: string) =>
  fc.record({
    label: fc.constant(label),
    client: clientArb,
    policy: fc.record({
      version: fc.constant(1),
      defaults: policyBlockArb,
      servers: fc.constant({})
    })
  });

const PARAMS: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  'well-behaved': fc.record({ maxRetries: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: [] }),
  'naive-retrier': fc.record(
    { maxRetries: fc.integer({ min: 0, max: 8 }), baseMs: fc.integer({ min: 100, max: 5_000 }) },
    { requiredKeys: [] }
  ),
  'tight-loop': fc.record(
    {
      intervalMs: fc.integer({ min: 500, max: 10_000 }),
      maxRetries: fc.integer({ min: 1, max: 60 })
    },
    { requiredKeys: [] }
  ),
  reconnector: fc.record(
    {
      reconnectMs: fc.integer({ min: 50, max: 2_000 }),
      maxReconnects: fc.integer({ min: 1, max: 20 })
    },
    { requiredKeys: [] }
  ),
  'prompt-mutator': fc.record(
    {
      intervalMs: fc.integer({ min: 500, max: 5_000 }),
      maxRetries: fc.integer({ min: 1, max: 40 })
    },
    { requiredKeys: [] }
  ),
  'context-greedy': fc.constant({}),
  'budget-shrinker': fc.record(
    { mode: fc.constantFrom('naive', 'exact'), maxShrinks: fc.integer({ min: 0, max: 3 }) },
    { requiredKeys: [] }
  ),
  'serialiser-variant': fc.record(
    {
      intervalMs: fc.integer({ min: 200, max: 5_000 }),
      maxRetries: fc.integer({ min: 1, max: 20 })
    },
    { requiredKeys: [] }
  ),
  'timeout-sensitive': fc.record(
    {
      maxRetries: fc.integer({ min: 1, max: 15 }),
      retryDelayMs: fc.integer({ min: 10, max: 2_000 })
    },
    { requiredKeys: [] }
  )
};

const server = (i: number) =>
  fc.constantFrom(...Object.keys(PARAMS)).chain((behaviour) =>
    fc.record({
      name: fc.constant(`s${i}`),
      behaviour: fc.constant(behaviour),
      count: fc.integer({ min: 1, max: 2 }),
      params: PARAMS[behaviour]!,
      request: fc.record(
        {
          systemPrompt: fc.constantFrom('You summarise.', 'Tu résumes.'),
          prompt: fc.constantFrom('Summarise item {n}.', 'Draft reply {n}, café.'),
          promptTokens: fc.integer({ min: 0, max: 30_000 }),
          includeContext: fc.constantFrom('none', 'thisServer', 'allServers'),
          maxTokens: fc.integer({ min: 1, max: 4_000 }),
          budget: fc.record(
            {
              intent: fc.record({
                maxCost: fc.record({ amount: amount(1, 50_000), currency: fc.constant('USD') })
              }),
              onExceeded: fc.constantFrom('reject', 'truncate')
            },
            { requiredKeys: [] }
          )
        },
        { requiredKeys: ['prompt', 'maxTokens'] }
      ),
      intervalMs: fc.integer({ min: 2_000, max: 300_000 }),
      tasks: fc.integer({ min: 1, max: 4 }),
      timeoutMs: fc.integer({ min: 1_000, max: 120_000 })
    })
  );

export const scenarioArb = fc
  .record({
    seed: fc.integer({ min: 0, max: 0xffffffff }),
    durationMs: fc.integer({ min: 30_000, max: 300_000 }),
    servers: fc
      .integer({ min: 1, max: 3 })
      .chain((k) => fc.tuple(...Array.from({ length: k }, (_, i) => server(i + 1)))),
    provider: fc.record(
      {
        cards: fc.constantFrom(undefined, [
          {
            model: 'example-model-v2',
            version: '2026-07-01',
            currency: 'USD',
            inputPerMtok: '3.00',
            outputPerMtok: '15.00',
            cachedInputPerMtok: '0.30'
          },
          {
            model: 'example-model-lite',
            version: '2026-07-01',
            currency: 'USD',
            inputPerMtok: '0.80',
            outputPerMtok: '4.00'
          }
        ]),
        latencyMs: fc.integer({ min: 0, max: 3_000 }),
        chunkTokens: fc.integer({ min: 1, max: 200 }),
        chunkIntervalMs: fc.integer({ min: 0, max: 400 }),
        transportFailureRate: fc.double({ min: 0, max: 0.3, noNaN: true }),
        providerErrorRate: fc.double({ min: 0, max: 0.3, noNaN: true }),
        slowRate: fc.double({ min: 0, max: 0.5, noNaN: true }),
        slowFactor: fc.double({ min: 1, max: 100, noNaN: true })
      },
      { requiredKeys: [] }
    ),
    user: fc.record(
      {
        approveBase: fc.double({ min: 0, max: 1, noNaN: true }),
        fatiguePerPrompt: fc.double({ min: 0, max: 0.2, noNaN: true }),
        maxApprove: fc.double({ min: 0, max: 1, noNaN: true }),
        responseMs: fc.integer({ min: 0, max: 200_000 })
      },
      { requiredKeys: [] }
    ),
    lanes: fc.record({ A: lane('A'), B: lane('B') })
  })
  .map((s) => ({
    version: 1,
    name: 'fuzz',
    title: 'A random scenario',
    start: '2026-03-10T09:00:00Z',
    ...s,
    provider: Object.fromEntries(Object.entries(s.provider).filter(([, v]) => v !== undefined))
  }));

/** A change the learner makes mid-run: a lane's whole client configuration, or its policy. */
export interface Edit {
  /** When, as a fraction of the run. */
  at: number;
  lane: LaneId;
  client?: Record<string, unknown>;
  policy?: Record<string, unknown>;
}

const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    lane: fc.constantFrom('A', 'B'),
    client: clientArb
  }),
  fc.record({
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    lane: fc.constantFrom('A', 'B'),
    policy: fc.record({
      version: fc.constant(1),
      defaults: policyBlockArb,
      servers: fc.constant({})
    })
  })
) as fc.Arbitrary<Edit>;

/** A scenario and the learner's edits during its run. */
export const caseArb = fc.record({
  scenario: scenarioArb,
  edits: fc.array(editArb, { maxLength: 3 })
});

/** Apply `edits` to `sim` at their times (fractions of `durationMs`), in time order. */
export function applyEdits(sim: Simulation, durationMs: number, edits: readonly Edit[]): void {
  for (const e of [...edits].sort((a, b) => a.at - b.at)) {
    sim.advanceTo(sim.start + Math.floor(e.at * durationMs));
    if (e.client) sim.setLaneConfig(e.lane, e.client as ClientConfigInput);
    if (e.policy) {
      const p = parsePolicy(e.policy);
      if (!p.ok) throw new Error(`the generator made an invalid policy: ${JSON.stringify(p)}`);
      sim.setLanePolicy(e.lane, p.policy);
    }
  }
}

// ───────────────────────────── the edges issue 18 found ─────────────────────────────

/**
 * Scenarios shaped like the cases a new user's runs broke (issue #18), where the uniform space
 * above rarely goes: several servers sharing nothing but each with a tiny budget window and
 * concurrent long calls holding its money; approvals (a user who says yes) followed by volume
 * denials (small rate windows, small budgets); retriers whose intervals straddle short windows,
 * so replays cross a window boundary; and intents in a currency the host cannot price.
 */
export const edgeCaseArb = fc
  .record({
    seed: fc.integer({ min: 0, max: 0xffffffff }),
    durationMs: fc.integer({ min: 60_000, max: 400_000 }),
    behaviour: fc.constantFrom('tight-loop', 'naive-retrier', 'well-behaved', 'timeout-sensitive'),
    count: fc.integer({ min: 2, max: 7 }),
    intervalMs: fc.integer({ min: 200, max: 6_000 }),
    maxTokens: fc.integer({ min: 50, max: 1_200 }),
    promptTokens: fc.integer({ min: 0, max: 3_000 }),
    currency: fc.constantFrom('USD', 'USD', 'USD', 'EUR'),
    latencyMs: fc.integer({ min: 200, max: 8_000 }),
    budget: amount(1_000, 40_000),
    budgetWindowMs: fc.integer({ min: 30_000, max: 420_000 }),
    rate: fc.option(
      fc.record({
        requests: fc.integer({ min: 1, max: 4 }),
        // Short windows (replays across the boundary) and windows longer than the rate-limit
        // TTL (a replay's wait is the window's reset, not the entry's remaining life).
        windowMs: fc.oneof(
          fc.integer({ min: 5_000, max: 60_000 }),
          fc.integer({ min: 60_001, max: 600_000 })
        )
      })
    ),
    consent: fc.constantFrom('ask', 'ask', 'allow'),
    approve: fc.constantFrom(1, 0.9, 0.5),
    laneA: clientArb,
    laneB: clientArb
  })
  .map((e) => {
    const policy = {
      version: 1,
      defaults: {
        sampling: true,
        allowedModels: ['example-model-v2'],
        defaultModel: 'example-model-v2',
        maxInputTokens: 32_000,
        maxContext: 'allServers',
        rateLimit: e.rate,
        budget: { amount: e.budget, currency: 'USD', windowMs: e.budgetWindowMs },
        perCallCap: null,
        consent: e.consent
      },
      servers: {}
    };
    return {
      scenario: {
        version: 1,
        name: 'fuzz-edges',
        title: 'Edges of budgets, approvals and windows',
        start: '2026-03-10T09:00:00Z',
        seed: e.seed,
        durationMs: e.durationMs,
        servers: [
          {
            name: 'edge',
            behaviour: e.behaviour,
            count: e.count,
            params: {},
            request: {
              systemPrompt: 'You summarise.',
              prompt: 'Summarise item {n}.',
              promptTokens: e.promptTokens,
              includeContext: 'thisServer',
              maxTokens: e.maxTokens,
              budget: { intent: { maxCost: { amount: '0.050000', currency: e.currency } } }
            },
            intervalMs: e.intervalMs,
            tasks: 4,
            timeoutMs: 60_000
          }
        ],
        provider: { latencyMs: e.latencyMs, chunkTokens: 20, chunkIntervalMs: 200 },
        user: {
          approveBase: e.approve,
          fatiguePerPrompt: 0,
          maxApprove: e.approve,
          responseMs: 500
        },
        lanes: {
          A: { label: 'A', client: { ...e.laneA, silence: false }, policy },
          B: { label: 'B', client: { ...e.laneB, silence: false }, policy }
        }
      },
      edits: [] as Edit[]
    };
  });
