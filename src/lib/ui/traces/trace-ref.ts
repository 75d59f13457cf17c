/**
 * A client log's files as the page names them, and one named in a shared link's `&t=` checked
 * (issue #22): a ready-made name the page knows, or files with text. Loaded with the first log
 * read or a link that carries one, not with the page (issue #24, first load).
 */
import { quote } from '$lib/machine/excerpt';
import { readyLog, type LogFile, type TraceRef } from './trace-link';

/** A file's name as the page shows it: plain names as they are, anything else escaped and short. */
export function shownName(name: string): string {
  return /^[\w .@+,=~()-]{1,200}$/.test(name) ? name : quote(name, 80);
}

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
