/**
 * The two people-and-model steps of the host, answered by the handler's callbacks: `consent`
 * becomes the host's ConsentSource, `sample` its ProviderSource. Each callback gets an
 * AbortSignal: the host stops a dialog at its timeout and a model call at its deadline or cap,
 * and a client can close the dialog or cancel the call when it does.
 */
import type { ConsentInput, ProviderInput } from '../machine/authorize';
import {
  estimateCostMicros,
  estimateTokens,
  inputTokensOf,
  type RateCard
} from '../machine/budget';
import { pickModel } from '../machine/evaluate';
import { fromMicrosExact } from '../machine/money';
import type { PolicyBlock } from '../machine/policy';
import type { IncludeContext, Money, SamplingParams } from '../machine/types';
import type { ConsentSource, ProviderSource } from '../client/driver';

export type ConsentAnswer = 'allow' | 'deny';

export interface ConsentRequest {
  server: string;
  /** The handler's name for the MCP connection the request came on. */
  connection: string;
  /** The request's identity (SPEC §3): what a stored decision is keyed by. */
  identity: string;
  params: SamplingParams;
  /** The pre-flight worst case: the input and `maxTokens` of output at the model's rate card. */
  estimate: Money | null;
  /** Aborted when the host stops waiting (the dialog timed out, the server cancelled). */
  signal: AbortSignal;
}

export type ConsentFn = (request: ConsentRequest) => ConsentAnswer | Promise<ConsentAnswer>;

export interface SampleOptions {
  /** The model the policy chose (from the request's hints and the allowed models). */
  model: string;
  /** The context the policy allows (a wider request is trimmed to this). */
  includeContext: IncludeContext;
  maxTokens: number;
  /** Aborted when the host stops the call (its deadline, the cap, the server cancelled). */
  signal: AbortSignal;
}

export interface SampleResult {
  content: { type: 'text'; text: string };
  model?: string;
  stopReason?: string;
  usage?: { inputTokens?: number; outputTokens?: number };
  [k: string]: unknown;
}

export type SampleFn = (
  params: SamplingParams,
  options: SampleOptions
) => SampleResult | Promise<SampleResult>;

/**
 * An AbortController made when its signal is first read: most dialogs and model calls end on
 * their own, and a controller per step per request is measurable garbage at thousands a second.
 */
