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
import { HASH_PREFIX } from './share-prefixes';
import type { LinkRead } from './link-run';
import { TraceImport } from './trace-import.svelte';

/**
 * Links and uploads (page-links.ts): a shared link opened on load, a client log's address, an
 * uploaded scenario or trace — loaded with the first, not with the page (issue #24, first load).
 */
const links = () => import('./page-links');

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
export function param(search: string, name: string): string | null {
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  return new URLSearchParams(search).get(name);
}

/** The `?auditWindow=N` knob (tests and benchmarks): a positive whole number, else none. */
export function auditWindowOf(search: string): number | undefined {
  const n = Number(param(search, 'auditWindow'));
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * The `?liveCap=N` knob (tests): play no faster than N× whatever the speed, as a machine that
 * cannot keep up would; a positive number, else none.
 */
export function liveCapOf(search: string): number | undefined {
  const n = Number(param(search, 'liveCap'));
  return Number.isFinite(n) && n > 0 ? n : undefined;
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
  /** Where the page is and how it fetches (the links' code uses it too: page-links.ts). */
  readonly host: PageHost;
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
    this.host = host;
    this.logs = new TraceImport(pg, host.fetchLog?.bind(host));
    this.logs.onReplay = async () => (await links()).traceUrl(this);
  }

  /**
   * Start the worker and load what the URL names: `?scenario=` when it is a ready-made one, else
   * the default — or what a link names, with the link's code (page-links.ts `mountLinked`).
   */
  async mount(): Promise<void> {
    const { search, hash } = this.host.location();
    const auditWindow = auditWindowOf(search);
    const memory = memoryBudgetOf(search);
    const liveCap = liveCapOf(search);
    await this.pg.start({
      ...(auditWindow ? { auditWindow } : {}),
      ...(memory ? { memory } : {}),
      ...(liveCap ? { liveCap } : {})
    });
    if (hash.startsWith(HASH_PREFIX) || param(search, 'trace') !== null)
      return (await links()).mountLinked(this, search, hash);
    const q = param(search, 'scenario');
    this.picked = READY_MADE.some((s) => s.name === q) ? q! : DEFAULT_SCENARIO;
    await this.loadNamed(this.picked);
  }

  /** A ready-made client log picked in the trace-mode panel; an error message, or null. */
  openReadyLog(name: string): Promise<string | null> {
    return this.logs.importReady(name);
  }

  async loadNamed(name: string): Promise<void> {
    this.loadError = '';
    const res = await this.host.fetchScenario(name);
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
    return (await links()).loadData(this, data, from, link, also);
  }

  /** Replay an uploaded trace against the current scenario's lanes; an error message, or null. */
  async loadTrace(text: string): Promise<string | null> {
    return (await links()).loadTrace(this, text);
  }

  /** A ready-made scenario chosen in the picker: named in the URL, so a reload keeps it. */
  pick(name: string): Promise<void> {
    this.picked = name;
    this.host.replaceUrl(`${this.host.location().pathname}?scenario=${encodeURIComponent(name)}`);
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
