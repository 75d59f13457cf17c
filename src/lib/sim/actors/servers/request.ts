/**
 * The requests simulated servers send: built deterministically from a server's template, changed
 * by one character (the prompt mutator), or written by a differently configured serialiser (the
 * serialiser-variant retrier).
 *
 * Sizes are in the simulator's stand-in tokens: ceil(characters / 4), characters counted as
 * Unicode code points (budget.ts `estimateTokens` / `inputTokensOf`).
 */
import { copyJson } from '../../../machine/copy-json';
import type {
  ContentBlock,
  SamplingMessage,
  SamplingParams,
  TextContent
} from '../../../machine/types';
import type { RequestTemplate, WireStyle } from '../../world/world';

/**
 * The filler text: a fixed sentence list, repeated. It holds a few composed accents (ï, é) on
 * purpose: a request with padding then has bytes an NFD serialiser writes differently, so the
 * serialiser-variant retrier shows its effect on every template, not only on accented prompts.
 */
const FILLER_SENTENCES = [
  'The quarterly report covers revenue, churn and the migration of the billing service.',
  'Each section names its owner, its deadline and its open risks in plain words.',
  'A naïve reader skims the café of metrics before the résumé of decisions.',
  'Figures are rounded to the nearest thousand and every estimate names its source.',
  'Nothing in this document is confidential, but all of it is long.'
];
/** The shared prefix reads as a document from its first sentence. */
const PREFIX_SOURCE = FILLER_SENTENCES.join(' ') + ' ';
/** Padding follows the prompt after a space. */
const PADDING_SOURCE = ' ' + FILLER_SENTENCES.join(' ');

/** Characters per stand-in token. */
const CHARS_PER_TOKEN = 4;

/** The first `chars` characters of `source` repeated (all BMP, so code units = code points). */
function fill(source: string, chars: number): string {
  if (chars <= 0) return '';
  return source.repeat(Math.ceil(chars / source.length)).slice(0, chars);
}

/** Length in Unicode code points, as the token estimate counts. */
function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function textMessage(text: string): SamplingMessage {
  return { role: 'user', content: { type: 'text', text } };
}

function nonNegativeInt(x: number | undefined): number {
  return x === undefined || !Number.isFinite(x) || x <= 0 ? 0 : Math.floor(x);
}

export interface BuildOptions {
  /**
   * Shrink to at most this many input tokens (system prompt + every message): the prompt's
   * padding is cut first, then the shared prefix (so a cache on the prefix survives as long as it
   * can). The system prompt and the prompt itself are never cut: when they alone exceed the
   * target, the result is as small as it can be and still over it.
   */
  inputTokens?: number;
}

/**
 * Params built lately, per template, by task number and input budget (a number for the full
 * request, `n:inputTokens` for a shrunk one): see {@link buildParams}.
 */
const built = new WeakMap<RequestTemplate, Map<number | string, SamplingParams>>();
/**
 * Every build kept, oldest first (from `builtHead`), with the map it is in: the oldest go once the
 * kept ones hold more than {@link BUILT_CHARS} characters of text. Why a bound by size across
 * templates, not the last sixteen builds of each template: a group's servers share one template
 * but each numbers its own tasks, and drift apart — on the 50-server benchmark, a group of 15
 * servers asked for task numbers far more than sixteen builds apart, so nine in ten task starts
 * built (and canonicalised, for its identity) a request that had been built before.
 */
interface Built {
  in: Map<number | string, SamplingParams>;
  key: number | string;
  chars: number;
}
const builtOrder: (Built | undefined)[] = [];
let builtHead = 0;
let builtChars = 0;
/**
 * 1 M characters of request text at most (a few MB with their restyled copies; 64 builds of a
 * 16 KB request): on the 50-server benchmark it shares nearly as many objects as four times the
 * room (2 h: 1,030 identity memo misses by object, against 978).
 */
const BUILT_CHARS = 2 ** 20;

