/**
 * Test support for the worker session's replies (session.ts): the replies of one type, the last
 * snapshot, a ready-made scenario's data. Imported by tests only.
 */
import { readFileSync } from 'node:fs';
import type { Reply, Snapshot } from './protocol';

/** The ready-made scenario `name` (static/scenarios/NAME.json) as JSON data. */
export const readScenario = (name: string) =>
  JSON.parse(readFileSync(`static/scenarios/${name}.json`, 'utf8')) as Record<string, unknown>;

/** The replies of one type, typed. */
export const only = <T extends Reply['type']>(rs: Reply[], type: T) =>
  rs.filter((r): r is Extract<Reply, { type: T }> => r.type === type);

/** The last snapshot among `rs`; throws naming what came instead when there is none. */
export function snap(rs: Reply[]): Snapshot {
  const s = only(rs, 'snapshot').at(-1);
  if (!s) throw new Error(`no snapshot among ${rs.map((r) => r.type).join(', ')}`);
  return s;
}
