/**
 * What a downloaded audit log is called (issue #24): the scenario and the filters it holds, so
 * two downloads of two questions do not both land as `audit-log.csv`
 * (`reconnect-bypass-audit-laneB-user.denied.csv`). Every part is cut to letters, digits, dots,
 * dashes and underscores: a scenario's or a server's name is anyone's text.
 */
import type { AuditViewQuery } from '$lib/sim/session/protocol';

/** A part of a file name: what is not [A-Za-z0-9._-] becomes a dash; at most 40 characters. */
export function safePart(s: string): string {
  return s
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 40)
    .replace(/[-.]+$/, '');
}

export function auditFileName(scenario: string, q: AuditViewQuery, kind: 'jsonl' | 'csv'): string {
  const parts = [safePart(scenario) || 'scenario', 'audit'];
  if (q.lane) parts.push(`lane${safePart(q.lane)}`);
  for (const v of [q.server, q.reason, q.model, q.outcome]) if (v) parts.push(safePart(v));
  if (q.fromMin !== undefined || q.toMin !== undefined)
    parts.push(`min${q.fromMin ?? 0}-${q.toMin ?? 'end'}`);
  if (q.focus) parts.push(safePart(q.focus.id));
  return `${parts.filter(Boolean).join('-')}.${kind}`;
}
