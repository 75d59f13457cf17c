/**
 * Bounded work and plain messages (issue #12). Each row is a case probed on the landed main:
 * what happened then (in the comment) and the one line that refuses it now. The README's
 * scenario section documents the same limits.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  estimateWork,
  LIMITS,
  responseChunks,
  serverRequests,
  serverWork,
  workRefusal
} from './limits';
import { parseScenario } from './scenario';
import { BEHAVIOURS } from '../actors/servers/behaviours';
import { BASE_SHAPE, PARAM_SPECS } from '../actors/servers/params';
import { parseTrace } from './trace';
import { parsePolicy } from '../../machine/policy';

const BASE = JSON.parse(
  readFileSync(
    fileURLToPath(new URL('../../../../static/scenarios/retryable-loop.json', import.meta.url)),
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
    '$.servers[0].intervalMs: must be at least 10 ms, got the number 0.001'
  ],
  // Before: still running after 40 s at 1 GB.
  [
    'durationMs 1e12',
    (s) => (s.durationMs = 1e12),
    '$.durationMs: must be at most 2592000000 ms (30 days), got the number 1000000000000'
  ],
  // Before: not done after 400 s, 2.7 GB.
  [
    '1,000 servers every second for 10 minutes',
    (s) => {
      s.servers = [{ ...s.servers[0], count: 1000, intervalMs: 1000 }];
      s.durationMs = 600_000;
    },
    /^\$: this run would be about 28,350,000 requests \/ [\d,]+ MB; the limit is 8,000,000 requests \/ 64,000 MB/
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
    /^\$: this run would be about 1,755,600 requests \/ 706,115 MB; the limit is/
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

/** Server 0 as `behaviour` with `params` (the base refuses it every request: it retries). */
const asServer =
  (behaviour: string, params: Record<string, unknown>): Mutate =>
  (s) => {
    s.servers[0].behaviour = behaviour;
    s.servers[0].params = params;
  };

/** Issue #19, item 2: behaviour parameters the limits admitted. */
const PARAM_CASES: [string, Mutate, string][] = [
  // Before: admitted; the page's tab crashed after 98 s (worker 3.5 GB); `lab run` still running
  // at 60 s (390 MB), the clock stuck at 0.
  [
    'a tight loop at intervalMs 0',
    asServer('tight-loop', { intervalMs: 0 }),
    '$.servers[0].params.intervalMs: must be at least 10 ms, got the number 0'
  ],
  // Before: admitted; `lab run` still running at 60 s (281 MB).
  [
    'a tight loop at intervalMs 1',
    asServer('tight-loop', { intervalMs: 1 }),
    '$.servers[0].params.intervalMs: must be at least 10 ms, got the number 1'
  ],
  // Before: admitted; the run threw "Invalid time value" (0 × 2^1024 is NaN), the page's clock
  // stuck at 0:00:00, then NaN:NaN:NaN.
  [
    'a naive retrier with maxRetries 1e400 and baseMs 0',
    (s) => {
      asServer('naive-retrier', { baseMs: 0 })(s);
      s.servers[0].params.maxRetries = Infinity; // what JSON.parse makes of 1e400
    },
    '$.servers[0].params.baseMs: must be at least 10 ms, got the number 0'
  ],
  [
    'a naive retrier with maxRetries 1e400',
    (s) => {
      asServer('naive-retrier', {})(s);
      s.servers[0].params.maxRetries = Infinity;
    },
    '$.servers[0].params.maxRetries: must be a finite number at most 1000000 (or null for no limit), got a number too large to represent (such as 1e400)'
  ],
  [
    'a naive retrier whose backoff shrinks to 0 (factor 0)',
    asServer('naive-retrier', { factor: 0 }),
    '$.servers[0].params.factor: must be at least 1, got the number 0'
  ],
  [
    'a naive retrier jittered down to 0 ms',
    asServer('naive-retrier', { jitter: 1 }),
    '$.servers[0].params.jitter: must be at most 0.5, got the number 1'
  ],
  // Before: admitted; `lab run` still running at 60 s (365 MB).
  [
    'a reconnector at reconnectMs 0',
    asServer('reconnector', { reconnectMs: 0, maxReconnects: 1e9 }),
    '$.servers[0].params.reconnectMs: must be at least 10 ms, got the number 0'
  ],
  [
    'a reconnector with maxReconnects 1e9',
    asServer('reconnector', { maxReconnects: 1e9 }),
    '$.servers[0].params.maxReconnects: must be at most 1000000 (or null for no limit), got the number 1000000000'
  ],
  // Before: admitted; `lab run` still running at 60 s (465 MB).
  [
    'a prompt mutator at intervalMs 0',
    asServer('prompt-mutator', { intervalMs: 0, maxRetries: 1e9 }),
    '$.servers[0].params.intervalMs: must be at least 10 ms, got the number 0'
  ],
  [
    'a polite retrier told to retry without end',
    asServer('well-behaved', { maxRetries: null }),
    '$.servers[0].params.maxRetries: must be a whole number from 0 to 1000000, got null: well-behaved retries as soon as a frame says, so only this cap bounds it'
  ],
  [
    'a timeout-sensitive server at retryDelayMs 0',
    asServer('timeout-sensitive', { retryDelayMs: 0 }),
    '$.servers[0].params.retryDelayMs: must be at least 10 ms, got the number 0'
  ],
  // Before: admitted, and counted as 100 attempts a task: 2.5 million requests, minutes of work.
  [
    'a tight loop at 10 ms, unbounded, for 30 days',
    (s) => {
      asServer('tight-loop', { intervalMs: 10 })(s);
      s.durationMs = LIMITS.durationMs;
    },
    '$: this run would be about 2,342,649,988,634 requests / 5,289,703,670 MB; the limit is 8,000,000 requests / 64,000 MB (fewer servers, a longer intervalMs, fewer retries, a shorter durationMs or fewer tokens)'
  ],
  // Before: admitted; 40 s and 1 GB for one request a lane.
  [
    'maxTokens 1,000,000 one token a chunk',
    (s) => {
      s.servers[0].request.maxTokens = 1_000_000;
      s.provider = { chunkTokens: 1 };
    },
    '$.servers[0].request.maxTokens: 1000000 tokens in chunks of 1 is 1,000,000 chunks a response; the limit is 20,000 (provider.chunkTokens of at least 50, or fewer maxTokens)'
  ],
  [
    'streams of 20,000 chunks for every request',
    (s) => {
      s.servers = [
        { ...s.servers[0], count: 20, request: { ...s.servers[0].request, maxTokens: 1_000_000 } }
      ];
    },
    "$: this run would be about 252,050,400 clock events (its 12,600 requests and their streams' chunks); the limit is 100,000,000 (a larger provider.chunkTokens, a smaller maxTokens or fewer requests)"
  ]
];

