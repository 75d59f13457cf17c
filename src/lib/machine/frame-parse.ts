/**
 * A validating parser for JSON-RPC response frames read from files (e.g. a line of a recorded
 * trace). Kept apart from frames.ts, which the sim worker loads first: its strict JSON reader
 * (policy/json-strict.ts, ~2 KB gzipped) then comes only with the parsers that use it.
 */
import { isObject } from './frames';
import { parseJsonText } from './policy/json-strict';
import type { Frame } from './types';

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
