/**
 * The typed command union between the page and the simulation worker. The page sends commands;
 * the worker answers with snapshots (what to render), progress reports and results. Everything
 * is structured-cloneable plain data.
 */
import type { ClientConfigInput, StoreScope } from '../../machine/config';
import type { Policy } from '../../machine/policy';
import type { AuditRecord, Frame, JsonRpcId, SamplingParams } from '../../machine/types';
import type { FrameLine, TimelineAction, TimelineMark } from '../engine/engine';
import type { AuditOptions } from '../../store/audit-index';
import type { AuditTotals } from '../../store/audit-query';
import type { GuaranteeStatus, InvariantResult } from '../checks/invariants';
import type { LaneCounters, LaneSeries } from '../engine/metrics';
import type { RunDigest } from '../report/report';
import type { LaneId, ScenarioError } from '../input/scenario';
import type { TraceEvent } from '../input/trace';
import type { BreakFacts } from '../timeline/breakpoints';
import type { ViewCheckpoint } from '../engine/checkpoint';
import type { RestartReport } from '../engine/restart';
import type { ForkSpec } from '../engine/fork';

/**
 * A fork as a run's timeline carries it: the fork, and the actions of the branch it was made on;
 * for a fork of a fork, the forks it was made on (first fork first), each with its own.
 */
export interface TimelineFork {
  spec: ForkSpec;
  base: TimelineAction[];
  parents?: { spec: ForkSpec; base: TimelineAction[] }[];
}

export type Command =
  | {
      type: 'load';
      /** The scenario as JSON data (validated in the worker). */
      scenario: unknown;
      seed?: number;
      trace?: TraceEvent[];
      /** Lanes whose consent dialogs a person answers. */
      human?: LaneId[];
      /**
       * Continue this run's durable namespace (a page reload within a run keeps its durable
       * decisions, SPEC §4) instead of starting a new, empty one. Ignored when another tab holds
       * the run or it no longer exists.
       */
      resume?: string;
      /**
       * A reload mid-run (issue #10): re-simulate the run quietly to `t` with `actions` (the
       * `timeline` reply's) applied where they were, durable lanes in memory; then hand the
       * durable lanes the decisions the resumed namespace kept and restart the client there. The
       * load's replies are then `loaded` and `restarted`. Nothing is written again: the audit
       * log of 0…t is the one the page wrote before the reload.
       */
      at?: {
        t: number;
        actions: TimelineAction[];
        /** The fork the run was on (its `actions` are then those taken after it; actions.ts). */
        fork?: TimelineFork | null;
      };
      /**
       * A run opened from a share link (issue #18): the sender's actions with their times (on a
       * fork, those taken after it) and the fork, with the actions each fork was made on. The
       * run starts at the fork point (else at the start) and applies the actions where they were
       * as it reaches them. Ignored with `at` (the tab's own run is resumed instead).
       */
      link?: { actions: TimelineAction[]; fork?: TimelineFork | null };
    }
  /** Run until virtual time `to` (clamped to the end), at most `maxEvents` events. */
  | { type: 'advance'; to: number; maxEvents?: number }
  | { type: 'step' }
  // ---- time travel (issue #10; session.ts "Time travel") ----
  /** Restart the client now, both lanes (sim/engine/restart.ts). */
  | { type: 'restart' }
  /**
   * Move the run to virtual time `t`: forward by running, back by re-simulating from the start
   * (sim/engine/checkpoint.ts). Before a seek back, the worker opens a fresh durable namespace with
   * `setStorage`, or the restored run keeps its durable decisions in memory.
   */
  | { type: 'seek'; t: number }
  /** Where the run is and the outside changes applied so far (what a reload re-applies). */
  | { type: 'timeline' }
  /** The fork the run is on, if any (a reload may have brought one back). */
  | { type: 'fork?' }
  /** The view checkpoints so far (the scrubber's stops). */
  | { type: 'checkpoints' }
  /** Fork: a ForkSpec (sim/engine/fork.ts), validated here; its errors come back with their paths. */
  | { type: 'fork'; fork: unknown }
  /** Replace the breakpoints (sim/timeline/breakpoints.ts syntax); all or nothing. */
  | { type: 'setBreakpoints'; conditions: string[] }
  /** Go on after a breakpoint held (the next `advance` or `fastForward` runs on). */
  | { type: 'resume' }
  /** Let the run go on past the scenario's end, to virtual time `end` (sim/engine/extend.ts). */
  | { type: 'extend'; end: number }
  /** Run `ms` of virtual time in slices, reporting progress; `cancel` stops it between slices. */
  | { type: 'fastForward'; ms: number }
  | { type: 'cancel' }
  | { type: 'setConfig'; lane: LaneId; client: ClientConfigInput; what: string }
  | { type: 'setPolicy'; lane: LaneId; policy: Policy }
  | { type: 'setHuman'; human: LaneId[] }
  | { type: 'consent'; lane: LaneId; token: number; approved: boolean }
  | { type: 'inspect'; lane: LaneId; seq: number }
  | { type: 'clearStored'; lane: LaneId }
  /** Try writing again after a storage failure (and re-open a database that did not open). */
  | { type: 'retryStorage' }
  /** Run a scenario from scratch to its end and digest its outputs (the determinism self-test). */
  | { type: 'digest'; scenario: unknown; seed?: number }
  /**
   * The audit table's questions (answered by the worker, which holds the whole log; the page only
   * a screenful). Each carries an `id` its reply echoes. A query replaces the current one; every
   * later snapshot carries its view.
   */
  | { type: 'auditQuery'; id: number; query: AuditViewQuery }
  /** Matching rows `start..start+count` of the current query. */
  | { type: 'auditRows'; id: number; start: number; count: number }
  /** Every matching row as a file (a Blob), with progress reports. */
  | { type: 'auditExport'; id: number; kind: 'jsonl' | 'csv' }
  /** How many full records the worker keeps in memory beyond those not yet on disk. */
  | { type: 'auditWindow'; window: number }
  /**
   * Memory budgets of a long run (issue #19; the page's `?checkpointBudgetKb=`, `?heldRecords=`
   * and `?chartPoints=` knobs, for tests): the engine checkpoints' estimated bytes, the audit rows
   * held in memory only at which a run stops, and the chart points per lane sent to the page.
   */
  | { type: 'memoryBudget'; checkpointBytes?: number; heldRecords?: number; chartPoints?: number };

