/**
 * The simulated user who answers consent dialogs, with a fatigue model: the chance of approving
 * grows with the prompts already shown. That is the cost of a fresh evaluation the seed warns
 * about — every re-asked question is another chance at a tired user.
 *
 * In the playground's "you are the user" mode a person answers instead, through `human`.
 */
import type { ConsentInput } from '../../machine/authorize';
import type { ConsentSource } from '../../client/driver';
import { revivable, type CloneMap } from '../../machine/clone';
import type { TimerId, VirtualClock } from '../world/clock';
import type { Rng } from '../world/rng';
import type { LaneId } from '../../machine/vocabulary';

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

/** Clear the timer of a dialog's answer, when the request ends first (held by the host: clone.ts). */
function clearLater(user: SimUser, ticket: number): () => void {
  return revivable(
    () => user.forget(ticket),
    (m) => clearLater(m.get(user), ticket)
  );
}

/** An answer drawn and waiting for its time: `answer` is the host's (its dialog's callback). */
interface Waiting {
  approved: boolean;
  answer: (approved: boolean) => void;
  timer: TimerId;
}

export class SimUser {
  stats: UserStats = { prompts: 0, approved: 0, denied: 0 };
  /** What answers the host's dialogs (the same function for the user's life). */
  readonly source: ConsentSource;
  /** Answers on the clock, by ticket: an `answer` event (events.ts) names its ticket. */
  #waiting = new Map<number, Waiting>();
  #tickets = 0;

  constructor(
    readonly spec: UserSpec,
    readonly clock: VirtualClock,
    private rng: Rng,
    /** The lane whose dialogs this user answers. */
    readonly lane: LaneId
  ) {
    this.source = revivable(
      (_input: ConsentInput, answer: (approved: boolean) => void) => this.#ask(answer),
      (m) => m.get(this as SimUser).source
    );
  }

  /** A copy over the copy of the clock (clone.ts). */
  clone(m: CloneMap): SimUser {
    const c = m.set(this, new SimUser(this.spec, m.get(this.clock), m.get(this.rng), this.lane));
    c.stats = { ...this.stats };
    c.#tickets = this.#tickets;
    // Last (CloneMap.later): an answer's callback is the host's, copied once its owners are.
    m.later(() => {
      for (const [t, w] of this.#waiting) c.#waiting.set(t, { ...w, answer: m.fn(w.answer) });
    });
    return c;
  }

  /** The answer of ticket `ticket` is due (an `answer` event). */
  answer(ticket: number): void {
    const w = this.#waiting.get(ticket);
    if (!w) return;
    this.#waiting.delete(ticket);
    if (w.approved) this.stats.approved++;
    else this.stats.denied++;
    w.answer(w.approved);
  }

  /** The request ended before its answer was due: the answer never comes. */
  forget(ticket: number): void {
    const w = this.#waiting.get(ticket);
    if (!w) return;
    this.#waiting.delete(ticket);
    this.clock.clearTimeout(w.timer);
  }

  #ask(answer: (approved: boolean) => void): () => void {
    const p = approveChance(this.spec, this.stats.prompts);
    this.stats.prompts++;
    const approved = this.rng.chance(p);
    const delay = this.rng.exponential(this.spec.responseMs);
    const ticket = ++this.#tickets;
    const timer = this.clock.after(delay, { kind: 'answer', lane: this.lane, ticket });
    this.#waiting.set(ticket, { approved, answer, timer });
    return clearLater(this, ticket);
  }
}
