/**
 * The scenario file: one seed, one server population, one provider, one user, and two lanes
 * (A and B) — each a client configuration plus a policy. One population and one seed drive both
 * lanes, so only the configuration differs.
 *
 * Defined once in zod; `parseScenario` reports every error with its JSON path, and a scenario
 * that fails validation never runs half-configured.
 */
import { z } from 'zod';
import type { ClientConfigInput } from '../machine/config';
import { formatPath, PolicySchema, type Policy } from '../machine/policy';
import { REASONS } from '../machine/reasons';
import { DEFAULT_PROVIDER, type ProviderSpec } from './provider';
import { Rng } from './rng';
import { BEHAVIOURS, BEHAVIOUR_NAMES, createServer } from './servers/behaviours';
import { DEFAULT_USER, type UserSpec } from './user';
import type { ServerEnv, ServerSpec } from './world';

const Amount = z.string().regex(/^\d+(\.\d{1,6})?$/, 'a decimal string such as "0.05"');
const Currency = z.string().regex(/^[A-Z]{3}$/, 'a three-letter currency code such as "USD"');
const MoneySchema = z.strictObject({ amount: Amount, currency: Currency });
const Ms = z.number().int().min(0);
const Probability = z.number().min(0).max(1);

const TtlSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('session') }),
  z.strictObject({ kind: z.literal('window') }),
  z.strictObject({ kind: z.literal('ms'), ms: Ms })
]);

const ReasonOverrideSchema = z.strictObject({
  retryable: z.boolean().optional(),
  ttl: TtlSchema.optional()
});

export const ClientConfigSchema = z
  .strictObject({
    store: z.enum(['connection', 'durable']).optional(),
    reasons: z.partialRecord(z.enum(REASONS), ReasonOverrideSchema).optional(),
    silence: z.boolean().optional(),
    canonicalize: z.boolean().optional(),
    identityFields: z.array(z.string().min(1)).min(1).optional(),
    annotateTrim: z.boolean().optional(),
    storeAllowed: z.boolean().optional(),
    allowedTtl: TtlSchema.optional(),
    consentTimeoutMs: Ms.optional(),
    deadlineMs: Ms.optional(),
    alert: z
      .strictObject({ threshold: z.int().min(1).optional(), windowMs: Ms.optional() })
      .optional(),
    refusalAs: z.enum(['result', 'error']).optional(),
    capScope: z.enum(['per-call', 'session-pool']).optional(),
    sessionPool: MoneySchema.optional(),
    advertiseCeiling: z.boolean().optional(),
    preflightDefault: z.enum(['reject', 'truncate']).optional()
  })
  .describe('A client configuration; members left out take their defaults.');

const RequestTemplateSchema = z.strictObject({
  systemPrompt: z.string().optional(),
  prompt: z.string().min(1),
  promptTokens: z.int().min(0).optional(),
  prefixTokens: z.int().min(0).optional(),
  includeContext: z.enum(['none', 'thisServer', 'allServers']).optional(),
  modelHints: z.array(z.string().min(1)).optional(),
  maxTokens: z.int().positive(),
  temperature: z.number().min(0).max(2).optional(),
  budget: z
    .strictObject({
      intent: z.strictObject({ maxCost: MoneySchema.optional() }).optional(),
      onExceeded: z.enum(['reject', 'truncate']).optional()
    })
    .optional()
});

const ServerGroupSchema = z.strictObject({
  name: z.string().min(1).max(200),
  behaviour: z.enum(BEHAVIOUR_NAMES as [string, ...string[]]),
  /** How many servers of this kind; more than one are named `name-1`, `name-2`, … */
  count: z.int().min(1).max(1000).default(1),
  params: z.record(z.string(), z.unknown()).default({}),
  request: RequestTemplateSchema,
  intervalMs: z.number().positive(),
  tasks: z.int().min(0).optional(),
  startAfterMs: Ms.optional(),
  timeoutMs: z.number().positive().default(60_000)
});

const RateCardSchema = z.strictObject({
  model: z.string().min(1),
  version: z.string().min(1),
  currency: Currency,
  inputPerMtok: Amount,
  outputPerMtok: Amount,
  cachedInputPerMtok: Amount.optional()
});

const ProviderSchema = z.strictObject({
  cards: z.array(RateCardSchema).min(1).optional(),
  latencyMs: Ms.optional(),
  latencyJitter: Probability.optional(),
  chunkTokens: z.int().positive().optional(),
  chunkIntervalMs: Ms.optional(),
  outputFraction: z.number().positive().max(1).optional(),
  transportFailureRate: Probability.optional(),
  providerErrorRate: Probability.optional(),
  slowRate: Probability.optional(),
  slowFactor: z.number().min(1).optional(),
  cacheTtlMs: Ms.optional(),
  chunkTexts: z.array(z.string()).min(1).optional(),
  failures: z
    .array(
      z.strictObject({
        server: z.string().min(1),
        kind: z.enum(['transport', 'provider']),
        call: z.int().min(1).optional()
      })
    )
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
  client: ClientConfigSchema.default({}),
  policy: PolicySchema,
  /** SEP-2577's baseline: servers call the provider with their own key; the client is bypassed. */
  direct: z.boolean().optional()
});

