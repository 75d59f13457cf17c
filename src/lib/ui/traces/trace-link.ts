/**
 * A client log in the page's link (issue #22): trace mode survives a reload and a shared link.
 * A ready-made log (static/traces/logs/) goes by its name — `?trace=claude-weather` in the
 * address, `{"ready":"claude-weather"}` in a share link's `&t=` — and a dropped one by its files,
 * compressed into the link, when they are small enough for a link to carry. A larger one is not
 * put in the link; the page says so, with the size, so the user sends the file along (the size
 * check: trace-link-size.ts).
 */
import { quote } from '$lib/machine/excerpt';

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

/** A file's name as the page shows it: plain names as they are, anything else escaped and short. */
export function shownName(name: string): string {
  return /^[\w .@+,=~()-]{1,200}$/.test(name) ? name : quote(name, 80);
}

/** Where trace mode's log came from: what a link needs to open it again. */
export type TraceRef = { ready: ReadyLogName } | { files: LogFile[]; folder?: string };

/** A decoded `&t=` value checked: a ready-made name the page knows, or files with text. */
export function parseTraceRef(
  v: unknown
): { ok: true; ref: TraceRef } | { ok: false; error: string } {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return { ok: false, error: 'the client log in the link is not an object' };
  const o = v as Record<string, unknown>;
  if ('ready' in o) {
    const l = typeof o.ready === 'string' ? readyLog(o.ready) : undefined;
    return l
      ? { ok: true, ref: { ready: l.name } }
      : { ok: false, error: `the link names a ready-made log this page does not have` };
  }
  if (!Array.isArray(o.files) || o.files.length === 0)
    return { ok: false, error: 'the client log in the link has no files' };
  const files: LogFile[] = [];
  for (const [i, f] of o.files.entries()) {
    const x = f as Record<string, unknown> | null;
    if (!x || typeof x.name !== 'string' || typeof x.text !== 'string' || x.name.length > 200)
      return { ok: false, error: `the client log in the link: files[${i}] is not a named text` };
    files.push({ name: x.name, text: x.text });
  }
  if (o.folder !== undefined && (typeof o.folder !== 'string' || o.folder.length > 200))
    return { ok: false, error: 'the client log in the link: its folder is not a name' };
  return {
    ok: true,
    ref: { files, ...(typeof o.folder === 'string' ? { folder: o.folder } : {}) }
  };
}
