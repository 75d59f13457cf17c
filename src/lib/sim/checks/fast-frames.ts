/**
 * A fast acceptance for the frames the product emits, ahead of the MCP SDK's zod schemas
 * (conformance.ts). Checking every frame of a live run against zod cost a few microseconds and a
 * dozen allocations a request — a large share of 1000× live play's budget (issue #24).
 *
 * It only ever *accepts*: a frame that is exactly one of the shapes frames.ts and
 * refusal-styles.ts build (a completion, with or without `_meta.context` or `budget`; an error
 * with an integer code, a string message and any `data`), every member's type and range checked
 * as the SDK's schemas check it, is known to conform. Anything else — a member of another type,
 * one too many, a number that is not a safe integer, an object that is not a plain one — is
 * handed to zod, so every rejection and its message still come from the SDK.
 *
 * Hand-written, not generated from the schemas: it is held to them by a differential property
 * test (fast-frames.spec.ts: over generated frames, valid and malformed, and every frame of the
 * seeds' runs, "fast accepts ⇒ the SDK accepts"). A change to the SDK's schemas that this
 * shortcut no longer matches fails that test.
 */

/** A plain object (an object literal or `JSON.parse`'s), as every frame the product builds is. */
function plain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

/** How many enumerable string keys `o` has (own or inherited, as the SDK's strict check sees). */
function keyCount(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}

/** A JSON-RPC id as the SDK's `RequestIdSchema` takes it: a string or a safe integer. */
function requestId(id: unknown): boolean {
  return typeof id === 'string' || Number.isSafeInteger(id);
}

/**
 * `{ jsonrpc: '2.0', id, result: { role, content: { type: 'text', text }, model, ... } }`. The
 * SDK's result is loose: a member it does not read (`budget`) passes whatever it holds, and every
 * member it reads is checked here when present.
 */
function knownResult(f: Record<string, unknown>): boolean {
  if (f.jsonrpc !== '2.0' || !requestId(f.id) || keyCount(f) !== 3) return false;
  const r = f.result;
  if (!plain(r) || r.role !== 'assistant' || typeof r.model !== 'string') return false;
  if (r.stopReason !== undefined && typeof r.stopReason !== 'string') return false;
  const c = r.content;
  // Text content is not strict in the SDK, but its `annotations` and `_meta` are checked: the
  // product's has neither, and nothing else.
  if (!plain(c) || c.type !== 'text' || typeof c.text !== 'string' || keyCount(c) !== 2)
    return false;
  const meta = r._meta;
  // The SDK reads `progressToken` and the related-task key in `_meta`; the product writes
  // `context` alone (which the SDK's loose `_meta` passes whatever it holds).
  return meta === undefined || (plain(meta) && keyCount(meta) === 1 && meta.context !== undefined);
}

/** `{ jsonrpc: '2.0', id, error: { code, message, data? } }`. */
function knownError(f: Record<string, unknown>): boolean {
  if (f.jsonrpc !== '2.0' || !requestId(f.id) || keyCount(f) !== 3) return false;
  const e = f.error;
  // The SDK's error object is not strict, and its `data` is any value.
  return plain(e) && Number.isSafeInteger(e.code) && typeof e.message === 'string';
}

/**
 * True when `frame` is one of the shapes the product emits, with every member as the SDK's
 * schemas require: it conforms. False says nothing: ask the SDK (conformance.ts).
 */
export function knownConformingFrame(frame: unknown): boolean {
  if (!plain(frame)) return false;
  // The same split as conformance.ts: a frame with `result` is judged as a result.
  return 'result' in frame ? knownResult(frame) : knownError(frame);
}
