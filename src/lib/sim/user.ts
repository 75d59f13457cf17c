/**
 * The simulated user who answers consent dialogs, with a fatigue model: the chance of approving
 * grows with the prompts already shown. That is the cost of a fresh evaluation the seed warns
 * about — every re-asked question is another chance at a tired user.
 *
 * In the playground's "you are the user" mode a person answers instead, through `human`.
 */
import type { ConsentInput } from '../machine/authorize';
import type { ConsentSource, HostClock } from './client';
import type { Rng } from './rng';

export interface UserSpec {
  /** The chance of approving the first prompt. */
  approveBase: number;
  /** How much each prompt already shown adds to that chance. */
  fatiguePerPrompt: number;
  /** The chance never exceeds this. */
  maxApprove: number;
  /** Mean time to answer (exponentially distributed). */
  responseMs: number;
}

export const DEFAULT_USER: UserSpec = {
  approveBase: 0.5,
  fatiguePerPrompt: 0.002,
  maxApprove: 0.95,
  responseMs: 4_000
};

export interface UserStats {
  prompts: number;
  approved: number;
  denied: number;
}

/** The chance of approving after `shown` prompts. */
function approveChance(spec: UserSpec, shown: number): number {
  return Math.min(spec.maxApprove, spec.approveBase + spec.fatiguePerPrompt * shown);
}

export function createUser(
  spec: UserSpec,
  clock: HostClock,
  rng: Rng
): { source: ConsentSource; stats: UserStats } {
  const stats: UserStats = { prompts: 0, approved: 0, denied: 0 };
  const source: ConsentSource = (_input: ConsentInput, answer) => {
    const p = approveChance(spec, stats.prompts);
    stats.prompts++;
    const approved = rng.chance(p);
    const delay = rng.exponential(spec.responseMs);
    const t = clock.setTimeout(() => {
      if (approved) stats.approved++;
      else stats.denied++;
      answer(approved);
    }, delay);
    return () => clock.clearTimeout(t);
  };
  return { source, stats };
}
