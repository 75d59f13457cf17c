/**
 * The scenario file: one seed, one server population, one provider, one user, and two lanes
 * (A and B) — each a client configuration plus a policy. One population and one seed drive both
 * lanes, so only the configuration differs.
 *
 * Defined once in zod; `parseScenario` reports every error with its JSON path, and a scenario
 * that fails validation never runs half-configured.
 *
 * Over 400 lines on purpose: the schema and parseScenario's checks across its fields read together.
 */
import { z } from 'zod';
import type { ClientConfigInput } from '../../machine/config';
import { depthExceeded, depthPathText } from '../../machine/identity';
import { nameRecord } from '../../machine/names';
import {
  describeIssues,
  formatPath,
  PolicySchema,
  policyKeysAt,
  type PathSegment,
  type Policy
} from '../../machine/policy';
import { quote } from '../../machine/excerpt';
import {
  ClientConfigInputSchema,
  MoneyInputSchema as MoneySchema,
  MsInputSchema as Ms,
  RateCardsSchema
} from '../../machine/config-input';
import { IncludeContextSchema, OnExceededSchema, type LaneId } from '../../machine/vocabulary';
import { DEFAULT_PROVIDER, type ProviderSpec } from '../actors/provider';
import {
  estimateWork,
  hostCallsPerTask,
  LIMITS,
  responseChunks,
  serverWork,
  templateChars,
  workRefusal,
  type WorkEstimate
} from './limits';
import { jsonInput } from './json-input';
import { LANE_IDS } from './lanes';
import { Rng } from '../world/rng';
import { BEHAVIOURS, BEHAVIOUR_NAMES, createServer } from '../actors/servers/behaviours';
import { openCaps, PARAM_SPECS, paramsSchema } from '../actors/servers/params';
import { DEFAULT_USER, type UserSpec } from '../actors/user';
import type { ServerEnv, ServerSpec } from '../world/world';

/** Free text shown to the learner: bounded so a file cannot make the page lay out megabytes. */
/** Text a server sends: well-formed UTF-16, or its requests could not be hashed (identity.ts). */
const Text = (max: number) =>
  z
    .string()
    .max(max)
    .refine(
      (s) => s.isWellFormed(),
      'contains a lone surrogate (half of a UTF-16 pair): not valid text'
    );
const Probability = z.number().min(0).max(1);

// A lane's client configuration (and the provider's rate cards) are defined below both the
// simulation and the handler, in machine/config-input.ts: both validate with the same schemas.
export { ClientConfigInputSchema };

const RequestTemplateSchema = z.strictObject({
  systemPrompt: Text(LIMITS.tokens * 4).optional(),
  prompt: Text(LIMITS.tokens * 4).min(1),
  promptTokens: z.int().min(0).max(LIMITS.tokens).optional(),
  prefixTokens: z.int().min(0).max(LIMITS.tokens).optional(),
  includeContext: IncludeContextSchema.optional(),
  modelHints: z.array(z.string().min(1).max(200)).max(100).optional(),
  maxTokens: z.int().positive().max(LIMITS.tokens),
  temperature: z.number().min(0).max(2).optional(),
  budget: z
    .strictObject({
      intent: z.strictObject({ maxCost: MoneySchema.optional() }).optional(),
      onExceeded: OnExceededSchema.optional()
    })
    .optional()
});

const ServerGroupSchema = z.strictObject({
  name: z.string().min(1).max(200),
  behaviour: z.enum(BEHAVIOUR_NAMES as [string, ...string[]]),
  /** How many servers of this kind; more than one are named `name-1`, `name-2`, … */
  count: z.int().min(1).max(LIMITS.servers).default(1),
  params: nameRecord(z.string(), z.unknown()).default({}),
  request: RequestTemplateSchema,
  intervalMs: z.number().min(LIMITS.minIntervalMs).max(LIMITS.spanMs),
  tasks: z.int().min(0).max(LIMITS.tasks).optional(),
  startAfterMs: Ms.optional(),
  timeoutMs: z.number().positive().max(LIMITS.spanMs).default(60_000)
});

