/**
 * A client host on a virtual clock, for the host's specs: the default provider (priced, streamed),
 * a consent source that answers after a delay (or never), and `send` for one request. Shared by
 * the guarantee specs so each states only what its case changes.
 */
import type { AuthOutput, ConsentInput } from '../../machine/authorize';
import { resolveClientConfig, type ClientConfigInput } from '../../machine/config';
import { defaultPolicy, type Policy } from '../../machine/policy';
import type { SamplingParams } from '../../machine/types';
import { MemoryAuditLog } from '../../store/audit-log';
import type { DecisionStore } from '../../store/decision-store';
import type { ConsentSource, ProviderSource } from '../../client/driver';
import { ClientHost, type Executor } from '../../client/host';
// The rig's default executor runs each request on an XState actor.
import '../../client/actor-executor';
import { VirtualClock } from '../world/clock';
import { SharedDecisionStore } from '../../store/shared-store';
import { cardsByModel, createProvider, DEFAULT_PROVIDER } from './provider';
import { Rng } from '../world/rng';

export const SERVER = 'release-notes';
export const PROMPT = 'You summarise release notes.';

export const params = (over: Partial<SamplingParams> = {}): SamplingParams => ({
  systemPrompt: PROMPT,
  messages: [{ role: 'user', content: { type: 'text', text: 'Summarise 2.3.' } }],
  includeContext: 'thisServer',
  maxTokens: 200,
  ...over
});

/** A user message of `chars` characters (4 characters a token). */
export const longMessage = (chars: number, letter = 'x'): SamplingParams['messages'] => [
  { role: 'user', content: { type: 'text', text: letter.repeat(chars) } }
];

export interface RigOptions {
  store?: DecisionStore;
  policy?: Policy;
  config?: ClientConfigInput;
  /** The user's answer and how long they take; `null` = never answers. */
  answer?: boolean | null;
  answerAfterMs?: number;
  consent?: ConsentSource;
  provider?: (clock: VirtualClock) => ProviderSource;
  executor?: Executor;
}

export function rig(o: RigOptions = {}) {
  const clock = new VirtualClock(Date.UTC(2026, 2, 10, 9));
  const prompts: ConsentInput[] = [];
  const outs: AuthOutput[] = [];
  let providerCalls = 0;
  const real = createProvider(DEFAULT_PROVIDER, clock, new Rng(1)).source;
  const inner = o.provider ? o.provider(clock) : real;
  const store = o.store ?? new SharedDecisionStore();
  const host = new ClientHost({
    config: resolveClientConfig({ store: store.scope, ...o.config }),
    policy: o.policy ?? defaultPolicy(),
    cards: cardsByModel(DEFAULT_PROVIDER.cards),
    store,
    audit: new MemoryAuditLog(),
    clock,
    executor: o.executor ?? 'actor',
    consent:
      o.consent ??
      ((input, answer) => {
        prompts.push(input);
        if (o.answer === null) return;
        const t = clock.setTimeout(() => answer(o.answer ?? true), o.answerAfterMs ?? 1_000);
        return () => clock.clearTimeout(t);
      }),
    provider: (input, emit) => {
      providerCalls++;
      return inner(input, emit);
    }
  });
  let id = 0;
  const send = (p: SamplingParams = params(), connection = `${SERVER}#1`, server = SERVER) =>
    host.authorize({ id: ++id, server, connection, params: p, receivedAt: clock.now() }, (out) =>
      outs.push(out)
    );
  /** Run the clock `ms` further. */
  const after = (ms: number) => clock.runUntil(clock.now() + ms);
  return { clock, host, prompts, outs, send, after, providerCalls: () => providerCalls };
}

export const noRateLimit = (): Policy => {
  const p = defaultPolicy();
  p.defaults.rateLimit = null;
  return p;
};

/** No per-call cap: only the budget window bounds a call. */
export const uncapped = (): Policy => {
  const p = noRateLimit();
  p.defaults.perCallCap = null;
  return p;
};

/** The `data` of a -32003 frame, or null for any other frame. */
export function denialData(out: AuthOutput | undefined): Record<string, unknown> | null {
  const f = out?.frame;
  return f && 'error' in f && f.error.code === -32003
    ? (f.error.data as Record<string, unknown>)
    : null;
}
