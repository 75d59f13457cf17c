/**
 * The Guarantees panel's words, and the shape of what each guarantee's link shows in the audit
 * table (guarantee-focus.ts works it out, loaded with the first link followed). Plain functions,
 * tested without a page.
 */
import type { AuditRecord } from '$lib/machine/types';
import type { InvariantResult } from '$lib/sim/checks/invariants/catalogue';
import type { AuditFocusSpec } from '$lib/sim/session/protocol';

/** A filter the audit table applies on top of its own: "the rows behind" a guarantee. */
export interface AuditFocus {
  /** Which guarantee, for the table's "showing the rows behind …" line. */
  id: string;
  label: string;
  match: (r: AuditRecord) => boolean;
  /** The same filter as data, for the worker, which holds the audit log (ui/audit-service.ts). */
  spec: AuditFocusSpec;
}

const MARK = { held: '✓', broken: '✗', waived: '✗' } as const;

/** The line the panel shows: "✓ 664 of 664 requests answered". */
export function guaranteeLine(g: InvariantResult): string {
  return `${MARK[g.status]} ${g.summary}`;
}

/** Why a guarantee was given up on purpose, in the panel's words (only a waived one has a why). */
export function waivedWhy(g: InvariantResult): string {
  return g.id === 'refusals-typed'
    ? "A real client's refusal carries no reason and no retryable flag: its servers cannot tell it from a failure, so they cannot degrade deliberately."
    : 'Silence gives up one frame per request: those servers learn nothing, so they wait out their timeouts and ask again.';
}
