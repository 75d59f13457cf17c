/**
 * The simulated model provider: a rate card per model, latency to the first token, a chunked
 * stream, transport failures, provider errors, slow calls that pass the host's deadline, and a
 * prompt cache warmed by requests that share a prefix.
 *
 * It answers the machine's `callProvider` actor by scheduling events on the virtual clock, and
 * stops when the machine cancels it (at the cap, or at the deadline).
 *
 * Over 400 lines on purpose: a call's stream and failure states are the provider's, copied with it.
 */
import type { ProviderEvent, ProviderInput } from '../../machine/authorize';
import { DEFAULT_RATE_CARDS, estimateTokens, type RateCard } from '../../machine/budget';
import type { SamplingParams } from '../../machine/types';
import { copyable } from '../../machine/clone';
import type { VirtualClock } from '../world/clock';
import type { SimEvent } from '../world/events';
import { LIMITS } from '../input/limits';
import { hashString, type Rng } from '../world/rng';
import type { LaneId } from '../../machine/vocabulary';
import type {
  Driver,
  ProviderActor,
  ProviderReply,
  ProviderSource,
  TimerTarget
} from '../../client/driver';

export interface ProviderSpec {
  cards: RateCard[];
  /** Time to the first token: mean, and ± jitter as a fraction. */
  latencyMs: number;
  latencyJitter: number;
  /** Output tokens per streamed chunk, and the time between chunks. */
  chunkTokens: number;
  chunkIntervalMs: number;
  /** How long completions run, as a fraction of `maxTokens` (mean); 1 = always up to maxTokens. */
  outputFraction: number;
  /** Probability that a call fails in transport (-32001) or at the provider (-32603). */
  transportFailureRate: number;
  providerErrorRate: number;
  /** Probability that a call stalls for `slowFactor` × latency (long enough to pass a deadline). */
  slowRate: number;
  slowFactor: number;
  /** How long a prompt-cache entry stays warm after its last use. */
  cacheTtlMs: number;
  /** Text of the streamed chunks, in order (cycled); absent = generated words. */
  chunkTexts?: string[];
  /**
   * Scripted failures: the `call`-th provider call made for `server` (1-based; absent = every
   * call) fails this way. Lets a scenario show one transport failure exactly where it teaches.
   */
  failures?: { server: string; kind: 'transport' | 'provider'; call?: number }[];
}

export const DEFAULT_PROVIDER: ProviderSpec = {
  cards: DEFAULT_RATE_CARDS,
  latencyMs: 400,
  latencyJitter: 0.5,
  chunkTokens: 50,
  chunkIntervalMs: 40,
  outputFraction: 0.6,
  transportFailureRate: 0,
  providerErrorRate: 0,
  slowRate: 0,
  slowFactor: 200,
  cacheTtlMs: 300_000
};

const WORDS = [
  'the',
  'release',
  'adds',
  'a',
  'stable',
  'reason',
  'field',
  'so',
  'servers',
  'can',
  'branch',
  'on',
  'it',
  'and',
  'degrade',
  'deliberately',
  'while',
  'retries',
  'stay',
  'bounded',
  'by',
  'policy',
  'budget',
  'window',
  'summary',
  'context',
  'request',
  'identity',
  'decision',
  'store'
];

/** The cacheable prefix of a request: the system prompt and every message but the last. */
function cachePrefix(params: SamplingParams): { key: number; tokens: number } | null {
  const msgs = Array.isArray(params.messages) ? params.messages : [];
  if (msgs.length < 2) return null;
  let text = typeof params.systemPrompt === 'string' ? params.systemPrompt : '';
  for (const m of msgs.slice(0, -1)) {
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    for (const b of blocks)
      if (b && b.type === 'text' && typeof b.text === 'string') text += b.text;
  }
  if (!text) return null;
  return { key: hashString(text) ^ text.length, tokens: estimateTokens(text) };
}

export interface ProviderStats {
  calls: number;
  cacheHits: number;
  cachedTokens: number;
}

