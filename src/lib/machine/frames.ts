/**
 * Builders for every frame the client sends (SPEC §2.1), their classifier, and a validating parser
 * for frames read from files.
 *
 * Every terminal edge of the authorisation machine sends exactly one of these, so they are the
 * whole of what a server learns. Frames are compared byte-for-byte as JSON (audit, replay, golden
 * traces), hence two rules throughout: members are written in one fixed order, and an absent
 * optional member is left out rather than set to `undefined`.
 */
import { parseJsonText } from './policy/json-strict';
import { isReasonCode, reasonMessage, type ReasonCode } from './reasons';
import {
  CODES,
  type BudgetDecision,
  type ContextAnnotation,
  type CreateMessageResult,
  type DenialData,
  type ErrorFrame,
  type Frame,
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

function isObject(v: unknown): v is Record<string, unknown> {
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

/** The outcome of {@link parseFrame}. */
export type ParseFrameResult = { ok: true; frame: Frame } | { ok: false; error: string };

const TOP_LEVEL = new Set(['jsonrpc', 'id', 'result', 'error']);

/** The first thing wrong with a result, as `path: problem`, or null. */
function resultProblem(r: unknown): string | null {
  if (!isObject(r)) return 'result: expected an object';
  if (r.role !== 'assistant') return 'result.role: expected "assistant"';
  const content = r.content;
  if (!isObject(content)) return 'result.content: expected an object';
  if (typeof content.type !== 'string') return 'result.content.type: expected a string';
  if (content.type === 'text' && typeof content.text !== 'string') {
    return 'result.content.text: expected a string';
  }
  if (typeof r.model !== 'string') return 'result.model: expected a string';
  if (r.stopReason !== undefined && typeof r.stopReason !== 'string') {
    return 'result.stopReason: expected a string';
  }
  if (r._meta !== undefined) {
    if (!isObject(r._meta)) return 'result._meta: expected an object';
    const ctx = r._meta.context;
    if (ctx !== undefined) {
      if (!isObject(ctx)) return 'result._meta.context: expected an object';
      for (const k of ['requested', 'applied', 'reason'] as const) {
        if (typeof ctx[k] !== 'string') return `result._meta.context.${k}: expected a string`;
      }
    }
  }
  if (r.budget !== undefined) {
    if (!isObject(r.budget)) return 'result.budget: expected an object';
    if (!isObject(r.budget.decision)) return 'result.budget.decision: expected an object';
  }
  return null;
}

/** The first thing wrong with an error object, as `path: problem`, or null. */
function errorProblem(e: unknown): string | null {
  if (!isObject(e)) return 'error: expected an object';
  if (typeof e.code !== 'number' || !Number.isInteger(e.code)) {
    return 'error.code: expected an integer';
  }
  if (typeof e.message !== 'string') return 'error.message: expected a string';
  return null;
}

/**
 * Parse and validate one JSON-RPC response frame (e.g. a line of a recorded trace). Checks the
 * envelope — `jsonrpc: "2.0"`, an id that is a string or a number, exactly one of `result` and
 * `error`, no other members — then the member it carries: an error's integer `code` and string
 * `message`; a result's `role`, `content`, `model` and, when present, `stopReason`,
 * `_meta.context` and `budget.decision`. Never throws; the error names the path of the first
 * problem found, e.g. `error.code: expected an integer`.
 */
export function parseFrame(text: string): ParseFrameResult {
  const json = parseJsonText(text);
  if (!json.ok) {
    const e = json.error;
    return { ok: false, error: `${e.path === '$' ? '(root)' : e.path}: ${e.message}` };
  }
  const v = json.value;
  const fail = (error: string): ParseFrameResult => ({ ok: false, error });
  if (!isObject(v)) return fail('(root): expected an object');
  if (v.jsonrpc !== '2.0') return fail('jsonrpc: expected "2.0"');
  if (typeof v.id !== 'string' && typeof v.id !== 'number') {
    return fail('id: expected a string or a number');
  }
  const hasResult = 'result' in v;
  const hasError = 'error' in v;
  if (hasResult && hasError)
    return fail('(root): expected exactly one of result and error, got both');
  if (!hasResult && !hasError) {
    return fail('(root): expected exactly one of result and error, got neither');
  }
  for (const k of Object.keys(v)) {
    if (!TOP_LEVEL.has(k)) return fail(`${k}: unexpected member`);
  }
  const problem = hasResult ? resultProblem(v.result) : errorProblem(v.error);
  return problem === null ? { ok: true, frame: v as unknown as Frame } : fail(problem);
}
