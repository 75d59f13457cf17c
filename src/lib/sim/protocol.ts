/**
 * The typed command union between the page and the simulation worker. The page sends commands;
 * the worker answers with snapshots (what to render), progress reports and results. Everything
 * is structured-cloneable plain data.
 */
import type { ClientConfigInput } from '../machine/config';
import type { Policy } from '../machine/policy';
import type { AuditRecord, Frame, JsonRpcId, SamplingParams } from '../machine/types';
import type { FrameLine, TimelineMark } from './engine';
import type { InvariantResult } from './invariants';
import type { LaneCounters, LaneSeries } from './metrics';
import type { RunDigest } from './report';
import type { LaneId, ScenarioError } from './scenario';
import type { TraceEvent } from './trace';

export type Command =
  | {
      type: 'load';
      /** The scenario as JSON data (validated in the worker). */
      scenario: unknown;
      seed?: number;
      trace?: TraceEvent[];
      /** Lanes whose consent dialogs a person answers. */
      human?: LaneId[];
    }
  /** Run until virtual time `to` (clamped to the end), at most `maxEvents` events. */
  | { type: 'advance'; to: number; maxEvents?: number }
  | { type: 'step' }
  /** Run `ms` of virtual time in slices, reporting progress; `cancel` stops it between slices. */
  | { type: 'fastForward'; ms: number }
  | { type: 'cancel' }
  | { type: 'setConfig'; lane: LaneId; client: ClientConfigInput; what: string }
  | { type: 'setPolicy'; lane: LaneId; policy: Policy }
  | { type: 'setHuman'; human: LaneId[] }
  | { type: 'consent'; lane: LaneId; token: number; approved: boolean }
  | { type: 'inspect'; lane: LaneId; seq: number }
  | { type: 'clearStored'; lane: LaneId }
  /** Run a scenario from scratch to its end and digest its outputs (the determinism self-test). */
  | { type: 'digest'; scenario: unknown; seed?: number };

export interface PendingConsent {
  lane: LaneId;
  token: number;
  server: string;
  requestId: JsonRpcId;
  identity: string;
  params: SamplingParams;
  askedAt: number;
}

export interface LaneView {
  label: string;
  counters: LaneCounters;
  series: LaneSeries;
  edges: Record<string, number>;
  storedDecisions: number;
  scope: 'connection' | 'durable';
}

export interface Snapshot {
  type: 'snapshot';
  now: number;
  start: number;
  end: number;
  done: boolean;
  lanes: Record<LaneId, LaneView>;
  /** Audit records since the previous snapshot. */
  audit: AuditRecord[];
  marks: TimelineMark[];
  /** Why durable storage is unavailable (the lanes asking for it run connection-scoped), or null. */
  durableError: string | null;
  pendingConsent: PendingConsent[];
  /** How many events the last command ran. */
  events: number;
  /** The run's guarantees as they stand (the Guarantees panel). */
  guarantees: InvariantResult[];
}

export interface Inspection {
  type: 'inspection';
  lane: LaneId;
  seq: number;
  found: boolean;
  request?: {
    id: JsonRpcId;
    server: string;
    connection: string;
    params: SamplingParams;
    receivedAt: number;
  };
  identity?: string;
  path?: string[];
  frame?: Frame | null;
  audit?: AuditRecord;
}

export type Reply =
  | Snapshot
  | { type: 'loaded'; ok: true; name: string; start: number; end: number; servers: string[] }
  | { type: 'loaded'; ok: false; errors: ScenarioError[] }
  | { type: 'progress'; done: number; total: number }
  | { type: 'fastForwardDone'; cancelled: boolean }
  | { type: 'policyApplied'; lane: LaneId; invalidated: Record<string, number> }
  | { type: 'cleared'; lane: LaneId; count: number }
  | Inspection
  | { type: 'digest'; ok: true; digest: RunDigest }
  | { type: 'digest'; ok: false; errors: ScenarioError[] }
  | { type: 'error'; message: string };

/** Frame lines are not streamed to the page (too many); the inspector asks for one request. */
export type { FrameLine };
