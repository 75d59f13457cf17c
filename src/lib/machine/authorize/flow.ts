/**
 * The authorisation flow, as data we own: one request's states and transitions, and its guards,
 * reducers and delays as plain named functions over a plain context. Nothing here imports XState.
 *
 *   identify → look up the stored decision → replay it, or evaluate the policy → ask consent →
 *   call the provider (metered) → commit the decision and the audit record → send ONE frame.
 *
 * Two executors read this one description: machine.ts builds the XState machine from it with
 * `setup()` (the statechart, the path walk, /single/ and the reference actor executor use that),
 * and fast.ts interprets it as a table (what the simulation runs). sim/engine/executors.spec.ts checks
 * that both give byte-identical frames and audit records.
 *
 * Every terminal edge sends a frame (`sent`), except where the learner's silence switch drops a
 * denial (`silenced`, recorded, nothing sent). IO happens only in the steps a state invokes — the
 * decision store, the host's policy and volume ledger, the user, the provider, the commit — which
 * the host provides. Every invoked step has an error edge (a throw becomes one `-32603` frame and
 * one audit record), and every state that waits has a timeout on the host's clock (the simulation
 * makes it virtual), so no path ends in silence. Time enters only through events (`at`): the
 * context holds no clock.
 *
 * The format is deliberately small — atomic and final states under one root, `entry` actions,
 * one `invoke` per state with `onError`, `on`, `after` (named delays) and `always` transitions,
 * named guards (or their negation), named reducers with static params — so that fast.ts can
 * implement all of it with XState's semantics and checkFlow() can refuse anything else.
 *
 * Over 400 lines on purpose: the flow is one description — its states, guards and reducers read
 * together as the statechart does; split, a state's edges would live apart from its guards.
 */
import { chunkCrosses } from '../budget';
import {
  budgetedResultFrame,
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
import type { IdentityOptions } from '../identity';
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
 * waiting for it, in the host's (virtual) ms. The stores answer synchronously in the simulation
 * and from a memory cache in the browser, so only a hung or broken one ever reaches this.
 */
export const STEP_TIMEOUT_MS = 10_000;

/**
 * The event a reducer or guard sees: one of the machine's own, or one the executor makes (a
 * delay's `xstate.after.*`, a step's `xstate.error.actor.*`), which carry no `at`.
 */
export type FlowEvent = AuthEvent | { type: string; at?: undefined };

// ───────────────────────────── delays ─────────────────────────────

/** The waiting states' delays, each defined once: the timers and `elapse` both read them. */
export const delays = {
  consentTimeout: (ctx: AuthContext) => ctx.config.consentTimeoutMs,
  deadline: (ctx: AuthContext) => ctx.config.deadlineMs,
  stepTimeout: () => STEP_TIMEOUT_MS,
  /** A joiner waits as long as the presentation it joined may take, and a little more. */
  joinTimeout: (ctx: AuthContext) =>
    ctx.config.consentTimeoutMs + ctx.config.deadlineMs + 3 * STEP_TIMEOUT_MS
} satisfies Record<string, (ctx: AuthContext) => number>;

export type DelayName = keyof typeof delays;

// ───────────────────────────── guards ─────────────────────────────

export const guards = {
  isDeniedHit: (_: AuthContext, event: FlowEvent) =>
    event.type === 'store.hit' &&
    (event as AuthEvent & { type: 'store.hit' }).decision.verdict === 'denied',
  isDenied: (_: AuthContext, event: FlowEvent) =>
    event.type === 'policy.evaluated' && evaluationOf(event).kind === 'deny',
  isCostRefusal: (_: AuthContext, event: FlowEvent) =>
    event.type === 'policy.evaluated' && evaluationOf(event).kind === 'budget_exceeded',
  isStandingDenial: (_: AuthContext, event: FlowEvent) => {
    if (event.type !== 'policy.evaluated') return false;
    const e = evaluationOf(event);
    return e.kind === 'proceed' && e.consent === 'deny';
  },
  needsConsent: (context: AuthContext, event: FlowEvent) => {
    if (event.type !== 'policy.evaluated') return false;
    const e = evaluationOf(event);
    return (
      e.kind === 'proceed' &&
      e.consent === 'ask' &&
      !(context.stored && context.stored.verdict === 'allowed')
    );
  },
  isApproved: (_: AuthContext, event: FlowEvent) =>
    event.type === 'consent.answered' &&
    (event as AuthEvent & { type: 'consent.answered' }).approved,
  chunkCrossesCap: (context: AuthContext, event: FlowEvent) => {
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
      (event as AuthEvent & { type: 'provider.chunk' }).tokens
    );
  },
  hasVerdictToStore: (context: AuthContext) => context.toStore !== null,
  isWaitingForFlight: (context: AuthContext) => context.waitingForFlight,
  isSilenced: (context: AuthContext) =>
    context.config.silence &&
    !!context.frame &&
    'error' in context.frame &&
    context.frame.error.code === -32003
} satisfies Record<string, (context: AuthContext, event: FlowEvent) => boolean>;

