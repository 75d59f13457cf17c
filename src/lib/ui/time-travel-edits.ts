/**
 * Setting breakpoints and making forks (issue #10), for `TimeTravel` (time-travel.svelte.ts):
 * loaded when a breakpoint is first set or a fork first made — or a shared link brings one — so
 * the page's first load carries only what its first screen does, the scrubber (issue #24).
 */
import type { ForkSpec } from '$lib/sim/engine/fork';
import type { Reply } from '$lib/sim/session/protocol';
import type { TimeTravel } from './time-travel.svelte';

const isSnapshot = (r: Reply) => r.type === 'snapshot';

/** Add a condition (checked here first, so a typo is named before anything is sent). */
export async function addBreak(tt: TimeTravel, text: string): Promise<boolean> {
  const cond = text.trim();
  // The parsers are loaded on first use: first load needs neither (nor fork's engine and zod).
  const { parseBreak } = await import('$lib/sim/timeline/breakpoints');
  const p = parseBreak(cond);
  if (!p.ok) {
    tt.breakError = p.error;
    return false;
  }
  if (tt.conditions.includes(cond)) {
    tt.breakError = '';
    return true;
  }
  return setBreaks(tt, [...tt.conditions, cond]);
}

/** The breakpoint conditions in force from now on, as the worker took them. */
export async function setBreaks(tt: TimeTravel, conditions: string[]): Promise<boolean> {
  const rs = await tt.host.travelRequest(
    { type: 'setBreakpoints', conditions },
    (r) => r.type === 'breakpoints'
  );
  const r = rs.at(-1);
  if (r?.type !== 'breakpoints') return false;
  if (!r.ok) {
    tt.breakError = r.errors.join('; ');
    return false;
  }
  tt.breakError = '';
  tt.conditions = r.conditions;
  return true;
}

/**
 * Re-run `fork.lane` from `fork.atMs` with its change; the other lane keeps its history (the
 * caller has paused the run and says it is seeking).
 */
export async function startFork(tt: TimeTravel, fork: ForkSpec): Promise<boolean> {
  try {
    const rs = await tt.host.travelRequest(
      { type: 'fork', fork },
      (r) => isSnapshot(r) || (r.type === 'forked' && !r.ok)
    );
    const r = rs.find((x) => x.type === 'forked');
    if (r?.type !== 'forked') return false;
    if (!r.ok) {
      tt.forkErrors = r.errors.map((e) => `${e.path}: ${e.message}`);
      return false;
    }
    tt.forkErrors = [];
    // On a fork, the new one is made on the branch the run was on at its time (sim/engine/fork.ts).
    const kept = tt.forks.filter((f) => f.atMs <= fork.atMs);
    tt.setFork([...kept, fork]);
    tt.host.rewound();
    await tt.refreshStops();
    return true;
  } catch (err) {
    tt.forkErrors = [err instanceof Error ? err.message : String(err)];
    return false;
  }
}

/** The fork (or, for a fork of a fork, the list of them) a shared link was opened with, made. */
export async function linkForks(tt: TimeTravel, fork: unknown): Promise<void> {
  const { parseFork } = await import('$lib/sim/engine/fork');
  // A fork of a fork travels as the list of its forks, first fork first.
  const list = Array.isArray(fork) ? fork : [fork];
  const parsed = list.map((f) => parseFork(f));
  const bad = parsed.flatMap((p, i) =>
    p.ok
      ? []
      : p.errors.map(
          (e) => `The link's fork${list.length > 1 ? ` ${i + 1}` : ''}: ${e.path}: ${e.message}`
        )
  );
  if (bad.length) {
    tt.forkErrors = bad;
    return;
  }
  for (const p of parsed) if (!p.ok || !(await tt.startFork(p.fork))) return;
}
