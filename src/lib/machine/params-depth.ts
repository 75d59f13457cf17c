/**
 * The deepest nesting a request's params may have: the params object is level 1, each object or
 * array inside one more. MCP params are a handful of levels deep (params → messages → a message →
 * its content → a block); 64 leaves room for any honest `metadata` while keeping the recursive
 * canonicaliser (and `JSON.stringify`) far from the engine's stack limit (~2,000 levels killed it).
 * The same limit is applied everywhere a request comes in: a trace, a scenario, `lab identity`.
 *
 * Its own module so that what only needs the number (sim/input/limits.ts, read by the page) does not
 * bring the identity code and its hashing.
 */
export const MAX_PARAMS_DEPTH = 64;