function evaluationOf(event: FlowEvent) {
  return (event as AuthEvent & { type: 'policy.evaluated' }).evaluation;
}

export type GuardName = keyof typeof guards;
/** A guard by name, or its negation. */
export type GuardRef = GuardName | { not: GuardName };

// ───────────────────────────── reducers ─────────────────────────────

/**
 * How a request parsed afresh (`IncomingRequest.fresh`, only the handler makes them) is
 * identified. The handler installs the writer that hashes while it writes (fresh-identity.ts)
 * when it loads; until then, the memoised path. Both give the same identity
 * (fresh-identity.spec.ts), so this only chooses the faster one — and keeps the writer out of the
 * page's worker, which never parses afresh (issue #24: first load).
 */
let identifyFresh: (server: string, params: unknown, opts: IdentityOptions) => string =
  memoisedIdentity;

/** Install the identity writer for requests parsed afresh (the handler does, at import). */
export function useFreshIdentity(fn: typeof identifyFresh): void {
  identifyFresh = fn;
}

/**
 * The flow's actions: each returns the context keys it changes (as XState's `assign`); the
 * executor writes them over a copy of the context. None has a side effect.
 */
export const reducers = {
  identify: (context: AuthContext) => {
    const r = context.request;
    const opts = {
      fields: context.config.identityFields,
      canonicalize: context.config.canonicalize
    };
    return {
      identity: r.fresh
        ? identifyFresh(r.server, r.params, opts)
        : memoisedIdentity(r.server, r.params, opts)
    };
  },
  trace: (context: AuthContext, _: FlowEvent, params: { state: string }) => ({
    path: [...context.path, params.state]
  }),
  /** Every event from an actor carries the clock's reading: the machine's only notion of now. */
  stamp: (context: AuthContext, event: FlowEvent) => ({
    at: 'at' in event && typeof event.at === 'number' ? event.at : context.at
  }),
  enter: (context: AuthContext) => ({ enteredAt: context.at }),
  /** A delayed event fires its delay after its state was entered. */
  elapse: (context: AuthContext, _: FlowEvent, params: { delay: DelayName }) => ({
    at: context.enteredAt + delays[params.delay](context)
  }),
  rememberLookup: (_: AuthContext, event: FlowEvent) => {
    const e = event as AuthEvent;
    if (e.type === 'store.hit')
      return { stored: e.decision, alert: e.alert, joined: e.joined === true };
    if (e.type === 'store.miss' || e.type === 'store.failed') return { alert: e.alert };
    return {};
  },
  waitForFlight: () => ({ waitingForFlight: true }),
  noteStoreError: (_: AuthContext, event: FlowEvent, params?: { error: string }) => {
    const e = event as AuthEvent;
    return params
      ? { storeError: params.error }
      : e.type === 'store.failed' || e.type === 'commit.failed'
        ? { storeError: e.error }
        : {};
  },
  noteCrash: (_: AuthContext, __: FlowEvent, params: { step: string }) => ({
    failure: `internal error: ${params.step} failed`
  }),
  noteCancel: () => ({ failure: 'request cancelled' }),
  rememberEvaluation: (_: AuthContext, event: FlowEvent) =>
    event.type === 'policy.evaluated' ? { evaluation: evaluationOf(event) } : {},
  denyFromPolicy: (_: AuthContext, event: FlowEvent) => {
    if (event.type !== 'policy.evaluated') return {};
    const e = evaluationOf(event);
    if (e.kind !== 'deny') return {};
    return {
      denial: {
        reason: e.reason,
        ...(e.resetsAt ? { resetsAt: e.resetsAt } : {}),
        ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
        ...(e.message !== undefined ? { message: e.message } : {})
      }
    };
  },
  deny: (
    _: AuthContext,
    __: FlowEvent,
    params: { reason: ReasonCode; message?: string; consent?: AuditRecord['consent'] }
  ) => ({
    denial: { reason: params.reason, ...(params.message ? { message: params.message } : {}) },
    ...(params.consent ? { consent: params.consent } : {})
  }),
  /**
   * A consent dialog nobody answered is not the user's "no": it has a reason of its own,
   * `user.timeout`, whose retryable flag and TTL are the reason table's like any other's (by
   * default retryable after one minute: storing nothing would let a retrying server reopen the
   * dialog at once, a session-long "no" would punish it for a user who never answered).
   */
  consentTimedOut: (context: AuthContext) => {
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
  },
  approve: () => ({ consent: 'approved' as const }),
  /** The deadline cut the stream: what was streamed is paid for. */
  denyByDeadline: (context: AuthContext) => {
    const rule = context.config.reasons['policy.deadline'];
    return {
      costMicros: meteredMicros(context),
      denial: {
        reason: 'policy.deadline' as const,
        retryAfterMs: rule.ttl.kind === 'ms' ? rule.ttl.ms : DEFAULT_RETRY_AFTER_MS
      }
    };
  },
  prepareReplay: (context: AuthContext) => {
    const s = context.stored!;
    // A replayed entry is a denial: it has a reason.
    const denial = s as typeof s & { reason: ReasonCode };
    return {
      replayed: true,
      outcome: 'denied' as const,
      verdict: s,
      // The stored decision is the denial: buildDenialFrame reads its reason, resetsAt and message
      // (a copy of those three, spread from conditional literals, was three objects per replay).
      frame: buildDenialFrame(context, denial, s.retryable, replayRetryAfterMs(s, context.at))
    };
  },
  /**
   * The denial's frame and, unless its reason is never stored (TTL `none`), the verdict to
   * commit before the frame leaves. An unstored denial hands joiners no verdict: like a cost
   * refusal, it may hang on members outside the identity (a budget's currency).
   */
  prepareDenial: (context: AuthContext) => {
    const d = context.denial!;
    const decision = denialDecision(context, d, context.at);
    const retryable = decision?.retryable ?? context.config.reasons[d.reason].retryable;
    return {
      outcome: 'denied' as const,
      frame: buildDenialFrame(context, d, retryable, d.retryAfterMs),
      toStore: decision,
      verdict: decision
    };
  },
  prepareCostRefusal: (context: AuthContext, event: FlowEvent) => {
    if (event.type !== 'policy.evaluated') return {};
    const e = evaluationOf(event);
    if (e.kind !== 'budget_exceeded') return {};
    const { model, decision } = e;
    const frame =
      context.config.refusalAs === 'error'
        ? budgetRefusalErrorFrame(context.request.id, {
            server: context.request.server,
            decision
          })
        : budgetExceededFrame(context.request.id, { model, decision });
    return { outcome: 'budget_exceeded' as const, frame, budgetDecision: decision };
  },
  /** Allowed to call the model: the verdict a joiner of this presentation gets. */
  /**
   * Allowed to call the model: the verdict a joiner of this presentation gets — none when the
   * policy's askAbove waived the dialog for this presentation's estimate and nobody approved
   * the identity: maxTokens is outside the identity, so a cheap presentation must not let a
   * dearer one joining it through unasked. Its joiners are decided afresh, each on its own
   * estimate.
   */
  startGeneration: (context: AuthContext) => ({
    gen: { ...EMPTY_GEN },
    verdict:
      proceed(context)?.consentSkipped && context.stored?.verdict !== 'allowed'
        ? null
        : allowedDecision(context, context.at)
  }),
  noteCache: (context: AuthContext, event: FlowEvent) => {
    const e = event as AuthEvent;
    return e.type === 'provider.started'
      ? { gen: { ...context.gen, started: true, cachedInputTokens: e.cachedInputTokens } }
      : {};
  },
  acceptChunk: (context: AuthContext, event: FlowEvent) => {
    const e = event as AuthEvent;
    if (e.type !== 'provider.chunk') return {};
    return {
      gen: {
        ...context.gen,
        text: context.gen.text + e.text,
        tokensOut: context.gen.tokensOut + e.tokens
      }
    };
  },
  prepareCompletion: (context: AuthContext, event: FlowEvent) => {
    const p = proceed(context)!;
    const e = event as AuthEvent;
    const stopReason = e.type === 'provider.done' ? e.stopReason : 'endTurn';
    const costMicros = meteredMicros(context);
    const budgetDecision = p.decision ? withActual(p.decision, context, costMicros) : null;
    const trimmed = p.context.trimmed;
    const annotated = trimmed && context.config.annotateTrim;
    // The common frame, a call under a money limit, written whole (the same keys in the same
    // order as the general path's copies below).
    if (budgetDecision && !annotated)
      return {
        outcome: (trimmed ? 'trimmed' : 'allowed') as Outcome,
        gen: { ...context.gen, stopReason },
        frame: budgetedResultFrame(
          context.request.id,
          { model: p.model, text: context.gen.text, stopReason },
          budgetDecision
        ),
        costMicros,
        budgetDecision
      };
    let frame: Frame = annotated
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
      // Object.assign, not spreads that add `budget`: V8's slow path (see withActual).
      frame = Object.assign({}, frame, {
        result: Object.assign({}, frame.result, { budget: { decision: budgetDecision } })
      });
    }
    return {
      outcome: (trimmed ? 'trimmed' : 'allowed') as Outcome,
      gen: { ...context.gen, stopReason },
      frame,
      costMicros,
      budgetDecision
    };
  },
  prepareExhausted: (context: AuthContext) => {
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
      frame = Object.assign({}, frame, {
        result: Object.assign({}, frame.result, {
          _meta: Object.assign({}, frame.result._meta, { context: annotation })
        })
      });
    }
    return { outcome: 'budget_exhausted' as const, costMicros, budgetDecision: decision, frame };
  },
  prepareFailure: (context: AuthContext, event: FlowEvent) => {
    const e = event as AuthEvent;
    if (e.type !== 'provider.failed') return {};
    const costMicros = meteredMicros(context);
    return e.kind === 'timeout'
      ? {
          outcome: 'transport_error' as const,
          failure: e.message,
          costMicros,
          frame: transportErrorFrame(context.request.id, e.message)
        }
      : {
          outcome: 'provider_error' as const,
          failure: e.message,
          costMicros,
          frame: providerErrorFrame(context.request.id, e.message)
        };
  },
  /**
   * A step failed or the request was cancelled: -32603 with no data and no budget decision,
   * nothing stored; tokens already streamed are still paid for.
   */
  prepareInternalError: (context: AuthContext) => ({
    outcome: 'provider_error' as const,
    costMicros: meteredMicros(context),
    budgetDecision: null,
    toStore: null,
    frame: providerErrorFrame(context.request.id, context.failure ?? 'internal error')
  }),
  /**
   * An approved request stores "allowed, do not ask the user again" — a verdict, never the
   * completion: on a replay the model is called again.
   */
  prepareAllowedDecision: (context: AuthContext) => {
    if (!context.config.storeAllowed || context.consent !== 'approved') return {};
    return { toStore: allowedDecision(context, context.at) };
  },
  /** The audit record, `seq` assigned by the host when it appends it. */
  buildAuditRecord: (context: AuthContext) => ({ audit: buildAudit(context) })
} satisfies Record<
  string,
  // `never` params: each reducer names its own; ActionRef below keeps the call sites honest.
  (context: AuthContext, event: FlowEvent, params: never) => Partial<AuthContext>
