/**
 * Bounded work and plain messages (issue #12). Each row is a case probed on the landed main:
 * what happened then (in the comment) and the one line that refuses it now. The README's
 * scenario section documents the same limits.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { estimateWork, LIMITS, serverRequests, workRefusal } from './limits';
import { parseScenario } from './scenario';
import { parseTrace } from './trace';

const BASE = JSON.parse(
  readFileSync(
    fileURLToPath(new URL('../../../static/scenarios/retryable-loop.json', import.meta.url)),
    'utf8'
  )
) as Record<string, unknown>;

type Mutate = (s: any) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

function firstError(mutate: Mutate): string {
  const s = structuredClone(BASE);
  mutate(s);
  const r = parseScenario(s);
  return r.ok ? 'accepted' : `${r.errors[0]!.path}: ${r.errors[0]!.message}`;
}

function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

const SCENARIO_CASES: [string, Mutate, string | RegExp][] = [
  // Before: still running after 40 s at 1 GB.
  [
    'intervalMs 0.001',
    (s) => (s.servers[0].intervalMs = 0.001),
    '$.servers[0].intervalMs: must be at least 10, got the number 0.001'
  ],
  // Before: still running after 40 s at 1 GB.
  [
    'durationMs 1e12',
    (s) => (s.durationMs = 1e12),
    '$.durationMs: must be at most 2592000000, got the number 1000000000000'
  ],
  // Before: not done after 400 s, 2.7 GB.
  [
    '1,000 servers every second for 10 minutes',
    (s) => {
      s.servers = [{ ...s.servers[0], count: 1000, intervalMs: 1000 }];
      s.durationMs = 600_000;
    },
    /^\$: this run would be about 25,242,000 requests \/ [\d,]+ MB; the limit is 6,000,000 requests \/ 25,000 MB/
  ],
  // Before: V8 out of memory after 118 s (exit 134, native stack trace).
  [
    'promptTokens 1e8',
    (s) => (s.servers[0].request.promptTokens = 1e8),
    '$.servers[0].request.promptTokens: must be at most 1000000, got the number 100000000'
  ],
  // Before: "Invalid string length".
  [
    'promptTokens 2^53 − 1',
    (s) => (s.servers[0].request.promptTokens = Number.MAX_SAFE_INTEGER),
    '$.servers[0].request.promptTokens: must be at most 1000000, got the number 9007199254740991'
  ],
  // Before: accepted; the run would carry ~600 GB of prompt text.
  [
    'promptTokens 100,000 for 100 servers',
    (s) => {
      s.servers = [
        {
          ...s.servers[0],
          count: 100,
          intervalMs: 10_000,
          request: { ...s.servers[0].request, promptTokens: 100_000 }
        }
      ];
    },
    /^\$: this run would be about 1,516,200 requests \/ 609,632 MB; the limit is/
  ],
  // Before: "Invalid input: expected string, received undefined".
  [
    'a missing prompt',
    (s) => delete s.servers[0].request.prompt,
    '$.servers[0].request.prompt: missing required member "prompt"'
  ],
  // Before: "Invalid input".
  [
    'perCallCap 5',
    (s) => (s.lanes.A.policy.defaults.perCallCap = 5),
    '$.lanes.A.policy.defaults.perCallCap: expected null, { "amount": "0.05", "currency": "USD" } or { "tokens": 20000 }, got the number 5'
  ],
  // Before: "Invalid input".
  [
    'an unknown TTL kind',
    (s) => (s.lanes.A.client = { allowedTtl: { kind: 'forever' } }),
    '$.lanes.A.client.allowedTtl.kind: the string "forever" is not a known "kind": expected one of "session", "window", "ms", "none"'
  ],
  // Before: accepted; amounts of any length.
  [
    'a 30-digit price',
    (s) =>
      (s.provider = {
        cards: [
          {
            model: 'm',
            version: '1',
            currency: 'USD',
            inputPerMtok: '1'.repeat(30),
            outputPerMtok: '1'
          }
        ]
      }),
    '$.provider.cards[0].inputPerMtok: a decimal string such as "0.05" (at most 9 digits before the point, 6 after)'
  ],
  // Before: accepted (the value is never read).
  [
    'a parameter nested 2,000 deep',
    (s) => (s.servers[0].params = { maxRetries: nested(2000) }),
    '$.servers[0].params.maxRetries[0][0]…: nested deeper than 64 levels (the limit for any input)'
  ],
  [
    '1,001 servers',
    (s) =>
      (s.servers = [
        { ...s.servers[0], count: 1000 },
        { ...s.servers[1], count: 1 }
      ]),
    '$.servers: 1001 servers in all (counts included); the limit is 1000'
  ]
];

describe('scenario limits: refused before any work, with one line', () => {
  it.each(SCENARIO_CASES)('%s', (_label, mutate, expected) => {
    const e = firstError(mutate);
    if (typeof expected === 'string') expect(e).toBe(expected);
    else expect(e).toMatch(expected);
  });

  it('accepts every value at its bound', () => {
    expect(
      firstError((s) => {
        s.servers = [{ ...s.servers[0], intervalMs: LIMITS.minIntervalMs, tasks: 10 }];
        s.servers[0].request.promptTokens = LIMITS.tokens;
        s.servers[0].request.maxTokens = LIMITS.tokens;
      })
    ).toBe('accepted');
    expect(firstError((s) => (s.durationMs = LIMITS.durationMs))).toBe('accepted');
  });
});

const req = (p: string) => `{"t":0,"server":"a","type":"request","params":${p}}`;
const MSG = '[{"role":"user","content":{"type":"text","text":"x"}}]';

const TRACE_CASES: [string, string, string][] = [
  // Before: passed validation; the budget arithmetic threw; `lab replay` exited 0 unanswered.
  [
    'maxTokens 9e15',
    req(`{"messages":${MSG},"maxTokens":9000000000000000}`),
    'line 1: $.params.maxTokens: must be at most 1000000, got the number 9000000000000000'
  ],
  // Before: "Invalid input".
  [
    'content 5',
    req('{"messages":[{"role":"user","content":5}],"maxTokens":5}'),
    'line 1: $.params.messages[0].content: expected a content block such as { "type": "text", "text": "…" }, any other block with a "type", or an array of such blocks, got the number 5'
  ],
  // Before: "Invalid input: expected string, received undefined"-style.
  [
    'a missing content',
    req('{"messages":[{"role":"user"}],"maxTokens":5}'),
    'line 1: $.params.messages[0].content: missing required member "content"'
  ],
  [
    'an unknown event type',
    '{"t":0,"server":"a","type":"reqest"}',
    'line 1: $.type: the string "reqest" is not a known "type": expected one of "request", "connect", "disconnect"'
  ],
  // Before: "Loaded", then RangeErrors; `lab replay` answered 1 of 2 and exited 0.
  [
    'params nested 2,000 deep',
    req(`{"messages":${MSG},"maxTokens":5,"metadata":${'['.repeat(2000)}${']'.repeat(2000)}}`),
    "line 1: $.params.metadata[0][0][0][0]…: nested deeper than 64 levels (the limit for a request's params)"
  ]
];

describe('trace limits', () => {
  it.each(TRACE_CASES)('%s', (_label, line, expected) => {
    const r = parseTrace(line);
    expect(r.ok ? 'accepted' : r.error).toBe(expected);
  });

  it('accepts params nested exactly 64 deep and refuses 65', () => {
    // params (1) → metadata (2) → 62 arrays (3…64).
    const at = req(
      `{"messages":${MSG},"maxTokens":5,"metadata":{"m":${'['.repeat(62)}${']'.repeat(62)}}}`
    );
    expect(parseTrace(at).ok).toBe(true);
    const over = req(
      `{"messages":${MSG},"maxTokens":5,"metadata":{"m":${'['.repeat(63)}${']'.repeat(63)}}}`
    );
    expect(parseTrace(over).ok).toBe(false);
  });

  // Before: 200,000 distinct servers took 235 s and 2.7 GB.
  it('refuses a trace naming more than 1,000 distinct servers, at the line that crosses it', () => {
    const text = Array.from(
      { length: 1_500 },
      (_, i) => `{"t":${i},"server":"s${i}","type":"connect"}`
    ).join('\n');
    expect(parseTrace(text)).toEqual({
      ok: false,
      line: 1001,
      error: 'line 1001: a trace may name at most 1000 distinct servers'
    });
  });

  it('refuses text longer than the limit before reading a line', () => {
    const r = parseTrace(' '.repeat(LIMITS.traceChars + 1));
    expect(r.ok ? '' : r.error).toBe(
      'the trace is 64.0 million characters; the limit is 64 million'
    );
  });
});

describe('the work estimate', () => {
  it('counts tasks by interval or by `tasks`, times the attempts each may make', () => {
    expect(serverRequests({ intervalMs: 60_000 }, {}, 600_000)).toBe(11);
    expect(serverRequests({ intervalMs: 60_000, tasks: 3 }, { maxRetries: 4 }, 600_000)).toBe(15);
    expect(serverRequests({ intervalMs: 60_000, tasks: 1 }, { maxRetries: null }, 600_000)).toBe(
      101
    );
    expect(serverRequests({ intervalMs: 60_000, startAfterMs: 600_000 }, {}, 600_000)).toBe(1);
  });

  it('says how much and what the limit is, in one line', () => {
    expect(workRefusal(estimateWork([{ requests: 10, chars: 100 }]))).toBeNull();
    const line = workRefusal(estimateWork([{ requests: 3_500_000, chars: 0 }]))!;
    expect(line).toBe(
      'this run would be about 7,000,000 requests / 14,336 MB; the limit is 6,000,000 requests / 25,000 MB (fewer servers, a longer intervalMs, a shorter durationMs or fewer tokens)'
    );
    expect(line).not.toContain('\n');
  });

  it('lets the ready-made scenarios and the UI benchmark run', () => {
    const dir = fileURLToPath(new URL('../../../static/scenarios/', import.meta.url));
    for (const f of ['budget-window', 'prompt-mutator', 'transient-marked-permanent']) {
      expect(parseScenario(readFileSync(`${dir}${f}.json`, 'utf8')).ok).toBe(true);
    }
    // And the largest one here: the UI benchmark's simulated day of 50 servers.
    const bench = fileURLToPath(new URL('../../../bench/ui-50-servers.json', import.meta.url));
    expect(parseScenario(readFileSync(bench, 'utf8')).ok).toBe(true);
  });
});