/** "The rows behind" a guarantee, as data the worker can evaluate (see guarantees.ts). */
export type AuditFocusSpec =
  | { id: string; kind: 'rows'; rows: string[] }
  | { id: string; kind: 'behind'; status: GuaranteeStatus };

/** The table's filters as the page sends them; the time window in minutes since the first row. */
export interface AuditViewQuery {
  server?: string;
  reason?: string;
  model?: string;
  outcome?: string;
  lane?: string;
  fromMin?: number;
  toMin?: number;
  focus?: AuditFocusSpec | null;
}

/** What the table shows for its query: sent after a query and with every snapshot. */
export interface AuditView {
  /** The query this answers (the page ignores answers to a query it has replaced). */
  queryId: number;
  logSize: number;
  matching: number;
  /** Exact over every matching row, kept incrementally. */
  totals: AuditTotals;
  options: AuditOptions;
  firstTime: string | null;
  spanMin: number;
  /** The last matching rows still in memory (the end of the table, which follows new rows). */
  tail: AuditRecord[];
  /** The position among the matching rows of `tail[0]`. */
  tailStart: number;
  /**
   * The run's audit rows a reload found missing from disk (their writes were still behind when
   * the page reloaded) and could not make again: not in the log, its totals or an export. Absent
   * when none were.
   */
  lostOnReload?: number;
  /** The rows a reload found missing and made again by re-simulating the run. */
  restoredOnReload?: RestoredRows;
}

/**
 * Audit rows a reload found missing from disk and made again (the run is deterministic: the same
 * rows, byte for byte): in the table at once, and written to the browser's storage again.
 */
