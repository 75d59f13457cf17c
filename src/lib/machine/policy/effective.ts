/**
 * The block that applies to a server, and the hash stored decisions carry to notice a policy edit.
 */
import canonicalize from 'canonicalize';
import { ownValue } from '../own';
import { sha256Hex } from '../sha256';
import type { Policy, PolicyBlock } from './schema';

/**
 * The block that applies to `server`: the defaults, with each member the server's own block
 * states replacing the default one whole. Server names come from servers and are never trusted:
 * only the policy's own keys count (`constructor` or `toString` find nothing inherited).
 */
export function effectiveBlock(policy: Policy, server: string): PolicyBlock {
  const own = ownValue(policy.servers, server);
  const block: PolicyBlock = { ...policy.defaults };
  if (own) {
    for (const key of Object.keys(own) as (keyof PolicyBlock)[]) {
      if (own[key] !== undefined) (block as Record<string, unknown>)[key] = own[key];
    }
  }
  return block;
}

/**
 * The first 16 hex digits of SHA-256 over the RFC 8785 canonical JSON of the server's effective
 * block. Stored decisions carry it: when it changes, they are stale. Hashing the effective block
 * (not the text) means an edit to one server's block changes only that server's hash, an edit to
 * `defaults` changes every server that does not override the edited member, and reformatting or
 * reordering keys changes nothing.
 */
export function policyHash(policy: Policy, server: string): string {
  const json = canonicalize(effectiveBlock(policy, server));
  if (json === undefined) throw new Error('policyHash: the effective block is not serialisable');
  const bytes = new TextEncoder().encode(json);
  return sha256Hex(bytes, bytes.length, 8);
}

/** The servers (of those given, each once, in order) whose effective block differs between the two. */
export function changedServers(oldPolicy: Policy, newPolicy: Policy, servers: string[]): string[] {
  return [...new Set(servers)].filter((s) => policyHash(oldPolicy, s) !== policyHash(newPolicy, s));
}
