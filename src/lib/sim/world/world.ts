/**
 * The contract between the simulation engine and the simulated servers.
 *
 * A server sees only what a real MCP server sees: its connection, the requests it sends, the
 * frames that come back (or do not), and its own timers. It never sees the client's decision
 * store or policy; a behaviour is a reaction to frames.
 */
import type { Frame, IncludeContext, JsonRpcId, Money, SamplingParams } from '../../machine/types';
import type { Protocol } from '../../machine/vocabulary';
import type { Rng } from './rng';

/** One unit of work a server wants done: a task may take several requests (retries). */
export interface Task {
  /** Task number within its server, from 1. */
  n: number;
  /** How many requests this task has sent so far. */
  attempts: number;
  /** Virtual ms when the task started. */
  startedAt: number;
}

/** What a server reports about its own work: the metrics turn these into time series. */
export type ServerReport =
  | { type: 'task.started'; task: number }
  /** The server used a completion. `degradedAware`: it knows the answer lacked what it asked for. */
  | {
      type: 'task.completed';
      task: number;
      degradedAware?: boolean;
      unawareOfTrim?: boolean;
      partial?: boolean;
    }
  /** The server gave up on the task (after a permanent refusal, or its retry budget ran out). */
  | { type: 'task.abandoned'; task: number; why: string }
  | { type: 'retry'; task: number }
  /** 2026-07-28: the host's agent loop called the tool again after the call failed at the host. */
  | { type: 'host.retry'; task: number }
  | { type: 'reconnect' }
  | { type: 'timeout'; task: number };

/** How the server's serialiser writes a request: the serialiser-variant retrier changes it. */
export interface WireStyle {
  /** Reverse the key order of every object. */
  reverseKeys?: boolean;
  /** Write text in Unicode NFD (decomposed accents) instead of NFC. */
  nfd?: boolean;
}

export interface ServerEnv {
  readonly name: string;
  /** This server's own random stream (forked from the seed by lane-independent label). */
  readonly rng: Rng;
  now(): number;
  /**
   * Tell the agent `timer` (its `onTimer`) after `ms` of virtual time; returns a timer id for
   * `cancel`. A timer is data (the engine's clock holds it: events.ts), naming its task.
   */
  schedule(ms: number, timer: ServerTimer): number;
  cancel(timer: number): void;
  /**
   * Send `sampling/createMessage` over the current connection. Returns the JSON-RPC id, or null
   * when disconnected. The frame (if any) comes back through the agent's `onFrame`. `task` is the
   * server's own, read during the call: not to be kept nor changed.
   */
  send(params: SamplingParams, task: Task, wire?: WireStyle): JsonRpcId | null;
  connected(): boolean;
  /** Close the transport: a connection-scoped store forgets what it decided on it. */
  disconnect(): void;
  /** Open a new connection (a local stdio server restarts in well under a second). */
  connect(): void;
  /** The per-call ceiling the host advertised at initialize, if it advertises one (RFC open question). */
  advertisedCeiling(): Money | null;
  /**
   * 2026-07-28: the task's tool call failed at the host for the `failedCalls`-th time; when the
   * host's agent loop calls the tool again (ms from now), or null when it gives up.
   */
  hostRetryAfterMs(failedCalls: number): number | null;
  /** The MCP revision the connection runs (a real server knows the version it negotiated). */
  protocol(): Protocol;
  report(r: ServerReport): void;
}

/**
 * A server's own timers (servers/base.ts): its next task, a task's send (a retry, or after a
 * wait for the connection), a request's timeout, a reconnect (with the task that sends again
 * after it, for a reconnecting behaviour). Tasks are named by number, requests by their
 * pending entry's serial: the agent keeps what they name.
 */
export type ServerTimer =
  | { type: 'start' }
  | { type: 'send'; task: number; retry: boolean; wire?: WireStyle }
  | { type: 'timeout'; pending: number }
  | { type: 'reconnect'; task?: number };

/** A simulated MCP server: started once, told about every frame addressed to it. */
export interface ServerAgent {
  start(): void;
  /** One of its timers is due (see {@link ServerEnv.schedule}). */
  onTimer(timer: ServerTimer): void;
  onFrame(id: JsonRpcId, frame: Frame): void;
  /**
   * 2026-07-28: the request was an `input_required` round of a tool call the host then failed
   * locally (its handler refused): the server hears nothing, and the host may call the tool again.
   */
  onToolCallFailed(id: JsonRpcId): void;
}

export type ServerFactory = (env: ServerEnv, spec: ServerSpec) => ServerAgent;

/** The request a server sends for task `n`: text templates with `{n}` for the task number. */
export interface RequestTemplate {
  systemPrompt?: string;
  /** The user message; `{n}` becomes the task number so distinct tasks are distinct requests. */
  prompt: string;
  /** Pad the prompt with deterministic filler up to this many input tokens (4 characters each). */
  promptTokens?: number;
  /** A shared prefix (e.g. a long document) sent before the prompt: the prompt cache warms on it. */
  prefixTokens?: number;
  includeContext?: IncludeContext;
  modelHints?: string[];
  maxTokens: number;
  temperature?: number;
  budget?: SamplingParams['budget'];
}

export interface ServerSpec {
  name: string;
  behaviour: string;
  /** Behaviour parameters: retry caps, backoff, intervals (see each behaviour). */
  params: Record<string, unknown>;
  request: RequestTemplate;
  /** New tasks: one every `intervalMs` on average (Poisson), up to `tasks` in all (default: unbounded). */
  intervalMs: number;
  tasks?: number;
  /** First task after this long (default 0). */
  startAfterMs?: number;
  /** How long the server waits for a frame before it treats the request as dropped. */
  timeoutMs: number;
}