const LessonSchema = z.strictObject({
  title: z.string(),
  predict: z.string(),
  explain: z.string(),
  watch: z.array(z.string()).optional()
});

export const ScenarioSchema = z
  .strictObject({
    version: z.literal(1),
    name: z.string().min(1),
    title: z.string().min(1),
    summary: z.string().optional(),
    lesson: LessonSchema.optional(),
    seed: z.int().min(0).max(0xffffffff),
    /** The virtual clock's start, an ISO time; budget windows align to it. */
    start: z.iso.datetime().default('2026-03-10T09:00:00Z'),
    durationMs: z.int().positive(),
    /** How often the metrics are sampled into time series (default: duration / 240). */
    sampleMs: z.int().positive().optional(),
    servers: z.array(ServerGroupSchema).min(1),
    provider: ProviderSchema.default({}),
    user: UserSchema.default({}),
    lanes: z.strictObject({ A: LaneSchema, B: LaneSchema })
  })
  .describe('A Sampling Policy Lab scenario.');

export type ScenarioInput = z.input<typeof ScenarioSchema>;
export type ScenarioData = z.output<typeof ScenarioSchema>;

export type LaneId = 'A' | 'B';
export const LANE_IDS: readonly LaneId[] = ['A', 'B'];

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

export type ScenarioParse =
  { ok: true; scenario: Scenario } | { ok: false; errors: ScenarioError[] };

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
    report: () => {}
  };
}

/**
 * Validate a scenario (an object, or JSON text). Every problem comes back with its JSON path;
 * nothing is half-applied: the caller gets a scenario or a list of errors.
 */
export function parseScenario(input: unknown): ScenarioParse {
  let raw = input;
  if (typeof input === 'string') {
    try {
      raw = JSON.parse(input);
    } catch (e) {
      return {
        ok: false,
        errors: [{ path: '$', message: `not valid JSON: ${(e as Error).message}` }]
      };
    }
  }
  const r = ScenarioSchema.safeParse(raw);
  if (!r.success) {
    return {
      ok: false,
      errors: r.error.issues.map((i) => ({
        path: formatPath(i.path as (string | number)[]),
        message: i.message
      }))
    };
  }
  const data = r.data;
  const errors: ScenarioError[] = [];
  const names = new Set<string>();
  data.servers.forEach((g, i) => {
    const known = BEHAVIOURS[g.behaviour]!.defaults;
    for (const key of Object.keys(g.params)) {
      if (!(key in known)) {
        errors.push({
          path: formatPath(['servers', i, 'params', key]),
          message: `unknown parameter for ${g.behaviour}; it takes ${Object.keys(known).join(', ')}`
        });
      }
    }
    for (const s of expandServers({ ...data, servers: [g] })) {
      if (names.has(s.name)) {
        errors.push({
          path: formatPath(['servers', i, 'name']),
          message: `duplicate server name '${s.name}'`
        });
      }
      names.add(s.name);
      try {
        createServer(inertEnv(s.name), s);
      } catch (e) {
        errors.push({ path: formatPath(['servers', i, 'params']), message: (e as Error).message });
      }
    }
  });
  if (errors.length) return { ok: false, errors };
  const start = Date.parse(data.start);
  return {
    ok: true,
    scenario: {
      data,
      name: data.name,
      seed: data.seed,
      start,
      durationMs: data.durationMs,
      sampleMs: data.sampleMs ?? Math.max(1_000, Math.round(data.durationMs / 240)),
      servers: expandServers(data),
      provider: { ...DEFAULT_PROVIDER, ...stripUndefined(data.provider) },
      user: { ...DEFAULT_USER, ...stripUndefined(data.user) },
      lanes: {
        A: {
          label: data.lanes.A.label,
          client: data.lanes.A.client as ClientConfigInput,
          policy: data.lanes.A.policy,
          ...(data.lanes.A.direct ? { direct: true } : {})
        },
        B: {
          label: data.lanes.B.label,
          client: data.lanes.B.client as ClientConfigInput,
          policy: data.lanes.B.policy,
          ...(data.lanes.B.direct ? { direct: true } : {})
        }
      }
    }
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** One line per error, prefixed with the file name: what the CLI prints. */
export function formatScenarioErrors(file: string, errors: ScenarioError[]): string {
  return errors.map((e) => `${file}: ${e.path}: ${e.message}`).join('\n');
}

/** The scenario format as JSON Schema, for editors. */
export function scenarioJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ScenarioSchema, { target: 'draft-2020-12', io: 'input' }) as Record<
    string,
    unknown
  >;
}