const ProviderSchema = z.strictObject({
  cards: RateCardsSchema.optional(),
  latencyMs: Ms.optional(),
  latencyJitter: Probability.optional(),
  chunkTokens: z.int().positive().max(LIMITS.tokens).optional(),
  chunkIntervalMs: Ms.optional(),
  outputFraction: z.number().positive().max(1).optional(),
  transportFailureRate: Probability.optional(),
  providerErrorRate: Probability.optional(),
  slowRate: Probability.optional(),
  slowFactor: z.number().min(1).max(1_000).optional(),
  cacheTtlMs: Ms.optional(),
  chunkTexts: z.array(Text(10_000)).min(1).max(1_000).optional(),
  failures: z
    .array(
      z.strictObject({
        server: z.string().min(1).max(200),
        kind: z.enum(['transport', 'provider']),
        call: z.int().min(1).max(LIMITS.tasks).optional()
      })
    )
    .max(10_000)
    .optional()
});

const UserSchema = z.strictObject({
  approveBase: Probability.optional(),
  fatiguePerPrompt: z.number().min(0).max(1).optional(),
  maxApprove: Probability.optional(),
  responseMs: Ms.optional()
});

const LaneSchema = z.strictObject({
  label: z.string().min(1).max(80),
  client: ClientConfigInputSchema.default({}),
  policy: PolicySchema,
  /** SEP-2577's baseline: servers call the provider with their own key; the client is bypassed. */
  direct: z.boolean().optional()
});

const LessonSchema = z.strictObject({
  title: Text(200),
  predict: Text(20_000),
  explain: Text(20_000),
  watch: z.array(Text(200)).max(50).optional()
});

const ScenarioSchema = z
  .strictObject({
    version: z.literal(1),
    name: z.string().min(1).max(200),
    title: z.string().min(1).max(200),
    summary: Text(20_000).optional(),
    lesson: LessonSchema.optional(),
    seed: z.int().min(0).max(0xffffffff),
    /** The virtual clock's start, an ISO time; budget windows align to it. */
    start: z.iso.datetime().default('2026-03-10T09:00:00Z'),
    durationMs: z.int().min(1_000).max(LIMITS.durationMs),
    /** How often the metrics are sampled into time series (default: duration / 240). */
    sampleMs: z.int().min(100).max(LIMITS.durationMs).optional(),
    /**
     * Restart the client at these virtual ms from the start (sim/engine/restart.ts): every connection
     * drops and reconnects, the connection-scoped lane forgets its decisions, the durable lane
     * keeps them.
     */
    restarts: z.array(z.int().min(0).max(LIMITS.durationMs)).max(100).optional(),
    servers: z.array(ServerGroupSchema).min(1).max(LIMITS.groups),
    provider: ProviderSchema.default({}),
    user: UserSchema.default({}),
    lanes: z.strictObject({ A: LaneSchema, B: LaneSchema })
  })
  .describe('A Sampling Policy Lab scenario.');

export type ScenarioInput = z.input<typeof ScenarioSchema>;
export type ScenarioData = z.output<typeof ScenarioSchema>;

export type { LaneId };
// Plain data, for the runtime that loads no zod (lanes.ts); the schema takes the same ids.
export { LANE_IDS };

/** A validated scenario with its defaults filled in and its server groups expanded. */
export interface Scenario {
  data: ScenarioData;
  name: string;
  seed: number;
  start: number;
  durationMs: number;
  sampleMs: number;
  servers: ServerSpec[];
  provider: ProviderSpec;
  user: UserSpec;
  lanes: Record<
    LaneId,
    { label: string; client: ClientConfigInput; policy: Policy; direct?: boolean }
  >;
}

export interface ScenarioError {
  path: string;
  message: string;
}

/** A valid scenario, and the work estimate that admitted it (limits.ts). */
export type ScenarioParse =
  { ok: true; scenario: Scenario; work: WorkEstimate } | { ok: false; errors: ScenarioError[] };

