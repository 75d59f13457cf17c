/**
 * Save text as a file from the page: a Blob, an object URL and a temporary `<a download>`. No
 * server round trip, so it works on any static host.
 */

/**
 * How long the object URL stays valid after the click. Chromium starts the download
 * synchronously, but Firefox and Safari read the URL a little later; FileSaver.js waits 40 s.
 */
const REVOKE_AFTER_MS = 10_000;

/**
 * Download `content` as `filename`. `content` may be one string or many parts (a large export
 * built in chunks goes straight into the Blob without being joined into one giant string first).
 */
export function downloadText(
  filename: string,
  content: string | readonly string[],
  type = 'text/plain;charset=utf-8'
): void {
  const parts = typeof content === 'string' ? [content] : [...content];
  downloadBlob(filename, new Blob(parts, { type }));
}

/** Download a Blob (the worker's audit export) as `filename`. */
export function downloadBlob(filename: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.append(a);
  try {
    a.click();
  } finally {
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), REVOKE_AFTER_MS);
  }
}
