/**
 * A run's timeline as a share link carries it (issue #18): the configuration and policy alone
 * arrive as t = 0 settings, so a policy edit made at minute 3 would be a different run. The link
 * carries, beside the scenario as it was loaded and the forks (`&f=`, sim/engine/fork.ts), the timeline
 * member `&e=`: every action with its place on the run's clock (engine.ts `TimelineAction`: edits,
 * restarts, extensions, who answers dialogs and a person's answers), the actions each fork was made
 * on, and who answered dialogs when the run was loaded. Opening it re-applies each action where it
 * was: the recipient's run is the sender's.
 *
 * {@link parseLinkTimeline} checks the member like any outside input: every error names its path
 * within it (`$.actions[2].lane`).
 */
// names first: it turns zod's JIT off before any schema here is built (the site's CSP).
import '../../machine/names';
import { z } from 'zod';
import { describeIssues } from '../../machine/policy';
import { LaneIdSchema } from '../../machine/vocabulary';
import { TimelineActionSchema } from './actions';
import type { TimelineAction } from '../engine/engine';
import { ForkSchema, type ForkSpec } from '../engine/fork';
import { LIMITS } from '../input/limits';
import type { TimelineFork } from '../session/protocol';
import type { LaneId, ScenarioError } from '../input/scenario';

export const LinkTimelineSchema = z
  .strictObject({
    version: z.literal(1),
    /** The actions after the run's last fork (all of them off any fork), in the order applied. */
    actions: z.array(TimelineActionSchema),
    /** For each fork in `&f=`, first fork first: the actions of the branch it was made on. */
    bases: z
      .array(z.array(TimelineActionSchema))
      .max(LIMITS.forkDepth + 1)
      .optional(),
    /** Who answered consent dialogs when the run was loaded (later changes are actions). */
    human: z.array(LaneIdSchema).max(2).optional()
  })
  .describe("A run's timeline in a share link: its actions where they were applied.");

/** The member as the page writes it (the engine's own action type: the schema checks its shape). */
export interface LinkTimelineJson {
  version: 1;
  actions: TimelineAction[];
  bases?: TimelineAction[][];
  human?: LaneId[];
}

/** What a load re-creates the linked run from (the `load` command's `link`, and `human`). */
export interface LinkedRun {
  actions: TimelineAction[];
  fork: TimelineFork | null;
  human: LaneId[];
}

/** The `timeline` reply's parts a link needs (protocol.ts). */
export interface RunTimeline {
  actions: TimelineAction[];
  ahead: TimelineAction[];
  fork: TimelineFork | null;
  human: LaneId[];
}

/**
 * What a share link carries of a run: the forks for `&f=` (one ForkSpec, or the list of a fork
 * of a fork, as before) and the timeline member for `&e=` — null when the run has no action
 * anywhere on its timeline, so such a link is the same as before this member existed.
 */
export function linkOf(t: RunTimeline): {
  fork: ForkSpec | ForkSpec[] | null;
  timeline: LinkTimelineJson | null;
} {
  const levels = t.fork ? [...(t.fork.parents ?? []), t.fork] : [];
  const specs = levels.map((l) => l.spec);
  const bases = levels.map((l) => l.base);
  // The actions still ahead of the run after a seek back are its timeline too: the run the
  // sender sees when they play on.
  const actions = [...t.actions, ...t.ahead];
  const empty = !actions.length && bases.every((b) => !b.length) && !t.human.length;
  return {
    fork: specs.length > 1 ? specs : (specs[0] ?? null),
    timeline: empty
      ? null
      : {
          version: 1,
          actions,
          ...(bases.length ? { bases } : {}),
          ...(t.human.length ? { human: t.human } : {})
        }
  };
}

export type LinkParse = { ok: true; run: LinkedRun } | { ok: false; errors: ScenarioError[] };

/**
 * Check the link's timeline member, and join it to the link's forks (`forks`: what `&f=` holds,
 * a ForkSpec or a list of them, or null). Errors name their path within the member.
 */
export function parseLinkTimeline(input: unknown, forks: unknown): LinkParse {
  const r = LinkTimelineSchema.safeParse(input);
  if (!r.success)
    return {
      ok: false,
      errors: describeIssues(r.error.issues, input).map(({ path, message }) => ({ path, message }))
    };
  // The data as given, not zod's output: a replay must apply exactly what was applied.
  const v = input as LinkTimelineJson;
  const list = forks == null ? [] : Array.isArray(forks) ? forks : [forks];
  const bases = v.bases ?? [];
  if (bases.length !== list.length)
    return {
      ok: false,
      errors: [
        {
          path: '$.bases',
          message: `the link has ${list.length} fork${list.length === 1 ? '' : 's'} and ${bases.length} list${bases.length === 1 ? '' : 's'} of the actions they were made on`
        }
      ]
    };
  const levels: { spec: ForkSpec; base: TimelineAction[] }[] = [];
  for (let i = 0; i < list.length; i++) {
    const spec = ForkSchema.safeParse(list[i]);
    if (!spec.success)
      return {
        ok: false,
        errors: describeIssues(spec.error.issues, list[i]).map(({ path, message }) => ({
          path: `the link's fork${list.length > 1 ? ` ${i + 1}` : ''} ${path}`,
          message
        }))
      };
    levels.push({ spec: list[i] as ForkSpec, base: bases[i]! });
  }
  const last = levels.pop();
  const fork: TimelineFork | null = last
    ? { ...last, ...(levels.length ? { parents: levels } : {}) }
    : null;
  return { ok: true, run: { actions: v.actions, fork, human: v.human ?? [] } };
}
