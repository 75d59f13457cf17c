/**
 * What the playground page does with links and uploads (playground-page.svelte.ts): a shared
 * link's scenario, timeline, forks and client log opened on load, a client log's address kept in
 * the URL, an uploaded scenario or trace checked and loaded. Loaded with the first link or upload,
 * not with the page: a first visit names none (issue #24, first load).
 */
import type { LinkRead } from './link-run';
import { param, type PlaygroundPage } from './playground-page.svelte';
import { DEFAULT_SCENARIO, READY_MADE } from './scenarios';
import { HASH_PREFIX, TRACE_PREFIX } from './share-prefixes';
import type { ImportLoad } from './trace-import.svelte';
import { readyLog, type TraceRef } from './traces/trace-link';

/**
 * The client log the URL names (issue #22): `?trace=NAME` (a ready-made one) or a share
 * link's `&t=` (a name, or the files themselves); null when it names none.
 */
async function traceOf(
  search: string,
  hash: string
): Promise<{ ref: TraceRef | null; error: string }> {
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

function openTrace(page: PlaygroundPage, ref: TraceRef, opts: ImportLoad): Promise<string | null> {
  return 'ready' in ref
    ? page.logs.importReady(ref.ready, opts)
    : page.logs.importFiles(ref.files, {
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
export async function traceUrl(page: PlaygroundPage): Promise<void> {
  // The codec first, the state after it: a run loaded meanwhile has cleared the log.
  const { encodeScenarioHash } = await import('./share');
  const i = page.logs.imported;
  if (!i) return;
  const { pathname, search } = page.host.location();
  const params = new URLSearchParams(search);
  params.delete('trace');
  let hash = '';
  if ('ready' in i.source) {
    params.set('trace', i.source.ready);
    if (page.picked) params.set('scenario', page.picked);
    else {
      params.delete('scenario');
      hash = encodeScenarioHash(i.scenario);
    }
  } else if (i.link.value) {
    params.delete('scenario');
    hash = encodeScenarioHash(i.scenario, null, null, i.link.value);
  } else {
    dropTraceUrl(page);
    return;
  }
  const q = params.toString();
  page.host.replaceUrl(`${pathname}${q ? `?${q}` : ''}${hash}`);
}

/** Trace mode ended (another scenario or trace): the address no longer names the log. */
export function dropTraceUrl(page: PlaygroundPage): void {
  const { pathname, search, hash } = page.host.location();
  const params = new URLSearchParams(search);
  const at = hash.indexOf(TRACE_PREFIX);
  if (!params.has('trace') && at === -1) return;
  params.delete('trace');
  const end = at === -1 ? -1 : hash.indexOf('&', at + 1);
  const h = at === -1 ? hash : hash.slice(0, at) + (end === -1 ? '' : hash.slice(end));
  const q = params.toString();
  page.host.replaceUrl(`${pathname}${q ? `?${q}` : ''}${h}`);
}

/**
 * Load what a link names, the worker started: a shared scenario (`#s=`), with the client log it
 * carries, or `?trace=` over `?scenario=` when it is a ready-made one, else the default. A link
 * that cannot be opened says why, above the default scenario.
 */
export async function mountLinked(
  page: PlaygroundPage,
  search: string,
  hash: string
): Promise<void> {
  let linkError = '';
  // A client log the link replays (issue #22): opened with its scenario, in one load.
  const trace = await traceOf(search, hash);
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
      page.onLinkFork?.(d.data, link.fork);
      // The scenario is the link's, not a ready-made one (the address written for the log says so).
      if (trace.ref) page.picked = '';
      const logErr = trace.ref ? await linkedTrace(page, d.data, trace.ref, link) : trace.error;
      if (logErr === null) {
        page.picked = '';
        page.seedText = String(page.pg.seed);
        return;
      }
      err = await loadData(page, d.data, 'link', link, logErr ? traceError(logErr) : '');
    }
    if (!err) {
      page.picked = '';
      return;
    }
    linkError = `The shared link could not be opened: ${err}`;
  }
  const q = param(search, 'scenario');
  const name = READY_MADE.some((s) => s.name === q) ? q! : DEFAULT_SCENARIO;
  page.picked = name;
  if (trace.ref && !linkError) {
    // The named scenario is the log's base: fetched, not loaded, so the one load is the
    // replay (a reload resumes it: run-loader.ts).
    const res = await page.host.fetchScenario(name);
    const logErr = res.ok
      ? await openTrace(page, trace.ref, { base: (await res.json()) as Record<string, unknown> })
      : `scenario '${name}' could not be fetched (HTTP ${res.status})`;
    if (logErr === null) {
      page.seedText = String(page.pg.seed);
      return;
    }
    await page.loadNamed(name);
    page.loadError = traceError(logErr);
    return;
  }
  await page.loadNamed(name);
  // After loadNamed, which clears the message: the learner must see why the link failed.
  if (linkError) page.loadError = `${linkError} The default scenario is shown instead.`;
  else if (trace.error) page.loadError = traceError(trace.error);
}

/**
 * A share link's scenario with the client log it carries; null when replaying, '' when the
 * scenario itself is not valid (loadData then says why), else what is wrong with the log.
 */
async function linkedTrace(
  page: PlaygroundPage,
  data: unknown,
  ref: TraceRef,
  link: LinkRead
): Promise<string | null> {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return '';
  const { parseScenario } = await import('$lib/sim/input/scenario');
  if (!parseScenario(data).ok) return '';
  return openTrace(page, ref, {
    base: data as Record<string, unknown>,
    ...(link.run ? { link: link.run } : {}),
    ...(link.problem ? { note: link.problem } : {})
  });
}

/**
 * Upload or shared link: resolves to an error message, or null when it is being loaded. A link
 * may carry the sender's timeline (`link.run`), or say why it could not be read.
 */
export async function loadData(
  page: PlaygroundPage,
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
    const what = from === 'link' ? 'the scenario in the link is not valid' : 'Scenario not loaded';
    return `${what}: ${shown.join('; ')}${more}`;
  }
  const opts = {
    ...(link?.run ? { link: link.run } : {}),
    ...(link?.problem ? { note: link.problem } : {})
  };
  if (from === 'file') dropTraceUrl(page);
  void page.pg.load(data as Record<string, unknown>, opts).then((errors) => {
    page.loadError = errors.length
      ? `Scenario not loaded: ${errors[0]!.path}: ${errors[0]!.message}`
      : also;
    page.seedText = String(page.pg.seed);
    if (!errors.length) page.picked = '';
  });
  return null;
}

/** A trace file replayed against the current scenario's lanes; an error message, or null. */
export async function loadTrace(page: PlaygroundPage, text: string): Promise<string | null> {
  const { parseTrace } = await import('$lib/sim/input/trace'); // loaded on first use, as parseScenario
  const r = parseTrace(text);
  if (!r.ok) return `Trace not loaded: ${r.error}`;
  if (!page.pg.scenario) return 'Load a scenario first: the trace replays against its two lanes.';
  page.logs.clear();
  dropTraceUrl(page);
  void page.pg.load(page.pg.scenario, { trace: r.events });
  return null;
}
