/**
 * The parts of a scenario link (share.ts), by their prefixes: in a module of their own so that the
 * page can tell what an address carries without loading the codec (lz-string and the JSON reader
 * come with share.ts, when a link is opened or made).
 */

/** What every scenario hash starts with. */
export const HASH_PREFIX = '#s=';

/** What follows the scenario when the link carries a fork (issue #10): `#s=…&f=…`. */
export const FORK_PREFIX = '&f=';

/**
 * What follows when the link carries the run's timeline (issue #18, sim/timeline/link-timeline.ts): every
 * edit, restart and answer with its time, so the recipient's run is the sender's — `#s=…&e=…`.
 */
export const TIMELINE_PREFIX = '&e=';

/**
 * What follows when the run replays an MCP client's log (issue #22, trace mode): `#s=…&t=…`, the
 * log by its ready-made name (`{"ready":"claude-weather"}`) or its files themselves
 * (`{"files":[{"name":…,"text":…}]}`, when they are small enough: traces/trace-link.ts).
 */
export const TRACE_PREFIX = '&t=';
