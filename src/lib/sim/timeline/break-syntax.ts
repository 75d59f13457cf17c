/**
 * The breakpoint conditions' syntax, in one line (breakpoints.ts has the grammar). A module of its
 * own so the page can show it as a hint without loading the parser and the vocabularies it reads.
 */
export const BREAK_SYNTAX =
  'alert | reason:CODE | outcome:OUTCOME | denial[:SERVER] | spend>AMOUNT | consent | invariant[:ID], each optionally @A or @B';
