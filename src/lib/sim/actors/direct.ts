/**
 * SEP-2577's baseline: a server that calls the model provider itself, with its own key, instead
 * of asking the client to sample. No consent dialog, no client policy, no client budget: the
 * server owns the bill. The lesson compares this with a lane that still goes through sampling.
 *
 * The server sees the same answer shapes it would over MCP (a completion, or a transport or
 * provider error), so every behaviour runs unchanged; the client sees nothing at all.
 */
import type { ProviderEvent } from '../../machine/authorize';
import { estimateCostMicros, inputTokensOf, type RateCard } from '../../machine/budget';
import { providerErrorFrame, resultFrame, transportErrorFrame } from '../../machine/frames';
import type { Frame, JsonRpcId, SamplingParams } from '../../machine/types';
import type { ProviderActor, ProviderReply } from '../../client/driver';
import { copyable } from '../../machine/clone';

export interface DirectCall {
  server: string;
  /** The connection the server asked on: the answer goes back only over it. */
  connection: string;
  id: JsonRpcId;
  params: SamplingParams;
  now: number;
}

/** The server's own model choice: the first card a model hint names, else the first card. */
export function directCard(cards: readonly RateCard[], params: SamplingParams): RateCard {
  const hints = (params.modelPreferences?.hints ?? [])
    .map((h) => h?.name)
    .filter((n): n is string => typeof n === 'string' && n.length > 0);
  for (const h of hints) {
    const card = cards.find((c) => c.model.includes(h));
    if (card) return card;
  }
  return cards[0]!;
}

/** Who pays for a direct call and hands the server its answer (the lane). */
export interface DirectPayee {
  paid(call: DirectCall, frame: Frame, costMicros: number): void;
}

/**
 * Make one call on the server's key. `payee` receives the answer frame and what the call cost
 * the server (zero when it failed before any output).
 */
export function callDirect(
  provider: ProviderActor,
  cards: readonly RateCard[],
  call: DirectCall,
  payee: DirectPayee
): void {
  const card = directCard(cards, call.params);
  const inputTokens = inputTokensOf(call.params);
  provider.call(
    {
      server: call.server,
      model: card.model,
      params: call.params,
      inputTokens,
      maxTokens: call.params.maxTokens,
      contextApplied: call.params.includeContext ?? 'none',
      now: call.now
    },
    new DirectStream(call, card, inputTokens, payee)
  );
}

/**
 * A direct call's stream, gathered into the answer frame: a record the provider emits to (and a
 * copy of the run copies: clone.ts), not a closure.
 */
class DirectStream implements ProviderReply {
  cached = 0;
  output = 0;
  text = '';
  constructor(
    readonly call: DirectCall,
    readonly card: RateCard,
    readonly inputTokens: number,
    public payee: DirectPayee
  ) {}

  emit(ev: ProviderEvent): void {
    const { call, card } = this;
    if (ev.type === 'provider.started') this.cached = ev.cachedInputTokens;
    else if (ev.type === 'provider.chunk') {
      this.output += ev.tokens;
      this.text += ev.text;
    } else if (ev.type === 'provider.done')
      this.payee.paid(
        call,
        resultFrame(call.id, { model: card.model, text: this.text, stopReason: ev.stopReason }),
        this.cost()
      );
    else if (ev.type === 'provider.failed')
      this.payee.paid(
        call,
        ev.kind === 'timeout' ? transportErrorFrame(call.id) : providerErrorFrame(call.id),
        0
      );
  }

  cost(): number {
    const { inputTokens, cached } = this;
    return estimateCostMicros(
      this.card,
      Math.max(0, inputTokens - cached),
      this.output,
      Math.min(cached, inputTokens)
    );
  }
}
copyable(DirectStream, {
  name: 'direct.DirectStream',
  fields: { call: 'shared', card: 'shared' }
});
