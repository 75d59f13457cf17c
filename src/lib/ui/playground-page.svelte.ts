/**
 * The playground page's own state (issue #10: route files only mount; logic in tested classes):
 * which scenario is loaded and from where (ready-made name, `?scenario=` in the URL, a shared
 * `#s=` link, an upload, a trace), the seed and hours fields, the keyboard shortcuts and the
 * shortcuts dialog. The run itself is the {@link Playground}'s. The browser is reached through
 * {@link PageHost}, so the unit tests drive every path without one.
 */
import { fromMicros } from '$lib/machine/money';
import type { LaneId } from '$lib/sim/input/scenario';
import { nextSpeed, type Playground } from './playground.svelte';
import { DEFAULT_SCENARIO, READY_MADE } from './scenarios';
// The link codec (lz-string, the JSON reader) loads when a link is opened or written: the
// default scenario's first load does without it.
import { HASH_PREFIX, TRACE_PREFIX } from './share-prefixes';
import type { LinkRead } from './link-run';
import { TraceImport, type ImportLoad } from './trace-import.svelte';
import { readyLog, type TraceRef } from './traces/trace-link';

/** What the page needs from the browser. */
export interface PageHost {
  /** A ready-made scenario's JSON (`static/scenarios/<name>.json`). */
  fetchScenario(name: string): Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;
  /** The URL now: `?…` and `#…` parts. */
  location(): { search: string; hash: string; pathname: string };
  /** Replace the URL (no new history entry). */
  replaceUrl(url: string): void;
  /** A ready-made client log's file (`static/traces/logs/<file>`). */
  fetchLog?(file: string): Promise<{ ok: boolean; status: number; text(): Promise<string> }>;
}

export { formatSimTime } from './sim-time';

/** How many times one lane's figure is the other's ("same", "3.5×", "12×"; "" when one is 0). */
export function ratio(a: number, b: number): string {
  if (a === b) return 'same';
  if (a === 0 || b === 0) return '';
  const r = a > b ? a / b : b / a;
  return `${r >= 10 ? Math.round(r) : r.toFixed(1)}×`;
}

/** A lanes-table figure: money in micros as dollars, counts with thousands separators. */
export function formatFigure(n: number, money?: boolean): string {
  return money ? `$${fromMicros(n)}` : n.toLocaleString('en');
}

/** One query parameter of `search` (read once: nothing reacts to it). */
function param(search: string, name: string): string | null {
  return new URLSearchParams(search).get(name);
}

