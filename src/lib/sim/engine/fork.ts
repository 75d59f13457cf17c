/**
 * Fork from t (issue #10): re-run ONE lane from virtual time t with a changed policy or client
 * configuration, while the other lane keeps its history.
 *
 * The two lanes share nothing but the clock: each has its own servers, stores, provider and user,
 * and every random stream is forked by label from the seed (rng.ts), never by lane. So a fork is a
 * re-simulation (checkpoint.ts) in which, at t, one lane's configuration changes: the other lane
 * draws the same numbers, sends the same frames and shows the same numbers as the unforked run,
 * before t and after it (fork.spec.ts holds that, frame for frame).
 *
 * A fork is data a share link can carry: {@link ForkSpec}, validated by {@link parseFork} with
 * every error's JSON path.
 */
// names first: it turns zod's JIT off before any schema here is built (the site's CSP).
import '../../machine/names';
import { z } from 'zod';
import { describeIssues, policyKeysAt, PolicySchema } from '../../machine/policy';
import { LaneIdSchema } from '../../machine/vocabulary';
import { jsonInput } from '../input/json-input';
import { LIMITS } from '../input/limits';
import { formatSpan } from './extend';
import { ClientConfigInputSchema, type Scenario, type ScenarioError } from '../input/scenario';

export const ForkChangeSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('config'),
    /** The lane's whole client configuration from t (members left out take their defaults). */
    client: ClientConfigInputSchema,
    /** How the timeline mark reads ("lane A made durable"). */
    what: z.string().min(1).max(200).optional()
  }),
  z.strictObject({ kind: z.literal('policy'), policy: PolicySchema })
]);

export const ForkSchema = z
  .strictObject({
    version: z.literal(1),
    /** Virtual ms from the scenario's start. */
    atMs: z.int().min(0).max(LIMITS.durationMs),
    lane: LaneIdSchema,
    change: ForkChangeSchema
  })
  .describe('A fork of a run: from `atMs`, lane `lane` runs with `change`.');

export type ForkSpec = z.output<typeof ForkSchema>;
export type ForkChange = z.output<typeof ForkChangeSchema>;

export type ForkParse = { ok: true; fork: ForkSpec } | { ok: false; errors: ScenarioError[] };

/**
 * Validate a fork (an object, or JSON text) — against `scenario` too when given: the fork must
 * fall within the run. Every error names its JSON path (`$.change.policy.defaults.budget`).
 */
export function parseFork(input: unknown, scenario?: Scenario): ForkParse {
  const json = jsonInput(input);
  if (!json.ok) return json;
  const r = ForkSchema.safeParse(json.value);
  if (!r.success) {
    const inPolicy = (s: readonly (string | number)[]) => s[0] === 'change' && s[1] === 'policy';
    return {
      ok: false,
      errors: describeIssues(r.error.issues, json.value, (s) =>
        inPolicy(s) ? policyKeysAt(2)(s) : []
      ).map(({ path, message }) => ({ path, message }))
    };
  }
  if (scenario && r.data.atMs > scenario.durationMs)
    return {
      ok: false,
      errors: [
        {
          path: '$.atMs',
          message: `the scenario ends at ${formatSpan(scenario.durationMs)}; a fork at ${formatSpan(r.data.atMs)} is past it`
        }
      ]
    };
  return { ok: true, fork: r.data };
}

// Making a fork is fork-run.ts's (no zod there: the playground's worker loads it without the parser).
