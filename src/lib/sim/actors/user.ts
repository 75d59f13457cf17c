/**
 * The simulated user who answers consent dialogs, with a fatigue model: the chance of approving
 * grows with the prompts already shown. That is the cost of a fresh evaluation the seed warns
 * about — every re-asked question is another chance at a tired user.
 *
 * In the playground's "you are the user" mode a person answers instead, through `human`.
 */
import type { ConsentInput } from '../../machine/authorize';
import type { ConsentActor, ConsentReply } from '../../client/driver';
import { copyable } from '../../machine/clone';
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

/** An answer drawn and waiting for its time: `reply` is the host's step that asked. */
interface Waiting {
  approved: boolean;
  reply: ConsentReply;
  timer: TimerId;
}

/**
 * The user answers the host's dialogs as a consent actor (client/driver.ts): it holds the
 * asking step, and the host stops a dialog by the ticket `ask` returned.
 */
export class SimUser implements ConsentActor {
  stats: UserStats = { prompts: 0, approved: 0, denied: 0 };
  /** Answers on the clock, by ticket: an `answer` event (events.ts) names its ticket. */
  private waiting = new Map<number, Waiting>();
  private tickets = 0;

  constructor(
    readonly spec: UserSpec,
    readonly clock: VirtualClock,
    private rng: Rng,
    /** The lane whose dialogs this user answers. */
    readonly lane: LaneId
  ) {}

  /** The answer of ticket `ticket` is due (an `answer` event). */
  answer(ticket: number): void {
    const w = this.waiting.get(ticket);
    if (!w) return;
    this.waiting.delete(ticket);
    if (w.approved) this.stats.approved++;
    else this.stats.denied++;
    w.reply.answer(w.approved);
  }

  /** The request ended before its answer was due: the answer never comes. */
  forget(ticket: number): void {
    const w = this.waiting.get(ticket);
    if (!w) return;
    this.waiting.delete(ticket);
    this.clock.clearTimeout(w.timer);
  }

  /** A dialog opens: the answer is drawn now and given after a drawn delay; returns its ticket. */
  ask(_input: ConsentInput, reply: ConsentReply): number {
    const p = approveChance(this.spec, this.stats.prompts);
    this.stats.prompts++;
    const approved = this.rng.chance(p);
    const delay = this.rng.exponential(this.spec.responseMs);
    const ticket = ++this.tickets;
    const timer = this.clock.after(delay, { kind: 'answer', lane: this.lane, ticket });
    this.waiting.set(ticket, { approved, reply, timer });
    return ticket;
  }

  /** The host stopped the dialog of `ticket` (the request ended first). */
  stop(ticket: unknown): void {
    this.forget(ticket as number);
  }
}

// Copied over the copies of the clock, its random stream and the host's steps it answers.
copyable(SimUser, { name: 'user.SimUser', fields: { spec: 'shared' } });
