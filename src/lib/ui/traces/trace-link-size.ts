/**
 * Whether a dropped client log fits in the page's link (trace-link.ts): measured by compressing
 * it, so in a module of its own — lz-string loads with the first log imported, not on the page's
 * first load.
 */
import lzString from 'lz-string';
import type { TraceRef } from './trace-link';

const { compressToEncodedURIComponent } = lzString;

/**
 * The most characters of compressed log a link carries. Browsers take far longer addresses, but
 * chat and mail clients cut long links (the share bar warns past 8,000): past this, sending the
 * file is the better way. The ready-made logs are 2–6 KB, 2,000–5,500 characters compressed.
 */
export const MAX_TRACE_LINK_CHARS = 32_000;
/** Text larger than this is not even compressed to find out: it cannot fit. */
const MAX_TRACE_LINK_TEXT = 1_000_000;

/** How a link carries `ref`: the `&t=` value, or null and why not (in the page's words). */
export function traceLinkOf(ref: TraceRef): { value: TraceRef | null; words: string } {
  if ('ready' in ref) return { value: ref, words: '' };
  const text = ref.files.reduce((n, f) => n + f.text.length, 0);
  const bytes = ref.files.reduce((n, f) => n + new TextEncoder().encode(f.text).length, 0);
  const fits =
    text <= MAX_TRACE_LINK_TEXT &&
    compressToEncodedURIComponent(JSON.stringify(ref)).length <= MAX_TRACE_LINK_CHARS;
  if (fits) return { value: ref, words: '' };
  const what = ref.files.length === 1 ? 'your log' : `your ${ref.files.length} log files`;
  const kb = Math.ceil(bytes / 1024).toLocaleString('en-US');
  return {
    value: null,
    words: `This page’s link cannot carry ${what} (${kb} KB): share the ${ref.files.length === 1 ? 'file' : 'files'} with the link.`
  };
}
