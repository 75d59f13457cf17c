/**
 * Loading a scenario into the playground (playground.svelte.ts), and a reload's resume (issue #10:
 * reload is a client restart): the first load after the page opens may pick up the run this tab
 * remembers (run-memory.ts) — the same seed, re-simulated to where it was, then the client
 * restarted. Reset, a seed or a scenario never do.
 */
import type { ScenarioError } from '$lib/sim/scenario';
import type { TraceEvent } from '$lib/sim/trace';
import type { Playground } from '../playground.svelte';
import { runKey, scenarioAfter, type RunMemory } from '../run-memory';
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
>;

export class RunLoader {
  readonly #pg: LoadTarget;
  readonly #client: () => SimClient | null;
  /** What this tab remembers of its run for a reload (sessionStorage). */
  readonly #runs: RunMemory;
  /** The first load after the page opens may resume the tab's run; Reset, a seed or a scenario never do. */
  #mayResume = true;

  constructor(pg: LoadTarget, client: () => SimClient | null, runs: RunMemory) {
    this.#pg = pg;
    this.#client = client;
    this.#runs = runs;
  }

  /** Load scenario data (validated in the worker). Returns the errors, if any. */
  async load(
    data: Record<string, unknown>,
    opts: { trace?: TraceEvent[] } = {}
  ): Promise<ScenarioError[]> {
    const pg = this.#pg;
    const client = this.#client();
    if (!client) return [{ path: '$', message: 'the simulation worker is not running' }];
    pg.pause();
    pg.ff = null;
    pg.trace = opts.trace ?? null;
    const key = runKey(data, opts.trace ?? null);
    const found = this.#mayResume ? await this.#runs.read() : null;
    const saved = found && found.key === key ? found : null;
    const unresumable = this.#mayResume ? this.#runs.problem : '';
    this.#mayResume = false;
    // A reload mid-run: the same seed, re-simulated to where it was, then the client restarted.
    if (saved && saved.seed !== null) data = { ...data, seed: saved.seed };
    const seed = typeof data.seed === 'number' ? data.seed : 0;
    pg.restarted = null;
    pg.clamped = null;
    const r = await client.request(
      {
        type: 'load',
        scenario: data,
        ...(opts.trace ? { trace: opts.trace } : {}),
        ...(pg.human ? { human: ['A', 'B'] } : {}),
        // The namespace only with the time it belongs to: its decisions are those of time t,
        // and a run handed them at any other clock would replay a future it has not lived.
        ...(saved?.t != null
          ? { resume: saved.id, at: { t: saved.t, actions: saved.actions, fork: saved.fork } }
          : {})
      },
      'loaded'
    );
    if (!r.ok) {
      pg.errors = r.errors;
      return r.errors;
    }
    pg.errors = [];
    this.#runs.started(r.run, key, typeof data.seed === 'number' ? data.seed : null);
    pg.resumed = r.resumed.A + r.resumed.B > 0 ? r.resumed : null;
    pg.scenario = saved?.t != null ? scenarioAfter(data, saved.actions, saved.fork) : data;
    pg.name = r.name;
    pg.title = typeof data.title === 'string' ? data.title : r.name;
    pg.seed = seed;
    // A new run's log: ask again, so nothing of the old one is shown (the filters stay).
    pg.auditTable.focus = null;
    pg.inspection = null;
    pg.notice = unresumable;
    pg.snapshot = await client.request({ type: 'advance', to: r.start }, 'snapshot');
    return [];
  }
}
