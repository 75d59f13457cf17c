/**
 * A run in a share link, on the page's side (issue #18): reading the timeline a link carries
 * (sim/timeline/link-timeline.ts) beside its scenario and forks, and the words the page says — to a
 * recipient, which changes the link brought and where they fall; to a sender, what the link
 * cannot carry. The checker (zod) loads only when a link carries a timeline.
 */
import type { TimelineAction } from '$lib/sim/engine/engine';
import type { LinkedRun } from '$lib/sim/timeline/link-timeline';
import { formatSimTime } from './sim-time';

export interface LinkRead {
  /** The run the link's timeline re-creates; null when it carries none, or one that is damaged. */
  run: LinkedRun | null;
  /** The link's forks (`&f=`) for the page to apply itself: only when `run` does not hold them. */
  fork: unknown;
  /** Why the link's timeline could not be read, in words; '' when it could (or there is none). */
  problem: string;
}

/** The timeline and forks a scenario link (`#s=…`) carries. */
export async function readLink(hash: string): Promise<LinkRead> {
  // The codec loads with the first link read (the page's first load needs it only for a link).
  const { decodeForkHash, decodeTimelineHash } = await import('./share');
  const forks = decodeForkHash(hash);
  const fork = forks.ok ? forks.fork : null;
  const t = decodeTimelineHash(hash);
  const without =
    'the run opens without the changes the sender made during it (their edits, restarts and answers).';
  if (!t.ok)
    return { run: null, fork, problem: `The shared link's timeline: ${t.error}: ${without}` };
  if (t.timeline === null) return { run: null, fork, problem: '' };
  const { parseLinkTimeline } = await import('$lib/sim/timeline/link-timeline');
  const r = parseLinkTimeline(t.timeline, fork);
  if (!r.ok) {
    const e = r.errors[0]!;
    return {
      run: null,
      fork,
      problem: `The shared link's timeline could not be read at ${e.path}: ${e.message}: ${without}`
    };
  }
  return { run: r.run, fork: null, problem: '' };
}

/** One action as the notice lists it ("lane A: policy edited"). */
export function actionWords(a: TimelineAction, start: number): string {
  switch (a.kind) {
    case 'config':
      return a.what;
    case 'policy':
      return `lane ${a.lane}: policy edited`;
    case 'restart':
      return 'client restarted';
    case 'extend':
      return `run extended to ${formatSimTime(a.end - start)}`;
    case 'human':
      return a.lanes.length
        ? 'consent dialogs go to the person'
        : 'consent dialogs go to the simulated user';
    case 'consent':
      return `lane ${a.lane}: a dialog ${a.approved ? 'approved' : 'denied'} by the sender`;
  }
}

/** What a recipient is told a link brought: its changes, each at its time (at most `max`). */
export function linkedNotice(run: LinkedRun, start: number, max = 4): string {
  const levels = run.fork ? [...(run.fork.parents ?? []), run.fork] : [];
  const all = [...levels.flatMap((l) => l.base), ...run.actions].sort((a, b) => a.t - b.t);
  const forks = levels.length
    ? ` on ${levels.length === 1 ? 'its fork' : `its ${levels.length} forks`}`
    : '';
  if (!all.length) return `Opened from a share link: the sender's run${forks}.`;
  const shown = all
    .slice(0, max)
    .map((a) => `${formatSimTime(a.t - start)} ${actionWords(a, start)}`)
    .join('; ');
  const more = all.length > max ? `; and ${all.length - max} more` : '';
  const n = all.length === 1 ? 'its change' : `its ${all.length} changes`;
  return `Opened from a share link: the sender's run${forks}, ${n} applied where they were made — ${shown}${more}.`;
}

/** What a sender's link leaves out, as one sentence ('' when it carries the whole run). */
export function leftOut(
  what: { trace: boolean; clearedAt: readonly number[] },
  start: number
): string {
  const parts: string[] = [];
  if (what.trace)
    parts.push(
      'the recorded trace this run replays (a link carries the scenario, not the trace: send the trace file too)'
    );
  if (what.clearedAt.length)
    parts.push(
      `the stored decisions cleared at ${what.clearedAt.map((t) => formatSimTime(t - start)).join(', ')} (clearing is not part of the run's timeline: the recipient's run keeps them)`
    );
  return parts.length ? `The link leaves out ${parts.join('; and ')}.` : '';
}
