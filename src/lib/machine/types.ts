/**
 * The shared vocabulary of the client core. Everything here is plain data (JSON-serialisable), so
 * it crosses a Web Worker boundary, lands in IndexedDB and in JSONL files unchanged.
 */
import type { ReasonCode } from './reasons';
import type { BudgetDecision, IncludeContext, JsonRpcId, Money, OnExceeded } from './vocabulary';

export type {
  AuditRecord,
  BudgetDecision,
  IncludeContext,
  JsonRpcId,
  Money,
  Outcome,
  StoredDecision
} from './vocabulary';

// ───────────────────────────── the protocol surface (SPEC §2) ─────────────────────────────

export type Role = 'user' | 'assistant';

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

/** The RFC's optional, advisory budget member of a request. */
export interface BudgetIntent {
  intent?: { maxCost?: Money };
  onExceeded?: OnExceeded;
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

export interface SamplingRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: 'sampling/createMessage';
  params: SamplingParams;
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
