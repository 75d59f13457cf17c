/**
 * The simulated user who answers consent dialogs, with a fatigue model: the chance of approving
 * grows with the prompts already shown. That is the cost of a fresh evaluation the seed warns
 * about — every re-asked question is another chance at a tired user.
 *
 * In the playground's "you are the user" mode a person answers instead, through `human`.
 */
import type { ConsentInput } from '../machine/authorize';
import type { ConsentSource, Driver } from '../client/driver';
import { revivable, type CloneMap } from '../machine/clone';
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

/** The simulated user's answer, given after the response time (a timer's callback: clone.ts). */
function answerLater(
  user: SimUser,
  approved: boolean,
  answer: (approved: boolean) => void
): () => void {
  return revivable(
    () => {
      if (approved) user.stats.approved++;
      else user.stats.denied++;
      answer(approved);
    },
    (m) => answerLater(m.get(user), approved, m.fn(answer))
  );
}

function clearLater(clock: Driver, timer: unknown): () => void {
  return revivable(
    () => clock.clearTimeout(timer),
    (m) => clearLater(m.get(clock), timer)
  );
}

export class SimUser {
  stats: UserStats = { prompts: 0, approved: 0, denied: 0 };
  /** What answers the host's dialogs (the same function for the user's life). */
  readonly source: ConsentSource;

  constructor(
    readonly spec: UserSpec,
    readonly clock: Driver,
    private rng: Rng
  ) {
    this.source = revivable(
      (_input: ConsentInput, answer: (approved: boolean) => void) => this.#ask(answer),
      (m) => m.get(this as SimUser).source
    );
  }

  /** A copy over the copy of the clock (clone.ts). */
  clone(m: CloneMap): SimUser {
    const c = m.set(this, new SimUser(this.spec, m.get(this.clock), m.get(this.rng)));
    c.stats = { ...this.stats };
    return c;
  }

  #ask(answer: (approved: boolean) => void): () => void {
    const p = approveChance(this.spec, this.stats.prompts);
    this.stats.prompts++;
    const approved = this.rng.chance(p);
    const delay = this.rng.exponential(this.spec.responseMs);
    const t = this.clock.setTimeout(answerLater(this, approved, answer), delay);
    return clearLater(this.clock, t);
  }
}
