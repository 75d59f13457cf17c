/**
 * Builders for every frame the client sends (SPEC §2.1) and their classifier (the validating
 * parser for frames read from files is frame-parse.ts).
 *
 * Every terminal edge of the authorisation machine sends exactly one of these, so they are the
 * whole of what a server learns. Frames are compared byte-for-byte as JSON (audit, replay, golden
 * traces), hence two rules throughout: members are written in one fixed order, and an absent
 * optional member is left out rather than set to `undefined`.
 */
import { isReasonCode, reasonMessage, type ReasonCode } from './reasons';
import {
  CODES,
  type BudgetDecision,
  type ContextAnnotation,
  type CreateMessageResult,
  type DenialData,
  type ErrorFrame,
  type JsonRpcId,
  type Outcome,
  type ResultFrame
} from './types';

/** A result's stop reason, as the MCP schema and the RFC name them. */
export type StopReason = CreateMessageResult['stopReason'];

/** What a completion frame is built from. */
export interface CompletionArgs {
  model: string;
  text: string;
  /** Default `endTurn`. */
  stopReason?: StopReason;
}

/** A trimmed completion: the context the server asked for is not the context it got. */
export interface TrimmedArgs extends CompletionArgs {
  context: ContextAnnotation;
}

/** A policy or user denial. */
export interface DenialArgs {
  reason: ReasonCode | string;
  server: string;
  retryable: boolean;
  /** When a budget window resets (ISO 8601); for `policy.budget_exhausted`. */
  resetsAt?: string;
  /** How long a transient denial asks the server to wait. */
  retryAfterMs?: number;
  /** Human text; defaults to the reason's standard message. Never carries the classification. */
  message?: string;
}

/** The reason a cost refusal carries when sent as an error (the RFC's open question). */
export const COST_CAP_REASON = 'policy.cost_cap';

/**
 * What a frame tells its receiver happened: an outcome (the audit record's vocabulary), or
 * `unknown` for anything this client would not send.
 */
export type FrameKind = Outcome | 'unknown';

function completion(
  id: JsonRpcId,
  model: string,
  text: string,
  stopReason: StopReason
): ResultFrame {
  return {
    jsonrpc: '2.0',
    id,
    result: { role: 'assistant', content: { type: 'text', text }, model, stopReason }
  };
}

/** An allowed request: the completion, to be used as is. */
export function resultFrame(
  id: JsonRpcId,
  { model, text, stopReason = 'endTurn' }: CompletionArgs
): ResultFrame {
  return completion(id, model, text, stopReason);
}

/**
 * `resultFrame` with the budget decision the call was made under after its members (`budget`,
 * last), written as one literal: the frame an allowed call under a money limit sends, once per
 * completed call. The same keys in the same order as `resultFrame`'s frame with `budget` added.
 */
export function budgetedResultFrame(
  id: JsonRpcId,
  { model, text, stopReason = 'endTurn' }: CompletionArgs,
  decision: BudgetDecision
): ResultFrame {
  return {
    jsonrpc: '2.0',
    id,
    result: {
      role: 'assistant',
      content: { type: 'text', text },
      model,
      stopReason,
      budget: { decision }
    }
  };
}

/**
 * A completion made with less context than requested. Trimming is not a failure — the work was
 * paid for — so it is a result, and the gap goes in `_meta.context` where a server that ignores it
 * still gets a valid response and one that reads it can say its answer lacked the context.
 */
export function trimmedFrame(
  id: JsonRpcId,
  { model, text, stopReason = 'endTurn', context }: TrimmedArgs
): ResultFrame {
  const frame = completion(id, model, text, stopReason);
  // Rebuilt rather than referenced: fixes the member order whatever order the caller used.
  frame.result._meta = {
    context: { requested: context.requested, applied: context.applied, reason: context.reason }
  };
  return frame;
}

/**
 * A denial: error -32003 with `data.reason` as the stable field a server branches on, so no
 * server ever has to pattern-match our prose. `retryable` is the only thing standing between a
 * permanent refusal and a retry loop, so it is always present.
 */