/**
 * The `sampling/createMessage` params of task `n` of a server. Deterministic: the same template
 * and `n` give the same params, member for member and in the same key order.
 *
 * Memoised per template object: the same template, `n` and options asked for again give the same
 * params object while it is kept (above). Both lanes run their own copy of the population from the
 * same templates, with the same arrival times, so each task's request is built twice within
 * moments, and a group's servers ask for the same task numbers — and a padded request is 16 KB of
 * text to build, hold and (as a new object) canonicalise for its identity. The result is a request
 * that has been sent, so nobody changes it (a behaviour that adjusts its params copies them
 * first); sharing it changes no byte of any frame.
 *
 * messages = [prefix?, prompt]: the prefix (when `prefixTokens` > 0) is `prefixTokens`×4
 * characters of filler, the same text for every task so a prompt cache can warm on it; the prompt
 * is `template.prompt` with every `{n}` replaced by the task number, padded with filler up to
 * `promptTokens`×4 characters (never cut when longer).
 */
export function buildParams(
  template: RequestTemplate,
  n: number,
  opts: BuildOptions = {}
): SamplingParams {
  const key = opts.inputTokens === undefined ? n : `${n}:${opts.inputTokens}`;
  let recent = built.get(template);
  if (recent === undefined) {
    recent = new Map();
    built.set(template, recent);
  }
  const known = recent.get(key);
  if (known !== undefined) return known;
  const params = build(template, n, opts);
  let chars = 0;
  for (const m of params.messages) chars += (m.content as TextContent).text.length;
  recent.set(key, params);
  builtOrder.push({ in: recent, key, chars });
  builtChars += chars;
  while (builtChars > BUILT_CHARS && builtHead < builtOrder.length - 1) {
    const old = builtOrder[builtHead]!;
    builtOrder[builtHead++] = undefined;
    old.in.delete(old.key);
    builtChars -= old.chars;
  }
  if (builtHead > 1_024 && builtHead * 2 > builtOrder.length) {
    builtOrder.splice(0, builtHead);
    builtHead = 0;
  }
  return params;
}

function build(template: RequestTemplate, n: number, opts: BuildOptions): SamplingParams {
  const prompt = template.prompt.replaceAll('{n}', String(n));
  const promptChars = codePoints(prompt);
  const systemChars = template.systemPrompt === undefined ? 0 : codePoints(template.systemPrompt);
  let prefixChars = nonNegativeInt(template.prefixTokens) * CHARS_PER_TOKEN;
  let padChars = Math.max(0, nonNegativeInt(template.promptTokens) * CHARS_PER_TOKEN - promptChars);
  if (opts.inputTokens !== undefined) {
    let room = Math.max(
      0,
      nonNegativeInt(opts.inputTokens) * CHARS_PER_TOKEN - systemChars - promptChars
    );
    prefixChars = Math.min(prefixChars, room);
    room -= prefixChars;
    padChars = Math.min(padChars, room);
  }

  const messages: SamplingMessage[] = [];
  if (prefixChars > 0) messages.push(textMessage(fill(PREFIX_SOURCE, prefixChars)));
  messages.push(textMessage(prompt + fill(PADDING_SOURCE, padChars)));

  // One fixed member order, absent members left out: params are compared as bytes downstream.
  const out: Partial<SamplingParams> = { messages };
  if (template.systemPrompt !== undefined) out.systemPrompt = template.systemPrompt;
  if (template.includeContext !== undefined) out.includeContext = template.includeContext;
  if (template.modelHints !== undefined && template.modelHints.length > 0) {
    out.modelPreferences = { hints: template.modelHints.map((name) => ({ name })) };
  }
  out.maxTokens = template.maxTokens;
  if (template.temperature !== undefined) out.temperature = template.temperature;
  if (template.budget !== undefined) out.budget = copyJson(template.budget);
  return out as SamplingParams;
}

/** The text block of the prompt: the first text block of the last user message. */
function promptBlock(params: SamplingParams): TextContent | null {
  for (let i = params.messages.length - 1; i >= 0; i--) {
    const m = params.messages[i];
    if (m === undefined || m.role !== 'user') continue;
    const blocks: ContentBlock[] = Array.isArray(m.content) ? m.content : [m.content];
    for (const b of blocks) {
      if (b.type === 'text' && typeof b.text === 'string') return b as TextContent;
    }
  }
  return null;
}

