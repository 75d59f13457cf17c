/**
 * The handler's options, validated with the lab's own parsers: the policy with `parsePolicy`, the
 * client configuration with the bounded schema a scenario's lane client goes through, the rate
 * cards with a scenario's provider cards. A mistake throws one Error naming every JSON path at
 * fault, before any connection exists: a handler never runs half-configured.
 */
import type { z } from 'zod';
import { DEFAULT_RATE_CARDS, type RateCard } from '../machine/budget';
import { resolveClientConfig, type ClientConfig, type ClientConfigInput } from '../machine/config';
import { ClientConfigInputSchema, RateCardsSchema } from '../machine/config-input';
import { describeIssues, parsePolicy, type Policy } from '../machine/policy';

/** A configuration error: `errors` lists each problem with its JSON path (`$.…`). */
export class HandlerConfigError extends Error {
  readonly errors: { path: string; message: string }[];
  constructor(what: string, errors: { path: string; message: string }[]) {
    super(
      `createSamplingPolicy: invalid ${what}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`
    );
    this.name = 'HandlerConfigError';
    this.errors = errors;
  }
}

export function validPolicy(input: unknown): Policy {
  if (input === undefined) throw new HandlerConfigError('options', [pathMissing('policy')]);
  const r = parsePolicy(input);
  if (!r.ok)
    throw new HandlerConfigError(
      'policy',
      r.errors.map((e) => ({ path: e.path, message: e.message }))
    );
  return r.policy;
}

function pathMissing(member: string) {
  return { path: `$.${member}`, message: 'missing required member' };
}

function issues(what: string, error: z.ZodError, raw: unknown): HandlerConfigError {
  return new HandlerConfigError(
    what,
    describeIssues(error.issues, raw).map(({ path, message }) => ({ path, message }))
  );
}

export function validClient(input: unknown): ClientConfig {
  const r = ClientConfigInputSchema.safeParse(input ?? {});
  if (!r.success) throw issues('client', r.error, input);
  // Silence drops a denial's frame to show a learner what it causes; a shipped handler always
  // answers (an SDK request handler that never settles would hold the server's call until its
  // own timeout, with no record of why).
  if (r.data.silence === true)
    throw new HandlerConfigError('client', [
      {
        path: '$.silence',
        message: 'a teaching switch of the lab; a shipped handler always answers'
      }
    ]);
  return resolveClientConfig(r.data as ClientConfigInput);
}

/** Rate cards by model; the lab's default cards when none are given. */
export function validRateCards(input: unknown): Record<string, RateCard> {
  const cards = input === undefined ? DEFAULT_RATE_CARDS : input;
  const r = RateCardsSchema.safeParse(cards);
  if (!r.success) throw issues('rateCards', r.error, cards);
  const out = Object.create(null) as Record<string, RateCard>;
  for (const c of r.data) {
    if (Object.hasOwn(out, c.model))
      throw new HandlerConfigError('rateCards', [
        { path: `$[${r.data.indexOf(c)}].model`, message: `a second card for '${c.model}'` }
      ]);
    out[c.model] = c;
  }
  return out;
}
