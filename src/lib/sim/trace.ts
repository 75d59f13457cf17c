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
import { z } from 'zod';
import { formatPath } from '../machine/policy';
import type { SamplingParams } from '../machine/types';

const Content = z.looseObject({ type: z.string().min(1) });
const TextContent = z.looseObject({ type: z.literal('text'), text: z.string() });

/** The sampling params a trace may carry: the MCP shape, checked before anything runs. */
export const SamplingParamsSchema = z.looseObject({
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['user', 'assistant']),
        content: z.union([TextContent, Content, z.array(z.union([TextContent, Content]))])
      })
    )
    .min(1),
  systemPrompt: z.string().optional(),
  includeContext: z.enum(['none', 'thisServer', 'allServers']).optional(),
  modelPreferences: z
    .looseObject({
      hints: z.array(z.looseObject({ name: z.string().optional() })).optional(),
      costPriority: z.number().min(0).max(1).optional(),
      speedPriority: z.number().min(0).max(1).optional(),
      intelligencePriority: z.number().min(0).max(1).optional()
    })
    .optional(),
  maxTokens: z.int().positive(),
  temperature: z.number().optional(),
  stopSequences: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  budget: z
    .looseObject({
      intent: z
        .looseObject({
          maxCost: z
            .strictObject({
              amount: z.string().regex(/^\d+(\.\d{1,6})?$/),
              currency: z.string().regex(/^[A-Z]{3}$/)
            })
            .optional()
        })
        .optional(),
      onExceeded: z.enum(['reject', 'truncate']).optional()
    })
    .optional()
});

const TraceEventSchema = z.discriminatedUnion('type', [
  z.strictObject({
    t: z.number().min(0),
    server: z.string().min(1),
    type: z.literal('request'),
    params: SamplingParamsSchema
  }),
  z.strictObject({ t: z.number().min(0), server: z.string().min(1), type: z.literal('connect') }),
  z.strictObject({ t: z.number().min(0), server: z.string().min(1), type: z.literal('disconnect') })
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
export const MAX_TRACE_EVENTS = 200_000;

/**
 * Parse a JSONL trace. The first bad line stops the parse with an error naming the line, the JSON
 * path and the problem; blank lines are skipped. Events are ordered by `t` (stable).
 */
export function parseTrace(text: string): TraceParse {
  const events: TraceEvent[] = [];
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
    const r = TraceEventSchema.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      return {
        ok: false,
        line: n,
        error: `line ${n}: ${formatPath(issue.path as (string | number)[])}: ${issue.message}`
      };
    }
    events.push(r.data as TraceEvent);
    if (events.length > MAX_TRACE_EVENTS) {
      return {
        ok: false,
        line: n,
        error: `line ${n}: a trace may hold at most ${MAX_TRACE_EVENTS} events`
      };
    }
  }
  if (events.length === 0) return { ok: false, line: 0, error: 'the trace holds no events' };
  events.sort((a, b) => a.t - b.t);
  return { ok: true, events };
}

/** Write events back as JSONL (the playground's "record a trace"). */
export function toTraceJsonl(events: readonly TraceEvent[]): string {
  return events.map((e) => JSON.stringify(e)).join('\n') + '\n';
}