export function denialFrame(id: JsonRpcId, args: DenialArgs): ErrorFrame {
  const { reason, server, retryable, resetsAt, retryAfterMs } = args;
  const data: DenialData = { reason, server, retryable };
  if (resetsAt !== undefined) data.resetsAt = resetsAt;
  if (retryAfterMs !== undefined) data.retryAfterMs = retryAfterMs;
  const message =
    args.message ??
    // An unknown reason gets generic prose: the classification lives in data.reason only.
    (isReasonCode(reason)
      ? reasonMessage(reason, server)
      : `Sampling denied for server '${server}'`);
  return { jsonrpc: '2.0', id, error: { code: CODES.denied, message, data } };
}

/**
 * Refused pre-flight on cost (RFC): a result with empty content and `stopReason:
 * "budget_exceeded"`, carrying the decision basis a server needs to shrink deterministically.
 */
export function budgetExceededFrame(
  id: JsonRpcId,
  { model, decision }: { model: string; decision: BudgetDecision }
): ResultFrame {
  const frame = completion(id, model, '', 'budget_exceeded');
  frame.result.budget = { decision };
  return frame;
}

/**
 * The RFC's open question, "refusal as error instead of result": the same pre-flight cost refusal
 * as a -32003 error. Never retryable — the same request costs the same again.
 */
export function budgetRefusalErrorFrame(
  id: JsonRpcId,
  { server, decision, message }: { server: string; decision: BudgetDecision; message?: string }
): ErrorFrame {
  const data: DenialData = {
    reason: COST_CAP_REASON,
    server,
    retryable: false,
    budget: { decision }
  };
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: CODES.denied,
      message:
        message ?? `Sampling refused: the estimated cost exceeds the cap for server '${server}'`,
      data
    }
  };
}

/**
 * Stopped mid-generation on cost (RFC): the partial content is returned — it was paid for — with
 * `stopReason: "budget_exhausted"` and the decision basis.
 */
export function budgetExhaustedFrame(
  id: JsonRpcId,
  { model, partialText, decision }: { model: string; partialText: string; decision: BudgetDecision }
): ResultFrame {
  const frame = completion(id, model, partialText, 'budget_exhausted');
  frame.result.budget = { decision };
  return frame;
}

/**
 * The provider did not answer in time: -32001. Deliberately no `data`: a transport failure says
 * nothing about policy or budget, and a server may reasonably retry it.
 */
export function transportErrorFrame(
  id: JsonRpcId,
  message = 'Request timed out waiting for the model provider'
): ErrorFrame {
  return { jsonrpc: '2.0', id, error: { code: CODES.requestTimeout, message } };
}

/** The provider failed: JSON-RPC internal error -32603, with no policy reason and no budget. */
export function providerErrorFrame(
  id: JsonRpcId,
  message = 'The model provider failed'
): ErrorFrame {
  return { jsonrpc: '2.0', id, error: { code: CODES.internal, message } };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * What a frame says happened, as a server (or the metrics) should read it. Takes any value and
 * never throws: simulated servers call it on whatever they receive.
 *
 * A -32003 error carrying a budget decision is the error form of a pre-flight cost refusal, so it
 * classifies as `budget_exceeded`, the same outcome as its result form.
 */
export function classifyFrame(frame: unknown): FrameKind {
  if (!isObject(frame)) return 'unknown';
  const hasResult = 'result' in frame;
  const hasError = 'error' in frame;
  if (hasResult === hasError) return 'unknown';
  if (hasError) {
    const error = frame.error;
    if (!isObject(error)) return 'unknown';
    switch (error.code) {
      case CODES.denied: {
        const data = error.data;
        return isObject(data) && isObject(data.budget) ? 'budget_exceeded' : 'denied';
      }
      case CODES.requestTimeout:
        return 'transport_error';
      case CODES.internal:
        return 'provider_error';
      default:
        return 'unknown';
    }
  }
  const result = frame.result;
  if (!isObject(result)) return 'unknown';
  if (result.stopReason === 'budget_exceeded') return 'budget_exceeded';
  if (result.stopReason === 'budget_exhausted') return 'budget_exhausted';
  if (isObject(result._meta) && isObject(result._meta.context)) return 'trimmed';
  return 'allowed';
}
