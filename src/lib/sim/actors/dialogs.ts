/**
 * Who answers a lane's consent dialogs: the simulated user, or — in the playground's "you are the
 * user" mode — a person. A person's answers are outside changes to the run, so the engine records
 * each one (and each switch of who answers) as a timeline action at its exact position
 * (engine.ts `TimelineAction`): re-simulating the run (a seek back, a fork, a reload) answers the
 * same dialog the same way at the same place, and the bytes come out the same.
 *
 * A dialog is named by its lane, connection and request id: unique within a run (a connection's
 * ids only grow) and the same in every re-simulation of it, unlike a page's token.
 */
import type { ConsentInput } from '../../machine/authorize';
import type { JsonRpcId } from '../../machine/types';
import type { ConsentActor, ConsentReply } from '../../client/driver';
import { copyable, type CloneMap } from '../../machine/clone';
import type { LaneId } from '../../machine/vocabulary';

/** A dialog waiting for a person's answer; `reply` is the host's step that asked. */
export interface OpenDialog {
  key: string;
  lane: LaneId;
  input: ConsentInput;
  reply: ConsentReply;
}

/**
 * A lane's consent source (client/driver.ts `ConsentActor`): the desk while a person answers the
 * lane's dialogs, else the simulated one. A dialog's ticket is its key on the desk (a string) or
 * the simulated user's ticket.
 */
class LaneConsent implements ConsentActor {
  constructor(
    public desk: ConsentDesk,
    readonly lane: LaneId,
    public simulated: ConsentActor
  ) {}

  ask(input: ConsentInput, reply: ConsentReply): unknown {
    return this.desk.ask(this.lane, input, reply, this.simulated);
  }

  stop(ticket: unknown): void {
    if (typeof ticket === 'string') this.desk.close(ticket);
    else this.simulated.stop(ticket);
  }
}
// Copied over the copies of the desk (registered by the engine's copy) and the simulated user.
copyable(LaneConsent);

/** The name of a dialog within its run. */
export function dialogKey(lane: LaneId, connection: string, requestId: JsonRpcId): string {
  return `${lane}\u0000${connection}\u0000${typeof requestId}:${String(requestId)}`;
}

export class ConsentDesk {
  #human: Set<LaneId>;
  readonly #open = new Map<string, OpenDialog>();

  /** `asked`: told of every dialog as it opens, whoever answers it (the `consent` breakpoint). */
  constructor(
    human: readonly LaneId[],
    private readonly asked: (lane: LaneId, input: ConsentInput) => void
  ) {
    this.#human = new Set(human);
  }

  /**
   * A copy for an engine copy (clone.ts), telling `asked` of new dialogs: who answers, and the
   * open dialogs (filled in last, their answers being the copied requests').
   */
  copy(m: CloneMap, asked: (lane: LaneId, input: ConsentInput) => void): ConsentDesk {
    const c = m.set(this as ConsentDesk, new ConsentDesk(this.human, asked));
    m.later(() => {
      for (const [k, d] of this.#open) c.#open.set(k, { ...d, reply: m.get(d.reply) });
    });
    return c;
  }

  /** The consent source for `lane`: the person's desk while the lane is theirs, else `simulated`. */
  source(lane: LaneId, simulated: ConsentActor): ConsentActor {
    return new LaneConsent(this, lane, simulated);
  }

  /** A dialog of `lane` opens: a person's (its ticket is its key) or `simulated`'s. */
  ask(lane: LaneId, input: ConsentInput, reply: ConsentReply, simulated: ConsentActor): unknown {
    this.asked(lane, input);
    if (!this.#human.has(lane)) return simulated.ask(input, reply);
    const key = dialogKey(lane, input.connection, input.requestId);
    this.#open.set(key, { key, lane, input, reply });
    return key;
  }

  /** The request ended without an answer (timed out, cancelled, a restart): its dialog closes. */
  close(key: string): void {
    this.#open.delete(key);
  }

  /** Lanes whose dialogs a person answers, A before B. */
  get human(): LaneId[] {
    return (['A', 'B'] as const).filter((l) => this.#human.has(l));
  }

  /** Hand these lanes' future dialogs to a person (the others' to the simulated user). */
  setHuman(lanes: readonly LaneId[]): boolean {
    const next = new Set(lanes);
    if (next.size === this.#human.size && [...next].every((l) => this.#human.has(l))) return false;
    this.#human = next;
    return true;
  }

  /** Dialogs waiting for a person, in the order they opened. */
  get open(): OpenDialog[] {
    return [...this.#open.values()];
  }

  find(lane: LaneId, connection: string, requestId: JsonRpcId): OpenDialog | undefined {
    return this.#open.get(dialogKey(lane, connection, requestId));
  }

  /** Answer an open dialog; false when there is none by that name (answered, or closed). */
  answer(lane: LaneId, connection: string, requestId: JsonRpcId, approved: boolean): boolean {
    const d = this.find(lane, connection, requestId);
    if (!d) return false;
    this.#open.delete(d.key);
    d.reply.answer(approved);
    return true;
  }
}
