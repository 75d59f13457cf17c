/**
 * The what-if table's links into the audit log (issue #22): the rows behind one measure, or
 * behind every changed request, as the audit table's focus. Loaded with the replay's panel
 * (TraceReplay.svelte), not with the page (issue #24, first load).
 */
import type { AuditFocus } from '../guarantees';
import type { TraceImport } from '../trace-import.svelte';

/**
 * The audit log filtered to the rows behind one what-if measure of `group` (a server, or ''
 * for all), or behind every changed request (`measure` null); again to show every row. They
 * are the replay's rows as it ran from the start with the lanes it was loaded with (the
 * engine is deterministic): the playground's own run, once it has run that far.
 */
export function showInAudit(
  logs: TraceImport,
  group: string,
  measure: string | null,
  label: string
): void {
  const i = logs.imported;
  if (!i?.auditRows) return;
  const id = `whatif:${group}:${measure ?? 'changed'}`;
  if (logs.pg.auditFocus?.id === id) {
    logs.pg.auditFocus = null;
    return;
  }
  const keys =
    measure === null ? i.auditRows.changed : (i.auditRows.measures.get(group)?.get(measure) ?? []);
  // Built once and only read: nothing reacts to it.
  const rows = new Set(keys);
  const focus: AuditFocus = {
    id,
    label: `${label}: ${keys.length.toLocaleString('en-US')} audit ${keys.length === 1 ? 'row' : 'rows'} once the replay has run to its end`,
    match: (r) => rows.has(`${r.lane ?? ''}\u0000${r.seq}`),
    spec: { id, kind: 'rows', rows: keys }
  };
  logs.pg.auditFocus = focus;
}

/** Which what-if filter the audit log shows (its id), if any. */
export function shownIn(logs: TraceImport): string | null {
  const id = logs.pg.auditFocus?.id;
  return id?.startsWith('whatif:') ? id : null;
}
