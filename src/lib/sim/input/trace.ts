/**
 * The trace file: JSONL, one event a line — what a real client could log:
 *
 *   {"t": 0, "server": "release-notes", "type": "connect"}
 *   {"t": 1200, "server": "release-notes", "type": "request", "params": { ...sampling params... }}
 *   {"t": 1500, "server": "release-notes", "type": "disconnect"}
 *
 * `t` is milliseconds from the start of the trace. A trace replays against a scenario's two lanes
 * instead of the simulated population: the servers in it do not react to the frames.
 *
 * A request imported from a real client's log (`lab import`, `import/`) also carries `logged`:
 * what the log shows the client answered — a result, an error (code, message, data), or none —
 * and, from the lab's own audit log, the verdict then. Replay compares it with each lane's
 * outcome (`whatif.ts`). Traces without it parse as before.
 */
// names first: it turns zod's JIT off before any schema here is built (the site's CSP).
import '../../machine/names';
import { z } from 'zod';
import {
  depthExceeded,
  depthPathText,
  loneSurrogateAt,
  LONE_SURROGATE
} from '../../machine/identity';
import { AMOUNT_PATTERN, CURRENCY_PATTERN } from '../../machine/money';
import { describeIssues, formatPath } from '../../machine/policy';
import { duplicateMessage, duplicateIn, jsonSyntaxProblem } from '../../machine/policy/json-strict';
import { lineColumn } from '../../machine/policy/json-text';
import { IncludeContextSchema, OnExceededSchema, OutcomeSchema } from '../../machine/vocabulary';
import type { Outcome, SamplingParams } from '../../machine/types';
import { LIMITS, workRefusal } from './limits';

const Content = z.looseObject({ type: z.string().min(1) });
const TextContent = z.looseObject({ type: z.literal('text'), text: z.string() });

/** The sampling params a trace may carry: the MCP shape, checked before anything runs. */
const SamplingParamsSchema = z.looseObject({
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['user', 'assistant']),
        content: z.union([TextContent, Content, z.array(z.union([TextContent, Content]))])
      })
    )
    .min(1),
  systemPrompt: z.string().optional(),
  includeContext: IncludeContextSchema.optional(),
  modelPreferences: z
    .looseObject({
      hints: z.array(z.looseObject({ name: z.string().optional() })).optional(),
      costPriority: z.number().min(0).max(1).optional(),
      speedPriority: z.number().min(0).max(1).optional(),
      intelligencePriority: z.number().min(0).max(1).optional()
    })
    .optional(),
  maxTokens: z.int().positive().max(LIMITS.tokens),
  temperature: z.number().optional(),
  stopSequences: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  budget: z
    .looseObject({
      intent: z
        .looseObject({
          maxCost: z
            .strictObject({
              amount: z.string().regex(AMOUNT_PATTERN),
              currency: z.string().regex(CURRENCY_PATTERN)
            })
            .optional()
        })
        .optional(),
      onExceeded: OnExceededSchema.optional()
    })
    .optional()
});

/** Milliseconds from the start of the trace: at most a year. */
const T = z.number().min(0).max(LIMITS.spanMs);
const Server = z.string().min(1).max(200);

const Label = z.string().max(200);

/** What a log shows happened to a request (see {@link Logged}). */
const LoggedSchema = z
  .strictObject({
    response: z.enum(['result', 'error', 'none']),
    afterMs: T.optional(),
    result: z
      .strictObject({
        model: Label.optional(),
        stopReason: Label.optional(),
        trimmed: z.boolean().optional()
      })
      .optional(),
    error: z
      .strictObject({
        code: z.int(),
        message: z.string().max(10_000).optional(),
        data: z.unknown().optional()
      })
      .optional(),
    audit: z
      .strictObject({
        outcome: OutcomeSchema,
        reason: Label.nullable(),
        consentShown: z.boolean(),
        cost: z.string().regex(AMOUNT_PATTERN),
        currency: z.string().regex(CURRENCY_PATTERN),
        alert: z.boolean(),
        shadow: z.boolean().optional()
      })
      .optional()
  })
  .superRefine((l, ctx) => {
    for (const k of ['result', 'error'] as const) {
      if (l.response === k && !l[k])
        ctx.addIssue({ code: 'custom', path: [k], message: `a "${k}" response needs "${k}"` });
      if (l.response !== k && l[k])
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message: `only a "${k}" response carries "${k}" (this one is "${l.response}")`
        });
    }
  });

const TraceEventSchema = z.discriminatedUnion('type', [
  z.strictObject({
    t: T,
    server: Server,
    type: z.literal('request'),
    params: SamplingParamsSchema,
    logged: LoggedSchema.optional()
  }),
  z.strictObject({ t: T, server: Server, type: z.literal('connect') }),
  z.strictObject({ t: T, server: Server, type: z.literal('disconnect') })
]);

/**
 * What a real client's log shows it answered to a sampling request: `result` (with the model and
 * stop reason it reported; `trimmed` when its result carried a context note), `error` (the
 * JSON-RPC code, message and data), or `none` (no answer in the log: cut by a restart, or the
 * log ends first). `afterMs`: how long after the request the answer was logged. `audit`: the lab's own verdict then, when the
 * log is the lab's audit JSONL (`shadow`: the handler ran in shadow mode and served the request
 * whatever the verdict said).
 */
export interface Logged {
  response: 'result' | 'error' | 'none';
  afterMs?: number;
  result?: { model?: string; stopReason?: string; trimmed?: boolean };
  error?: { code: number; message?: string; data?: unknown };
  audit?: {
    outcome: Outcome;
    reason: string | null;
    consentShown: boolean;
    cost: string;
    currency: string;
    alert: boolean;
    shadow?: boolean;
  };
}

