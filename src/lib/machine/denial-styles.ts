/**
 * The names of the refusal styles a lane can pick (issue #25), on their own: the config schema
 * (vocabulary.ts, zod) and the frames (refusal-styles.ts, no zod — the page's lane form imports
 * it, and the first load must not carry zod) both take the list from here, so neither imports
 * the other.
 */
export const DENIAL_STYLES = [
  'lab',
  'spec',
  'vscode',
  'inspector',
  'python-default',
  'cursor'
] as const;
export type DenialStyle = (typeof DENIAL_STYLES)[number];
