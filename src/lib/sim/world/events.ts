/**
 * What the virtual clock holds (issue #21): a scheduled event is data — a closed union of kinds,
 * each naming what it acts on by address (lane, server, connection, request id, task number,
 * ticket) — and `step` (engine/step.ts) is the one place that makes it happen. A copy of the clock's queue
 * is then a copy of data: no closure to make again over the copies of what it pointed at.
 *
 * The clock also holds, beside these, the timers set through the client host's `Driver`: the
 * table executor's `after:` timers, as data too — a target (the request's run) and its argument
 * (the event the timer raises), `setTimer` / `insertTimer` — which a copy of the clock points at
 * the copy of the run; and XState's, when requests run as actors, which are callbacks and cannot
 * be copied (a run of actors re-simulates instead).
 */
import type { Frame, JsonRpcId } from '../../machine/types';
import type { TimelineAction } from '../engine/engine-types';
import type { LaneId } from '../../machine/vocabulary';
import type { TraceEvent } from '../input/trace';
import type { ServerTimer } from './world';

export type SimEvent =
  /** A client restart written into the scenario or asked for on the command line. */
  | { kind: 'restart' }
  /** One line of a recorded trace, replayed on `server` of `lane`. */
  | { kind: 'trace'; lane: LaneId; server: string; event: TraceEvent }
  /** A frame's delivery, only over the connection that asked. */
  | {
      kind: 'deliver';
      lane: LaneId;
      server: string;
      connection: string;
      id: JsonRpcId;
      frame: Frame;
    }
  /** 2026-07-28: the host failed its own tool call for this request; the server hears only that. */
  | { kind: 'toolCallFailed'; lane: LaneId; server: string; connection: string; id: JsonRpcId }
  /**
   * The other lane's later action on a fork's branch (fork.ts): `lane` is the lane it belongs to
   * (null for both), `generation` the fork that scheduled it.
   */
  | { kind: 'fork'; action: TimelineAction; lane: LaneId | null; generation: number }
  /** A server's own timer: its next task, a send, a request's timeout, a reconnect. */
  | { kind: 'server'; lane: LaneId; server: string; timer: ServerTimer }
  /** The simulated user's answer to a dialog (user.ts), by the ticket it was asked with. */
  | { kind: 'answer'; lane: LaneId; ticket: number }
  /** The next event of a provider call's stream (provider.ts), by the call's number. */
  | { kind: 'provider'; lane: LaneId; call: number };
