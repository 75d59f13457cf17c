/**
 * A run's timeline as data from outside (issue #10): what a reload brings back from the tab's run
 * memory (sessionStorage) — where the run was, the actions applied to it (engine.ts
 * `TimelineAction`: edits, restarts, extensions, a person's consent answers) and the fork it is
 * on. sessionStorage is outside input like a file or a link: {@link parseTimeline} checks it and
 * names every error's path (`$.actions[2].approved: expected a boolean`).
 */
// names first: it turns zod's JIT off before any schema here is built (the site's CSP).
import '../../machine/names';
import { z } from 'zod';
import { describeIssues, PolicySchema } from '../../machine/policy';
import { JsonRpcIdSchema, LaneIdSchema } from '../../machine/vocabulary';
import type { TimelineAction } from '../engine/engine';
import { ForkSchema } from '../engine/fork';
import { LIMITS } from '../input/limits';
import type { TimelineFork } from '../session/protocol';
import { ClientConfigInputSchema, type ScenarioError } from '../input/scenario';

const position = { t: z.number().finite(), events: z.int().min(0) };

export const TimelineActionSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    ...position,
    kind: z.literal('config'),
    lane: LaneIdSchema,
    client: ClientConfigInputSchema,
    what: z.string()
  }),
  z.strictObject({
    ...position,
    kind: z.literal('policy'),
    lane: LaneIdSchema,
    policy: PolicySchema
  }),
  z.strictObject({ ...position, kind: z.literal('restart') }),
  z.strictObject({ ...position, kind: z.literal('extend'), end: z.number().finite() }),
  z.strictObject({ ...position, kind: z.literal('human'), lanes: z.array(LaneIdSchema).max(2) }),
  z.strictObject({
    ...position,
    kind: z.literal('consent'),
    lane: LaneIdSchema,
    connection: z.string().min(1),
    requestId: JsonRpcIdSchema,
    approved: z.boolean()
  })
]);

export const TimelineSchema = z.strictObject({
  /** Virtual time the run had reached. */
  t: z.number().finite(),
  actions: z.array(TimelineActionSchema),
  /** The fork the run is on, and the actions it was made from; absent or null: none. */
  fork: z
    .strictObject({
      spec: ForkSchema,
      base: z.array(TimelineActionSchema),
      /** A fork of a fork: the forks it was made on, first fork first, each with its branch. */
      parents: z
        .array(z.strictObject({ spec: ForkSchema, base: z.array(TimelineActionSchema) }))
        .max(LIMITS.forkDepth)
        .optional()
    })
    .nullable()
    .optional()
});

export interface Timeline {
  t: number;
  actions: TimelineAction[];
  fork: TimelineFork | null;
}

/** Check a timeline; errors name their path under `at` (`$.at.actions[0].lane`). */
export function parseTimeline(
  input: unknown,
  at = '$.at'
): ({ ok: true } & Timeline) | { ok: false; errors: ScenarioError[] } {
  const r = TimelineSchema.safeParse(input);
  if (!r.success)
    return {
      ok: false,
      errors: describeIssues(r.error.issues, input).map(({ path, message }) => ({
        path: at + path.slice(1),
        message
      }))
    };
  // The data as given, not zod's output: a replay must apply exactly what was applied.
  const v = input as Timeline;
  return { ok: true, t: v.t, actions: v.actions, fork: v.fork ?? null };
}
