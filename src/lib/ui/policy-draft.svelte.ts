/**
 * A lane's policy draft, as the policy editor holds it: the text the learner edits, what the
 * policy parser says of it, the policy in force, and what the last Apply did. An invalid draft is
 * never applied — the policy in force stays — and an untouched draft follows the page's policy
 * while an edited one is the learner's work and stays. The editor component only renders this.
 */
import canonicalize from 'canonicalize';
import type { Policy } from '$lib/machine/policy';
import type { ParsePolicy } from './policy-editor';

export type ApplyOutcome =
  | { kind: 'refused'; count: number }
  | { kind: 'applied'; invalidated: [string, number][] }
  | { kind: 'failed'; message: string };

export function formatPolicy(p: Policy): string {
  return JSON.stringify(p, null, 2) + '\n';
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class PolicyDraft {
  /** The draft: what the editor holds, kept while the panel is closed. */
  text = $state('');
  /** The policy in force: the page's, or the one this draft applied since (until the page's changes). */
  inForce = $state.raw<Policy | null>(null);
  /** The parser, once loaded; until then the draft is not yet checked. */
  parser = $state.raw<ParsePolicy | null>(null);
  outcome = $state<ApplyOutcome | null>(null);
  applying = $state(false);

  readonly inForceText = $derived(this.inForce ? formatPolicy(this.inForce) : '');
  readonly parsed = $derived(this.parser ? this.parser(this.text) : null);
  readonly errors = $derived(this.parsed && !this.parsed.ok ? this.parsed.errors : []);
  /** The draft is not the policy in force (an invalid one never is). */
  readonly unapplied = $derived(
    !this.parsed?.ok ||
      this.inForce === null ||
      canonicalize(this.parsed.policy) !== canonicalize(this.inForce)
  );

  /** The in-force text the draft was last reset to: an untouched draft is equal to it. */
  #base: string | null = null;
  /** Puts a text the draft set itself (not typed) into the editor. */
  #show: (text: string) => void;

  constructor(show: (text: string) => void = () => {}) {
    this.#show = show;
  }

  /** The page's policy (a scenario loaded, an apply elsewhere): an untouched draft follows it. */
  follow(policy: Policy): void {
    this.inForce = policy;
    const next = this.inForceText;
    if (this.#base === null || this.text === this.#base) this.#set(next);
    this.#base = next;
  }

  /** The learner typed: a refusal described the text it refused, so it goes. */
  edit(text: string): void {
    if (text === this.text) return;
    this.text = text;
    if (this.outcome?.kind === 'refused') this.outcome = null;
  }

  /** Back to the policy in force. */
  reset(): void {
    this.#set(this.inForceText);
    this.#base = this.inForceText;
    this.outcome = null;
  }

  /** A failure to load the parser, said where the last Apply's outcome is. */
  failed(e: unknown): void {
    this.outcome = { kind: 'failed', message: messageOf(e) };
  }

  /**
   * Apply the draft if it is valid; `onApply` answers how many stored decisions it invalidated,
   * per server. `load` fetches the parser when it is not loaded yet (a failed load is retried).
   */
  async apply(
    onApply: (policy: Policy) => Promise<Record<string, number>>,
    load: () => Promise<ParsePolicy>
  ): Promise<void> {
    if (this.applying) return;
    let parse = this.parser;
    try {
      parse ??= this.parser = await load();
    } catch (e) {
      this.failed(e);
      return;
    }
    const r = parse(this.text);
    if (!r.ok) {
      this.outcome = { kind: 'refused', count: r.errors.length };
      return;
    }
    this.applying = true;
    try {
      const counts = await onApply(r.policy);
      this.inForce = r.policy;
      this.#base = this.inForceText;
      this.outcome = {
        kind: 'applied',
        invalidated: Object.entries(counts).filter(([, n]) => n > 0)
      };
    } catch (e) {
      this.failed(e);
    } finally {
      this.applying = false;
    }
  }

  #set(next: string): void {
    if (next !== this.text && this.outcome?.kind === 'refused') this.outcome = null;
    this.text = next;
    this.#show(next);
  }
}
