/**
 * MCP Inspector (v2) history exports: one JSON array of entries
 *
 *   {id, timestamp, direction: "request" | "response" | "notification", origin: "client" | "server",
 *    message, response?, duration?, clientError?}
 *
 * `message` is the JSON-RPC message `origin` sent. A request's `response` is the other side's
 * answer (a whole JSON-RPC response, or just its result), logged `duration` ms later;
 * `clientError` says the client failed to answer a server's request (an error with its code when
 * it has one, else -32603). `timestamp` is an ISO 8601 instant or epoch milliseconds. The export
 * names no server: it is `--server`, or the file's name without its extension. A bad entry is
 * skipped with its index.
 */
import { quote } from '../../machine/excerpt';
import type { Assembler, Where } from './assemble';
import { parseTime } from './claude';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function entryTime(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string') return parseTime(v);
  return null;
}

/** A whole export's text (already bounded by the caller); its entries given to `a`. */
export function inspectorText(
  a: Assembler,
  text: string,
  file: string,
  server: string
): string | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return `${file}: an Inspector export must be one JSON array: ${(e as Error).message}`;
  }
  if (!Array.isArray(raw)) return `${file}: an Inspector export must be a JSON array of entries`;
  raw.forEach((entry: unknown, i) => inspectorEntry(a, entry, { file, line: 0, entry: i }, server));
  return null;
}

function inspectorEntry(a: Assembler, e: unknown, where: Where, server: string): void {
  if (!isObject(e)) return a.skip(where, 'an entry that is not an object');
  const origin = e.origin;
  if (origin !== 'client' && origin !== 'server')
    return a.skip(where, `origin must be "client" or "server" (got ${quote(String(origin))})`);
  const direction = e.direction;
  if (direction !== 'request' && direction !== 'response' && direction !== 'notification')
    return a.skip(
      where,
      `direction must be "request", "response" or "notification" (got ${quote(String(direction))})`
    );
  const t = entryTime(e.timestamp);
  if (t === null)
    return a.skip(where, `timestamp is not a time (got ${quote(String(e.timestamp))})`);
  if (!isObject(e.message)) return a.skip(where, 'message must be a JSON-RPC message object');
  a.message({ t, server, from: origin, message: e.message, where });
  if (direction !== 'request') return;
  const answerer = origin === 'client' ? 'server' : 'client';
  const at = typeof e.duration === 'number' && e.duration >= 0 ? t + e.duration : t;
  const id = e.message.id;
  if (e.response !== undefined && e.response !== null) {
    const r = e.response;
    const message =
      isObject(r) && (Object.hasOwn(r, 'result') || Object.hasOwn(r, 'error'))
        ? { jsonrpc: '2.0', id, ...r }
        : { jsonrpc: '2.0', id, result: r };
    a.message({ t: at, server, from: answerer, message, where });
  } else if (e.clientError !== undefined && e.clientError !== null && answerer === 'client') {
    const ce = e.clientError;
    const error =
      isObject(ce) && Number.isInteger(ce.code)
        ? ce
        : { code: -32603, message: typeof ce === 'string' ? ce : JSON.stringify(ce) };
    a.message({ t: at, server, from: 'client', message: { jsonrpc: '2.0', id, error }, where });
  }
}
