/**
 * The engine's data at its edges: the lines it writes, the marks and actions of a run's timeline,
 * and the options a simulation takes (engine.ts re-exports them all).
 */
import type { AuthOutput, IncomingRequest } from '../../machine/authorize';
import type { ClientConfigInput } from '../../machine/config';
import type { Policy } from '../../machine/policy';
import type { AuditRecord, Frame, JsonRpcId, SamplingRequest } from '../../machine/types';
import type { Executor } from '../../client/host';
import type { DurableProvider } from './lane-store';
import type { LaneId, StoreScope } from '../../machine/vocabulary';
import type { StoreEvent } from './store-tap';
import type { TraceEvent } from '../input/trace';

/** One line of `frames.jsonl`: a frame in either direction, as sent. */
export interface FrameLine {
  t: number;
  lane: LaneId;
  server: string;
  connection: string;
  /** `in`: a request the client received; `out`: the client's one response. */
  direction: 'in' | 'out';
  frame: SamplingRequest | Frame;
}

/** A request whose consent dialog just opened: where it is in the machine. */
export interface AskedFacts {
  identity: string;
  /** The states it went through so far (ending in `consenting`). */
  path: string[];
}

/** A change the learner made mid-run, marked on the timeline. */
export interface TimelineMark {
  t: number;
  lane: LaneId;
  what: string;
  /** What kind of moment it is; absent on configuration and policy edits (older marks). */
  kind?: 'restart' | 'fork' | 'extend';
}

/**
 * Where in a run something happened: the virtual time and how many clock events had run. Two
 * actions at the same virtual time are told apart by the event count, so re-simulating a run and
 * applying its actions at the same positions gives the same bytes (checkpoint.ts).
 */
export interface RunPosition {
  t: number;
  events: number;
}

/** A change applied to a running simulation from outside it, at its position (checkpoint.ts). */
export type TimelineAction = RunPosition &
  (
    | { kind: 'config'; lane: LaneId; client: ClientConfigInput; what: string }
    | { kind: 'policy'; lane: LaneId; policy: Policy }
    | { kind: 'restart' }
    | { kind: 'extend'; end: number }
    /** From here, a person answers these lanes' consent dialogs (the others', the simulated user). */
    | { kind: 'human'; lanes: LaneId[] }
    /** A person answered a dialog (dialogs.ts): the request `requestId` on `connection`. */
    | { kind: 'consent'; lane: LaneId; connection: string; requestId: JsonRpcId; approved: boolean }
  );

export interface SimulationOptions {
  /** Override the scenario's seed. */
  seed?: number;
  /** Receives every frame line (the CLI writes them; the UI keeps a window of them). */
  onFrame?: (line: FrameLine) => void;
  /** Receives every audit record. */
  onAudit?: (record: AuditRecord) => void;
  /**
   * A trace's request was sent on `lane` as request `requestId` on `connection` (its audit record
   * carries both): how a replay finds each logged request's outcome in each lane (whatif.ts).
   */
  onTraceRequest?: (
    lane: LaneId,
    event: TraceEvent,
    connection: string,
    requestId: JsonRpcId
  ) => void;
  /** Receives every finished request: the inspector keeps params, path and frame. */
  onDecision?: (lane: LaneId, request: IncomingRequest, out: AuthOutput) => void;
  /**
   * Lanes whose consent dialogs a person answers from the start ("you are the user"); changes
   * later are `setHuman`, answers `answerConsent` (both timeline actions; dialogs.ts).
   */
  human?: readonly LaneId[];
  /**
   * A consent dialog opened (whoever answers it): the request, and its path through the machine
   * so far. The `consent` breakpoint holds here, with the request waiting on the user.
   */
  onConsentAsked?: (lane: LaneId, request: IncomingRequest, asked: AskedFacts) => void;
  /**
   * Where durable lanes keep their decisions (the browser's IndexedDB, per run); undefined = in
   * memory. Connection-scoped lanes are always in memory. See lane-store.ts.
   */
  durable?: DurableProvider;
  /** Replay these events instead of running the simulated population. */
  trace?: TraceEvent[];
  /** Sees every change to a lane's decision store (the run's invariants read what was stored). */
  onStore?: (lane: LaneId, event: StoreEvent) => void;
  /**
   * How each request's authorisation machine runs (client/host.ts): `table` (default) interprets the
   * machine's transition table; `actor` runs an XState actor per request. Same bytes either way.
   */
  executor?: Executor;
  /** Restart the client at these virtual ms from the start (as the scenario's `restarts` does). */
  restartAt?: readonly number[];
  /** Receives every client restart's report (the page's notice; the CLI's summary line). */
  onRestart?: (report: RestartReport) => void;
  /** Called after each metrics sample at `t`, every event up to `t` run (checkpoint.ts). */
  onSample?: (t: number) => void;
  /**
   * The lanes whose server population runs (default: both). A lane left out has its host and
   * its servers, never connected: no request reaches it, its numbers stay at zero. The lanes are
   * independent, so a lane run alone gives the bytes it gives beside the other
   * (engine-lanes.spec.ts): a lane per thread is how a run could use more than one core.
   */
  lanes?: readonly LaneId[];
}

/** One lane's side of a restart. */
export interface LaneRestart {
  scope: StoreScope;
  /** Live stored decisions just before the restart. */
  before: number;
  /** Live stored decisions after it. */
  kept: number;
  /** Stored decisions the restart took away (before − kept). */
  lost: number;
  /** Requests in flight that were cancelled (each answered with its one frame and record). */
  cancelled: number;
  /** Connections dropped and reopened. */
  reconnected: number;
}

export interface RestartReport {
  /** Virtual time of the restart. */
  t: number;
  lanes: Record<LaneId, LaneRestart>;
}