/** Expand server groups: `count: 3` of `api` gives `api-1`, `api-2`, `api-3`. */
function expandServers(data: ScenarioData): ServerSpec[] {
  const out: ServerSpec[] = [];
  for (const g of data.servers) {
    for (let i = 1; i <= g.count; i++) {
      out.push({
        name: g.count === 1 ? g.name : `${g.name}-${i}`,
        behaviour: g.behaviour,
        params: g.params,
        request: g.request,
        intervalMs: g.intervalMs,
        ...(g.tasks !== undefined ? { tasks: g.tasks } : {}),
        ...(g.startAfterMs !== undefined ? { startAfterMs: g.startAfterMs } : {}),
        timeoutMs: g.timeoutMs
      });
    }
  }
  return out;
}

/** A server env that does nothing: enough to let a behaviour check its parameters. */
function inertEnv(name: string): ServerEnv {
  return {
    name,
    rng: new Rng(0),
    now: () => 0,
    schedule: () => 0,
    cancel: () => {},
    send: () => null,
    connected: () => false,
    disconnect: () => {},
    connect: () => {},
    advertisedCeiling: () => null,
    protocol: () => '2025-11-25',
    hostRetryAfterMs: () => null,
    report: () => {}
  };
}

/**
 * Validate a scenario (an object, or JSON text). Every problem comes back with its JSON path;
 * nothing is half-applied: the caller gets a scenario or a list of errors.
 */
export function parseScenario(input: unknown): ScenarioParse {
  const json = jsonInput(input);
  if (!json.ok) return json;
  const raw = json.value;
  // Before anything recursive sees the value: a scenario is a few levels deep, request params a
  // few more; anything deeper is refused with its path.
  const deep = depthExceeded(raw, LIMITS.paramsDepth);
  if (deep) {
    return {
      ok: false,
      errors: [
        {
          path: depthPathText(deep),
          message: `nested deeper than ${LIMITS.paramsDepth} levels (the limit for any input)`
        }
      ]
    };
  }
  const r = ScenarioSchema.safeParse(raw);
  if (!r.success) return { ok: false, errors: scenarioIssues(r.error.issues, raw) };
  const data = r.data;
  const errors: ScenarioError[] = [];
  const names = new Set<string>();
  const samples = data.durationMs / (data.sampleMs ?? Math.max(1_000, data.durationMs / 240));
  if (samples > LIMITS.samples) {
    errors.push({
      path: '$.sampleMs',
      message: `${data.sampleMs} ms gives ${Math.ceil(samples)} samples per lane; the limit is ${LIMITS.samples}`
    });
  }
  const total = data.servers.reduce((n, g) => n + g.count, 0);
  if (total > LIMITS.servers) {
    errors.push({
      path: '$.servers',
      message: `${total} servers in all (counts included); the limit is ${LIMITS.servers}`
    });
  }
  if (errors.length) return { ok: false, errors };
  const provider = { ...DEFAULT_PROVIDER, ...stripUndefined(data.provider) };
  const work: { requests: number; chars: number; chunks: number }[] = [];
  data.servers.forEach((g, i) => {
    const known = BEHAVIOURS[g.behaviour]!.defaults;
    for (const key of Object.keys(g.params)) {
      // Own members only: `constructor` and `__proto__` are not parameters of any behaviour.
      if (!Object.hasOwn(known, key)) {
        errors.push({
          path: formatPath(['servers', i, 'params', key]),
          message: `unknown parameter for ${g.behaviour}; it takes ${Object.keys(known).join(', ')}`
        });
      }
    }
    const bad = paramErrors(g.behaviour, g.params, ['servers', i, 'params']);
    const chunks = responseChunks(g.request.maxTokens, provider.chunkTokens);
    if (chunks > LIMITS.chunksPerResponse) {
      const at = data.provider.chunkTokens === undefined ? ' (the default)' : '';
      bad.push({
        path: formatPath(['servers', i, 'request', 'maxTokens']),
        message:
          `${g.request.maxTokens} tokens in chunks of ${provider.chunkTokens}${at} is ${chunks.toLocaleString('en-US')} chunks a response; ` +
          `the limit is ${LIMITS.chunksPerResponse.toLocaleString('en-US')} (provider.chunkTokens of at least ${Math.ceil(g.request.maxTokens / LIMITS.chunksPerResponse)}, or fewer maxTokens)`
      });
    }
    errors.push(...bad);
    // Out-of-bounds parameters would only make the behaviour's own checks throw, or the estimate
    // meaningless.
    if (bad.length) return;
    const params = { ...known, ...g.params };
    for (const s of expandServers({ ...data, servers: [g] })) {
      if (names.has(s.name)) {
        errors.push({
          path: formatPath(['servers', i, 'name']),
          message: `duplicate server name ${quote(s.name)}`
        });
      }
      names.add(s.name);
      try {
        createServer(inertEnv(s.name), s);
      } catch (e) {
        errors.push({ path: formatPath(['servers', i, 'params']), message: (e as Error).message });
      }
      const channels = PARAM_SPECS[g.behaviour]!.retries(params, s);
      work.push({
        ...serverWork(s, channels, data.durationMs),
        chars: templateChars(g.request),
        chunks
      });
    }
  });
  if (errors.length) return { ok: false, errors };
  // Both lanes are counted as the costlier one (estimateWork doubles each server's requests).
  const hostCalls = Math.max(
    ...LANE_IDS.map((id) => hostCallsPerTask(data.lanes[id].client, data.durationMs))
  );
  const estimate = estimateWork(
    hostCalls === 1 ? work : work.map((w) => ({ ...w, requests: w.requests * hostCalls }))
  );
  const refused = workRefusal(estimate);
  if (refused) return { ok: false, errors: [{ path: '$', message: refused }] };
  const start = Date.parse(data.start);
  return {
    ok: true,
    work: estimate,
    scenario: {
      data,
      name: data.name,
      seed: data.seed,
      start,
      durationMs: data.durationMs,
      sampleMs: data.sampleMs ?? Math.max(1_000, Math.round(data.durationMs / 240)),
      servers: expandServers(data),
      provider,
      user: { ...DEFAULT_USER, ...stripUndefined(data.user) },
      lanes: {
        A: {
          label: data.lanes.A.label,
          client: data.lanes.A.client,
          policy: data.lanes.A.policy,
          ...(data.lanes.A.direct ? { direct: true } : {})
        },
        B: {
          label: data.lanes.B.label,
          client: data.lanes.B.client,
          policy: data.lanes.B.policy,
          ...(data.lanes.B.direct ? { direct: true } : {})
        }
      }
    }
  };
}

