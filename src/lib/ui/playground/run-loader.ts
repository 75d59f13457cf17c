/**
 * Loading a scenario into the playground (playground.svelte.ts), and a reload's resume (issue #10:
 * reload is a client restart): the first load after the page opens may pick up the run this tab
 * remembers (run-memory.ts) — the same seed, re-simulated to where it was, then the client
 * restarted. Reset, a seed or a scenario never do. A share link's run (issue #18) loads with the
 * sender's timeline: their changes applied where they made them.
 */
import type { LinkedRun } from '$lib/sim/timeline/link-timeline';
import type { ScenarioError } from '$lib/sim/input/scenario';
import type { TraceEvent } from '$lib/sim/input/trace';
import type { Playground } from '../playground.svelte';
import { resumeOf, runKey, scenarioAfter, type RunMemory } from '../run-memory';
import type { SimClient } from '../worker/client';

/** The part of the playground's state a load sets (and the Pause it starts with). */
export type LoadTarget = Pick<
  Playground,
  | 'scenario'
  | 'name'
  | 'title'
  | 'errors'
  | 'snapshot'
  | 'auditTable'
  | 'seed'
  | 'ff'
  | 'human'
  | 'inspection'
  | 'notice'
  | 'resumed'
  | 'restarted'
  | 'clamped'
  | 'trace'
  | 'pause'
  | 'loaded'
  | 'timeline'
  | 'clearedAt'
>;

export interface LoadOptions {
  trace?: TraceEvent[];
  /** A share link's run: the sender's timeline, re-applied where it was (sim/timeline/link-timeline.ts). */
  link?: LinkedRun;
  /** What the page must say about the load besides (a link's timeline it could not read). */
  note?: string;
}

/** Whether this page is a reload (or a return) of the tab's page; true where nothing says. */
function reopened(): boolean {
  const nav =
    typeof performance !== 'undefined' && typeof performance.getEntriesByType === 'function'
      ? (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)
      : undefined;
  return !nav || nav.type === 'reload' || nav.type === 'back_forward';
}

export class RunLoader {
  readonly #pg: LoadTarget;
  readonly #client: () => SimClient | null;
  /** What this tab remembers of its run for a reload (sessionStorage). */
  readonly #runs: RunMemory;
  /**
   * The first load after the page opens may resume the tab's run — when the page was reloaded
   * (or gone back to), not when it was opened afresh: a lesson's "open in the playground" or a
   * link opened again in the tab is a new run. Reset, a seed or a scenario never resume.
   */
  #mayResume = reopened();

  constructor(pg: LoadTarget, client: () => SimClient | null, runs: RunMemory) {
    this.#pg = pg;
    this.#client = client;
    this.#runs = runs;
  }

  /** Load scenario data (validated in the worker). Returns the errors, if any. */
  async load(data: Record<string, unknown>, opts: LoadOptions = {}): Promise<ScenarioError[]> {
    const pg = this.#pg;
    const client = this.#client();
    if (!client) return [{ path: '$', message: 'the simulation worker is not running' }];
    pg.pause();
    pg.ff = null;
    pg.trace = opts.trace ?? null;
    const key = runKey(data, opts.trace ?? null, opts.link);
    const found = this.#mayResume ? await this.#runs.read() : null;
    const saved = found && found.key === key ? found : null;
    const unresumable = this.#mayResume ? this.#runs.problem : '';
    this.#mayResume = false;
    // A reload mid-run: the same seed, re-simulated to where it was, then the client restarted.
    if (saved && saved.seed !== null) data = { ...data, seed: saved.seed };
    const seed = typeof data.seed === 'number' ? data.seed : 0;
    pg.restarted = null;
    pg.clamped = null;
    // The tab's own run, resumed, is the link's run and what happened to it since.
    let link = saved?.t != null ? undefined : opts.link;
    const human = link ? link.human : pg.human ? (['A', 'B'] as const) : [];
    const send = () =>
      client.request(
        {
          type: 'load',
          scenario: data,
          ...(opts.trace ? { trace: opts.trace } : {}),
          ...(human.length ? { human: [...human] } : {}),
          ...resumeOf(saved),
          ...(link ? { link: { actions: link.actions, fork: link.fork } } : {})
        },
        'loaded'
      );
    let r = await send();
    let refused = '';
    if (!r.ok && link) {
      // The scenario is fine but the sender's timeline does not fit it: the scenario alone.
      const e = r.errors[0]!;
      refused = `The shared link's timeline could not be applied (${e.path}: ${e.message}): the run opens without the changes the sender made during it.`;
      link = undefined;
      r = await send();
    }
    if (!r.ok) {
      pg.errors = r.errors;
      return r.errors;
    }
    pg.errors = [];
    // Where the run begins: its start, or the fork point a link's fork opens at.
    const begins = link?.fork ? r.start + link.fork.spec.atMs : r.start;
    this.#runs.started(r.run, key, typeof data.seed === 'number' ? data.seed : null, begins);
    pg.resumed = r.resumed.A + r.resumed.B > 0 ? r.resumed : null;
    // The editors show the lanes as the run has them: after a reload, as at t (a restart there
    // drops what lay ahead); from a link, after the sender's changes.
    pg.scenario =
      saved?.t != null
        ? scenarioAfter(
            data,
            saved.actions.filter((a) => a.t <= saved.t!),
            saved.fork
          )
        : link
          ? scenarioAfter(data, link.actions, link.fork)
          : data;
    pg.loaded = data;
    pg.timeline = null;
    pg.clearedAt = [];
    pg.name = r.name;
    pg.title = typeof data.title === 'string' ? data.title : r.name;
    pg.seed = seed;
    // A new run's log: ask again, so nothing of the old one is shown (the filters stay).
    pg.auditTable.focus = null;
    pg.inspection = null;
    // A link's run says what it brought (link-run.ts, loaded only for a link).
    const linked = link ? (await import('../link-run')).linkedNotice(link, r.start) : '';
    pg.notice = [unresumable, r.snapshotNote ?? '', opts.note, refused, linked]
      .filter(Boolean)
      .join(' ');
    pg.snapshot = await client.request({ type: 'advance', to: r.start }, 'snapshot');
    // What the run's timeline is from the start (a link's actions ahead): the tab remembers it.
    client.send({ type: 'timeline' });
    return [];
  }
}