/** What {@link Stream} needs of the clock to place its chunks lazily, in their eager order. */
interface BlockClock {
  reserveBlock(n: number): number;
  insert(r: { at: number; seq: number }, what: SimEvent): unknown;
  insertTimer(r: { at: number; seq: number }, target: TimerTarget, arg: unknown): unknown;
}

function blockClock(clock: Driver): BlockClock | null {
  const c = clock as Driver & Partial<BlockClock>;
  return typeof c.reserveBlock === 'function' && typeof c.insertTimer === 'function'
    ? (c as Driver & BlockClock)
    : null;
}

/**
 * One completion's stream: `provider.started`, `chunks` chunks, `provider.done`. Only the next
 * event is ever on the clock — a response of 10,000 chunks is one pending timer, not 10,000 set
 * at once (which took 30 s and 900 MB for a million). On the virtual clock each event takes the
 * place it would have had if all were set when the call was made (`reserveBlock`), so the run
 * is the same event for event; the texts are drawn at the call, as before.
 */
class Stream {
  /** The next event: 0 = started, 1 … chunks = chunk k − 1, chunks + 1 = done. */
  next = 0;
  timer: unknown = null;
  stopped = false;

  constructor(
    /** The provider that made it: its clock, and its table of calls in progress. */
    public owner: SimProvider,
    /** The call's number at its provider (a `provider` event names it: events.ts). */
    readonly call: number,
    /** The host's step that made the call: it hears the events. */
    public reply: ProviderReply,
    /** Virtual time of the call, and the latency to the first token. */
    readonly calledAt: number,
    readonly latency: number,
    readonly intervalMs: number,
    readonly cached: number,
    readonly chunks: number,
    readonly chunkTokens: number,
    readonly target: number,
    readonly stopReason: 'maxTokens' | 'endTurn',
    /** Chunk texts: the scenario's, cycled, or two words per chunk (indices into WORDS). */
    readonly texts: readonly string[] | null,
    readonly words: Uint8Array | null,
    /** The first reserved place (`reserveBlock`), or null on a clock without them. */
    readonly firstSeq: number | null
  ) {}

  /** The delay (from the call) of event `k`, as the eager schedule computed it. */
  delayOf(k: number): number {
    const last = this.chunks - 1;
    const i = k === 0 ? 0 : k <= this.chunks ? k - 1 : last;
    return this.latency + i * this.intervalMs;
  }

  eventOf(k: number): ProviderEvent {
    if (k === 0) return { type: 'provider.started', cachedInputTokens: this.cached };
    if (k > this.chunks) return { type: 'provider.done', stopReason: this.stopReason };
    const i = k - 1;
    const tokens = Math.min(this.chunkTokens, this.target - i * this.chunkTokens);
    const text = this.texts
      ? this.texts[i % this.texts.length]!
      : `${WORDS[this.words![2 * i]!]} ${WORDS[this.words![2 * i + 1]!]} `;
    return { type: 'provider.chunk', text, tokens };
  }

  /** Put event `next` on the clock. */
  schedule(): void {
    const k = this.next;
    const delay = this.delayOf(k);
    const owner = this.owner;
    if (this.firstSeq !== null && owner.block) {
      const at = this.calledAt + Math.max(0, Math.round(delay));
      this.timer = owner.insert({ at, seq: this.firstSeq + k }, this.call);
    } else {
      this.timer = owner.after(delay - (owner.clock.now() - this.calledAt), this.call);
    }
  }

  /** Its next event is due (a `provider` event). */
  fire(): void {
    this.timer = null;
    if (this.stopped) return;
    const k = this.next++;
    // The next one first: what this event makes the host do (cancel, at the cap) stops it.
    if (k <= this.chunks) this.schedule();
    else this.owner.ended(this.call);
    // Made for this call and not kept: the host's step stamps it in place (no copy per chunk).
    const reply = this.reply;
    const ev = this.eventOf(k);
    if (reply.emitOwned) reply.emitOwned(ev);
    else reply.emit(ev);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.owner.clock.clearTimeout(this.timer);
    this.timer = null;
    this.owner.ended(this.call);
  }
}

