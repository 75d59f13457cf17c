/**
 * A client log in the page's link (issue #22): trace mode survives a reload and a shared link.
 * A ready-made log (static/traces/logs/) goes by its name — `?trace=claude-weather` in the
 * address, `{"ready":"claude-weather"}` in a share link's `&t=` — and a dropped one by its files,
 * compressed into the link, when they are small enough for a link to carry. A larger one is not
 * put in the link; the page says so, with the size, so the user sends the file along (the size
 * check: trace-link-size.ts; a link's reference checked, and names as shown: trace-ref.ts).
 */

/** The ready-made logs the page offers (static/traces/logs/; a unit test keeps them in step). */
export const READY_LOGS = [
  {
    name: 'claude-weather',
    title: 'Claude Desktop: a server’s log (weather)',
    files: ['mcp-server-weather.log']
  },
  {
    name: 'claude-desktop',
    title: 'Claude Desktop: mcp.log and a server’s log',
    files: ['mcp-server-weather.log', 'mcp.log']
  },
  {
    name: 'inspector',
    title: 'MCP Inspector: a history export',
    files: ['inspector-history.json']
  },
  { name: 'stdio-capture', title: 'A raw stdio capture', files: ['stdio-capture.ndjson'] },
  {
    name: 'handler-audit',
    title: 'The lab’s handler: its audit log',
    files: ['handler-audit.jsonl']
  }
] as const;

export type ReadyLogName = (typeof READY_LOGS)[number]['name'];

export function readyLog(name: string): (typeof READY_LOGS)[number] | undefined {
  return READY_LOGS.find((l) => l.name === name);
}

export interface LogFile {
  name: string;
  text: string;
}

/** Where trace mode's log came from: what a link needs to open it again. */
export type TraceRef = { ready: ReadyLogName } | { files: LogFile[]; folder?: string };
