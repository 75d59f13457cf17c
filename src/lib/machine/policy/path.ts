/**
 * Paths into a JSON document, JSONPath style: `$` is the document, `.name` a member whose name is
 * an identifier, `["release-notes"]` any other member name (JSON-quoted), `[0]` an array index:
 * `$.servers["release-notes"].budget.amount`. Every error the policy, scenario and trace parsers
 * report names its place this way.
 */
export type PathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `['servers', 'release-notes', 'budget']` → `$.servers["release-notes"].budget`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}
