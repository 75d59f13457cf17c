/**
 * The server behaviours of SPEC §8, by name: each a reaction to the frames a server receives (or
 * their absence), with its parameters and their defaults. A scenario names a behaviour and
 * overrides any parameter in `ServerSpec.params`.
 */
import type { ServerAgent, ServerEnv, ServerFactory, ServerSpec } from '../../world/world';
import { BASE_DEFAULTS } from './base';
import {
  BUDGET_SHRINKER_DEFAULTS,
  BudgetShrinker,
  ContextGreedy,
  TIMEOUT_SENSITIVE_DEFAULTS,
  TimeoutSensitive,
  WELL_BEHAVED_DEFAULTS,
  WellBehaved
} from './polite';
import {
  NAIVE_RETRIER_DEFAULTS,
  NaiveRetrier,
  PROMPT_MUTATOR_DEFAULTS,
  PromptMutator,
  RECONNECTOR_DEFAULTS,
  Reconnector,
  SERIALISER_VARIANT_DEFAULTS,
  SerialiserVariant,
  TIGHT_LOOP_DEFAULTS,
  TightLoop
} from './retriers';

export interface BehaviourEntry {
  factory: ServerFactory;
  /** One line for the population editor and the lessons. */
  describe: string;
  /** Every parameter the behaviour reads, with its default (`readsMeta` included). */
  defaults: Record<string, unknown>;
}

function entry(
  factory: ServerFactory,
  describe: string,
  defaults: Record<string, unknown>
): BehaviourEntry {
  return { factory, describe, defaults: { ...BASE_DEFAULTS, ...defaults } };
}

export const BEHAVIOURS: Record<string, BehaviourEntry> = {
  'well-behaved': entry(
    (env, spec) => new WellBehaved(env, spec),
    'Honours the frame: degrades and says so on a permanent denial, retries a transient one once after retryAfterMs, retries an error or silence once.',
    WELL_BEHAVED_DEFAULTS
  ),
  'naive-retrier': entry(
    (env, spec) => new NaiveRetrier(env, spec),
    'Retries every error, denial and timeout with capped exponential backoff; never reads retryable.',
    NAIVE_RETRIER_DEFAULTS
  ),
  'tight-loop': entry(
    (env, spec) => new TightLoop(env, spec),
    'A buggy retry loop: every failure is retried at a fixed interval, with no cap.',
    TIGHT_LOOP_DEFAULTS
  ),
  reconnector: entry(
    (env, spec) => new Reconnector(env, spec),
    'On a denial, disconnects, reconnects and sends the same request again: a connection-scoped store forgets.',
    RECONNECTOR_DEFAULTS
  ),
  'prompt-mutator': entry(
    (env, spec) => new PromptMutator(env, spec),
    'The adversary: changes one character of the prompt per retry, so identity never matches; only volume controls bound it.',
    PROMPT_MUTATOR_DEFAULTS
  ),
  'context-greedy': entry(
    (env, spec) => new ContextGreedy(env, spec),
    'A summariser that always asks for allServers context; says so when told its answer was trimmed, and is confidently wrong when not told.',
    WELL_BEHAVED_DEFAULTS
  ),
  'budget-shrinker': entry(
    (env, spec) => new BudgetShrinker(env, spec),
    'Reads the cost refusal’s decision basis and shrinks its input (naive ratio or exact) for one more try; asks for exactly an advertised ceiling.',
    BUDGET_SHRINKER_DEFAULTS
  ),
  'serialiser-variant': entry(
    (env, spec) => new SerialiserVariant(env, spec),
    'Retries the same request through different serialisers (key order, NFD text): new bytes unless identity canonicalises.',
    SERIALISER_VARIANT_DEFAULTS
  ),
  'timeout-sensitive': entry(
    (env, spec) => new TimeoutSensitive(env, spec),
    'Treats silence as a dropped frame and keeps retrying; stops on an explicit permanent denial.',
    TIMEOUT_SENSITIVE_DEFAULTS
  )
};

/** The behaviour names, in the order of SPEC §8. */
export const BEHAVIOUR_NAMES: readonly string[] = Object.freeze(Object.keys(BEHAVIOURS));

/** The agent for `spec`; throws on an unknown behaviour (the scenario validator checks first). */
export function createServer(env: ServerEnv, spec: ServerSpec): ServerAgent {
  const b = Object.prototype.hasOwnProperty.call(BEHAVIOURS, spec.behaviour)
    ? BEHAVIOURS[spec.behaviour]
    : undefined;
  if (b === undefined) {
    throw new Error(
      `server '${spec.name}': unknown behaviour '${spec.behaviour}'; valid behaviours: ${BEHAVIOUR_NAMES.join(', ')}`
    );
  }
  return b.factory(env, spec);
}