/** The prompt text a mutation changes (the last user message's text), or null. */
export function promptText(params: SamplingParams): string | null {
  return promptBlock(params)?.text ?? null;
}

/**
 * A 53-bit fingerprint of a text (two 32-bit FNV-1a lanes), for remembering which prompts a
 * server has sent without keeping them: a collision only makes a mutator skip one more variant.
 */
export function textFingerprint(s: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

function mod(a: number, m: number): number {
  return ((a % m) + m) % m;
}

/**
 * The prompt mutator's move: a copy of `params` whose prompt text (the last user message) differs
 * from the original in exactly one character, a lowercase ASCII letter in place of whatever was
 * there (so the token estimate does not move). Mutation `k` changes position k mod L (L = the
 * prompt's length in code points) to the ((k div L) mod 25)-th letter other than the original
 * character: every k below 25·L gives a different request, and none equals the original.
 * An empty prompt gets one letter. Throws when the request has no user text at all.
 */
export function mutateOneCharacter(params: SamplingParams, k: number): SamplingParams {
  const out = copyJson(params);
  const block = promptBlock(out);
  if (block === null) {
    throw new Error('mutateOneCharacter: the request has no user text message to change');
  }
  const step = Math.trunc(k);
  const chars = Array.from(block.text);
  if (chars.length === 0) {
    block.text = ALPHABET[mod(step, ALPHABET.length)]!;
    return out;
  }
  const pos = mod(step, chars.length);
  const round = Math.floor(mod(step, chars.length * (ALPHABET.length - 1)) / chars.length);
  const original = chars[pos]!;
  const candidates = ALPHABET.replace(original, '');
  chars[pos] = candidates[round % candidates.length]!;
  block.text = chars.join('');
  return out;
}

/**
 * `o[k] = v` as an own data property. Assigned, which is what defining it gives for any key but
 * `__proto__` (the only accessor a plain object inherits) and several times faster — a new
 * request of a restyling server restyles every member of its params; `__proto__` is defined, so
 * it stays a plain key.
 */
function put(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

function restyle(v: unknown, wire: WireStyle): unknown {
  if (typeof v === 'string') return wire.nfd ? v.normalize('NFD') : v;
  if (Array.isArray(v)) return v.map((x: unknown) => restyle(x, wire));
  if (typeof v === 'object' && v !== null) {
    const src = v as Record<string, unknown>;
    const keys = Object.keys(src);
    if (wire.reverseKeys) keys.reverse();
    const out: Record<string, unknown> = {};
    for (const k of keys) put(out, wire.nfd ? k.normalize('NFD') : k, restyle(src[k], wire));
    return out;
  }
  return v;
}

/**
 * The same request as a differently configured serialiser writes it: a new params object whose
 * keys, at every depth, are in reversed insertion order (`reverseKeys`) and whose strings, keys
 * included, are in Unicode NFD (`nfd`). A human reads the same request; the bytes differ, and
 * only a canonicalising identity (RFC 8785 + NFC) sees through it. `{}` gives a deep copy.
 *
 * The same params and style object give the same copy again (memoised, below). The environment
 * applies this when a server passes a `WireStyle` to `env.send`; a server never applies it itself (applying `reverseKeys` twice would restore the original order).
 * (JavaScript orders integer-like keys numerically whatever the insertion order; params have none.)
 */
export function applyWireStyle(params: SamplingParams, wire: WireStyle = {}): SamplingParams {
  let forParams = styled.get(params);
  let out = forParams?.get(wire);
  if (out === undefined) {
    out = restyle(params, wire) as SamplingParams;
    if (forParams === undefined) {
      forParams = new Map();
      styled.set(params, forParams);
    }
    forParams.set(wire, out);
  }
  return out;
}

/**
 * Restyled params by params object, then by style object: the serialiser-variant retrier sends the
 * same request through the same few styles again and again (and both lanes send the same params
 * object, see {@link buildParams}), and restyling 16 KB of text to NFD each time was a new 32 KB
 * string per retry. A params object is not changed once sent, so its restyled copy stays right;
 * it goes with its params.
 */
const styled = new WeakMap<SamplingParams, Map<WireStyle, SamplingParams>>();