// Copied over the copies of its provider and the host's step; its texts and words shared.
copyable(Stream, {
  name: 'provider.Stream',
  fields: { texts: 'shared', words: 'shared' }
});

/** A call that fails: one event, after the latency. */
class Failing {
  timer: unknown = null;

  constructor(
    public owner: SimProvider,
    readonly call: number,
    public reply: ProviderReply,
    readonly event: ProviderEvent
  ) {}

  fire(): void {
    this.timer = null;
    this.owner.ended(this.call);
    this.reply.emit(this.event);
  }

  stop(): void {
    if (this.timer !== null) this.owner.clock.clearTimeout(this.timer);
    this.timer = null;
    this.owner.ended(this.call);
  }
}

copyable(Failing, { name: 'provider.Failing', fields: { event: 'shared' } });

/**
 * A provider for one lane. `deadlineMs` tells the provider nothing — it only decides how slow
 * a slow call is; the machine's own `after: deadline` cuts it off. The host runs it as a
 * provider actor (client/driver.ts): a call's events go to the step that made it, and the host
 * stops a call by its number.
 */
export class SimProvider implements ProviderActor, TimerTarget {
  /** Last use of each warm prompt-cache prefix, by model and prefix. */
  private warm = new Map<string, number>();
  private callsByServer = new Map<string, number>();
  stats: ProviderStats = { calls: 0, cacheHits: 0, cachedTokens: 0 };
  /** {@link source}, made on first use (a copy makes its own). */
  private callbacks: ProviderSource | undefined;
  /** Calls with an event still to come, by number: a `provider` event (events.ts) names one. */
  private calls = new Map<number, Stream | Failing>();
  private serial = 0;
  /** The clock's reservations, when it has them (the virtual clock). */
  readonly block: BlockClock | null;

  /**
   * `lane`: the provider of that lane of an engine, whose clock runs its events as data
   * (`provider` events); without one (a page's or a test's host), its events are callbacks.
   */
  constructor(
    readonly spec: ProviderSpec,
    readonly clock: Driver,
    private rng: Rng,
    readonly lane?: LaneId
  ) {
    this.block = blockClock(clock);
  }

  /**
   * The same provider as a callback source, for a host that is not copied (a page's, a test's):
   * its `emit` and cancel are closures.
   */
  get source(): ProviderSource {
    return (this.callbacks ??= (input, emit) => {
      const n = this.call(input, { emit });
      return () => this.stop(n);
    });
  }

  /** Call `call`'s next event is due (a `provider` event, or its callback off an engine). */
  fire(call: number): void {
    this.calls.get(call)?.fire();
  }

  /** Off an engine, a call's next event is a timer on the driver: it is due. */
  timerFired(call: unknown): void {
    this.fire(call as number);
  }

  /** The host stopped call `ticket` (at the cap, the deadline, a cancellation). */
  stop(ticket: unknown): void {
    this.calls.get(ticket as number)?.stop();
  }

  /** Call `call` has no event to come. */
  ended(call: number): void {
    this.calls.delete(call);
  }

  /** Call `call`'s next event at a reserved place. */
  insert(r: { at: number; seq: number }, call: number): unknown {
    if (this.lane) return this.block!.insert(r, { kind: 'provider', lane: this.lane, call });
    return this.block!.insertTimer(r, this, call);
  }

  /** Call `call`'s next event after `ms`. */
  after(ms: number, call: number): unknown {
    if (this.lane)
      return (this.clock as VirtualClock).after(ms, { kind: 'provider', lane: this.lane, call });
    return this.clock.setTimer(ms, this, call);
  }