>;

export type ActionName = keyof typeof reducers;
type ParamsOf<K extends ActionName> = Parameters<(typeof reducers)[K]>[2];
/** A reducer by name, with its params when it takes any. */
export type ActionRef = {
  [K in ActionName]: undefined extends ParamsOf<K>
    ? K | { type: K; params?: ParamsOf<K> }
    : { type: K; params: ParamsOf<K> };
}[ActionName];

// ───────────────────────────── steps ─────────────────────────────

/** The steps a state may invoke, with their inputs: the host provides their logic. */
export interface StepInputs {
  lookupDecision: LookupInput;
  evaluatePolicy: EvaluateRequest;
  askConsent: ConsentInput;
  callProvider: ProviderInput;
  commitDecision: CommitInput;
}
export type StepName = keyof StepInputs;

// ───────────────────────────── states ─────────────────────────────

export type StateName =
  | 'identifying'
  | 'lookingUp'
  | 'replaying'
  | 'evaluating'
  | 'consenting'
  | 'calling'
  | 'completing'
  | 'exhausting'
  | 'failing'
  | 'erring'
  | 'refusingOnCost'
  | 'denying'
  | 'committing'
  | 'sent'
  | 'silenced';

export interface FlowTransition {
  /** Absent: the transition changes no state (its actions run, no exit or entry). */
  readonly target?: StateName;
  readonly guard?: GuardRef;
  readonly actions?: readonly ActionRef[];
  readonly description?: string;
}

