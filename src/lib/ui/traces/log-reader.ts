/**
 * Reading the client logs a learner picks or drops (TraceMode.svelte): their sizes checked, their
 * bytes decoded by the lab's one rule (text-input.ts), a folder's MCP logs picked from the rest
 * (folder.ts), then imported as one trace. Loaded with the first log picked or dropped, not with
 * the page (issue #24). Each answers an error message, or '' when the log was imported.
 */
import { decodeText, sizeRefusal } from '$lib/sim/input/text-input';
import type { TraceImport } from '../trace-import.svelte';
import { filesOfEntry, folderOf, MAX_FOLDER_FILES, pickFolderLogs, skippedLine } from './folder';
import { shownName } from './trace-ref';

/** The largest log the page reads: a browser holds it whole (lab import streams any size). */
const MAX_LOG_BYTES = 64 * 1024 * 1024;

/**
 * Read the files (a folder's logs by their path inside it) and import them as one trace. The
 * bound is on all of them together: the page holds them whole at once.
 */
export async function readLogs(
  logs: TraceImport,
  files: { name: string; file: File }[],
  folder?: { name: string; skipped: string[] }
): Promise<string> {
  const total = files.reduce((n, f) => n + f.file.size, 0);
  const big = sizeRefusal(files.length === 1 ? 'log' : 'set of logs', total, MAX_LOG_BYTES);
  if (big) return `${shownName(folder?.name ?? files[0]!.name)}: ${big}.`;
  const texts: { name: string; text: string }[] = [];
  for (const f of files) {
    const d = decodeText(new Uint8Array(await f.file.arrayBuffer()));
    if (!d.ok) return `${shownName(f.name)}: the log cannot be read: ${d.error}.`;
    texts.push({ name: f.name, text: d.text });
  }
  return (
    (await logs.importFiles(
      texts,
      folder ? { folder: folder.name, skipped: skippedLine(folder.skipped) } : {}
    )) ?? ''
  );
}

/** A folder's files (its own name first in each path): its MCP logs, the rest skipped. */
export async function readFolder(
  logs: TraceImport,
  files: { path: string; item: File }[]
): Promise<string> {
  if (!files.length) return '';
  const name = folderOf(files[0]!.path);
  if (files.length > MAX_FOLDER_FILES)
    return `${shownName(name)}: the folder holds more than ${MAX_FOLDER_FILES.toLocaleString('en-US')} files; pick the folder with the logs (Claude Desktop's logs folder).`;
  const { logs: found, skipped } = pickFolderLogs(files);
  if (!found.length)
    return `${shownName(name)}: no MCP logs in this folder (Claude Desktop writes mcp.log and mcp-server-<name>.log)${skipped.length ? `; its ${skipped.length === 1 ? 'one file is' : `${skipped.length} files are`} something else` : ''}.`;
  return readLogs(
    logs,
    found.map((f) => ({ name: f.path, file: f.item })),
    { name, skipped }
  );
}

/** A dropped folder (its entry, taken while the drop event lasted), read as `readFolder`. */
export async function readDroppedFolder(
  logs: TraceImport,
  dir: FileSystemDirectoryEntry
): Promise<string> {
  let files: { path: string; item: File }[];
  try {
    files = await filesOfEntry(dir);
  } catch (err) {
    return `${shownName(dir.name)}: the folder cannot be read: ${err instanceof Error ? err.message : String(err)}.`;
  }
  return readFolder(logs, files);
}
