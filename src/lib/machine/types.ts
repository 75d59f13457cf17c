/**
 * The shared vocabulary of the client core. Everything here is plain data (JSON-serialisable), so
 * it crosses a Web Worker boundary, lands in IndexedDB and in JSONL files unchanged.
 */
import type { ReasonCode } from './reasons';

// ───────────────────────────── the protocol surface (SPEC §2) ─────────────────────────────

export type Role = 'user' | 'assistant';
export type IncludeContext = 'none' | 'thisServer' | 'allServers';

export interface TextContent {
  type: 'text';
  text: string;
}
/** Sampling messages carry text in this simulator; other block types pass through untouched. */
export type ContentBlock = TextContent | { type: string; [k: string]: unknown };

export interface SamplingMessage {
  role: Role;
  content: ContentBlock | ContentBlock[];
}

export interface ModelPreferences {
  hints?: { name?: string }[];
  costPriority?: number;
  speedPriority?: number;
  intelligencePriority?: number;
}

/** A decimal string and a currency: money is never a float (SPEC §6). */
export interface Money {
  amount: string;
  currency: string;
}

/** The RFC's optional, advisory budget member of a request. */
export interface BudgetIntent {
  intent?: { maxCost?: Money };
  onExceeded?: 'reject' | 'truncate';
}

/** `sampling/createMessage` params as a server sends them (MCP schema plus the RFC's `budget`). */
export interface SamplingParams {
  messages: SamplingMessage[];
  systemPrompt?: string;
  includeContext?: IncludeContext;
  modelPreferences?: ModelPreferences;
  maxTokens: number;
  temperature?: number;
  stopSequences?: string[];
  metadata?: Record<string, unknown>;
  budget?: BudgetIntent;
  [k: string]: unknown;
}

export type JsonRpcId = string | number;

export interface SamplingRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: 'sampling/createMessage';
  params: SamplingParams;
}

/** The RFC's decision basis: what a server needs to shrink deterministically. */
export interface BudgetDecision {
  estimatedCost: Money;
  limitApplied: Money;
  limitSource: 'host_policy' | 'budget_window' | 'session_pool' | 'token_meter';
  meterBasis: string;
  estimatedTokens: { input: number; output: number };
  actualCost?: Money;
  actualTokens?: { input: number; output: number };
  /** Whether the server's advisory intent was honoured (intent ≥ cost, or no intent). */
  requestHonored?: boolean;
}

export interface ContextAnnotation {
  requested: IncludeContext;
  applied: IncludeContext;
  reason: string;
}

export interface CreateMessageResult {
  role: 'assistant';
  content: TextContent;
  model: string;
  stopReason: 'endTurn' | 'maxTokens' | 'stopSequence' | 'budget_exceeded' | 'budget_exhausted';
  _meta?: { context?: ContextAnnotation; [k: string]: unknown };
  budget?: { decision: BudgetDecision };
}

export interface DenialData {
  reason: ReasonCode | string;
  server: string;
  retryable: boolean;
  resetsAt?: string;
  retryAfterMs?: number;
  budget?: { decision: BudgetDecision };
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: DenialData | Record<string, unknown>;
}

export interface ResultFrame {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: CreateMessageResult;
}

export interface ErrorFrame {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: JsonRpcError;
}

/** The one response a request gets. */
export type Frame = ResultFrame | ErrorFrame;

/** JSON-RPC codes this client sends. */
export const CODES = {
  /** Denied by policy or by the user: an implementation-defined code in -32000..-32019. */
  denied: -32003,
  /** Transport: the provider did not answer in time. */
  requestTimeout: -32001,
  /** Provider failure: JSON-RPC internal error. */
  internal: -32603
} as const;

// ───────────────────────────── outcomes, decisions, audit ─────────────────────────────

export type Outcome =
  | 'allowed'
  | 'trimmed'
  | 'denied'
  | 'budget_exceeded'
  | 'budget_exhausted'
  | 'transport_error'
  | 'provider_error';

/**
 * What the decision store holds: a verdict and a reason, never a completion (SPEC §4).
 * Keyed (server, identity).
 */
export interface StoredDecision {
  server: string;
  identity: string;
  verdict: 'allowed' | 'denied';
  reason: ReasonCode | null;
  retryable: boolean;
  /** Virtual ms when the decision was made. */
  decidedAt: number;
  /** Virtual ms after which the entry is expired; null = until policy edit / session end. */
  expiresAt: number | null;
  resetsAt?: string;
  retryAfterMs?: number;
  /** The server's effective policy block hash when decided; an edit invalidates the entry. */
  policyHash: string;
  /** How many times the same identity was presented again and answered from this entry. */
  represented: number;
  /** Virtual ms of the most recent re-presentations (at most the alert threshold), for the alert. */
  recent: number[];
}

export interface AuditRecord {
  seq: number;
  /** Virtual ms since the epoch of the run's clock. */
  t: number;
  time: string;
  server: string;
  connection: string;
  requestId: JsonRpcId;
  identity: string;
  outcome: Outcome;
  reason: string | null;
  retryable: boolean | null;
  replayed: boolean;
  represented: number;
  consentShown: boolean;
  consent: 'approved' | 'denied' | 'timeout' | 'not-asked';
  model: string | null;
  tokensIn: number;
  tokensOut: number;
  /** Decimal string in the rate card's currency. */
  cost: string;
  currency: string;
  durationMs: number;
  contextRequested: IncludeContext;
  contextApplied: IncludeContext | null;
  budgetDecision: BudgetDecision | null;
  /** True when the learner's silence switch dropped the frame. */
  silenced: boolean;
  /** True when this presentation tripped the retry-loop alert. */
  alert: boolean;
  lane?: string;
}
