/**
 * The denial vocabulary (SPEC §2.1): each reason with its default `retryable` flag and the
 * time-to-live of a stored decision carrying it. Data, not code: a learner overrides any flag or
 * TTL per run and watches what it costs.
 */

export const REASONS = [
  'policy.sampling_disabled',
  'policy.budget_exhausted',
  'policy.input_too_large',
  'policy.model_not_allowed',
  'user.denied',
  'user.timeout',
  'policy.rate_limit',
  'policy.deadline',
  'policy.budget_reserved',
  'policy.currency_unsupported'
] as const;

export type ReasonCode = (typeof REASONS)[number];

/** How long a stored decision lives. */
export type Ttl =
  /** Session lifetime: until the policy block is edited (or, connection-scoped, the connection closes). */
  | { kind: 'session' }
  /** Until the budget window resets: the decision expires at its `resetsAt`. */
  | { kind: 'window' }
  /** A fixed number of milliseconds after the decision. */
  | { kind: 'ms'; ms: number }
  /** Not stored at all: every presentation is evaluated afresh. */
  | { kind: 'none' };

export interface ReasonRule {
  retryable: boolean;
  ttl: Ttl;
  /** Why this default: shown in the playground next to the toggle. */
  why: string;
}

export type ReasonTable = Record<ReasonCode, ReasonRule>;

const SESSION: Ttl = { kind: 'session' };

export const DEFAULT_REASONS: ReasonTable = {
  'policy.sampling_disabled': {
    retryable: false,
    ttl: SESSION,
    why: 'Nothing the server can do will change it; only a policy edit will.'
  },
  'policy.budget_exhausted': {
    retryable: false,
    ttl: { kind: 'window' },
    why: 'Retrying before the window resets earns the same refusal; resetsAt says when to come back.'
  },
  'policy.input_too_large': {
    retryable: false,
    ttl: SESSION,
    why: 'The same input will be too large again; the server must send less.'
  },
  'policy.model_not_allowed': {
    retryable: false,
    ttl: SESSION,
    why: 'The same model preference will be refused again.'
  },
  'user.denied': {
    retryable: false,
    ttl: SESSION,
    why: 'The user said no; asking again is how a tired user ends up saying yes.'
  },
  'user.timeout': {
    retryable: true,
    ttl: { kind: 'ms', ms: 60_000 },
    why: 'Nobody answered: not a "no", so the server may come back — but not at once, or a retrying server reopens the dialog in a loop.'
  },
  'policy.rate_limit': {
    retryable: true,
    ttl: { kind: 'ms', ms: 60_000 },
    why: 'Genuinely transient: the same request is allowed once the fixed rate window resets.'
  },
  'policy.deadline': {
    retryable: true,
    ttl: { kind: 'ms', ms: 30_000 },
    why: 'Transient, and stored briefly: an honest retry with a smaller maxTokens hits this decision.'
  },
  'policy.budget_reserved': {
    retryable: true,
    ttl: { kind: 'ms', ms: 30_000 },
    why: 'The window has money, held for calls still running: it is free again when they finish, so this is "later", never "no".'
  },
  'policy.currency_unsupported': {
    retryable: false,
    ttl: { kind: 'none' },
    why: 'The same currency is refused again (amounts are never converted); not stored, because the budget member is outside the identity and a corrected retry must be served.'
  }
};

export type ReasonOverrides = Partial<
  Record<ReasonCode, Partial<Pick<ReasonRule, 'retryable' | 'ttl'>>>
>;

/** The defaults with a learner's overrides applied; never mutates the defaults. */
export function resolveReasons(overrides: ReasonOverrides = {}): ReasonTable {
  const out = {} as ReasonTable;
  for (const code of REASONS) {
    const base = DEFAULT_REASONS[code];
    const o = overrides[code] ?? {};
    out[code] = {
      ...base,
      ...(o.retryable === undefined ? {} : { retryable: o.retryable }),
      ...(o.ttl ? { ttl: o.ttl } : {})
    };
  }
  return out;
}

export function isReasonCode(s: string): s is ReasonCode {
  return (REASONS as readonly string[]).includes(s);
}

/** Human text for a denial frame's `message`; the classification lives in `data.reason`, never here. */
export function reasonMessage(code: ReasonCode, server: string): string {
  switch (code) {
    case 'policy.sampling_disabled':
      return `Sampling denied: sampling is disabled for server '${server}'`;
    case 'policy.budget_exhausted':
      return `Sampling denied: budget for server '${server}' exhausted`;
    case 'policy.input_too_large':
      return `Sampling denied: input too large for server '${server}'`;
    case 'policy.model_not_allowed':
      return `Sampling denied: no requested model is allowed for server '${server}'`;
    case 'user.denied':
      return `Sampling denied by the user for server '${server}'`;
    case 'user.timeout':
      return `Sampling denied: the consent dialog for server '${server}' was not answered in time`;
    case 'policy.rate_limit':
      return `Sampling denied: rate limit reached for server '${server}'`;
    case 'policy.deadline':
      return `Sampling denied: the request for server '${server}' passed its deadline`;
    case 'policy.budget_reserved':
      return `Sampling denied for now: the budget left for server '${server}' is held for calls still running`;
    case 'policy.currency_unsupported':
      return `Sampling denied: server '${server}' named a budget in a currency this host cannot price`;
  }
}

/** A retryable denial with no better hint tells the server to come back after this long. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

/**
 * When a decision stored at `now` under `ttl` expires, in virtual ms; null = never by time
 * (session lifetime: only a policy edit or, connection-scoped, the connection closing removes it).
 *
 * A `window` TTL with no known reset time also gives null: the alternative (expire at once) would
 * hand a budget-exhausted server a fresh evaluation on its next retry, which is the loop the store
 * exists to stop. Failing closed costs at worst a stale denial until the next policy edit.
 */
export function expiresAtFor(ttl: Ttl, now: number, resetsAtMs?: number): number | null {
  switch (ttl.kind) {
    case 'session':
      return null;
    case 'none':
      // Never stored (the machine does not commit it); if a caller asks, it is dead at once.
      return now;
    case 'window':
      return resetsAtMs === undefined || !Number.isFinite(resetsAtMs) ? null : resetsAtMs;
    case 'ms':
      return now + ttl.ms;
  }
}
