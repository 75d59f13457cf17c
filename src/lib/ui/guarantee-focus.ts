/**
 * What a guarantee's link shows in the audit table (the Guarantees panel, guarantees.ts): a
 * guarantee that holds (or was given up on purpose) shows the rows it was checked on; a broken one
 * shows its offenders. Its own module because it reads the invariants' catalogue, which the page
 * loads only when a link is first followed (issue #24, first load).
 */
// The catalogue only: the index brings the checker (and through it the evaluator), which the
// page never runs — the worker does.
import { rowsBehind, type InvariantResult } from '$lib/sim/checks/invariants/catalogue';
import type { AuditFocus } from './guarantees';

/** The audit rows behind `g`: its offenders when broken, else the rows it was checked on. */
export function focusOf(g: InvariantResult): AuditFocus {
  if (g.status === 'broken') {
    const keys = g.offenders.filter((o) => o.seq !== null).map((o) => `${o.lane}\u0000${o.seq}`);
    const rows = new Set(keys);
    return {
      id: g.id,
      label: g.summary,
      match: (r) => rows.has(`${r.lane ?? ''}\u0000${r.seq}`),
      spec: { id: g.id, kind: 'rows', rows: keys }
    };
  }
  return {
    id: g.id,
    label: g.summary,
    match: (r) => rowsBehind(g.id, g.status, r),
    spec: { id: g.id, kind: 'behind', status: g.status }
  };
}
