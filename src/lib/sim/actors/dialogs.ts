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
import { copyable } from '../../machine/clone';
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
copyable(LaneConsent, { name: 'dialogs.LaneConsent' });

/** The name of a dialog within its run. */
export function dialogKey(lane: LaneId, connection: string, requestId: JsonRpcId): string {
  return `${lane}\u0000${connection}\u0000${typeof requestId}:${String(requestId)}`;
}

/** Who is told of every dialog as it opens, whoever answers it (the `consent` breakpoint). */
export interface DialogWatcher {
  consentAsked(lane: LaneId, input: ConsentInput): void;
}

/**
 * The desk of one engine. Copied with it (clone.ts): who answers, and the open dialogs, their
 * answers going to the copied requests' steps; its watcher is the engine's copy.
 */
export class ConsentDesk {
  private humans: Set<LaneId>;
  private readonly opened = new Map<string, OpenDialog>();

  constructor(
    human: readonly LaneId[],
    private readonly watcher: DialogWatcher
  ) {
    this.humans = new Set(human);
  }

  /** The consent source for `lane`: the person's desk while the lane is theirs, else `simulated`. */
  source(lane: LaneId, simulated: ConsentActor): ConsentActor {
    return new LaneConsent(this, lane, simulated);
  }

  /** A dialog of `lane` opens: a person's (its ticket is its key) or `simulated`'s. */
  ask(lane: LaneId, input: ConsentInput, reply: ConsentReply, simulated: ConsentActor): unknown {
    this.watcher.consentAsked(lane, input);
    if (!this.humans.has(lane)) return simulated.ask(input, reply);
    const key = dialogKey(lane, input.connection, input.requestId);
    this.opened.set(key, { key, lane, input, reply });
    return key;
  }

  /** The request ended without an answer (timed out, cancelled, a restart): its dialog closes. */
  close(key: string): void {
    this.opened.delete(key);
  }

  /** Lanes whose dialogs a person answers, A before B. */
  get human(): LaneId[] {
    return (['A', 'B'] as const).filter((l) => this.humans.has(l));
  }

  /** Hand these lanes' future dialogs to a person (the others' to the simulated user). */
  setHuman(lanes: readonly LaneId[]): boolean {
    const next = new Set(lanes);
    if (next.size === this.humans.size && [...next].every((l) => this.humans.has(l))) return false;
    this.humans = next;
    return true;
  }

  /** Dialogs waiting for a person, in the order they opened. */
  get open(): OpenDialog[] {
    return [...this.opened.values()];
  }

  find(lane: LaneId, connection: string, requestId: JsonRpcId): OpenDialog | undefined {
    return this.opened.get(dialogKey(lane, connection, requestId));
  }

  /** Answer an open dialog; false when there is none by that name (answered, or closed). */
  answer(lane: LaneId, connection: string, requestId: JsonRpcId, approved: boolean): boolean {
    const d = this.find(lane, connection, requestId);
    if (!d) return false;
    this.opened.delete(d.key);
    d.reply.answer(approved);
    return true;
  }
}

copyable(ConsentDesk, { name: 'dialogs.ConsentDesk' });
