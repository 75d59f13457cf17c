/**
 * How every refusal shows a piece of its input: quoted, escaped, short. An input nobody here wrote
 * may hold a 50 MB member name, a byte order mark, NUL bytes, a right-to-left override or a lone
 * surrogate; echoed verbatim, a one-line error becomes 100 MB on a terminal, or text that looks
 * like something else, or an alert a page cannot lay out. `quote` is used by the CLI and the page
 * alike, so a value reads the same in both.
 */

/** What a refusal quotes of a value at most, in UTF-16 units, before "…". */
export const EXCERPT_CHARS = 40;

/**
 * Characters shown as `\uXXXX` escapes: controls (C0, DEL, C1), format characters (the BOM,
 * zero-width and bidi marks, soft hyphen, …), line and paragraph separators, every space but the
 * plain one, private-use, unassigned code points, noncharacters (U+FFFE, U+FFFF, …) and lone
 * surrogates. Everything else is shown as itself: a reader sees exactly which characters there
 * are.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]|(?! )\p{Zs}/u;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'gu');

function hex4(n: number): string {
  return '\\u' + n.toString(16).toUpperCase().padStart(4, '0');
}

function escapeChar(c: string): string {
  switch (c) {
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
  }
  // A code point past U+FFFF (an unassigned or private-use one) is two units: escape each.
  let out = '';
  for (let i = 0; i < c.length; i++) out += hex4(c.charCodeAt(i));
  return out;
}

/** The text with `"`, `\` and every invisible character escaped (as in JSON, and more). */
export function escapeText(s: string): string {
  return s.replace(/["\\]/g, (c) => '\\' + c).replace(INVISIBLE_ALL, escapeChar);
}

/** Cut at `max` UTF-16 units, never between the two halves of a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const end = isHighSurrogate(s.charCodeAt(max - 1)) ? max - 1 : max;
  return s.slice(0, end);
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/**
 * A value as a refusal shows it: `"release-notes"`; `"\uFEFF{"`; `"aaaaaaaa…" (50,000,000
 * characters)`. At most `max` characters of it (before escaping), then "…" and its length, so a
 * reader knows it was cut and how long the real one is.
 */
export function quote(s: string, max = EXCERPT_CHARS): string {
  if (s.length <= max) return `"${escapeText(s)}"`;
  return `"${escapeText(cut(s, max))}…" (${s.length.toLocaleString('en-US')} characters)`;
}

/** Whether a text holds a character `quote` would escape as invisible. */
export function hasInvisible(s: string): boolean {
  return INVISIBLE.test(s);
}

/**
 * One character as a message names it: `'x'`, or `U+FEFF (a byte order mark)` for those a reader
 * could not see.
 */
export function describeChar(c: string): string {
  const cp = c.codePointAt(0)!;
  const name = NAMED[cp];
  if (name) return `${escapeChar(c)} (${name})`;
  return INVISIBLE.test(c) ? `'${escapeChar(c)}'` : `'${c}'`;
}

const NAMED: Record<number, string> = {
  0x00: 'a NUL character',
  0xfeff: 'a byte order mark',
  0xfffd: 'a replacement character: the text was not valid UTF-8 somewhere',
  0x200b: 'a zero-width space',
  0xa0: 'a no-break space'
};