export interface RestoredRows {
  rows: number;
  /** The audit log's saved count (`StorageView`) once all of them are on disk. */
  savedWhenDone: number;
}

export interface PendingConsent {
  lane: LaneId;
  token: number;
  server: string;
  requestId: JsonRpcId;
  identity: string;
  params: SamplingParams;
  askedAt: number;
}

/** How much of a durable store is on disk, and why not all of it, if not. */
export interface StorageState {
  /** On disk (IndexedDB), as of the last committed batch: what a reload finds. */
  saved: number;
  /** Not on disk: queued for the next batch, or held for this page only after a failure. */
  heldInMemory: number;
  /** Saved once, and found gone from disk (storage deleted or cleared from outside). */
  lost: number;
  /** Why writing stopped, in plain words, or null while healthy. */
  failure: string | null;
}

export interface LaneView {
  label: string;
  counters: LaneCounters;
  series: LaneSeries;
  edges: Record<string, number>;
  /** Live (unexpired) stored decisions. */
  storedDecisions: number;
  scope: StoreScope;
  /** Where a durable lane's decisions are; null when they live in memory by design. */
  storage: StorageState | null;
  /** The lane asked for durable storage and runs connection-scoped (see `durableError`). */
  fellBack: boolean;
}

/** The storage side of a snapshot, also sent alone after each group commit. */
export interface StorageView {
  /** The run's namespace in IndexedDB, or null when nothing is stored durably. */
  run: string | null;
  lanes: Record<LaneId, { storage: StorageState | null; storedDecisions: number }>;
  /** The durable audit log of this run; null when the log is kept in memory only. */
  audit: StorageState | null;
  /** Why the audit log is kept in memory only (it could not be opened), or null. */
  auditError: string | null;
}

