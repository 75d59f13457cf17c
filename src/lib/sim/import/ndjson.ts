/**
 * Raw stdio captures: newline-delimited JSON-RPC, one message a line (the MCP stdio transport),
 * both directions, optionally with a prefix before the JSON:
 *
 *   [TIME] [SERVER] [DIRECTION] {json}
 *
 * - TIME: an ISO 8601 instant (`2025-07-20T13:44:16.395Z`); a line without one happens at the
 *   time of the last line that had one (or at 0: a capture without times replays at one instant).
 * - SERVER: `[name]` or `name:` (several servers interleaved in one file); without it, the server
 *   is `--server`, or the file's name without its extension.
 * - DIRECTION: `>` or `->` client to server, `<` or `<-` server to client; without it, inferred
 *   (a `sampling/`, `elicitation/` or `roots/list` request comes from the server, any other request
 *   from the client, and a response from the side whose peer has a request of that id waiting).
 *
 * Anything else on a line (a server's stderr, a banner) is skipped with its line number.
 */
import { quote } from '../../machine/excerpt';
import type { Assembler, Where } from './assemble';
import { parseTime } from './claude';

const LINE = new RegExp(
  String.raw`^(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d))\s+)?` +
    String.raw`(?:\[([^\]\s]{1,200})\]\s*|([^\s{}\[\]<>:]{1,200}):\s*)?` +
    String.raw`(->|<-|>|<)?\s*(\{.*)$`
);

/** The parts of a capture line, or null when it has no JSON object. */
export function ndjsonParts(
  line: string
): { time?: string; server?: string; dir?: string; json: string } | null {
  const m = LINE.exec(line);
  if (!m) return null;
  return {
    ...(m[1] ? { time: m[1] } : {}),
    ...(m[2] || m[3] ? { server: (m[2] ?? m[3])! } : {}),
    ...(m[4] ? { dir: m[4] } : {}),
    json: m[5]!
  };
}

export function ndjsonLine(a: Assembler, text: string, where: Where, server: string): void {
  const p = ndjsonParts(text);
  if (!p) return a.skip(where, `not a JSON-RPC message: ${quote(text)}`);
  let message: unknown;
  try {
    message = JSON.parse(p.json);
  } catch (e) {
    return a.skip(where, `not valid JSON (${(e as Error).message}): cut off, or not a message`);
  }
  let t: number | null = null;
  if (p.time !== undefined) {
    t = parseTime(p.time);
    if (t === null) return a.skip(where, `not a real time: ${quote(p.time)}`);
  }
  const from = p.dir === undefined ? null : p.dir.includes('>') ? 'client' : 'server';
  a.message({ t, server: p.server ?? server, from, message, where });
}
