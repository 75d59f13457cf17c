/**
 * The authorisation machine: one actor per `sampling/createMessage` request.
 *
 *   identify → look up the stored decision → replay it, or evaluate the policy → ask consent →
 *   call the provider (metered) → commit the decision and the audit record → send ONE frame.
 *
 * Every terminal edge sends a frame (`sent`), except where the learner's silence switch drops a
 * denial (`silenced`, recorded, nothing sent). IO happens only in the actors declared in `setup`
 * — the decision store, the host's policy and volume ledger, the user, the provider, the commit —
 * so tests and the simulation swap them with `.provide()`. Delays (consent timeout, provider
 * deadline) run on the actor's clock, which the simulation makes virtual.
 */
import { assign, fromCallback, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import type { ClientConfig } from './config';
import { estimateCostMicros, type RateCard } from './budget';
import { fromMicros, fromMicrosExact } from './money';
import type { Evaluation } from './evaluate';
import {
  budgetExceededFrame,
  budgetExhaustedFrame,
  budgetRefusalErrorFrame,
  denialFrame,
  providerErrorFrame,
  resultFrame,
  transportErrorFrame,
  trimmedFrame
} from './frames';
import { requestIdentity } from './identity';
import { DEFAULT_RETRY_AFTER_MS, expiresAtFor, type ReasonCode } from './reasons';
import type {
  AuditRecord,
  BudgetDecision,
  Frame,
  IncludeContext,
  JsonRpcId,
  Outcome,
  SamplingParams,
  StoredDecision
} from './types';

// ───────────────────────────── input, context, events ─────────────────────────────

export interface IncomingRequest {
  id: JsonRpcId;
  server: string;
  connection: string;
  params: SamplingParams;
  /** Virtual ms when the request arrived. */
  receivedAt: number;
}

export interface AuthInput {
  request: IncomingRequest;
  config: ClientConfig;
  /** The server's effective policy block hash: stored decisions from another hash are stale. */
  policyHash: string;
  /** Rate cards by model: the meter prices the stream with them. */
  cards: Readonly<Record<string, RateCard>>;
  /** The virtual clock's reading (the same clock that runs the machine's delays). */
  now: () => number;
  /** Lane label carried into the audit record. */
  lane?: string;
}

interface Denial {
  reason: ReasonCode;
  resetsAt?: string;
  retryAfterMs?: number;
  message?: string;
}

interface Generation {
  /** The provider began answering (input is paid from here on). */
  started: boolean;
  text: string;
  tokensOut: number;
  cachedInputTokens: number;
  stopReason: 'endTurn' | 'maxTokens' | 'stopSequence';
}

export interface AuthContext extends AuthInput {
  identity: string;
  stored: StoredDecision | null;
  replayed: boolean;
  alert: boolean;
  evaluation: Evaluation | null;
  consent: AuditRecord['consent'];
  gen: Generation;
  denial: Denial | null;
  outcome: Outcome | null;
  frame: Frame | null;
  toStore: StoredDecision | null;
  budgetDecision: BudgetDecision | null;
  costMicros: number;
  failure: string | null;
  storeError: string | null;
  audit: AuditRecord | null;
  /** The states this request passed through, in order: the inspector shows it, the statechart counts its edges. */
  path: string[];
}

export type AuthEvent =
  | { type: 'store.hit'; decision: StoredDecision; alert: boolean }
  | { type: 'store.miss' }
  | { type: 'store.failed'; error: string }
  | { type: 'policy.evaluated'; evaluation: Evaluation }
  | { type: 'consent.answered'; approved: boolean }
  | { type: 'provider.started'; cachedInputTokens: number }
  | { type: 'provider.chunk'; text: string; tokens: number }
  | { type: 'provider.done'; stopReason: Generation['stopReason'] }
  | { type: 'provider.failed'; kind: 'timeout' | 'error'; message: string }
  | { type: 'commit.done' }
  | { type: 'commit.failed'; error: string };

export interface AuthOutput {
  /** The one frame sent, or null when the silence switch dropped a denial. */
  frame: Frame | null;
  audit: AuditRecord;
  path: string[];
}

// ───────────────────────────── actor inputs ─────────────────────────────

export interface LookupInput {
  server: string;
  connection: string;
  identity: string;
  policyHash: string;
  now: number;
}

export interface EvaluateRequest {
  server: string;
  connection: string;
  requestId: JsonRpcId;
  params: SamplingParams;
  now: number;
}

export interface ConsentInput {
  server: string;
  connection: string;
  requestId: JsonRpcId;
  identity: string;
  params: SamplingParams;
  now: number;
}

export interface ProviderInput {
  server: string;
  model: string;
  params: SamplingParams;
  inputTokens: number;
  maxTokens: number;
  contextApplied: IncludeContext;
  now: number;
}

export interface CommitInput {
  connection: string;
  /** The verdict to store: never a completion. */
  decision: StoredDecision;
}

/** The placeholder for an actor the driver must provide: fails loudly, as an event, never silently. */
function notProvided(name: string) {
  return fromCallback<AuthEvent, unknown>(({ sendBack }) => {
    const error = `actor '${name}' was not provided`;
    if (name === 'lookupDecision') sendBack({ type: 'store.failed', error });
    else if (name === 'commitDecision') sendBack({ type: 'commit.failed', error });
    else if (name === 'callProvider')
      sendBack({ type: 'provider.failed', kind: 'error', message: error });
    else if (name === 'askConsent') sendBack({ type: 'consent.answered', approved: false });
    else throw new Error(error);
  });
}

// ───────────────────────────── pure helpers ─────────────────────────────

const EMPTY_GEN: Generation = {
  started: false,
  text: '',
  tokensOut: 0,
  cachedInputTokens: 0,
  stopReason: 'endTurn'
};

function proceed(ctx: AuthContext) {
  const e = ctx.evaluation;
  return e && e.kind === 'proceed' ? e : null;
}

function meteredMicros(ctx: AuthContext, extraTokens: number): number {
  const p = proceed(ctx);
  // A call that failed or timed out before the provider began answering cost nothing.
  if (!p || (!ctx.gen.started && extraTokens === 0 && ctx.gen.tokensOut === 0)) return 0;
  const card = ctx.cards[p.model];
  if (!card) return 0;
  return estimateCostMicros(
    card,
    p.inputTokens - ctx.gen.cachedInputTokens,
    ctx.gen.tokensOut + extraTokens,
    ctx.gen.cachedInputTokens
  );
}

function denialDecision(ctx: AuthContext, d: Denial, now: number): StoredDecision {
  const rule = ctx.config.reasons[d.reason];
  const resetsAtMs = d.resetsAt ? Date.parse(d.resetsAt) : undefined;
  return {
    server: ctx.request.server,
    identity: ctx.identity,
    verdict: 'denied',
    reason: d.reason,
    retryable: rule.retryable,
    decidedAt: now,
    expiresAt: boundedExpiry(expiresAtFor(rule.ttl, now, resetsAtMs), now, d.retryAfterMs),
    ...(d.resetsAt ? { resetsAt: d.resetsAt } : {}),
    ...(d.retryAfterMs !== undefined ? { retryAfterMs: d.retryAfterMs } : {}),
    policyHash: ctx.policyHash,
    represented: 0,
    recent: []
  };
}

/**
 * A transient denial tells the server when to come back (`retryAfterMs`); the stored decision
 * must not outlive that, or the server that obeys it hits the stale denial and gives up.
 */
function boundedExpiry(
  expiresAt: number | null,
  now: number,
  retryAfterMs?: number
): number | null {
  if (retryAfterMs === undefined) return expiresAt;
  const hint = now + retryAfterMs;
  return expiresAt === null ? hint : Math.min(expiresAt, hint);
}

function buildDenialFrame(ctx: AuthContext, d: Denial, retryable: boolean, retryAfterMs?: number) {
  return denialFrame(ctx.request.id, {
    reason: d.reason,
    server: ctx.request.server,
    retryable,
    ...(d.resetsAt ? { resetsAt: d.resetsAt } : {}),
    ...(retryable ? { retryAfterMs: retryAfterMs ?? DEFAULT_RETRY_AFTER_MS } : {}),
    ...(d.message ? { message: d.message } : {})
  });
}

function withActual(decision: BudgetDecision, ctx: AuthContext, micros: number): BudgetDecision {
  const p = proceed(ctx);
  return {
    ...decision,
    actualCost: { amount: fromMicros(micros), currency: decision.estimatedCost.currency },
    actualTokens: { input: p ? p.inputTokens : 0, output: ctx.gen.tokensOut }
  };
}

function contextRequested(params: SamplingParams): IncludeContext {
  return params.includeContext ?? 'none';
}

function buildAudit(ctx: AuthContext, now: number): Omit<AuditRecord, 'seq'> {
  const p = proceed(ctx);
  const model =
    ctx.evaluation &&
    (ctx.evaluation.kind === 'proceed' || ctx.evaluation.kind === 'budget_exceeded')
      ? ctx.evaluation.model
      : null;
  const card = model ? ctx.cards[model] : undefined;
  const frame = ctx.frame;
  const isDenial = !!frame && 'error' in frame && frame.error.code === -32003;
  const data =
    isDenial && frame && 'error' in frame
      ? (frame.error.data as { reason?: string; retryable?: boolean })
      : null;
  const calledProvider = ctx.path.includes('calling');
  return {
    t: now,
    time: new Date(now).toISOString(),
    server: ctx.request.server,
    connection: ctx.request.connection,
    requestId: ctx.request.id,
    identity: ctx.identity,
    outcome: ctx.outcome ?? 'denied',
    reason: data?.reason ?? null,
    retryable: data?.retryable ?? null,
    replayed: ctx.replayed,
    represented: ctx.stored?.represented ?? 0,
    consentShown: ctx.path.includes('consenting'),
    consent: ctx.consent,
    model,
    tokensIn: calledProvider && p ? p.inputTokens : 0,
    tokensOut: calledProvider ? ctx.gen.tokensOut : 0,
    cost: fromMicrosExact(ctx.costMicros),
    currency: card?.currency ?? 'USD',
    durationMs: now - ctx.request.receivedAt,
    contextRequested: contextRequested(ctx.request.params),
    contextApplied: p ? p.context.applied : null,
    budgetDecision: ctx.budgetDecision,
    silenced: ctx.config.silence && isDenial,
    alert: ctx.alert,
    ...(ctx.lane ? { lane: ctx.lane } : {})
  };
}

// ───────────────────────────── the machine ─────────────────────────────

/**
 * How every outcome state leaves: through `committing` when there is a verdict to store (the
 * decision is committed before its frame is sent), else straight to the frame — or to the
 * recorded silence when the learner's switch drops a denial.
 */
const FINISH = [
  { guard: 'hasVerdictToStore', target: 'committing' },
  { guard: 'isSilenced', target: 'silenced' },
  { target: 'sent' }
] as const;

export const authorizationMachine = setup({
  types: {
    context: {} as AuthContext,
    events: {} as AuthEvent,
    input: {} as AuthInput,
    output: {} as AuthOutput
  },
  actors: {
    lookupDecision: notProvided('lookupDecision') as ReturnType<
      typeof fromCallback<AuthEvent, LookupInput>
    >,
    evaluatePolicy: notProvided('evaluatePolicy') as ReturnType<
      typeof fromCallback<AuthEvent, EvaluateRequest>
    >,
    askConsent: notProvided('askConsent') as ReturnType<
      typeof fromCallback<AuthEvent, ConsentInput>
    >,
    callProvider: notProvided('callProvider') as ReturnType<
      typeof fromCallback<AuthEvent, ProviderInput>
    >,
    commitDecision: notProvided('commitDecision') as ReturnType<
      typeof fromCallback<AuthEvent, CommitInput>
    >
  },
  delays: {
    consentTimeout: ({ context }) => context.config.consentTimeoutMs,
    deadline: ({ context }) => context.config.deadlineMs
  },
  guards: {
    isDeniedHit: ({ event }) => event.type === 'store.hit' && event.decision.verdict === 'denied',
    isDenied: ({ event }) => event.type === 'policy.evaluated' && event.evaluation.kind === 'deny',
    isCostRefusal: ({ event }) =>
      event.type === 'policy.evaluated' && event.evaluation.kind === 'budget_exceeded',
    isStandingDenial: ({ event }) =>
      event.type === 'policy.evaluated' &&
      event.evaluation.kind === 'proceed' &&
      event.evaluation.consent === 'deny',
    needsConsent: ({ context, event }) =>
      event.type === 'policy.evaluated' &&
      event.evaluation.kind === 'proceed' &&
      event.evaluation.consent === 'ask' &&
      !(context.stored && context.stored.verdict === 'allowed'),
    isApproved: ({ event }) => event.type === 'consent.answered' && event.approved,
    chunkCrossesCap: ({ context, event }) => {
      if (event.type !== 'provider.chunk') return false;
      const p = proceed(context);
      if (!p) return false;
      if (p.limitTokens !== null)
        return p.inputTokens + context.gen.tokensOut + event.tokens > p.limitTokens;
      if (p.limitMicros !== null) return meteredMicros(context, event.tokens) > p.limitMicros;
      return false;
    },
    isTimeout: ({ event }) => event.type === 'provider.failed' && event.kind === 'timeout',
    hasVerdictToStore: ({ context }) => context.toStore !== null,
    isSilenced: ({ context }) =>
      context.config.silence &&
      !!context.frame &&
      'error' in context.frame &&
      context.frame.error.code === -32003
  },
  actions: {
    identify: assign(({ context }) => ({
      identity: requestIdentity(context.request.server, context.request.params, {
        fields: context.config.identityFields,
        canonicalize: context.config.canonicalize
      })
    })),
    trace: assign(({ context }, params: { state: string }) => ({
      path: [...context.path, params.state]
    })),
    rememberHit: assign(({ event }) => {
      if (event.type !== 'store.hit') return {};
      return { stored: event.decision, alert: event.alert };
    }),
    noteStoreError: assign(({ event }) =>
      event.type === 'store.failed' || event.type === 'commit.failed'
        ? { storeError: event.error }
        : {}
    ),
    rememberEvaluation: assign(({ event }) =>
      event.type === 'policy.evaluated' ? { evaluation: event.evaluation } : {}
    ),
    denyFromPolicy: assign(({ event }) => {
      if (event.type !== 'policy.evaluated' || event.evaluation.kind !== 'deny') return {};
      const e = event.evaluation;
      return {
        denial: {
          reason: e.reason,
          ...(e.resetsAt ? { resetsAt: e.resetsAt } : {}),
          ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {})
        }
      };
    }),
    deny: assign(
      (_, params: { reason: ReasonCode; message?: string; consent?: AuditRecord['consent'] }) => ({
        denial: { reason: params.reason, ...(params.message ? { message: params.message } : {}) },
        ...(params.consent ? { consent: params.consent } : {})
      })
    ),
    approve: assign({ consent: 'approved' as const }),
    denyByDeadline: assign(({ context }) => {
      const rule = context.config.reasons['policy.deadline'];
      return {
        denial: {
          reason: 'policy.deadline' as const,
          retryAfterMs: rule.ttl.kind === 'ms' ? rule.ttl.ms : DEFAULT_RETRY_AFTER_MS
        }
      };
    }),
    prepareReplay: assign(({ context }) => {
      const s = context.stored!;
      const now = context.now();
      const reason = s.reason as ReasonCode;
      const retryAfterMs = s.expiresAt !== null ? Math.max(0, s.expiresAt - now) : s.retryAfterMs;
      return {
        replayed: true,
        outcome: 'denied' as const,
        frame: buildDenialFrame(
          context,
          { reason, ...(s.resetsAt ? { resetsAt: s.resetsAt } : {}) },
          s.retryable,
          retryAfterMs
        )
      };
    }),
    prepareDenial: assign(({ context }) => {
      const d = context.denial!;
      const now = context.now();
      const rule = context.config.reasons[d.reason];
      return {
        outcome: 'denied' as const,
        frame: buildDenialFrame(context, d, rule.retryable, d.retryAfterMs),
        toStore: denialDecision(context, d, now)
      };
    }),
    prepareCostRefusal: assign(({ context, event }) => {
      if (event.type !== 'policy.evaluated' || event.evaluation.kind !== 'budget_exceeded')
        return {};
      const { model, decision } = event.evaluation;
      const frame =
        context.config.refusalAs === 'error'
          ? budgetRefusalErrorFrame(context.request.id, {
              server: context.request.server,
              decision
            })
          : budgetExceededFrame(context.request.id, { model, decision });
      return { outcome: 'budget_exceeded' as const, frame, budgetDecision: decision };
    }),
    startGeneration: assign({ gen: () => ({ ...EMPTY_GEN }) }),
    noteCache: assign(({ context, event }) =>
      event.type === 'provider.started'
        ? { gen: { ...context.gen, started: true, cachedInputTokens: event.cachedInputTokens } }
        : {}
    ),
    acceptChunk: assign(({ context, event }) => {
      if (event.type !== 'provider.chunk') return {};
      return {
        gen: {
          ...context.gen,
          text: context.gen.text + event.text,
          tokensOut: context.gen.tokensOut + event.tokens
        }
      };
    }),
    prepareCompletion: assign(({ context, event }) => {
      const p = proceed(context)!;
      const stopReason = event.type === 'provider.done' ? event.stopReason : 'endTurn';
      const costMicros = meteredMicros(context, 0);
      const budgetDecision = p.decision ? withActual(p.decision, context, costMicros) : null;
      const trimmed = p.context.trimmed;
      let frame: Frame =
        trimmed && context.config.annotateTrim
          ? trimmedFrame(context.request.id, {
              model: p.model,
              text: context.gen.text,
              stopReason,
              context: {
                requested: p.context.requested,
                applied: p.context.applied,
                reason: 'policy.max_scope'
              }
            })
          : resultFrame(context.request.id, { model: p.model, text: context.gen.text, stopReason });
      if (budgetDecision && 'result' in frame) {
        frame = { ...frame, result: { ...frame.result, budget: { decision: budgetDecision } } };
      }
      return {
        outcome: (trimmed ? 'trimmed' : 'allowed') as Outcome,
        gen: { ...context.gen, stopReason },
        frame,
        costMicros,
        budgetDecision
      };
    }),
    prepareExhausted: assign(({ context }) => {
      const p = proceed(context)!;
      const costMicros = meteredMicros(context, 0);
      const decision = withActual(
        p.decision ?? {
          estimatedCost: { amount: fromMicros(0), currency: 'USD' },
          limitApplied: { amount: fromMicros(p.limitMicros ?? 0), currency: 'USD' },
          limitSource: 'host_policy',
          meterBasis: '',
          estimatedTokens: { input: p.inputTokens, output: p.maxTokens }
        },
        context,
        costMicros
      );
      return {
        outcome: 'budget_exhausted' as const,
        costMicros,
        budgetDecision: decision,
        frame: budgetExhaustedFrame(context.request.id, {
          model: p.model,
          partialText: context.gen.text,
          decision
        })
      };
    }),
    prepareFailure: assign(({ context, event }) => {
      if (event.type !== 'provider.failed') return {};
      const costMicros = meteredMicros(context, 0);
      return event.kind === 'timeout'
        ? {
            outcome: 'transport_error' as const,
            failure: event.message,
            costMicros,
            frame: transportErrorFrame(context.request.id, event.message)
          }
        : {
            outcome: 'provider_error' as const,
            failure: event.message,
            costMicros,
            frame: providerErrorFrame(context.request.id, event.message)
          };
    }),
    /**
     * An approved request stores "allowed, do not ask the user again" — a verdict, never the
     * completion: on a replay the model is called again.
     */
    prepareAllowedDecision: assign(({ context }) => {
      if (!context.config.storeAllowed || context.consent !== 'approved') return {};
      const now = context.now();
      return {
        toStore: {
          server: context.request.server,
          identity: context.identity,
          verdict: 'allowed' as const,
          reason: null,
          retryable: false,
          decidedAt: now,
          expiresAt: expiresAtFor(context.config.allowedTtl, now),
          policyHash: context.policyHash,
          represented: 0,
          recent: []
        }
      };
    }),
    /** The audit record, `seq` assigned by the log when the host appends it. */
    buildAuditRecord: assign(({ context }) => ({
      audit: { ...buildAudit(context, context.now()), seq: 0 }
    }))
  }
}).createMachine({
  id: 'authorize',
  context: ({ input }) => ({
    ...input,
    identity: '',
    stored: null,
    replayed: false,
    alert: false,
    evaluation: null,
    consent: 'not-asked',
    gen: { ...EMPTY_GEN },
    denial: null,
    outcome: null,
    frame: null,
    toStore: null,
    budgetDecision: null,
    costMicros: 0,
    failure: null,
    storeError: null,
    audit: null,
    path: []
  }),
  initial: 'identifying',
  output: ({ context }) => ({
    frame: context.config.silence && context.audit?.silenced ? null : context.frame,
    audit: context.audit!,
    path: context.path
  }),
  states: {
    identifying: {
      description:
        'Derive the request identity: server + SHA-256 of the canonical identity fields.',
      entry: [{ type: 'trace', params: { state: 'identifying' } }, 'identify'],
      always: 'lookingUp'
    },
    lookingUp: {
      description: 'Ask the decision store for an unexpired verdict on (server, identity).',
      entry: { type: 'trace', params: { state: 'lookingUp' } },
      invoke: {
        src: 'lookupDecision',
        input: ({ context }) => ({
          server: context.request.server,
          connection: context.request.connection,
          identity: context.identity,
          policyHash: context.policyHash,
          now: context.now()
        })
      },
      on: {
        'store.hit': [
          {
            guard: 'isDeniedHit',
            target: 'replaying',
            actions: 'rememberHit',
            description: 'A stored denial: replayed with no consent, no model call, no spend.'
          },
          {
            target: 'evaluating',
            actions: 'rememberHit',
            description: 'A stored "allowed": skip the consent prompt; volume limits still apply.'
          }
        ],
        'store.miss': { target: 'evaluating' },
        'store.failed': {
          target: 'evaluating',
          actions: 'noteStoreError',
          description:
            'The store failed: evaluate afresh rather than leave the server without an answer.'
        }
      }
    },
    replaying: {
      description: 'Build the stored denial frame again.',
      entry: [{ type: 'trace', params: { state: 'replaying' } }, 'prepareReplay'],
      always: FINISH
    },
    evaluating: {
      description:
        'Evaluate the policy: enabled, model, input size, rate limit, budget window, context, cost cap.',
      entry: { type: 'trace', params: { state: 'evaluating' } },
      invoke: {
        src: 'evaluatePolicy',
        input: ({ context }) => ({
          server: context.request.server,
          connection: context.request.connection,
          requestId: context.request.id,
          params: context.request.params,
          now: context.now()
        })
      },
      on: {
        'policy.evaluated': [
          {
            guard: 'isDenied',
            target: 'denying',
            actions: ['rememberEvaluation', 'denyFromPolicy']
          },
          {
            guard: 'isCostRefusal',
            target: 'refusingOnCost',
            actions: ['rememberEvaluation', 'prepareCostRefusal']
          },
          {
            guard: 'isStandingDenial',
            target: 'denying',
            actions: [
              'rememberEvaluation',
              {
                type: 'deny',
                params: {
                  reason: 'user.denied',
                  message: 'Sampling denied: the consent rule for this server is deny'
                }
              }
            ]
          },
          { guard: 'needsConsent', target: 'consenting', actions: 'rememberEvaluation' },
          { target: 'calling', actions: 'rememberEvaluation' }
        ]
      }
    },
    consenting: {
      description:
        'Show the user a consent dialog; no answer before the timeout counts as a denial.',
      entry: { type: 'trace', params: { state: 'consenting' } },
      invoke: {
        src: 'askConsent',
        input: ({ context }) => ({
          server: context.request.server,
          connection: context.request.connection,
          requestId: context.request.id,
          identity: context.identity,
          params: context.request.params,
          now: context.now()
        })
      },
      on: {
        'consent.answered': [
          { guard: 'isApproved', target: 'calling', actions: 'approve' },
          {
            target: 'denying',
            actions: { type: 'deny', params: { reason: 'user.denied', consent: 'denied' } }
          }
        ]
      },
      after: {
        consentTimeout: {
          target: 'denying',
          actions: {
            type: 'deny',
            params: {
              reason: 'user.denied',
              consent: 'timeout',
              message: 'Sampling denied: the consent dialog timed out'
            }
          }
        }
      }
    },
    calling: {
      description: 'Call the provider and meter the stream against the cap.',
      entry: [{ type: 'trace', params: { state: 'calling' } }, 'startGeneration'],
      invoke: {
        src: 'callProvider',
        input: ({ context }) => {
          const p = proceed(context)!;
          return {
            server: context.request.server,
            model: p.model,
            params: context.request.params,
            inputTokens: p.inputTokens,
            maxTokens: p.maxTokens,
            contextApplied: p.context.applied,
            now: context.now()
          };
        }
      },
      on: {
        'provider.started': { actions: 'noteCache' },
        'provider.chunk': [
          {
            guard: 'chunkCrossesCap',
            target: 'exhausting',
            description:
              'The next chunk would cross the cap: stop before it, keep the partial content.'
          },
          { actions: 'acceptChunk' }
        ],
        'provider.done': { target: 'completing' },
        'provider.failed': [
          { guard: 'isTimeout', target: 'failing', actions: 'prepareFailure' },
          { target: 'failing', actions: 'prepareFailure' }
        ]
      },
      after: {
        deadline: { target: 'denying', actions: 'denyByDeadline' }
      }
    },
    completing: {
      description: 'A completion: the result frame, annotated when the context was trimmed.',
      entry: [
        { type: 'trace', params: { state: 'completing' } },
        'prepareCompletion',
        'prepareAllowedDecision'
      ],
      always: FINISH
    },
    exhausting: {
      description: 'Stopped mid-generation by the cap: budget_exhausted with the partial content.',
      entry: [
        { type: 'trace', params: { state: 'exhausting' } },
        'prepareExhausted',
        'prepareAllowedDecision'
      ],
      always: FINISH
    },
    failing: {
      description:
        'Transport or provider failure: -32001 / -32603, no budget decision, no policy reason.',
      entry: [{ type: 'trace', params: { state: 'failing' } }, 'prepareAllowedDecision'],
      always: FINISH
    },
    refusingOnCost: {
      description: 'Refused pre-flight on cost: budget_exceeded, empty content, nothing spent.',
      entry: { type: 'trace', params: { state: 'refusingOnCost' } },
      always: FINISH
    },
    denying: {
      description: 'A denial: -32003 with a reason and the retryable flag; the verdict is stored.',
      entry: [{ type: 'trace', params: { state: 'denying' } }, 'prepareDenial'],
      always: FINISH
    },
    committing: {
      description: 'Commit the verdict to the decision store before the frame leaves.',
      entry: { type: 'trace', params: { state: 'committing' } },
      invoke: {
        src: 'commitDecision',
        input: ({ context }) => ({
          connection: context.request.connection,
          decision: context.toStore!
        })
      },
      on: {
        'commit.done': [{ guard: 'isSilenced', target: 'silenced' }, { target: 'sent' }],
        'commit.failed': [
          { guard: 'isSilenced', target: 'silenced', actions: 'noteStoreError' },
          {
            target: 'sent',
            actions: 'noteStoreError',
            description: 'The store failed: the server still gets its one frame.'
          }
        ]
      }
    },
    sent: {
      description: 'Exactly one frame is sent.',
      type: 'final',
      entry: [{ type: 'trace', params: { state: 'sent' } }, 'buildAuditRecord']
    },
    silenced: {
      description: 'The silence switch dropped the denial: recorded, nothing sent.',
      type: 'final',
      entry: [{ type: 'trace', params: { state: 'silenced' } }, 'buildAuditRecord']
    }
  }
});

export type AuthorizationMachine = typeof authorizationMachine;
export type AuthorizationActor = ActorRefFrom<AuthorizationMachine>;
export type AuthorizationSnapshot = SnapshotFrom<AuthorizationMachine>;

/** The machine's states in declaration order: the statechart draws them, the tests walk them. */
export const AUTH_STATES = Object.keys(authorizationMachine.config.states ?? {});

export function isContextRequested(p: SamplingParams): IncludeContext {
  return contextRequested(p);
}