/** One invoked step: its input from the context, its error edges (a throw, a failed start). */
export type FlowInvoke = {
  [S in StepName]: {
    readonly src: S;
    readonly input: (context: AuthContext) => StepInputs[S];
    readonly onError: readonly FlowTransition[];
  };
}[StepName];

export interface FlowState {
  readonly description: string;
  readonly type?: 'final';
  readonly entry: readonly ActionRef[];
  readonly invoke?: FlowInvoke;
  /** Event transitions, by the event's type; each list is tried in order, the first guard wins. */
  readonly on?: { readonly [T in AuthEvent['type']]?: readonly FlowTransition[] };
  /** Timers set on entry and cleared on exit, in this order; when one fires, its transitions. */
  readonly after?: { readonly [D in DelayName]?: readonly FlowTransition[] };
  /** Eventless transitions, taken as soon as their guard holds. */
  readonly always?: readonly FlowTransition[];
}

export interface Flow {
  readonly id: string;
  readonly initial: StateName;
  /** Transitions any state takes (after its own, as a parent state's). */
  readonly on: { readonly [T in AuthEvent['type']]?: readonly FlowTransition[] };
  readonly states: { readonly [S in StateName]: FlowState };
  /** The functions the states name. */
  readonly guards: typeof guards;
  readonly reducers: typeof reducers;
  readonly delays: typeof delays;
  readonly context: (input: AuthInput) => AuthContext;
  readonly output: (context: AuthContext) => AuthOutput;
}