export interface Snapshot {
  type: 'snapshot';
  now: number;
  start: number;
  end: number;
  done: boolean;
  lanes: Record<LaneId, LaneView>;
  /**
   * Audit records since the previous snapshot. The browser's worker takes them into its audit
   * index and sends `auditView` instead (an empty list), so the page never holds the whole log.
   */
  audit: AuditRecord[];
  /** The audit table's current query answered (the worker's). */
  auditView?: AuditView;
  marks: TimelineMark[];
  /** Why durable storage is unavailable (the lanes asking for it run connection-scoped), or null. */
  durableError: string | null;
  storage: StorageView;
  pendingConsent: PendingConsent[];
  /** Lanes whose consent dialogs a person answers (a reload brings the setting back). */
  human: LaneId[];
  /** How many events the last command ran. */
  events: number;
  /** The run's guarantees as they stand (the Guarantees panel). */
  guarantees: InvariantResult[];
  /** A breakpoint held: the run is paused on this decision until `resume`. */
  paused?: BreakFacts | null;
  /** What a long run gave up to stay within its memory budgets, in words (long-run.ts). */
  longRun?: string[];
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

/**
 * What the page posts to the worker: a command and an id, unique per page, that every reply it
 * causes echoes. Replies are matched by that id, never by their type, so an error from one
 * command cannot reject a request waiting on another.
 */
export interface WorkerRequest {
  id: number;
  cmd: Command;
}

/**
 * What the worker posts: a reply and the id of the request it answers — a fast-forward's slices
 * answer the `fastForward` that started it — or null for news nobody asked for (storage status
 * after a group commit).
 */
export interface WorkerReply {
  re: number | null;
  reply: Reply;
}

export type Reply =
  | Snapshot
  | {
      type: 'loaded';
      ok: true;
      name: string;
      start: number;
      end: number;
      servers: string[];
      /** The run's namespace (null when durable storage is unavailable). */
      run: string | null;
      /** Durable decisions found in the run at load: non-zero only when a reload resumed it. */
      resumed: Record<LaneId, number>;
      /** A reload resumed mid-run: the run's audit rows up to where it was (its log keeps those). */
      auditRows?: number;
      /**
       * A reload resumed from the run's saved snapshot (issue #21): the virtual time it was taken
       * at (the run was re-simulated from there only).
       */
      fromSnapshot?: number;
      /** Why the run's saved snapshot could not be used (it was dropped; the run re-simulated). */
      snapshotNote?: string;
    }
  | { type: 'loaded'; ok: false; errors: ScenarioError[] }
  | { type: 'progress'; done: number; total: number }
  /** `error`: the engine threw, and the fast-forward stopped there (what broke, and when). */
  | { type: 'fastForwardDone'; cancelled: boolean; error?: string }
  // ---- time travel (issue #10) ----
  /** `notice`: "Client restarted: lane A lost 5 stored decisions, lane B kept 14". */
  | { type: 'restarted'; report: RestartReport; notice: string }
  /**
   * The run is at `t`; the page keeps its first `auditRows` audit rows (and drops the rest: a
   * branch no longer taken) and shows `checkpoint` until the next snapshot.
   */
  | {
      type: 'seeked';
      t: number;
      auditRows: number;
      /**
       * Restored in place from an engine checkpoint: the run's storage was kept (not a fresh
       * namespace) and its log holds the rows up to `auditRows` (and maybe later ones of the same
       * timeline). The page's audit index is cut to `auditRows`, or filled up to it from the log.
       */
      inPlace?: boolean;
      checkpoint: ViewCheckpoint | null;
      /** The fork the run is on after the seek: null once it went back before the fork. */
      fork: ForkSpec | null;
      /** With the forks it was made on (a fork of a fork), first fork first; [] for none. */
      forks: ForkSpec[];
    }
  | { type: 'checkpoints'; checkpoints: ViewCheckpoint[] }
  | { type: 'forkState'; fork: ForkSpec | null; forks: ForkSpec[] }
  /**
   * On a fork, `actions` are those taken after it; `fork` what re-creates it. `ahead`: after a
   * seek back, the later actions the run applies again as it reaches them (a share link carries
   * them; a reload re-applies those up to where the run was). `human`: who answered dialogs
   * when the run was loaded (later changes are actions).
   */
  | {
      type: 'timeline';
      t: number;
      actions: TimelineAction[];
      fork: TimelineFork | null;
      ahead: TimelineAction[];
      human: LaneId[];
    }
  | { type: 'forked'; ok: true; t: number; auditRows: number }
  | { type: 'forked'; ok: false; errors: ScenarioError[] }
  | { type: 'breakpoints'; ok: true; conditions: string[] }
  | { type: 'breakpoints'; ok: false; errors: string[] }
  /** "Simulate N h" asked for more than the scenario has left: it stops at the end, and says so. */
  | { type: 'fastForwardClamped'; message: string; extendTo: number | null }
  | { type: 'extended'; ok: true; end: number }
  | { type: 'extended'; ok: false; message: string }
  | { type: 'policyApplied'; lane: LaneId; invalidated: Record<string, number> }
  | { type: 'cleared'; lane: LaneId; count: number }
  | ({ type: 'storage' } & StorageView)
  | Inspection
  | { type: 'digest'; ok: true; digest: RunDigest }
  | { type: 'digest'; ok: false; errors: ScenarioError[] }
  | { type: 'error'; message: string }
  | { type: 'auditView'; id: number; view: AuditView }
  | { type: 'auditRows'; id: number; queryId: number; start: number; rows: AuditRecord[] }
  | { type: 'auditExportProgress'; id: number; done: number; of: number }
  | {
      type: 'auditExport';
      id: number;
      ok: true;
      blob: Blob;
      /** Rows in the file. */
      rows: number;
      /** Matching rows left out: no longer in storage (see `why`). */
      missing: number;
      /** Why they are not in the file ("they were lost with this browser's storage: …"). */
      why: string | null;
    }
  | { type: 'auditExport'; id: number; ok: false; error: string }
  /** A failed audit question, naming the request it answers. */
  | { type: 'auditError'; id: number; message: string };

/** Frame lines are not streamed to the page (too many); the inspector asks for one request. */
export type { FrameLine };