describe('behaviour parameters: bounded like every other number, counted by the estimate', () => {
  it.each(PARAM_CASES)('%s', (_label, mutate, expected) => {
    expect(firstError(mutate)).toBe(expected);
  });

  it('accepts every parameter at its bound, and null where a cap may be unbounded', () => {
    // One task each: a retry every 5 ms for an hour is within the budget, a task every 10 minutes is not.
    const once =
      (behaviour: string, params: Record<string, unknown>): Mutate =>
      (s) => {
        asServer(behaviour, params)(s);
        s.servers[0].tasks = 1;
      };
    const naive = { baseMs: 10, capMs: 10, factor: 100, jitter: 0.5, maxRetries: null };
    expect(firstError(once('naive-retrier', naive))).toBe('accepted');
    expect(firstError(once('tight-loop', { intervalMs: 10, maxRetries: null }))).toBe('accepted');
    expect(firstError(once('reconnector', { reconnectMs: 10, maxReconnects: null }))).toBe(
      'accepted'
    );
    expect(firstError(once('well-behaved', { maxRetries: LIMITS.retries }))).toBe('accepted');
  });

  it('knows the bounds of every parameter every behaviour reads', () => {
    for (const [name, b] of Object.entries(BEHAVIOURS)) {
      const shape = { ...BASE_SHAPE, ...PARAM_SPECS[name]!.shape };
      expect(Object.keys(shape).sort(), name).toEqual(Object.keys(b.defaults).sort());
    }
  });
});

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

/** The first error for `base` as JSON text with `"__X__"` replaced by `literal`. */
function firstErrorText(mutate: Mutate, literal: string): string {
  const s = structuredClone(BASE);
  mutate(s);
  const r = parseScenario(JSON.stringify(s).replace('"__X__"', literal));
  return r.ok ? 'accepted' : `${r.errors[0]!.path}: ${r.errors[0]!.message}`;
}

