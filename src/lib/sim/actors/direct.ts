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
import type { ProviderSource } from '../../client/driver';
import { revivable } from '../../machine/clone';

export interface DirectCall {
  server: string;
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

/**
 * Make one call on the server's key. `done` receives the answer frame and what the call cost the
 * server (zero when it failed before any output).
 */
export function callDirect(
  provider: ProviderSource,
  cards: readonly RateCard[],
  call: DirectCall,
  done: (frame: Frame, costMicros: number) => void
): void {
  const card = directCard(cards, call.params);
  const inputTokens = inputTokensOf(call.params);
  provider(
    {
      server: call.server,
      model: card.model,
      params: call.params,
      inputTokens,
      maxTokens: call.params.maxTokens,
      contextApplied: call.params.includeContext ?? 'none',
      now: call.now
    },
    directStream({ card, inputTokens, id: call.id }, { cached: 0, output: 0, text: '' }, done)
  );
}

/** What a direct call has streamed so far. */
interface Streamed {
  cached: number;
  output: number;
  text: string;
}

/** The stream's events, gathered into the answer frame (revivable: clone.ts). */
function directStream(
  call: { card: RateCard; inputTokens: number; id: JsonRpcId },
  st: Streamed,
  done: (frame: Frame, costMicros: number) => void
): (ev: ProviderEvent) => void {
  const { card, inputTokens, id } = call;
  const cost = () =>
    estimateCostMicros(
      card,
      Math.max(0, inputTokens - st.cached),
      st.output,
      Math.min(st.cached, inputTokens)
    );
  return revivable(
    (ev: ProviderEvent) => {
      if (ev.type === 'provider.started') st.cached = ev.cachedInputTokens;
      else if (ev.type === 'provider.chunk') {
        st.output += ev.tokens;
        st.text += ev.text;
      } else if (ev.type === 'provider.done')
        done(
          resultFrame(id, { model: card.model, text: st.text, stopReason: ev.stopReason }),
          cost()
        );
      else if (ev.type === 'provider.failed')
        done(ev.kind === 'timeout' ? transportErrorFrame(id) : providerErrorFrame(id), 0);
    },
    (m) => directStream(call, m.box(st), m.fn(done))
  );
}
