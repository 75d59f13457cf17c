/**
 * The authorisation machine's input, context, events and the inputs of its actors. Time enters
 * only through events (`at`, virtual ms, stamped by the host from the actor's clock) and the
 * request's `receivedAt`: the context holds no clock to read.
 */
import type { RateCard } from '../budget';
import type { Evaluation } from '../evaluate';
import type { ReasonCode } from '../reasons';
import type {
  AuditRecord,
  BudgetDecision,
  Frame,
  IncludeContext,
  JsonRpcId,
  Outcome,
  SamplingParams,
  StoredDecision
} from '../types';
import type { ClientConfig } from '../vocabulary';

export interface IncomingRequest {
  id: JsonRpcId;
  server: string;
  connection: string;
  params: SamplingParams;
  /** Virtual ms when the request arrived. */
  receivedAt: number;
  /**
   * The params object was made for this presentation alone (a real client's request, parsed
   * afresh from the wire): its identity is hashed without the memo (fast-identity.ts), whose
   * by-object entry could never be found again and whose by-payload entry would hold the text of
   * every distinct request (up to 32 MB) to spare a retry one hash. Same identity either way.
   */
  fresh?: true;
}

export interface AuthInput {
  request: IncomingRequest;
  config: ClientConfig;
  /** The server's effective policy block hash: stored decisions from another hash are stale. */
  policyHash: string;
  /** Rate cards by model: the meter prices the stream with them. */
  cards: Readonly<Record<string, RateCard>>;
  /** Lane label carried into the audit record. */
  lane?: string;
}

export interface Denial {
  reason: ReasonCode;
  resetsAt?: string;
  retryAfterMs?: number;
  message?: string;
}

export interface Generation {
  /** The provider began answering (input is paid from here on). */
  started: boolean;
  text: string;
  tokensOut: number;
  cachedInputTokens: number;
  stopReason: 'endTurn' | 'maxTokens' | 'stopSequence';
}

export interface AuthContext extends AuthInput {
  identity: string;
  /** Virtual ms of the latest event the machine took (the request's arrival at first). */
  at: number;
  /** Virtual ms the current waiting state was entered: its delays count from here. */
  enteredAt: number;
  stored: StoredDecision | null;
  /** The verdict came from another presentation of this identity that was in flight. */
  joined: boolean;
  /** Waiting in `lookingUp` for an in-flight presentation of the same identity. */
  waitingForFlight: boolean;
  replayed: boolean;
  alert: boolean;
  evaluation: Evaluation | null;
  consent: AuditRecord['consent'];
  gen: Generation;
  denial: Denial | null;
  outcome: Outcome | null;
  frame: Frame | null;
  toStore: StoredDecision | null;
  /**
   * The verdict this presentation reached, stored or not: handed to presentations of the same
   * identity that joined it while it was in flight. Never a completion.
   */
  verdict: StoredDecision | null;
  budgetDecision: BudgetDecision | null;
  costMicros: number;
  failure: string | null;
  storeError: string | null;
  audit: AuditRecord | null;
  /** The states this request passed through, in order: the inspector shows it, the statechart counts its edges. */
  path: string[];
}

/** What a provider emits; the host stamps each with the clock's reading (`at`). */
export type ProviderEvent =
  | { type: 'provider.started'; cachedInputTokens: number }
  | { type: 'provider.chunk'; text: string; tokens: number }
  | { type: 'provider.done'; stopReason: Generation['stopReason'] }
  | { type: 'provider.failed'; kind: 'timeout' | 'error'; message: string };

type Stamped<E> = E & { at: number };

export type AuthEvent = Stamped<
  | {
      type: 'store.hit';
      decision: StoredDecision;
      alert: boolean;
      /** True when the decision is the verdict of an in-flight presentation this one waited for. */
      joined?: boolean;
    }
  | { type: 'store.miss'; alert: boolean }
  | { type: 'store.failed'; error: string; alert: boolean }
  /** The identity is being decided by another presentation: wait for its verdict. */
  | { type: 'store.joining' }
  | { type: 'policy.evaluated'; evaluation: Evaluation }
  | { type: 'consent.answered'; approved: boolean }
  | ProviderEvent
  | { type: 'commit.done' }
  | { type: 'commit.failed'; error: string }
  /** The server cancelled the request (or the host stopped it): it still gets its one frame. */
  | { type: 'request.cancelled' }
>;

export interface AuthOutput {
  /** The one frame sent, or null when the silence switch dropped a denial. */
  frame: Frame | null;
  audit: AuditRecord;
  path: string[];
  /** The verdict reached (see AuthContext.verdict), for presentations that joined this one. */
  verdict: StoredDecision | null;
}

// ───────────────────────────── actor inputs ─────────────────────────────

export interface LookupInput {
  server: string;
  requestId: JsonRpcId;
  connection: string;
  identity: string;
  policyHash: string;
}

export interface EvaluateRequest {
  server: string;
  connection: string;
  requestId: JsonRpcId;
  params: SamplingParams;
  /** A joiner of an allowed in-flight verdict: the leader already counted toward the rate limit. */
  rateCounted: boolean;
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