// Issue #19, item 7: JSON has no Infinity (1e400 parses to it), and zod's int() states the
// safe-integer range as a bound of its own beside the real one.
const MESSAGE_CASES: [string, Mutate, string, string][] = [
  // Before: "expected a number, got the number Infinity".
  [
    'durationMs 1e400',
    (s) => (s.durationMs = '__X__'),
    '1e400',
    '$.durationMs: must be a finite number at most 2592000000 ms (30 days), got a number too large to represent (such as 1e400)'
  ],
  [
    'restarts[0] -1e400',
    (s) => (s.restarts = ['__X__']),
    '-1e400',
    '$.restarts[0]: must be a finite number at least 0 ms, got a negative number too large to represent (such as -1e400)'
  ],
  [
    "a policy's token cap 1e400",
    (s) => (s.lanes.A.policy.defaults.perCallCap = { tokens: '__X__' }),
    '1e400',
    '$.lanes.A.policy.defaults.perCallCap.tokens: must be a finite number at most 100000000, got a number too large to represent (such as 1e400)'
  ],
  // Before: "must be at most 9007199254740991, got the number 100000000000000000000".
  [
    'startAfterMs 1e20',
    (s) => (s.servers[0].startAfterMs = '__X__'),
    '1e20',
    '$.servers[0].startAfterMs: must be at most 31622400000 ms (366 days), got the number 100000000000000000000'
  ],
  [
    'alert.windowMs 1e20',
    (s) => (s.lanes.A.client = { alert: { windowMs: '__X__' } }),
    '1e20',
    '$.lanes.A.client.alert.windowMs: must be at most 31622400000 ms (366 days), got the number 100000000000000000000'
  ],
  [
    'seed -1e20',
    (s) => (s.seed = '__X__'),
    '-1e20',
    '$.seed: must be at least 0, got the number -100000000000000000000'
  ]
];

