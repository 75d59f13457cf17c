/**
 * What the share bar's buttons do (ShareBar.svelte): make the link, download the scenario, read an
 * uploaded scenario or trace. Loaded with the first click or upload, not with the page (issue
 * #24): the bar itself is a row of buttons.
 */
import { tick } from 'svelte';
import { quote } from '$lib/machine/excerpt';
import {
  decodeText,
  MAX_SCENARIO_BYTES,
  MAX_TRACE_BYTES,
  sizeRefusal
} from '$lib/sim/input/text-input';
import { downloadText } from './download';

/** Links longer than this get cut by some chat and mail clients. */
const LONG_LINK = 8_000;
const UNCHANGED = 'The current scenario is unchanged.';

/** The bar as the actions see it: what it shares, and where it says how that went. */
export interface ShareBarHost {
  scenario: unknown;
  fork: unknown;
  run?: () => Promise<{
    scenario: unknown;
    fork: unknown;
    timeline: unknown;
    leftOut: string;
  } | null>;
  trace?: { value: unknown; words: string };
  /** A status line (and no error). */
  say(message: string): void;
  /** An error (and no status). */
  fail(message: string): void;
  /** Show the link in its field. */
  showLink(url: string): void;
  /** The link's field, once shown: selected for the learner when the clipboard is refused. */
  linkField(): HTMLInputElement | null;
}

export async function copyLink(bar: ShareBarHost): Promise<void> {
  let url: string;
  let leftOut = '';
  try {
    // The link codec (lz-string, the JSON reader) loads on the first link made.
    const { encodeScenarioHash } = await import('./share');
    const shared = bar.run ? await bar.run() : null;
    leftOut =
      (shared?.leftOut ? ` ${shared.leftOut}` : '') +
      (bar.trace?.words ? ` ${bar.trace.words}` : '');
    // The page's own address may name a ready-made log (`?trace=`): the link says it in `&t=`.
    const page = new URL(location.href);
    page.hash = '';
    page.searchParams.delete('trace');
    url =
      page.href +
      (shared
        ? encodeScenarioHash(shared.scenario, shared.fork, shared.timeline, bar.trace?.value)
        : encodeScenarioHash(bar.scenario, bar.fork, null, bar.trace?.value));
  } catch (e) {
    bar.fail(`The link could not be made: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  bar.showLink(url);
  const long =
    (url.length > LONG_LINK
      ? ` It is ${Math.round(url.length / 1024)} KB long, and some apps cut long links: download the scenario file to be safe.`
      : '') + leftOut;
  try {
    if (!navigator.clipboard?.writeText) throw new Error('no clipboard');
    await navigator.clipboard.writeText(url);
    bar.say(`Link copied.${long}`);
  } catch {
    // No clipboard access (permissions, an insecure origin): select the link for the learner.
    await tick();
    bar.linkField()?.focus();
    bar.linkField()?.select();
    bar.say(`The browser did not allow copying: press Ctrl+C to copy the selected link.${long}`);
  }
}

export function downloadScenario(bar: ShareBarHost, fileName: string): void {
  let json: string | undefined;
  try {
    json = JSON.stringify(bar.scenario, null, 2);
  } catch (e) {
    bar.fail(`The scenario could not be saved: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  if (json === undefined) {
    bar.fail('There is no scenario to download.');
    return;
  }
  downloadText(fileName, json + '\n', 'application/json');
  bar.say(`Downloaded ${fileName}.`);
}

/** A file's name as a message shows it: escaped and short (see `quote`). */
function shownName(name: string): string {
  return /^[\w. @+,=~()-]{1,80}$/.test(name) ? name : quote(name, 80);
}

/**
 * The chosen file as text, by the lab's one rule (`text-input.ts`, the same as `lab`): its size
 * checked first, a UTF-8 byte order mark dropped, UTF-16 with one decoded, anything else that
 * is not UTF-8 refused with where.
 */
async function readUpload(
  bar: ShareBarHost,
  file: File,
  what: string,
  maxBytes: number
): Promise<string | null> {
  const name = shownName(file.name);
  const big = sizeRefusal(what, file.size, maxBytes);
  if (big) {
    bar.fail(`${name}: ${big}.\n${UNCHANGED}`);
    return null;
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await file.arrayBuffer());
  } catch (e) {
    bar.fail(`${name} could not be read: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
  const text = decodeText(bytes);
  if (!text.ok) {
    bar.fail(`${name}: the ${what} cannot be read: ${text.error}.\n${UNCHANGED}`);
    return null;
  }
  return text.text;
}

export async function uploadScenario(
  bar: ShareBarHost,
  file: File,
  onLoadScenario: (data: unknown) => Promise<string | null>
): Promise<void> {
  const text = await readUpload(bar, file, 'scenario', MAX_SCENARIO_BYTES);
  if (text === null) return;
  const name = shownName(file.name);
  // The strict JSON reader loads with the first upload.
  const { parseJsonText } = await import('$lib/machine/policy/json-strict');
  const json = parseJsonText(text);
  if (!json.ok) {
    const e = json.error;
    bar.fail(
      e.path === '$'
        ? `Scenario not loaded: ${name} is not JSON (line ${e.line}, column ${e.column}: ${e.detail}).\n${UNCHANGED}`
        : `Scenario not loaded: ${name}: ${e.path}: ${e.message}.\n${UNCHANGED}`
    );
    return;
  }
  const problem = await onLoadScenario(json.value);
  if (problem) bar.fail(`${name}: ${problem}\n${UNCHANGED}`);
  else bar.say(`Loaded the scenario from ${name}.`);
}

export async function uploadTrace(
  bar: ShareBarHost,
  file: File,
  onLoadTrace: (text: string) => Promise<string | null>
): Promise<void> {
  const text = await readUpload(bar, file, 'trace', MAX_TRACE_BYTES);
  if (text === null) return;
  const name = shownName(file.name);
  const problem = await onLoadTrace(text);
  if (problem) bar.fail(`${name}: ${problem}\n${UNCHANGED}`);
  else bar.say(`Loaded the trace from ${name}.`);
}