/** zod issues as plain messages with their paths; a lane's policy gets the policy's wording. */
function scenarioIssues(issues: readonly unknown[], raw: unknown): ScenarioError[] {
  const inPolicy = (s: PathSegment[]) => s[0] === 'lanes' && s[2] === 'policy';
  return describeIssues(
    issues,
    raw,
    (s) => (inPolicy(s) ? policyKeysAt(3)(s) : []),
    ScenarioSchema
  ).map(({ path, message }) => ({ path, message }));
}

/** A server group's behaviour parameters checked against their bounds, with their paths. */
function paramErrors(
  behaviour: string,
  params: Record<string, unknown>,
  at: PathSegment[]
): ScenarioError[] {
  const schema = paramsSchema(behaviour);
  const r = schema.safeParse(params);
  if (r.success) return [];
  const open = openCaps(behaviour);
  return describeIssues(r.error.issues, params, () => [], schema).map(({ segments, message }) => {
    const key = String(segments[0]);
    if (open.includes(key)) message = message.replace(/(, got |$)/, ' (or null for no limit)$1');
    else if (params[key] === null && key.startsWith('max'))
      // The polite caps: their waits are what a frame says, 0 included.
      message = `must be a whole number from 0 to ${LIMITS.retries}, got null: ${behaviour} retries as soon as a frame says, so only this cap bounds it`;
    return { path: formatPath([...at, ...segments]), message };
  });
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