describe('number messages name the real bound', () => {
  it.each(MESSAGE_CASES)('%s', (_label, mutate, literal, expected) => {
    expect(firstErrorText(mutate, literal)).toBe(expected);
  });

  it('in a policy file and a trace line too', () => {
    const policyText = JSON.stringify((BASE as Record<string, any>).lanes.A.policy); // eslint-disable-line @typescript-eslint/no-explicit-any
    const policy = parsePolicy(
      policyText.replace('"rateLimit":null', '"rateLimit":{"requests":1e400,"windowMs":1000}')
    );
    expect(policy.ok ? 'accepted' : policy.errors[0]!.message).toBe(
      'must be a finite number at most 1000000000, got a number too large to represent (such as 1e400)'
    );
    const trace = parseTrace(req(`{"messages":${MSG},"maxTokens":1e400}`));
    expect(trace.ok ? 'accepted' : trace.error).toBe(
      'line 1: $.params.maxTokens: must be a finite number at most 1000000, got a number too large to represent (such as 1e400)'
    );
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

  // Before: accepted; each request streamed up to a million chunks at the scenario's chunk size.
  it('refuses a trace whose requests would stream more chunks than the event budget', () => {
    const text = Array.from({ length: 3_000 }, (_, i) =>
      req(
        `{"messages":[{"role":"user","content":{"type":"text","text":"x${i}"}}],"maxTokens":1000000}`
      )
    ).join('\n');
    const r = parseTrace(text);
    expect(r.ok ? 'accepted' : r.error).toBe(
      "this run would be about 120,024,000 clock events (its 6,000 requests and their streams' chunks); the limit is 100,000,000 (a smaller params.maxTokens in its requests, or fewer request events)"
    );
    // A trace cannot set the scenario's provider: the suggestion names what the trace can change.
    expect(r.ok ? '' : r.error).not.toContain('chunkTokens');
  });

  it('a trace too large in requests or text is told what a trace can change', () => {
    const line = workRefusal(
      estimateWork([{ requests: 4_500_000, chars: 0, chunks: 1 }]),
      'trace'
    )!;
    expect(line).toBe(
      'this run would be about 9,000,000 requests / 18,576 MB; the limit is 8,000,000 requests / 64,000 MB (fewer request events, or shorter messages in them)'
    );
  });

  it('refuses text longer than the limit before reading a line', () => {
    const r = parseTrace(' '.repeat(LIMITS.traceChars + 1));
    expect(r.ok ? '' : r.error).toBe(
      'the trace is 64.0 million characters; the limit is 64 million'
    );
  });
});

describe('the work estimate', () => {
  const every = (cap: number, everyMs: number) => [{ cap, everyMs }];

  it('counts tasks by interval (three standard deviations above the mean) or by `tasks`, and each retry channel up to its cap', () => {
    // Arrivals are random: 10 expected in 10 minutes, up to 10 + 3√10 counted.
    expect(serverRequests({ intervalMs: 60_000 }, [], 600_000)).toBe(21);
    expect(serverRequests({ intervalMs: 60_000, tasks: 3 }, every(4, 0), 600_000)).toBe(15);
    expect(serverRequests({ intervalMs: 60_000, startAfterMs: 600_000 }, [], 600_000)).toBe(1);
    // Two channels add up (the reconnector: polite retries and reconnects).
    expect(
      serverRequests({ intervalMs: 60_000, tasks: 2 }, [...every(1, 0), ...every(3, 100)], 600_000)
    ).toBe(10);
  });

  // Before: an unbounded cap (null) counted as 100 attempts, and the tight loop's default
  // (Infinity) as none at all; a cap of 1e9 as 100.
  it('counts attempts over time: a cap no task has the time to reach counts as the time allows', () => {
    // One task, a retry every 10 ms for an hour: 360,000 retries, whatever the cap above that.
    for (const cap of [Infinity, 1_000_000, 360_000])
      expect(serverRequests({ intervalMs: 3_600_000, tasks: 1 }, every(cap, 10), 3_600_000)).toBe(
        360_001
      );
    expect(serverRequests({ intervalMs: 3_600_000, tasks: 1 }, every(5, 10), 3_600_000)).toBe(6);
    // A task every 10 minutes (up to 15 in the hour), each of which may retry every 2 s to the end.
    expect(serverRequests({ intervalMs: 600_000 }, every(Infinity, 2_000), 3_600_000)).toBe(
      15 * (1 + 1_800)
    );
  });

  it('counts the looks again of tasks waiting out a closed connection', () => {
    const reconnects = (closesMs: number) => [{ cap: 3, everyMs: 1_000, closesMs }];
    // 2 tasks × 3 reconnects × 1 s closed; both tasks may be waiting, looking every 500 ms.
    expect(serverWork({ intervalMs: 600_000, tasks: 2 }, reconnects(1_000), 3_600_000)).toEqual({
      requests: 8,
      polls: 24
    });
    // Closed for a year at a time: no longer than the run.
    expect(
      serverWork({ intervalMs: 600_000, tasks: 2 }, reconnects(LIMITS.spanMs), 3_600_000)
    ).toEqual({
      requests: 8,
      polls: 14_400
    });
  });

  it('counts each request’s events and its stream’s chunks', () => {
    expect(estimateWork([{ requests: 10, chars: 0, chunks: 20_000 }]).events).toBe(
      2 * 10 * (4 + 20_000)
    );
    expect(responseChunks(1_000_000, 1)).toBe(1_000_000);
    expect(responseChunks(401, 50)).toBe(9);
  });

  it('says how much and what the limit is, in one line', () => {
    expect(workRefusal(estimateWork([{ requests: 10, chars: 100, chunks: 1 }]))).toBeNull();
    const line = workRefusal(estimateWork([{ requests: 4_500_000, chars: 0, chunks: 1 }]))!;
    expect(line).toBe(
      'this run would be about 9,000,000 requests / 18,576 MB; the limit is 8,000,000 requests / 64,000 MB (fewer servers, a longer intervalMs, fewer retries, a shorter durationMs or fewer tokens)'
    );
    expect(line).not.toContain('\n');
    expect(workRefusal(estimateWork([{ requests: 10_000, chars: 0, chunks: 20_000 }]))).toBe(
      "this run would be about 400,080,000 clock events (its 20,000 requests and their streams' chunks); the limit is 100,000,000 (a larger provider.chunkTokens, a smaller maxTokens or fewer requests)"
    );
  });

  // Issue #19: the memory benchmark's week of the standard load was refused (55,685 MB by the
  // estimate against 32,000): a long run's memory could not be measured in the page at all.
  it('admits a simulated week of the retry storm (what `bench:memory -- --week` runs)', () => {
    const file = fileURLToPath(new URL('../../../../bench/retry-storm.json', import.meta.url));
    const week = JSON.parse(readFileSync(file, 'utf8')) as { durationMs: number };
    week.durationMs = 7 * 86_400_000;
    const r = parseScenario(week);
    expect(r.ok ? 'admitted' : r.errors[0]!.message).toBe('admitted');
    // And a month of it is not: about 4 times the budget's text.
    week.durationMs = LIMITS.durationMs;
    expect(parseScenario(week).ok).toBe(false);
  });

  it('lets the ready-made scenarios and the UI benchmark run', () => {
    const dir = fileURLToPath(new URL('../../../../static/scenarios/', import.meta.url));
    for (const f of readdirSync(dir))
      expect(parseScenario(readFileSync(`${dir}${f}`, 'utf8')).ok).toBe(true);
    // And the largest one here: the UI benchmark's simulated day of 50 servers.
    const bench = fileURLToPath(new URL('../../../../bench/', import.meta.url));
    // bench/sweep-*.json are sweep files (static-sweeps.spec.ts plans them), not scenarios.
    for (const f of readdirSync(bench).filter((f) => !f.startsWith('sweep-')))
      expect(parseScenario(readFileSync(`${bench}${f}`, 'utf8')).ok).toBe(true);
  });
});
