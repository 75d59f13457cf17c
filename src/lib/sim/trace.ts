/**
 * The trace file: JSONL, one event a line — what a real client could log:
 *
 *   {"t": 0, "server": "release-notes", "type": "connect"}
 *   {"t": 1200, "server": "release-notes", "type": "request", "params": { ...sampling params... }}
 *   {"t": 1500, "server": "release-notes", "type": "disconnect"}
 *
 * `t` is milliseconds from the start of the trace. A trace replays against a scenario's two lanes
 * instead of the simulated population: the servers in it do not react to the frames.
 */
// names first: it turns zod's JIT off before any schema here is built (the site's CSP).
import '../machine/names';
import { z } from 'zod';
import { depthExceeded, depthPathText } from '../machine/identity';
import { AMOUNT_PATTERN, CURRENCY_PATTERN } from '../machine/money';
import { describeIssues } from '../machine/policy';
import { IncludeContextSchema, OnExceededSchema } from '../machine/vocabulary';
import type { SamplingParams } from '../machine/types';
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

const TraceEventSchema = z.discriminatedUnion('type', [
  z.strictObject({
    t: T,
    server: Server,
    type: z.literal('request'),
    params: SamplingParamsSchema
  }),
  z.strictObject({ t: T, server: Server, type: z.literal('connect') }),
  z.strictObject({ t: T, server: Server, type: z.literal('disconnect') })
]);

export interface TraceEvent {
  t: number;
  server: string;
  type: 'request' | 'connect' | 'disconnect';
  params?: SamplingParams;
}

export type TraceParse =
  { ok: true; events: TraceEvent[] } | { ok: false; error: string; line: number };

/** The largest trace accepted: a bound on what a pasted or uploaded file can make the page do. */
const MAX_TRACE_EVENTS = 200_000;

/**
 * Parse a JSONL trace. The first bad line stops the parse with an error naming the line, the JSON
 * path and the problem; blank lines are skipped. Events are ordered by `t` (stable).
 */
export function parseTrace(text: string): TraceParse {
  if (text.length > LIMITS.traceChars) {
    return {
      ok: false,
      line: 0,
      error: `the trace is ${(text.length / 1e6).toFixed(1)} million characters; the limit is ${LIMITS.traceChars / 1e6} million`
    };
  }
  const events: TraceEvent[] = [];
  const servers = new Set<string>();
  let requests = 0;
  let chunks = 0;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    const n = i + 1;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      return { ok: false, line: n, error: `line ${n}: not valid JSON (${(e as Error).message})` };
    }
    // Depth first, before zod or anything recursive walks the params.
    const params = isObject(raw) && Object.hasOwn(raw, 'params') ? raw.params : undefined;
    const deep = depthExceeded(params, LIMITS.paramsDepth);
    if (deep) {
      return {
        ok: false,
        line: n,
        error: `line ${n}: ${depthPathText(['params', ...deep])}: nested deeper than ${LIMITS.paramsDepth} levels (the limit for a request's params)`
      };
    }
    const r = TraceEventSchema.safeParse(raw);
    if (!r.success) {
      const first = describeIssues(r.error.issues, raw, undefined, TraceEventSchema)[0]!;
      return { ok: false, line: n, error: `line ${n}: ${first.path}: ${first.message}` };
    }
    // The event as written, not zod's copy: zod drops a member named `__proto__` from the loose
    // params objects, and a request's identity must hash what the server sent.
    const event = raw as TraceEvent;
    events.push(event);
    if (event.type === 'request') {
      requests++;
      // The scenario's chunk size is not known here: as many chunks as a response may have.
      chunks += Math.min(LIMITS.chunksPerResponse, event.params?.maxTokens ?? 0);
    }
    servers.add(event.server);
    if (servers.size > LIMITS.traceServers) {
      return {
        ok: false,
        line: n,
        error: `line ${n}: a trace may name at most ${LIMITS.traceServers} distinct servers`
      };
    }
    if (events.length > MAX_TRACE_EVENTS) {
      return {
        ok: false,
        line: n,
        error: `line ${n}: a trace may hold at most ${MAX_TRACE_EVENTS} events`
      };
    }
  }
  if (events.length === 0) return { ok: false, line: 0, error: 'the trace holds no events' };
  const refused = workRefusal({
    requests: 2 * requests,
    megabytes: (2 * (requests * 2_048 + text.length)) / 1e6,
    events: 2 * (4 * requests + chunks)
  });
  if (refused) return { ok: false, line: 0, error: refused };
  events.sort((a, b) => a.t - b.t);
  return { ok: true, events };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
