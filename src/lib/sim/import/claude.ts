/**
 * Claude Desktop's MCP logs, one line at a time:
 *
 *   mcp-server-<name>.log:  2025-07-20T13:44:16.395Z [weather] [info] Message from client: {…} { metadata: undefined }
 *   mcp.log:                2025-07-20T13:44:16.395Z [info] [memory] Message from server: {…} { metadata: undefined }
 *
 * A `Message from client|server:` line carries one JSON-RPC message (the object is cut out of the
 * line by its braces, so whatever follows it is ignored); lifecycle lines open or close the
 * server's connection; anything else (an `[error]` line with a stack, a line naming no server, a
 * message cut off at the end of the file) is skipped with its line number and why.
 */
import { quote } from '../../machine/excerpt';
import type { Assembler, Where } from './assemble';

const TIME = String.raw`(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d))`;
const LEVEL = String.raw`(info|error|warn|warning|debug)`;
/** mcp-server-<name>.log: time, server, level, text. */
const SERVER_FIRST = new RegExp(String.raw`^${TIME} \[([^\]]+)\] \[${LEVEL}\] ?(.*)$`);
/** mcp.log: time, level, server, text. */
const LEVEL_FIRST = new RegExp(String.raw`^${TIME} \[${LEVEL}\] \[([^\]]+)\] ?(.*)$`);
/** mcp.log lines about no server in particular. */
const NO_SERVER = new RegExp(String.raw`^${TIME} \[${LEVEL}\] `);

/** True when a line looks like Claude Desktop's (for format detection). */
export function isClaudeLine(line: string): boolean {
  return SERVER_FIRST.test(line) || LEVEL_FIRST.test(line);
}

const CONNECT = [/^Server started and connected successfully/, /^Connected to MCP server/];
const DISCONNECT = [
  /^Client transport closed/,
  /^Server transport closed/,
  /^Server disconnected/,
  /^Transport closed/
];
const INFO = [/^Initializing server/, /^Launching MCP Server/, /^Shutting down server/];

const MESSAGE = /^Message from (client|server): /;

/**
 * The JSON object that starts at `from`: its text up to the brace that closes it (strings and
 * escapes respected), or null when the line ends first (a message cut off).
 */
export function jsonObjectAt(text: string, from: number): string | null {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) {
      if (--depth === 0) return text.slice(from, i + 1);
    }
  }
  return null;
}

/** The time of a log line in epoch ms, or null when it is not a real instant. */
export function parseTime(text: string): number | null {
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/** One line of a Claude Desktop log, given to `a`. */
export function claudeLine(
  a: Assembler,
  text: string,
  where: Where,
  owned: (server: string) => string | null
): void {
  const m = SERVER_FIRST.exec(text);
  const l = m ? null : LEVEL_FIRST.exec(text);
  if (!m && !l) {
    if (NO_SERVER.test(text)) return a.skip(where, 'a line about no server in particular');
    return a.skip(where, `not a Claude Desktop log line: ${quote(text)}`);
  }
  const [, time, server, level, body] = m ? m : [l![0], l![1], l![3], l![2], l![4]];
  const t = parseTime(time!);
  if (t === null) return a.skip(where, `not a real time: ${quote(time!)}`);
  const other = owned(server!);
  if (other) return a.skip(where, `server ${quote(server!)} was read from ${other} already`);
  const msg = MESSAGE.exec(body!);
  // What Claude's logger appends after the text (`{ metadata: undefined }`) is not the line's.
  const said = body!.replace(/ ?\{ metadata: .*\}$/, '');
  if (msg) {
    const start = body!.indexOf('{', msg[0].length);
    if (start !== msg[0].length)
      return a.skip(where, 'a "Message from" line without a JSON object after it');
    const json = jsonObjectAt(body!, start);
    if (json === null)
      return a.skip(where, 'the message is cut off (its JSON object never closes)');
    let message: unknown;
    try {
      message = JSON.parse(json);
    } catch (e) {
      return a.skip(where, `the message is not valid JSON (${(e as Error).message})`);
    }
    return a.message({ t, server: server!, from: msg[1] as 'client' | 'server', message, where });
  }
  if (CONNECT.some((r) => r.test(said))) return a.lifecycle(server!, t, 'connect', where);
  if (DISCONNECT.some((r) => r.test(said))) return a.lifecycle(server!, t, 'disconnect', where);
  if (INFO.some((r) => r.test(said))) return a.lifecycle(server!, t, 'info', where);
  if (level === 'error') return a.skip(where, `an error line, not a message: ${quote(said)}`);
  if (level === 'warn' || level === 'warning')
    return a.skip(where, `a warning line, not a message: ${quote(said)}`);
  return a.skip(where, `neither a message nor a lifecycle line: ${quote(said)}`);
}