class LazyAbort {
  #ctl: AbortController | null = null;
  #aborted = false;
  get signal(): AbortSignal {
    this.#ctl ??= new AbortController();
    if (this.#aborted && !this.#ctl.signal.aborted) this.#ctl.abort();
    return this.#ctl.signal;
  }
  get aborted(): boolean {
    return this.#aborted;
  }
  abort(): void {
    this.#aborted = true;
    this.#ctl?.abort();
  }
}

/**
 * The object `consent` receives: plain data members, then `signal`, an own enumerable accessor
 * that makes the AbortController on first read. The accessor is one shared function, defined the
 * same way on every instance, so V8 gives every request the same hidden class; a getter made per
 * object (a literal's `get signal()`, or `Object.defineProperty` with a fresh closure) costs a new
 * hidden class and about a microsecond and a half each, on every request.
 */
class ConsentRequestObject implements ConsentRequest {
  readonly server: string;
  readonly connection: string;
  readonly identity: string;
  readonly params: SamplingParams;
  readonly estimate: Money | null;
  declare readonly signal: AbortSignal;
  readonly #abort: LazyAbort;
  static readonly #signal: PropertyDescriptor = {
    get(this: ConsentRequestObject) {
      return this.#abort.signal;
    },
    enumerable: true,
    configurable: true
  };
  constructor(input: ConsentInput, estimate: Money | null, abort: LazyAbort) {
    this.server = input.server;
    this.connection = input.connection;
    this.identity = input.identity;
    this.params = input.params;
    this.estimate = estimate;
    this.#abort = abort;
    Object.defineProperty(this, 'signal', ConsentRequestObject.#signal);
  }
}

/** The options `sample` receives, `signal` made as in {@link ConsentRequestObject}. */
class SampleOptionsObject implements SampleOptions {
  readonly model: string;
  readonly includeContext: IncludeContext;
  readonly maxTokens: number;
  declare readonly signal: AbortSignal;
  readonly #abort: LazyAbort;
  static readonly #signal: PropertyDescriptor = {
    get(this: SampleOptionsObject) {
      return this.#abort.signal;
    },
    enumerable: true,
    configurable: true
  };
  constructor(input: ProviderInput, abort: LazyAbort) {
    this.model = input.model;
    this.includeContext = input.contextApplied;
    this.maxTokens = input.maxTokens;
    this.#abort = abort;
    Object.defineProperty(this, 'signal', SampleOptionsObject.#signal);
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * What the dialog shows as the call's cost: the same worst case the host holds against the
 * server's budget window while the call runs (input + maxTokens output, priced at the model the
 * server's effective block picks), or null when the policy names no model it can price.
 */
export function preflightEstimate(
  block: Pick<PolicyBlock, 'allowedModels' | 'defaultModel'>,
  cards: Readonly<Record<string, RateCard>>,
  params: SamplingParams
): Money | null {
  const picked = pickModel(params.modelPreferences, block);
  if (!picked.ok || !Object.hasOwn(cards, picked.model)) return null;
  const card = cards[picked.model]!;
  const micros = estimateCostMicros(card, inputTokensOf(params), params.maxTokens);
  return { amount: fromMicrosExact(micros), currency: card.currency };
}

/**
 * `consent` as the host's ConsentSource. Anything but 'allow' — 'deny', another value, a thrown
 * error — is a denial: a dialog that broke must not let a request through.
 */
export function consentSource(
  ask: ConsentFn,
  estimate: (input: ConsentInput) => Money | null
): ConsentSource {
  return (input, answer) => {
    const ctl = new LazyAbort();
    let reply: ConsentAnswer | Promise<ConsentAnswer>;
    try {
      reply = ask(new ConsentRequestObject(input, estimate(input), ctl));
    } catch {
      reply = 'deny';
    }
    let settled = false;
    Promise.resolve(reply).then(
      (a) => ((settled = true), answer(a === 'allow')),
      () => ((settled = true), answer(false))
    );
    // Abort only a dialog still open (an abort builds a DOMException: not on every request).
    return () => {
      if (!settled) ctl.abort();
    };
  };
}

const STOP_REASONS = new Set(['endTurn', 'maxTokens', 'stopSequence']);

/** The model call failed: said once, unless the host already stopped it. */
function failed(ctl: LazyAbort, emit: Parameters<ProviderSource>[1], e: unknown): void {
  if (!ctl.aborted) emit({ type: 'provider.failed', kind: 'error', message: errorText(e) }, true);
}

/** The result as the meter reads it, or why it cannot be read. */
function readResult(r: unknown): { text: string; tokens: number } | string {
  const content = (r as SampleResult | null)?.content;
  if (!content || content.type !== 'text' || typeof content.text !== 'string')
    return 'sample must return { content: { type: "text", text } }';
  if (!content.text.isWellFormed()) return 'sample returned text with a lone surrogate';
  const out = (r as SampleResult).usage?.outputTokens;
  // A provider's own count is the bill; without one, the lab's estimate (4 characters a token).
  const tokens = Number.isSafeInteger(out) && out! >= 0 ? out! : estimateTokens(content.text);
  return { text: content.text, tokens };
}

/**
 * `sample` as the host's ProviderSource: one call, then `provider.started`, one chunk with the
 * whole text and its token count, and `provider.done` — or `provider.failed` when it throws.
 * `seen` receives each result as returned (shadow mode serves it whatever the policy decided).
 */
export function providerSource(
  sample: SampleFn,
  seen: (params: SamplingParams, result: SampleResult) => void
): ProviderSource {
  return (input: ProviderInput, emit) => {
    const ctl = new LazyAbort();
    let call: Promise<SampleResult>;
    try {
      call = Promise.resolve(sample(input.params, new SampleOptionsObject(input, ctl)));
    } catch (e) {
      call = Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    let settled = false;
    call.then(
      (result) => {
        settled = true;
        if (ctl.aborted) return;
        const read = readResult(result);
        if (typeof read === 'string') return failed(ctl, emit, new Error(read));
        seen(input.params, result);
        const stop = result.stopReason;
        // Fresh events, kept by nobody here: the host stamps them in place (`owned`).
        emit({ type: 'provider.started', cachedInputTokens: 0 }, true);
        emit({ type: 'provider.chunk', text: read.text, tokens: read.tokens }, true);
        emit(
          {
            type: 'provider.done',
            stopReason:
              stop && STOP_REASONS.has(stop)
                ? (stop as 'endTurn' | 'maxTokens' | 'stopSequence')
                : 'endTurn'
          },
          true
        );
      },
      (e: unknown) => {
        settled = true;
        failed(ctl, emit, e);
      }
    );
    // Abort only a call still running (an abort builds a DOMException: not on every request).
    return () => {
      if (!settled) ctl.abort();
    };
  };
}