/** The `?auditWindow=N` knob (tests and benchmarks): a positive whole number, else none. */
export function auditWindowOf(search: string): number | undefined {
  const n = Number(param(search, 'auditWindow'));
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** The `?checkpointBudgetKb=N`, `?heldRecords=N`, `?chartPoints=N` knobs (tests): a long run's budgets. */
export function memoryBudgetOf(
  search: string
): { checkpointBytes?: number; heldRecords?: number; chartPoints?: number } | undefined {
  const whole = (name: string) => {
    const n = Number(param(search, name));
    return Number.isInteger(n) && n > 0 ? n : undefined;
  };
  const kb = whole('checkpointBudgetKb');
  const held = whole('heldRecords');
  const points = whole('chartPoints');
  if (kb === undefined && held === undefined && points === undefined) return undefined;
  return {
    ...(kb !== undefined ? { checkpointBytes: kb * 1024 } : {}),
    ...(held !== undefined ? { heldRecords: held } : {}),
    ...(points !== undefined ? { chartPoints: points } : {})
  };
}

export class PlaygroundPage {
  readonly pg: Playground;
  readonly #host: PageHost;
  /** The ready-made scenario shown in the picker; '' for an uploaded or shared one. */
  picked = $state<string>(DEFAULT_SCENARIO);
  /**
   * The Hours field of "Simulate": empty (null) simulates to the scenario's end, which is most
   * scenarios' hour or less; a number asks for that many hours (past the end, the run offers
   * to extend).
   */
  hours = $state<number | null>(null);
  seedText = $state('');
  /** The keyboard shortcuts dialog. */
  helpOpen = $state(false);
  storedNote = $state<Record<LaneId, string>>({ A: '', B: '' });
  loadError = $state('');

  /**
   * A shared link's forks for the page's time travel to make once its scenario loads (the forks
   * of a link without a timeline, as such links always loaded); set by the view.
   */
  onLinkFork: ((scenario: unknown, fork: unknown) => void) | null = null;

  /** MCP client logs replayed in the playground (trace mode; trace-import.svelte.ts). */
  readonly logs: TraceImport;

  constructor(pg: Playground, host: PageHost) {
    this.pg = pg;
    this.#host = host;
    this.logs = new TraceImport(pg, host.fetchLog?.bind(host));
    this.logs.onReplay = () => this.#traceUrl();
  }

  /**
   * The client log the URL names (issue #22): `?trace=NAME` (a ready-made one) or a share
   * link's `&t=` (a name, or the files themselves); null when it names none.
   */
  async #traceOf(search: string, hash: string): Promise<{ ref: TraceRef | null; error: string }> {
    const q = param(search, 'trace');
    if (q !== null) {
      const l = readyLog(q);
      return l
        ? { ref: { ready: l.name }, error: '' }
        : { ref: null, error: `the link names a ready-made log this page does not have` };
    }
    if (!hash.startsWith(HASH_PREFIX)) return { ref: null, error: '' };
    const { decodeTraceHash } = await import('./share');
    const t = decodeTraceHash(hash);
    if (!t.ok) return { ref: null, error: t.error };
    if (t.trace === null) return { ref: null, error: '' };
    const { parseTraceRef } = await import('./traces/trace-ref');
    const r = parseTraceRef(t.trace);
    return r.ok ? { ref: r.ref, error: '' } : { ref: null, error: r.error };
  }

  #openTrace(ref: TraceRef, opts: ImportLoad): Promise<string | null> {
    return 'ready' in ref
      ? this.logs.importReady(ref.ready, opts)
      : this.logs.importFiles(ref.files, {
          ...opts,
          ...(ref.folder ? { folder: ref.folder } : {})
        });
  }

  /**
   * Trace mode in the address, so a reload (or the address copied) replays the same log: a
   * ready-made log by name beside the scenario's (`?scenario=X&trace=NAME`, or `?trace=NAME`
   * and the scenario in `#s=`), a dropped one inside the link with its scenario (`#s=…&t=…`)
   * when it is small enough. A larger one is left out (the trace-mode panel says so).
   */
  async #traceUrl(): Promise<void> {
    // The codec first, the state after it: a run loaded meanwhile has cleared the log.
    const { encodeScenarioHash } = await import('./share');
    const i = this.logs.imported;
    if (!i) return;
    const { pathname, search } = this.#host.location();
    // A local value, built and read once: nothing reacts to it.
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    const params = new URLSearchParams(search);
    params.delete('trace');
    let hash = '';
    if ('ready' in i.source) {
      params.set('trace', i.source.ready);
      if (this.picked) params.set('scenario', this.picked);
      else {
        params.delete('scenario');
        hash = encodeScenarioHash(i.scenario);
      }
    } else if (i.link.value) {
      params.delete('scenario');
      hash = encodeScenarioHash(i.scenario, null, null, i.link.value);
    } else {
      this.#dropTraceUrl();
      return;
    }
    const q = params.toString();
    this.#host.replaceUrl(`${pathname}${q ? `?${q}` : ''}${hash}`);
  }

  /** Trace mode ended (another scenario or trace): the address no longer names the log. */
  #dropTraceUrl(): void {
    const { pathname, search, hash } = this.#host.location();
    // A local value, built and read once: nothing reacts to it.
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    const params = new URLSearchParams(search);
    const at = hash.indexOf(TRACE_PREFIX);
    if (!params.has('trace') && at === -1) return;
    params.delete('trace');
    const end = at === -1 ? -1 : hash.indexOf('&', at + 1);
    const h = at === -1 ? hash : hash.slice(0, at) + (end === -1 ? '' : hash.slice(end));
    const q = params.toString();
    this.#host.replaceUrl(`${pathname}${q ? `?${q}` : ''}${h}`);
  }

  /**
   * Start the worker and load what the URL names: a shared scenario (`#s=`), else `?scenario=`
   * when it is a ready-made one, else the default. A link that cannot be opened says why, above
   * the default scenario.
   */
  async mount(): Promise<void> {
    const { search, hash } = this.#host.location();
    const auditWindow = auditWindowOf(search);
    const memory = memoryBudgetOf(search);
    await this.pg.start({ ...(auditWindow ? { auditWindow } : {}), ...(memory ? { memory } : {}) });
    let linkError = '';
    // A client log the link replays (issue #22): opened with its scenario, in one load.
    const trace = await this.#traceOf(search, hash);
    const traceError = (e: string) =>
      `The client log in the link could not be opened: ${e}. The scenario is shown without it.`;
    if (hash.startsWith(HASH_PREFIX)) {
      const { decodeScenarioHash } = await import('./share');
      const d = decodeScenarioHash(hash);
      let err = d.ok ? null : d.error;
      if (d.ok) {
        // The sender's timeline (issue #18), and the forks when it does not hold them.
        const { readLink } = await import('./link-run');
        const link = await readLink(hash);
        this.onLinkFork?.(d.data, link.fork);
        // The scenario is the link's, not a ready-made one (the address written for the log says so).
        if (trace.ref) this.picked = '';
        const logErr = trace.ref ? await this.#linkedTrace(d.data, trace.ref, link) : trace.error;
        if (logErr === null) {
          this.picked = '';
          this.seedText = String(this.pg.seed);
          return;
        }
        err = await this.loadData(d.data, 'link', link, logErr ? traceError(logErr) : '');
      }
      if (!err) {
        this.picked = '';
        return;
      }
      linkError = `The shared link could not be opened: ${err}`;
    }
    const q = param(search, 'scenario');
    const name = READY_MADE.some((s) => s.name === q) ? q! : DEFAULT_SCENARIO;
    this.picked = name;
    if (trace.ref && !linkError) {
      // The named scenario is the log's base: fetched, not loaded, so the one load is the
      // replay (a reload resumes it: run-loader.ts).
      const res = await this.#host.fetchScenario(name);
      const logErr = res.ok
        ? await this.#openTrace(trace.ref, { base: (await res.json()) as Record<string, unknown> })
        : `scenario '${name}' could not be fetched (HTTP ${res.status})`;
      if (logErr === null) {
        this.seedText = String(this.pg.seed);
        return;
      }
      await this.loadNamed(name);
      this.loadError = traceError(logErr);
      return;
    }
    await this.loadNamed(name);
    // After loadNamed, which clears the message: the learner must see why the link failed.
    if (linkError) this.loadError = `${linkError} The default scenario is shown instead.`;
    else if (trace.error) this.loadError = traceError(trace.error);
  }

  /**
   * A share link's scenario with the client log it carries; null when replaying, '' when the
   * scenario itself is not valid (loadData then says why), else what is wrong with the log.
   */
  async #linkedTrace(data: unknown, ref: TraceRef, link: LinkRead): Promise<string | null> {
    if (!data || typeof data !== 'object' || Array.isArray(data)) return '';
    const { parseScenario } = await import('$lib/sim/input/scenario');
    if (!parseScenario(data).ok) return '';
    return this.#openTrace(ref, {
      base: data as Record<string, unknown>,
      ...(link.run ? { link: link.run } : {}),
      ...(link.problem ? { note: link.problem } : {})
    });
  }

  /** A ready-made client log picked in the trace-mode panel; an error message, or null. */
  openReadyLog(name: string): Promise<string | null> {
    return this.logs.importReady(name);
  }

  async loadNamed(name: string): Promise<void> {
    this.loadError = '';
    const res = await this.#host.fetchScenario(name);
    if (!res.ok) {
      this.loadError = `Could not load scenario '${name}' (HTTP ${res.status}).`;
      return;
    }
    const errors = await this.pg.load((await res.json()) as Record<string, unknown>);
    if (errors.length) this.loadError = `${name}.json: ${errors[0]!.path}: ${errors[0]!.message}`;
    this.seedText = String(this.pg.seed);
  }

  /**
   * Upload or shared link: resolves to an error message, or null when it is being loaded. A link
   * may carry the sender's timeline (`link.run`), or say why it could not be read.
   */
  async loadData(
    data: unknown,
    from: 'file' | 'link' = 'file',
    link?: LinkRead,
    /** What else the page must say once it is loaded (the link's log could not be opened). */
    also = ''
  ): Promise<string | null> {
    if (!data || typeof data !== 'object' || Array.isArray(data))
      return from === 'link'
        ? 'it does not hold a scenario object.'
        : 'The file is not a scenario object.';
    // Validate here first, so the uploader hears at once what is wrong and where; the running
    // scenario is left untouched. The parser (zod and the scenario schemas) is loaded on first
    // use: the worker parses the scenarios the page starts with, so first load needs none of it.
    const { parseScenario } = await import('$lib/sim/input/scenario');
    const checked = parseScenario(data);
    if (!checked.ok) {
      const shown = checked.errors.slice(0, 5).map((e) => `${e.path}: ${e.message}`);
      const more = checked.errors.length > 5 ? ` (and ${checked.errors.length - 5} more)` : '';
      const what =
        from === 'link' ? 'the scenario in the link is not valid' : 'Scenario not loaded';
      return `${what}: ${shown.join('; ')}${more}`;
    }
    const opts = {
      ...(link?.run ? { link: link.run } : {}),
      ...(link?.problem ? { note: link.problem } : {})
    };
    if (from === 'file') this.#dropTraceUrl();
    void this.pg.load(data as Record<string, unknown>, opts).then((errors) => {
      this.loadError = errors.length
        ? `Scenario not loaded: ${errors[0]!.path}: ${errors[0]!.message}`
        : also;
      this.seedText = String(this.pg.seed);
      if (!errors.length) this.picked = '';
    });
    return null;
  }

  /** A trace file replayed against the current scenario's lanes; an error message, or null. */
  async loadTrace(text: string): Promise<string | null> {
    const { parseTrace } = await import('$lib/sim/input/trace'); // loaded on first use, as parseScenario
    const r = parseTrace(text);
    if (!r.ok) return `Trace not loaded: ${r.error}`;
    if (!this.pg.scenario) return 'Load a scenario first: the trace replays against its two lanes.';
    this.logs.clear();
    this.#dropTraceUrl();
    void this.pg.load(this.pg.scenario, { trace: r.events });
    return null;
  }

  /** A ready-made scenario chosen in the picker: named in the URL, so a reload keeps it. */
  pick(name: string): Promise<void> {
    this.picked = name;
    this.#host.replaceUrl(`${this.#host.location().pathname}?scenario=${encodeURIComponent(name)}`);
    return this.loadNamed(name);
  }

  /** The seed field was changed: a valid seed restarts the run with it, anything else is undone. */
  async commitSeed(): Promise<void> {
    // The seed reader (sim/world/rng.ts, which brings the engine's copy machinery) loads with the
    // first seed typed, not with the page.
    const { seedFromText } = await import('$lib/sim/world/rng');
    const n = seedFromText(this.seedText.trim());
    if (n !== null) void this.pg.setSeed(n);
    else this.seedText = String(this.pg.seed);
  }

  async clearStored(lane: LaneId): Promise<void> {
    const n = await this.pg.clearStored(lane);
    this.storedNote[lane] = `Cleared ${n} stored decision${n === 1 ? '' : 's'}.`;
  }

  /**
   * The page's keyboard shortcuts: Space play/pause, `.` step, `+`/`-` speed, `?` the shortcuts
   * dialog, Escape closes it. Never while typing in a field or the editor, nor with a modifier.
   * Returns whether the key was taken (the caller then prevents its default).
   */
  key(e: {
    key: string;
    target: EventTarget | null;
    metaKey: boolean;
    ctrlKey: boolean;
    altKey: boolean;
  }): boolean {
    if (e.metaKey || e.ctrlKey || e.altKey) return false;
    const t = e.target as { closest?: (s: string) => unknown } | null;
    if (t?.closest?.('input, textarea, select, [contenteditable], .monaco-editor')) return false;
    switch (e.key) {
      case ' ':
        this.pg.toggle();
        return true;
      case '.':
        this.pg.step();
        return false;
      case '+':
      case '=':
        this.pg.speed = nextSpeed(this.pg.speed, 1);
        return false;
      case '-':
        this.pg.speed = nextSpeed(this.pg.speed, -1);
        return false;
      case '?':
        this.helpOpen = !this.helpOpen;
        return false;
      case 'Escape':
        this.helpOpen = false;
        return false;
      default:
        return false;
    }
  }
}
