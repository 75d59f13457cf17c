/**
 * The authorisation machine: one actor per `sampling/createMessage` request.
 *
 *   identify → look up the stored decision → replay it, or evaluate the policy → ask consent →
 *   call the provider (metered) → commit the decision and the audit record → send ONE frame.
 *
 * Every terminal edge sends a frame (`sent`), except where the learner's silence switch drops a
 * denial (`silenced`, recorded, nothing sent). IO happens only in the actors declared in `setup`
 * — the decision store, the host's policy and volume ledger, the user, the provider, the commit —
 * so tests and the simulation swap them with `.provide()`. Every invoked actor has an error edge
 * (a throw becomes one `-32603` frame and one audit record), and every state that waits has a
 * timeout on the actor's clock (the simulation makes it virtual), so no path ends in silence.
 * Time enters only through events (`at`): the context holds no clock.
 */
import { assign, fromCallback, not, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import { chunkCrosses } from '../budget';
import {
  budgetExceededFrame,
  budgetExhaustedFrame,
  budgetRefusalErrorFrame,
  providerErrorFrame,
  resultFrame,
  transportErrorFrame,
  trimmedFrame
} from '../frames';
import { fromMicros } from '../money';
import { styleFrame } from '../refusal-styles';
import { DEFAULT_RETRY_AFTER_MS, type ReasonCode } from '../reasons';
import type { AuditRecord, Frame, Outcome } from '../types';
import { memoisedIdentity } from './fast-identity';
import {
  EMPTY_GEN,
  allowedDecision,
  buildAudit,
  buildDenialFrame,
  denialDecision,
  meteredMicros,
  proceed,
  replayRetryAfterMs,
  withActual
} from './outcomes';
import type {
  AuthContext,
  AuthEvent,
  AuthInput,
  AuthOutput,
  CommitInput,
  ConsentInput,
  EvaluateRequest,
  LookupInput,
  ProviderInput
} from './types';

/**
 * How long a store lookup, a policy evaluation or a commit may take before the machine stops
 * waiting for it, in the actor's (virtual) ms. The stores answer synchronously in the simulation
 * and from a memory cache in the browser, so only a hung or broken one ever reaches this.
 */
export const STEP_TIMEOUT_MS = 10_000;

/** The placeholder for an actor the driver must provide: fails loudly, through its error edge. */
function notProvided(name: string) {
  return fromCallback<AuthEvent, unknown>(() => {
    throw new Error(`actor '${name}' was not provided`);
  });
}

/**
 * How the outcome states leave. A fresh denial always has a verdict to store, and is committed
 * before its frame is sent; a result may store "allowed, do not ask again"; a replay or a cost
 * refusal stores nothing, and is the only kind that the learner's silence switch can drop
 * without a commit (a cost refusal sent as an error is a -32003 too).
 */
const COMMIT_OR_SEND = [
  { guard: 'hasVerdictToStore', target: 'committing' },
  { target: 'sent' }
] as const;
const SILENCE_OR_SEND = [{ guard: 'isSilenced', target: 'silenced' }, { target: 'sent' }] as const;

/** An invoked step failed (threw, or never answered): one internal-error frame, no data. */
function crash(step: string) {
  return { target: 'erring', actions: { type: 'noteCrash', params: { step } } } as const;
}

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
    deadline: ({ context }) => context.config.deadlineMs,
    stepTimeout: STEP_TIMEOUT_MS,
    /** A joiner waits as long as the presentation it joined may take, and a little more. */
    joinTimeout: ({ context }) =>
      context.config.consentTimeoutMs + context.config.deadlineMs + 3 * STEP_TIMEOUT_MS
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
      const card = p ? context.cards[p.model] : undefined;
      if (!p || !card) return false;
      return chunkCrosses(
        card,
        p,
        {
          inputTokens: p.inputTokens,
          cachedInputTokens: context.gen.cachedInputTokens,
          outputTokens: context.gen.tokensOut
        },
        event.tokens
      );
    },
    hasVerdictToStore: ({ context }) => context.toStore !== null,
    isWaitingForFlight: ({ context }) => context.waitingForFlight,
    isSilenced: ({ context }) =>
      context.config.silence &&
      !!context.frame &&
      'error' in context.frame &&
      context.frame.error.code === -32003
  },
  actions: {
    identify: assign(({ context }) => ({
      identity: memoisedIdentity(context.request.server, context.request.params, {
        fields: context.config.identityFields,
        canonicalize: context.config.canonicalize
      })
    })),
    trace: assign(({ context }, params: { state: string }) => ({
      path: [...context.path, params.state]
    })),
    /** Every event from an actor carries the clock's reading: the machine's only notion of now. */
    stamp: assign(({ context, event }) => ({
      at: 'at' in event && typeof event.at === 'number' ? event.at : context.at
    })),
    enter: assign(({ context }) => ({ enteredAt: context.at })),
    /** A delayed event fires `delay` after its state was entered. */
    elapse: assign(({ context }, params: { ms: 'consent' | 'deadline' | 'step' | 'join' }) => {
      const c = context.config;
      const ms = {
        consent: c.consentTimeoutMs,
        deadline: c.deadlineMs,
        step: STEP_TIMEOUT_MS,
        join: c.consentTimeoutMs + c.deadlineMs + 3 * STEP_TIMEOUT_MS
      }[params.ms];
      return { at: context.enteredAt + ms };
    }),
    rememberLookup: assign(({ event }) => {
      if (event.type === 'store.hit')
        return { stored: event.decision, alert: event.alert, joined: event.joined === true };
      if (event.type === 'store.miss' || event.type === 'store.failed')
        return { alert: event.alert };
      return {};
    }),
    noteStoreError: assign(({ event }, params?: { error: string }) =>
      params
        ? { storeError: params.error }
        : event.type === 'store.failed' || event.type === 'commit.failed'
          ? { storeError: event.error }
          : {}
    ),
    noteCrash: assign((_, params: { step: string }) => ({
      failure: `internal error: ${params.step} failed`
    })),
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
          ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
          ...(e.message !== undefined ? { message: e.message } : {})
        }
      };
    }),
    deny: assign(
      (_, params: { reason: ReasonCode; message?: string; consent?: AuditRecord['consent'] }) => ({
        denial: { reason: params.reason, ...(params.message ? { message: params.message } : {}) },
        ...(params.consent ? { consent: params.consent } : {})
      })
    ),
    /**
     * A consent dialog nobody answered is not the user's "no": it has a reason of its own,
     * `user.timeout`, whose retryable flag and TTL are the reason table's like any other's (by
     * default retryable after one minute: storing nothing would let a retrying server reopen the
     * dialog at once, a session-long "no" would punish it for a user who never answered).
     */
    consentTimedOut: assign(({ context }) => {
      const rule = context.config.reasons['user.timeout'];
      return {
        consent: 'timeout' as const,
        denial: {
          reason: 'user.timeout' as const,
          message: 'Sampling denied: the consent dialog timed out',
          ...(rule.retryable
            ? { retryAfterMs: rule.ttl.kind === 'ms' ? rule.ttl.ms : DEFAULT_RETRY_AFTER_MS }
            : {})
        }
      };
    }),
    approve: assign({ consent: 'approved' as const }),
    /** The deadline cut the stream: what was streamed is paid for. */
    denyByDeadline: assign(({ context }) => {
      const rule = context.config.reasons['policy.deadline'];
      return {
        costMicros: meteredMicros(context),
        denial: {
          reason: 'policy.deadline' as const,
          retryAfterMs: rule.ttl.kind === 'ms' ? rule.ttl.ms : DEFAULT_RETRY_AFTER_MS
        }
      };
    }),
    prepareReplay: assign(({ context }) => {
      const s = context.stored!;
      const reason = s.reason as ReasonCode;
      return {
        replayed: true,
        outcome: 'denied' as const,
        verdict: s,
        frame: buildDenialFrame(
          context,
          {
            reason,
            ...(s.resetsAt ? { resetsAt: s.resetsAt } : {}),
            ...(s.message !== undefined ? { message: s.message } : {})
          },
          s.retryable,
          replayRetryAfterMs(s, context.at)
        )
      };
    }),
    /**
     * The denial's frame and, unless its reason is never stored (TTL `none`), the verdict to
     * commit before the frame leaves. An unstored denial hands joiners no verdict: like a cost
     * refusal, it may hang on members outside the identity (a budget's currency).
     */
    prepareDenial: assign(({ context }) => {
      const d = context.denial!;
      const decision = denialDecision(context, d, context.at);
      const retryable = decision?.retryable ?? context.config.reasons[d.reason].retryable;
      return {
        outcome: 'denied' as const,
        frame: buildDenialFrame(context, d, retryable, d.retryAfterMs),
        toStore: decision,
        verdict: decision
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
    /**
     * Allowed to call the model: the verdict a joiner of this presentation gets — none when the
     * policy's askAbove waived the dialog for this presentation's estimate and nobody approved
     * the identity: maxTokens is outside the identity, so a cheap presentation must not let a
     * dearer one joining it through unasked. Its joiners are decided afresh, each on its own
     * estimate.
     */
    startGeneration: assign(({ context }) => ({
      gen: { ...EMPTY_GEN },
      verdict:
        proceed(context)?.consentSkipped && context.stored?.verdict !== 'allowed'
          ? null
          : allowedDecision(context, context.at)
    })),
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
      const costMicros = meteredMicros(context);
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
      const costMicros = meteredMicros(context);
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
      let frame: Frame = budgetExhaustedFrame(context.request.id, {
        model: p.model,
        partialText: context.gen.text,
        decision
      });
      // Stopped on cost AND made without the context asked for: the server must learn both.
      if (p.context.trimmed && context.config.annotateTrim && 'result' in frame) {
        const annotation = {
          requested: p.context.requested,
          applied: p.context.applied,
          reason: 'policy.max_scope'
        };
        frame = {
          ...frame,
          result: { ...frame.result, _meta: { ...frame.result._meta, context: annotation } }
        };
      }
      return { outcome: 'budget_exhausted' as const, costMicros, budgetDecision: decision, frame };
    }),
    prepareFailure: assign(({ context, event }) => {
      if (event.type !== 'provider.failed') return {};
      const costMicros = meteredMicros(context);
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
     * A step failed or the request was cancelled: -32603 with no data and no budget decision,
     * nothing stored; tokens already streamed are still paid for.
     */
    prepareInternalError: assign(({ context }) => ({
      outcome: 'provider_error' as const,
      costMicros: meteredMicros(context),
      budgetDecision: null,
      toStore: null,
      frame: providerErrorFrame(context.request.id, context.failure ?? 'internal error')
    })),
    /**
     * An approved request stores "allowed, do not ask the user again" — a verdict, never the
     * completion: on a replay the model is called again.
     */
    prepareAllowedDecision: assign(({ context }) => {
      if (!context.config.storeAllowed || context.consent !== 'approved') return {};
      return { toStore: allowedDecision(context, context.at) };
    }),
    /** The audit record, `seq` assigned by the host when it appends it. */
    buildAuditRecord: assign(({ context }) => ({ audit: buildAudit(context) }))
  }
}).createMachine({
  id: 'authorize',
  // Object.assign, not `{ ...input, identity, ... }`: V8 (Node 20) builds a literal that adds
  // many keys after a spread about fifty times slower — a tenth of a fast-forward's time.
  context: ({ input }) =>
    Object.assign({}, input, {
      identity: '',
      at: input.request.receivedAt,
      enteredAt: input.request.receivedAt,
      stored: null,
      joined: false,
      waitingForFlight: false,
      replayed: false,
      alert: false,
      evaluation: null,
      consent: 'not-asked',
      gen: { ...EMPTY_GEN },
      denial: null,
      outcome: null,
      frame: null,
      toStore: null,
      verdict: null,
      budgetDecision: null,
      costMicros: 0,
      failure: null,
      storeError: null,
      audit: null,
      path: []
    } satisfies Omit<AuthContext, keyof AuthInput>),
  initial: 'identifying',
  output: ({ context }) => ({
    // The lane's refusal style changes only the frame the server receives (refusal-styles.ts).
    frame:
      context.config.silence && context.audit?.silenced
        ? null
        : styleFrame(context.frame, context.config.denialStyle),
    audit: context.audit!,
    path: context.path,
    verdict: context.verdict
  }),
  on: {
    'request.cancelled': {
      target: '.erring',
      actions: ['stamp', assign({ failure: 'request cancelled' })],
      description: 'Cancelled mid-way: still one frame; tokens streamed are paid for.'
    }
  },
  states: {
    identifying: {
      description:
        'Derive the request identity: server + SHA-256 of the canonical identity fields.',
      entry: [{ type: 'trace', params: { state: 'identifying' } }, 'identify'],
      always: 'lookingUp'
    },
    lookingUp: {
      description:
        'Ask the decision store for an unexpired verdict on (server, identity); a presentation of an identity already in flight waits for its verdict.',
      entry: [{ type: 'trace', params: { state: 'lookingUp' } }, 'enter'],
      invoke: {
        id: 'lookupDecision',
        src: 'lookupDecision',
        input: ({ context }) => ({
          server: context.request.server,
          connection: context.request.connection,
          requestId: context.request.id,
          identity: context.identity,
          policyHash: context.policyHash
        }),
        onError: {
          target: 'evaluating',
          actions: { type: 'noteStoreError', params: { error: 'the store lookup threw' } },
          description: 'The lookup threw: evaluate afresh rather than leave the server unanswered.'
        }
      },
      on: {
        'store.hit': [
          {
            guard: 'isDeniedHit',
            target: 'replaying',
            actions: ['stamp', 'rememberLookup'],
            description: 'A stored denial: replayed with no consent, no model call, no spend.'
          },
          {
            target: 'evaluating',
            actions: ['stamp', 'rememberLookup'],
            description: 'A stored "allowed": skip the consent prompt; volume limits still apply.'
          }
        ],
        'store.miss': { target: 'evaluating', actions: ['stamp', 'rememberLookup'] },
        'store.joining': {
          actions: ['stamp', assign({ waitingForFlight: true })],
          description:
            'The identity is being decided on another presentation: wait for its verdict.'
        },
        'store.failed': {
          target: 'evaluating',
          actions: ['stamp', 'rememberLookup', 'noteStoreError'],
          description:
            'The store failed: evaluate afresh rather than leave the server without an answer.'
        }
      },
      after: {
        stepTimeout: {
          guard: not('isWaitingForFlight'),
          target: 'evaluating',
          actions: [
            { type: 'elapse', params: { ms: 'step' } },
            { type: 'noteStoreError', params: { error: 'the store lookup timed out' } }
          ],
          description: 'A hung store: evaluate afresh.'
        },
        joinTimeout: {
          guard: 'isWaitingForFlight',
          target: 'evaluating',
          actions: [
            { type: 'elapse', params: { ms: 'join' } },
            { type: 'noteStoreError', params: { error: 'the joined decision never landed' } }
          ],
          description: 'The presentation it joined never finished: evaluate afresh.'
        }
      }
    },
    replaying: {
      description: 'Build the stored denial frame again.',
      entry: [{ type: 'trace', params: { state: 'replaying' } }, 'prepareReplay'],
      always: SILENCE_OR_SEND
    },
    evaluating: {
      description:
        'Evaluate the policy: enabled, model, input size, rate limit, budget window, context, cost cap.',
      entry: [{ type: 'trace', params: { state: 'evaluating' } }, 'enter'],
      invoke: {
        id: 'evaluatePolicy',
        src: 'evaluatePolicy',
        input: ({ context }) => ({
          server: context.request.server,
          connection: context.request.connection,
          requestId: context.request.id,
          params: context.request.params,
          rateCounted: context.joined && context.stored?.verdict === 'allowed'
        }),
        onError: crash('policy evaluation')
      },
      on: {
        'policy.evaluated': [
          {
            guard: 'isDenied',
            target: 'denying',
            actions: ['stamp', 'rememberEvaluation', 'denyFromPolicy']
          },
          {
            guard: 'isCostRefusal',
            target: 'refusingOnCost',
            actions: ['stamp', 'rememberEvaluation', 'prepareCostRefusal']
          },
          {
            guard: 'isStandingDenial',
            target: 'denying',
            actions: [
              'stamp',
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
          {
            guard: 'needsConsent',
            target: 'consenting',
            actions: ['stamp', 'rememberEvaluation']
          },
          { target: 'calling', actions: ['stamp', 'rememberEvaluation'] }
        ]
      },
      after: {
        stepTimeout: {
          target: 'erring',
          actions: [
            { type: 'elapse', params: { ms: 'step' } },
            { type: 'noteCrash', params: { step: 'policy evaluation (timed out)' } }
          ]
        }
      }
    },
    consenting: {
      description:
        'Show the user a consent dialog; no answer before the timeout denies for one timeout.',
      entry: [{ type: 'trace', params: { state: 'consenting' } }, 'enter'],
      invoke: {
        id: 'askConsent',
        src: 'askConsent',
        input: ({ context }) => ({
          server: context.request.server,
          connection: context.request.connection,
          requestId: context.request.id,
          identity: context.identity,
          params: context.request.params,
          now: context.at
        }),
        onError: crash('the consent dialog')
      },
      on: {
        'consent.answered': [
          { guard: 'isApproved', target: 'calling', actions: ['stamp', 'approve'] },
          {
            target: 'denying',
            actions: [
              'stamp',
              { type: 'deny', params: { reason: 'user.denied', consent: 'denied' } }
            ]
          }
        ]
      },
      after: {
        consentTimeout: {
          target: 'denying',
          actions: [{ type: 'elapse', params: { ms: 'consent' } }, 'consentTimedOut']
        }
      }
    },
    calling: {
      description: 'Call the provider and meter the stream against every limit.',
      entry: [{ type: 'trace', params: { state: 'calling' } }, 'enter', 'startGeneration'],
      invoke: {
        id: 'callProvider',
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
            now: context.at
          };
        },
        onError: crash('the provider call')
      },
      on: {
        'provider.started': { actions: ['stamp', 'noteCache'] },
        'provider.chunk': [
          {
            guard: 'chunkCrossesCap',
            target: 'exhausting',
            actions: 'stamp',
            description:
              'The next chunk would cross the cap: stop before it, keep the partial content.'
          },
          { actions: ['stamp', 'acceptChunk'] }
        ],
        'provider.done': { target: 'completing', actions: 'stamp' },
        'provider.failed': { target: 'failing', actions: ['stamp', 'prepareFailure'] }
      },
      after: {
        deadline: {
          target: 'denying',
          actions: [{ type: 'elapse', params: { ms: 'deadline' } }, 'denyByDeadline']
        }
      }
    },
    completing: {
      description: 'A completion: the result frame, annotated when the context was trimmed.',
      entry: [
        { type: 'trace', params: { state: 'completing' } },
        'prepareCompletion',
        'prepareAllowedDecision'
      ],
      always: COMMIT_OR_SEND
    },
    exhausting: {
      description: 'Stopped mid-generation by the cap: budget_exhausted with the partial content.',
      entry: [
        { type: 'trace', params: { state: 'exhausting' } },
        'prepareExhausted',
        'prepareAllowedDecision'
      ],
      always: COMMIT_OR_SEND
    },
    failing: {
      description:
        'Transport or provider failure: -32001 / -32603, no budget decision, no policy reason; streamed tokens paid.',
      entry: [{ type: 'trace', params: { state: 'failing' } }, 'prepareAllowedDecision'],
      always: COMMIT_OR_SEND
    },
    erring: {
      description:
        'A step threw, hung or was cancelled: -32603 with no data and no budget decision; nothing stored.',
      entry: [{ type: 'trace', params: { state: 'erring' } }, 'prepareInternalError'],
      always: 'sent'
    },
    refusingOnCost: {
      description: 'Refused pre-flight on cost: budget_exceeded, empty content, nothing spent.',
      entry: { type: 'trace', params: { state: 'refusingOnCost' } },
      always: SILENCE_OR_SEND
    },
    denying: {
      description:
        'A denial: -32003 with a reason and the retryable flag; the verdict is stored unless its TTL is none.',
      entry: [{ type: 'trace', params: { state: 'denying' } }, 'prepareDenial'],
      always: [{ guard: 'hasVerdictToStore', target: 'committing' }, ...SILENCE_OR_SEND]
    },
    committing: {
      description: 'Commit the verdict to the decision store before the frame leaves.',
      entry: [{ type: 'trace', params: { state: 'committing' } }, 'enter'],
      invoke: {
        id: 'commitDecision',
        src: 'commitDecision',
        input: ({ context }) => ({
          connection: context.request.connection,
          decision: context.toStore!
        }),
        onError: [
          {
            guard: 'isSilenced',
            target: 'silenced',
            actions: { type: 'noteStoreError', params: { error: 'the commit threw' } }
          },
          {
            target: 'sent',
            actions: { type: 'noteStoreError', params: { error: 'the commit threw' } }
          }
        ]
      },
      on: {
        'commit.done': [
          { guard: 'isSilenced', target: 'silenced', actions: 'stamp' },
          { target: 'sent', actions: 'stamp' }
        ],
        'commit.failed': [
          { guard: 'isSilenced', target: 'silenced', actions: ['stamp', 'noteStoreError'] },
          {
            target: 'sent',
            actions: ['stamp', 'noteStoreError'],
            description: 'The store failed: the server still gets its one frame.'
          }
        ]
      },
      after: {
        stepTimeout: [
          {
            guard: 'isSilenced',
            target: 'silenced',
            actions: [
              { type: 'elapse', params: { ms: 'step' } },
              { type: 'noteStoreError', params: { error: 'the commit timed out' } }
            ]
          },
          {
            target: 'sent',
            actions: [
              { type: 'elapse', params: { ms: 'step' } },
              { type: 'noteStoreError', params: { error: 'the commit timed out' } }
            ]
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