/**
 * How the outcome states leave. A fresh denial always has a verdict to store, and is committed
 * before its frame is sent; a result may store "allowed, do not ask again"; a replay or a cost
 * refusal stores nothing, and is the only kind that the learner's silence switch can drop
 * without a commit (a cost refusal sent as an error is a -32003 too).
 */
const COMMIT_OR_SEND: readonly FlowTransition[] = [
  { guard: 'hasVerdictToStore', target: 'committing' },
  { target: 'sent' }
];
const SILENCE_OR_SEND: readonly FlowTransition[] = [
  { guard: 'isSilenced', target: 'silenced' },
  { target: 'sent' }
];

/** An invoked step failed (threw, or never answered): one internal-error frame, no data. */
function crash(step: string): FlowTransition[] {
  return [{ target: 'erring', actions: [{ type: 'noteCrash', params: { step } }] }];
}

const trace = (state: StateName): ActionRef => ({ type: 'trace', params: { state } });

export const authorizationFlow: Flow = {
  id: 'authorize',
  initial: 'identifying',
  guards,
  reducers,
  delays,
  // Object.assign, not `{ ...input, identity, ... }`: V8 (Node 20) builds a literal that adds
  // many keys after a spread about fifty times slower — a tenth of a fast-forward's time.
  context: (input) =>
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
  output: (context) => ({
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
    'request.cancelled': [
      {
        target: 'erring',
        actions: ['stamp', 'noteCancel'],
        description: 'Cancelled mid-way: still one frame; tokens streamed are paid for.'
      }
    ]
  },
  states: {
    identifying: {
      description:
        'Derive the request identity: server + SHA-256 of the canonical identity fields.',
      entry: [trace('identifying'), 'identify'],
      always: [{ target: 'lookingUp' }]
    },
    lookingUp: {
      description:
        'Ask the decision store for an unexpired verdict on (server, identity); a presentation of an identity already in flight waits for its verdict.',
      entry: [trace('lookingUp'), 'enter'],
      invoke: {
        src: 'lookupDecision',
        input: (context) => ({
          server: context.request.server,
          connection: context.request.connection,
          requestId: context.request.id,
          identity: context.identity,
          policyHash: context.policyHash
        }),
        onError: [
          {
            target: 'evaluating',
            actions: [{ type: 'noteStoreError', params: { error: 'the store lookup threw' } }],
            description:
              'The lookup threw: evaluate afresh rather than leave the server unanswered.'
          }
        ]
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
        'store.miss': [{ target: 'evaluating', actions: ['stamp', 'rememberLookup'] }],
        'store.joining': [
          {
            actions: ['stamp', 'waitForFlight'],
            description:
              'The identity is being decided on another presentation: wait for its verdict.'
          }
        ],
        'store.failed': [
          {
            target: 'evaluating',
            actions: ['stamp', 'rememberLookup', 'noteStoreError'],
            description:
              'The store failed: evaluate afresh rather than leave the server without an answer.'
          }
        ]
      },
      after: {
        stepTimeout: [
          {
            guard: { not: 'isWaitingForFlight' },
            target: 'evaluating',
            actions: [
              { type: 'elapse', params: { delay: 'stepTimeout' } },
              { type: 'noteStoreError', params: { error: 'the store lookup timed out' } }
            ],
            description: 'A hung store: evaluate afresh.'
          }
        ],
        joinTimeout: [
          {
            guard: 'isWaitingForFlight',
            target: 'evaluating',
            actions: [
              { type: 'elapse', params: { delay: 'joinTimeout' } },
              { type: 'noteStoreError', params: { error: 'the joined decision never landed' } }
            ],
            description: 'The presentation it joined never finished: evaluate afresh.'
          }
        ]
      }
    },
    replaying: {
      description: 'Build the stored denial frame again.',
      entry: [trace('replaying'), 'prepareReplay'],
      always: SILENCE_OR_SEND
    },
    evaluating: {
      description:
        'Evaluate the policy: enabled, model, input size, rate limit, budget window, context, cost cap.',
      entry: [trace('evaluating'), 'enter'],
      invoke: {
        src: 'evaluatePolicy',
        input: (context) => ({
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
        stepTimeout: [
          {
            target: 'erring',
            actions: [
              { type: 'elapse', params: { delay: 'stepTimeout' } },
              { type: 'noteCrash', params: { step: 'policy evaluation (timed out)' } }
            ]
          }
        ]
      }
    },
    consenting: {
      description:
        'Show the user a consent dialog; no answer before the timeout denies for one timeout.',
      entry: [trace('consenting'), 'enter'],
      invoke: {
        src: 'askConsent',
        input: (context) => ({
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
        consentTimeout: [
          {
            target: 'denying',
            actions: [{ type: 'elapse', params: { delay: 'consentTimeout' } }, 'consentTimedOut']
          }
        ]
      }
    },
    calling: {
      description: 'Call the provider and meter the stream against every limit.',
      entry: [trace('calling'), 'enter', 'startGeneration'],
      invoke: {
        src: 'callProvider',
        input: (context) => {
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
        'provider.started': [{ actions: ['stamp', 'noteCache'] }],
        'provider.chunk': [
          {
            guard: 'chunkCrossesCap',
            target: 'exhausting',
            actions: ['stamp'],
            description:
              'The next chunk would cross the cap: stop before it, keep the partial content.'
          },
          { actions: ['stamp', 'acceptChunk'] }
        ],
        'provider.done': [{ target: 'completing', actions: ['stamp'] }],
        'provider.failed': [{ target: 'failing', actions: ['stamp', 'prepareFailure'] }]
      },
      after: {
        deadline: [
          {
            target: 'denying',
            actions: [{ type: 'elapse', params: { delay: 'deadline' } }, 'denyByDeadline']
          }
        ]
      }
    },
    completing: {
      description: 'A completion: the result frame, annotated when the context was trimmed.',
      entry: [trace('completing'), 'prepareCompletion', 'prepareAllowedDecision'],
      always: COMMIT_OR_SEND
    },
    exhausting: {
      description: 'Stopped mid-generation by the cap: budget_exhausted with the partial content.',
      entry: [trace('exhausting'), 'prepareExhausted', 'prepareAllowedDecision'],
      always: COMMIT_OR_SEND
    },
    failing: {
      description:
        'Transport or provider failure: -32001 / -32603, no budget decision, no policy reason; streamed tokens paid.',
      entry: [trace('failing'), 'prepareAllowedDecision'],
      always: COMMIT_OR_SEND
    },
    erring: {
      description:
        'A step threw, hung or was cancelled: -32603 with no data and no budget decision; nothing stored.',
      entry: [trace('erring'), 'prepareInternalError'],
      always: [{ target: 'sent' }]
    },
    refusingOnCost: {
      description: 'Refused pre-flight on cost: budget_exceeded, empty content, nothing spent.',
      entry: [trace('refusingOnCost')],
      always: SILENCE_OR_SEND
    },
    denying: {
      description:
        'A denial: -32003 with a reason and the retryable flag; the verdict is stored unless its TTL is none.',
      entry: [trace('denying'), 'prepareDenial'],
      always: [{ guard: 'hasVerdictToStore', target: 'committing' }, ...SILENCE_OR_SEND]
    },
    committing: {
      description: 'Commit the verdict to the decision store before the frame leaves.',
      entry: [trace('committing'), 'enter'],
      invoke: {
        src: 'commitDecision',
        input: (context) => ({
          connection: context.request.connection,
          decision: context.toStore!
        }),
        onError: [
          {
            guard: 'isSilenced',
            target: 'silenced',
            actions: [{ type: 'noteStoreError', params: { error: 'the commit threw' } }]
          },
          {
            target: 'sent',
            actions: [{ type: 'noteStoreError', params: { error: 'the commit threw' } }]
          }
        ]
      },
      on: {
        'commit.done': [
          { guard: 'isSilenced', target: 'silenced', actions: ['stamp'] },
          { target: 'sent', actions: ['stamp'] }
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
              { type: 'elapse', params: { delay: 'stepTimeout' } },
              { type: 'noteStoreError', params: { error: 'the commit timed out' } }
            ]
          },
          {
            target: 'sent',
            actions: [
              { type: 'elapse', params: { delay: 'stepTimeout' } },
              { type: 'noteStoreError', params: { error: 'the commit timed out' } }
            ]
          }
        ]
      }
    },
    sent: {
      description: 'Exactly one frame is sent.',
      type: 'final',
      entry: [trace('sent'), 'buildAuditRecord']
    },
    silenced: {
      description: 'The silence switch dropped the denial: recorded, nothing sent.',
      type: 'final',
      entry: [trace('silenced'), 'buildAuditRecord']
    }
  }
};

/** The event XState raises when a state's `after` delay elapses (its type names the state). */
export function afterEventType(flow: Flow, delay: DelayName, state: StateName): string {
  return `xstate.after.${delay}.${flow.id}.${state}`;
}

/** The event an invoked step's failure sends (XState's name for it). */
export function errorEventType(src: StepName): string {
  return `xstate.error.actor.${src}`;
}

/**
 * The flow each machine was built from (machine.ts registers it), so that an executor handed the
 * XState machine — the host keeps one per configuration — reads the description, not XState.
 */
const flows = new WeakMap<object, Flow>();

export function registerFlow(machine: object, flow: Flow): void {
  flows.set(machine, flow);
}

export function flowOf(machine: object): Flow | undefined {
  return flows.get(machine);
}
