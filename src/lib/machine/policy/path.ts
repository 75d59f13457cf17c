/**
 * Paths into a JSON document, JSONPath style: `$` is the document, `.name` a member whose name is
 * an identifier, `["release-notes"]` any other member name (JSON-quoted), `[0]` an array index:
 * `$.servers["release-notes"].budget.amount`. Every error the policy, scenario and trace parsers
 * report names its place this way.
 */
import { EXCERPT_CHARS, escapeText } from '../excerpt';

export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * `['servers', 'release-notes', 'budget']` → `$.servers["release-notes"].budget`, as an error
 * shows it: a member name is escaped (no invisible character reaches a terminal) and cut after
 * {@link EXCERPT_CHARS} characters with "…", so a 50 MB name makes a short path.
 */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENTIFIER.test(s) && s.length <= EXCERPT_CHARS) out += `.${s}`;
    else if (s.length <= EXCERPT_CHARS) out += `["${escapeText(s)}"]`;
    else out += `["${escapeText(s.slice(0, EXCERPT_CHARS))}…"]`;
  }
  return out;
}

/**
 * The exact path, for looking places up (two long names that share their first characters are
 * two paths here, one in {@link formatPath}).
 */
export function pathKey(segments: readonly PathSegment[]): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}
