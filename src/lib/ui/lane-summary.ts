/**
 * A lane's header in words from its live configuration (issue #24): what differs from the
 * defaults, so the header says what the lane runs now, not what the scenario called it when it
 * was loaded. The store is left out here: the header says it from the engine's own view (it may
 * have fallen back to memory).
 */
import {
  DEFAULT_CLIENT_CONFIG,
  resolveClientConfig,
  type ClientConfigInput
} from '$lib/machine/config';
import { DEFAULT_REASONS, REASONS, type Ttl } from '$lib/machine/reasons';

function ttlWords(t: Ttl): string {
  switch (t.kind) {
    case 'ms':
      return `${t.ms / 1000} s`;
    case 'none':
      return 'not stored';
    default:
      return t.kind;
  }
}

const sameTtl = (a: Ttl, b: Ttl) =>
  a.kind === b.kind && (a.kind !== 'ms' || (b.kind === 'ms' && a.ms === b.ms));

/** The settings of `client` that differ from the defaults, each in a few words. */
export function configWords(client: ClientConfigInput): string[] {
  const c = resolveClientConfig(client);
  const d = DEFAULT_CLIENT_CONFIG;
  const out: string[] = [];
  for (const code of REASONS) {
    const r = c.reasons[code];
    const def = DEFAULT_REASONS[code];
    const short = code.slice(code.indexOf('.') + 1);
    if (r.retryable !== def.retryable)
      out.push(`${short} ${r.retryable ? 'retryable' : 'permanent'}`);
    if (!sameTtl(r.ttl, def.ttl)) out.push(`${short} TTL ${ttlWords(r.ttl)}`);
  }
  if (c.silence !== d.silence) out.push(c.silence ? 'silence on denial' : 'denial frames');
  if (c.canonicalize !== d.canonicalize)
    out.push(c.canonicalize ? 'canonicalised' : 'hashes the bytes as received');
  if (c.annotateTrim !== d.annotateTrim)
    out.push(c.annotateTrim ? 'annotates trims' : 'trims silently');
  if (c.identityFields.join() !== d.identityFields.join())
    out.push(`identity: ${c.identityFields.join(', ')}`);
  if (c.storeAllowed !== d.storeAllowed)
    out.push(c.storeAllowed ? 'stores approvals' : 'approvals not stored');
  if (!sameTtl(c.allowedTtl, d.allowedTtl)) out.push(`approval TTL ${ttlWords(c.allowedTtl)}`);
  if (c.consentTimeoutMs !== d.consentTimeoutMs)
    out.push(`consent timeout ${c.consentTimeoutMs / 1000} s`);
  if (c.deadlineMs !== d.deadlineMs) out.push(`deadline ${c.deadlineMs / 1000} s`);
  if (c.alert.threshold !== d.alert.threshold || c.alert.windowMs !== d.alert.windowMs)
    out.push(`alert at ${c.alert.threshold} in ${c.alert.windowMs / 60_000} min`);
  if (c.refusalAs !== d.refusalAs) out.push(`cost refusal as ${c.refusalAs}`);
  if (c.capScope !== d.capScope) out.push(`cap ${c.capScope}`);
  if (
    c.sessionPool.amount !== d.sessionPool.amount ||
    c.sessionPool.currency !== d.sessionPool.currency
  )
    out.push(`session pool ${c.sessionPool.amount} ${c.sessionPool.currency}`);
  if (c.advertiseCeiling !== d.advertiseCeiling)
    out.push(c.advertiseCeiling ? 'advertises its ceiling' : 'ceiling not advertised');
  if (c.preflightDefault !== d.preflightDefault) out.push(`over cap: ${c.preflightDefault}`);
  return out;
}

/** The store as the header says it, from the engine's view: "Connection-scoped store". */
export function storeWords(scope: string): string {
  const s = scope === 'connection-scoped' ? 'connection-scoped store' : scope;
  return s ? s[0]!.toUpperCase() + s.slice(1) : '';
}

/** What a lane's header says: `main`, and the scenario's own name for it under, if not said. */
export interface LaneHeading {
  main: string;
  note: string;
}

/**
 * `label`: the scenario's name for the lane; `live`: the words of its live configuration;
 * `edited`: the configuration changed since the load, so the scenario's name is what the lane
 * was. The name stands in for the live words when it says them and more ("Durable store (was
 * connection-scoped)"), is left out when it only repeats them, and is otherwise shown under.
 */
export function laneHeading(label: string, live: string, edited: boolean): LaneHeading {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .trim();
  const l = norm(label);
  const w = norm(live);
  if (!l || l === w) return { main: live, note: '' };
  if (!edited && l.startsWith(w)) return { main: label, note: '' };
  return { main: live, note: edited ? `as loaded: ${label}` : label };
}