export interface TraceEvent {
  t: number;
  server: string;
  type: 'request' | 'connect' | 'disconnect';
  params?: SamplingParams;
  /** A request imported from a log: what the log shows happened to it. */
  logged?: Logged;
}

export type TraceParse =
  { ok: true; events: TraceEvent[] } | { ok: false; error: string; line: number };

/** The largest trace accepted: a bound on what a pasted or uploaded file can make the page do. */
const MAX_TRACE_EVENTS = 200_000;
/**
 * The longest line (one event) of a trace: a quarter of the whole trace's bound, room for a
 * 10-million-character prompt; a file with no line breaks (`/dev/zero` as a regular file, a
 * binary) is refused after one bounded line, never read whole into one string.
 */
export const MAX_TRACE_LINE_CHARS = 16_000_000;

function tooLong(chars: number): string {
  return `the trace is ${(chars / 1e6).toFixed(1)} million characters; the limit is ${LIMITS.traceChars / 1e6} million`;
}

/**
 * A trace read line by line, as `lab replay` streams a file: give it each line (without its line
 * break) with its number, then ask for the result. The first bad line stops the parse with an
 * error naming the line, the JSON path and the problem; blank lines are skipped.
 */
export class TraceReader {
  #events: TraceEvent[] = [];
  #servers = new Set<string>();
  #requests = 0;
  #chunks = 0;
  #chars = 0;
  #error: TraceParse | null = null;

  /** One line; false when it ended the parse (see `result`). */
  line(text: string, n: number): boolean {
    if (this.#error) return false;
    this.#chars += text.length + 1;
    this.#error = this.#read(text, n);
    return this.#error === null;
  }

  #read(text: string, n: number): TraceParse | null {
    const fail = (error: string): TraceParse => ({
      ok: false,
      line: n,
      error: `line ${n}: ${error}`
    });
    if (this.#chars > LIMITS.traceChars + 1)
      return { ok: false, line: 0, error: tooLong(this.#chars) };
    if (text.length > MAX_TRACE_LINE_CHARS)
      return fail(
        `longer than ${MAX_TRACE_LINE_CHARS.toLocaleString('en-US')} characters, the limit for one line of a trace`
      );
    const line = text.trim();
    if (!line) return null;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      const p = jsonSyntaxProblem(line);
      return fail(`not valid JSON at column ${p.column}: ${p.detail}`);
    }
    const dup = duplicateIn(line, raw);
    if (dup) {
      const { column } = lineColumn(line, dup.at);
      return fail(
        `${formatPath(dup.segments)}: ${duplicateMessage(String(dup.segments.at(-1)), `column ${column}`)}`
      );
    }
    const problem = traceEventProblem(raw);
    if (problem) return fail(problem);
    const event = raw as TraceEvent;
    this.#events.push(event);
    if (event.type === 'request') {
      this.#requests++;
      // The scenario's chunk size is not known here: as many chunks as a response may have.
      this.#chunks += Math.min(LIMITS.chunksPerResponse, event.params?.maxTokens ?? 0);
    }
    this.#servers.add(event.server);
    if (this.#servers.size > LIMITS.traceServers)
      return fail(`a trace may name at most ${LIMITS.traceServers} distinct servers`);
    if (this.#events.length > MAX_TRACE_EVENTS)
      return fail(`a trace may hold at most ${MAX_TRACE_EVENTS} events`);
    return null;
  }

  /** The events ordered by `t` (stable), or the first error; `chars`: the text's length. */
  result(chars = Math.max(0, this.#chars - 1)): TraceParse {
    if (this.#error) return this.#error;
    const events = this.#events;
    if (events.length === 0) return { ok: false, line: 0, error: 'the trace holds no events' };
    const refused = workRefusal(
      {
        requests: 2 * this.#requests,
        megabytes: (2 * (this.#requests * 2_048 + chars)) / 1e6,
        events: 2 * (4 * this.#requests + this.#chunks)
      },
      'trace'
    );
    if (refused) return { ok: false, line: 0, error: refused };
    events.sort((a, b) => a.t - b.t);
    return { ok: true, events };
  }
}

/**
 * Parse a JSONL trace (see {@link TraceReader}): the events ordered by `t`, or the first error
 * with its line.
 */
export function parseTrace(text: string): TraceParse {
  if (text.length > LIMITS.traceChars) return { ok: false, line: 0, error: tooLong(text.length) };
  const reader = new TraceReader();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) if (!reader.line(lines[i]!, i + 1)) break;
  return reader.result(text.length);
}

/**
 * What is wrong with one parsed trace event, as `$.path: problem`, or null when it is a valid
 * event. Depth and lone surrogates are checked first, before zod or anything recursive walks it.
 * The caller keeps the value as written, not zod's copy: zod drops a member named `__proto__` from
 * the loose params objects, and a request's identity must hash what the server sent.
 */
export function traceEventProblem(raw: unknown): string | null {
  for (const member of ['params', 'logged']) {
    const v = isObject(raw) && Object.hasOwn(raw, member) ? raw[member] : undefined;
    const deep = depthExceeded(v, LIMITS.paramsDepth);
    if (deep) {
      return `${depthPathText([member, ...deep])}: nested deeper than ${LIMITS.paramsDepth} levels (the limit for a request's ${member})`;
    }
    const lone = loneSurrogateAt(v);
    if (lone) return `${depthPathText([member, ...lone])}: ${LONE_SURROGATE}`;
  }
  const r = TraceEventSchema.safeParse(raw);
  if (!r.success) {
    const first = describeIssues(r.error.issues, raw, undefined, TraceEventSchema)[0]!;
    return `${first.path}: ${first.message}`;
  }
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