  /** A model call for the host's step `reply`; returns its number (what `stop` takes). */
  call(input: ProviderInput, reply: ProviderReply): number {
    const { spec, rng, clock, stats } = this;
    stats.calls++;
    const n = ++this.serial;
    const at = (ms: number, event: ProviderEvent) => {
      const f = new Failing(this, n, reply, event);
      this.calls.set(n, f);
      f.timer = this.after(ms, n);
      return n;
    };
    let latency = rng.jitter(spec.latencyMs, spec.latencyJitter);
    const draw = rng.next();
    const call = (this.callsByServer.get(input.server) ?? 0) + 1;
    this.callsByServer.set(input.server, call);
    const scripted = spec.failures?.find(
      (f) => f.server === input.server && (f.call === undefined || f.call === call)
    );
    if (scripted?.kind === 'transport' || (!scripted && draw < spec.transportFailureRate)) {
      return at(latency, {
        type: 'provider.failed',
        kind: 'timeout',
        message: 'The model provider did not answer in time'
      });
    }
    if (
      scripted?.kind === 'provider' ||
      (!scripted && draw < spec.transportFailureRate + spec.providerErrorRate)
    ) {
      return at(latency, {
        type: 'provider.failed',
        kind: 'error',
        message: 'The model provider returned an internal error'
      });
    }
    if (rng.chance(spec.slowRate)) latency *= spec.slowFactor;

    // The prompt cache: a prefix seen on this model within the TTL is read at the cached price.
    let cached = 0;
    const prefix = cachePrefix(input.params);
    if (prefix) {
      const key = `${input.model}\u0000${prefix.key}`;
      const last = this.warm.get(key);
      const now = clock.now();
      if (last !== undefined && now - last <= spec.cacheTtlMs) {
        cached = Math.min(prefix.tokens, input.inputTokens);
        stats.cacheHits++;
        stats.cachedTokens += cached;
      }
      this.warm.set(key, now);
    }

    const target = Math.max(
      1,
      Math.min(
        input.maxTokens,
        Math.round(input.maxTokens * spec.outputFraction * rng.jitter(1, 0.3))
      )
    );
    // A request from a trace is not checked against the scenario's chunk size (a scenario is:
    // limits.ts): past MAX_CHUNKS a chunk carries more tokens, so no response is more chunks.
    const chunkTokens = Math.max(spec.chunkTokens, Math.ceil(target / LIMITS.chunksPerResponse));
    const chunks = Math.ceil(target / chunkTokens);
    let words: Uint8Array | null = null;
    if (!spec.chunkTexts?.length) {
      // Drawn now, in the order the eager schedule drew them (two words a chunk).
      words = new Uint8Array(2 * chunks);
      for (let j = 0; j < words.length; j++) words[j] = Math.floor(rng.next() * WORDS.length);
    }
    const block = this.block;
    const stream = new Stream(
      this,
      n,
      reply,
      clock.now(),
      latency,
      spec.chunkIntervalMs,
      cached,
      chunks,
      chunkTokens,
      target,
      target >= input.maxTokens ? 'maxTokens' : 'endTurn',
      spec.chunkTexts?.length ? spec.chunkTexts : null,
      words,
      // started, the chunks, done: the places they had when all were set at the call.
      block ? block.reserveBlock(chunks + 2) : null
    );
    this.calls.set(n, stream);
    stream.schedule();
    return n;
  }
}

/** A provider for one lane (see {@link SimProvider}). */
export function createProvider(
  spec: ProviderSpec,
  clock: Driver,
  rng: Rng
): { source: ProviderSource; stats: ProviderStats; provider: SimProvider } {
  const provider = new SimProvider(spec, clock, rng);
  return { source: provider.source, stats: provider.stats, provider };
}

/** Rate cards by model name, as the host looks them up. */
export function cardsByModel(cards: readonly RateCard[]): Record<string, RateCard> {
  const out: Record<string, RateCard> = {};
  for (const c of cards) out[c.model] = c;
  return out;
}

// Copied over the copies of the clock, its random stream and its calls' steps; a callback source
// made for a page is not the copy's (it makes its own on use).
copyable(SimProvider, {
  name: 'provider.SimProvider',
  fields: { spec: 'shared', callbacks: 'dropped' }
});
