/**
 * A folder of Claude Desktop logs, dropped or picked (issue #22): its MCP logs — `mcp.log` and
 * `mcp-server-<name>.log` — are imported together as one trace; everything else in it (Claude's
 * `main.log` and `window.log`, notes, a `.DS_Store`) is skipped, and the page says which.
 */

/** Claude Desktop's MCP logs by their names: `mcp.log`, `mcp-server-<name>.log`. */
const MCP_LOG = /^mcp(-server-.+)?\.log$/i;

/** The most files a folder is read for: a logs folder holds tens; a home folder is a mistake. */
export const MAX_FOLDER_FILES = 5_000;

export interface FolderPick<T> {
  /** The MCP logs, by their path inside the folder. */
  logs: { path: string; item: T }[];
  /** The other files' paths inside the folder. */
  skipped: string[];
}

/**
 * Which of a folder's files to import. `path` is each file's path from the folder picked
 * (`webkitRelativePath`, or the dropped folder's entries), with the folder's own name first.
 */
export function pickFolderLogs<T>(files: { path: string; item: T }[]): FolderPick<T> {
  const logs: { path: string; item: T }[] = [];
  const skipped: string[] = [];
  for (const f of files) {
    const inside = f.path.split('/').slice(1).join('/') || f.path;
    const base = inside.split('/').pop()!;
    if (MCP_LOG.test(base)) logs.push({ path: inside, item: f.item });
    else skipped.push(inside);
  }
  // The order a browser lists a folder in is its own: sorted, the import and the line are the same.
  const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  logs.sort((a, b) => byPath(a.path, b.path));
  skipped.sort(byPath);
  return { logs, skipped };
}

/** The line the page says about a folder's skipped files ('' when none were). */
export function skippedLine(skipped: readonly string[], max = 8): string {
  if (!skipped.length) return '';
  const shown = skipped.slice(0, max).join(', ');
  const more = skipped.length > max ? ` and ${skipped.length - max} more` : '';
  const n = skipped.length === 1 ? '1 file' : `${skipped.length.toLocaleString('en-US')} files`;
  const what = skipped.length === 1 ? 'is not an MCP log' : 'are not MCP logs';
  return `Skipped ${n} in the folder that ${what} (mcp.log, mcp-server-<name>.log): ${shown}${more}.`;
}

/** The folder's own name, from a path inside it. */
export function folderOf(path: string): string {
  return path.split('/')[0] ?? path;
}

/**
 * Every file under a dropped folder (DataTransferItem.webkitGetAsEntry), with its path from the
 * folder (its own name first); at most `max` (more is refused by the caller, not read).
 */
export async function filesOfEntry(
  root: FileSystemDirectoryEntry,
  max = MAX_FOLDER_FILES + 1
): Promise<{ path: string; item: File }[]> {
  const out: { path: string; item: File }[] = [];
  const walk = async (dir: FileSystemDirectoryEntry, prefix: string): Promise<void> => {
    const reader = dir.createReader();
    // readEntries hands back a batch at a time (100 in Chromium) until an empty one.
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((ok, fail) =>
        reader.readEntries(ok, fail)
      );
      if (!batch.length) return;
      for (const e of batch) {
        if (out.length >= max) return;
        const path = `${prefix}/${e.name}`;
        if (e.isDirectory) await walk(e as FileSystemDirectoryEntry, path);
        else {
          const file = await new Promise<File>((ok, fail) =>
            (e as FileSystemFileEntry).file(ok, fail)
          );
          out.push({ path, item: file });
        }
      }
    }
  };
  await walk(root, root.name);
  return out;
}
