import {
  CreateMessageResultSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCResponseSchema,
  JSONRPCResultResponseSchema
} from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COST_CAP_REASON,
  budgetExceededFrame,
  budgetExhaustedFrame,
  budgetRefusalErrorFrame,
  classifyFrame,
  denialFrame,
  providerErrorFrame,
  resultFrame,
  transportErrorFrame,
  trimmedFrame,
  type FrameKind
} from './frames';
import { parseFrame } from './frame-parse';
import { DEFAULT_REASONS, REASONS, reasonMessage } from './reasons';
import {
  CODES,
  type BudgetDecision,
  type ErrorFrame,
  type Frame,
  type JsonRpcId,
  type ResultFrame
} from './types';

const decision: BudgetDecision = {
  estimatedCost: { amount: '0.12', currency: 'USD' },
  limitApplied: { amount: '0.10', currency: 'USD' },
  limitSource: 'host_policy',
  meterBasis: 'rate card v1: input + output tokens',
  estimatedTokens: { input: 1200, output: 800 },
  requestHonored: false
};

/** One frame of every kind the client sends, with the kind `classifyFrame` must report. */
function everyFrame(id: JsonRpcId): [string, FrameKind, Frame][] {
  return [
    ['result', 'allowed', resultFrame(id, { model: 'm-1', text: 'hello' })],
    [
      'result (maxTokens)',
      'allowed',
      resultFrame(id, { model: 'm-1', text: 'cut', stopReason: 'maxTokens' })
    ],
    [
      'trimmed',
      'trimmed',
      trimmedFrame(id, {
        model: 'm-1',
        text: 'summary',
        context: { requested: 'allServers', applied: 'none', reason: 'policy.max_scope' }
      })
    ],
    [
      'denial (permanent)',
      'denied',
      denialFrame(id, {
        reason: 'policy.budget_exhausted',
        server: 'release-notes',
        retryable: false,
        resetsAt: '2026-03-11T00:00:00Z'
      })
    ],
    [
      'denial (transient)',
      'denied',
      denialFrame(id, {
        reason: 'policy.rate_limit',
        server: 'chatty',
        retryable: true,
        retryAfterMs: 60_000
      })
    ],
    ['budget exceeded', 'budget_exceeded', budgetExceededFrame(id, { model: 'm-1', decision })],
    [
      'budget refusal as error',
      'budget_exceeded',
      budgetRefusalErrorFrame(id, { server: 'release-notes', decision })
    ],
    [
      'budget exhausted',
      'budget_exhausted',
      budgetExhaustedFrame(id, { model: 'm-1', partialText: 'half a', decision })
    ],
    ['transport error', 'transport_error', transportErrorFrame(id)],
    ['provider error', 'provider_error', providerErrorFrame(id)]
  ];
}

const isResult = (f: Frame): f is ResultFrame => 'result' in f;
const isError = (f: Frame): f is ErrorFrame => 'error' in f;

/** True when some member, at any depth, is present but undefined (it would vanish in JSON). */
function hasUndefinedMember(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  return Object.values(v).some((x) => x === undefined || hasUndefinedMember(x));
}

describe('every frame conforms to the official MCP SDK schemas', () => {
  it.each(everyFrame(47))('%s', (_name, _kind, frame) => {
    // Frames are compared byte-for-byte as JSON: nothing may be lost on the way through it.
    expect(hasUndefinedMember(frame)).toBe(false);
    expect(JSON.parse(JSON.stringify(frame))).toEqual(frame);
    expect(JSONRPCResponseSchema.safeParse(frame).success).toBe(true);

    if (isResult(frame)) {
      const envelope = JSONRPCResultResponseSchema.safeParse(frame);
      expect(envelope.error).toBeUndefined();
      const result = CreateMessageResultSchema.safeParse(frame.result);
      expect(result.error).toBeUndefined();
      // The schema is loose: `budget`, `_meta.context` and the RFC's stop reasons pass, and
      // nothing of ours is stripped on the way through.
      expect(result.data).toEqual(frame.result);
      expect(JSONRPCErrorResponseSchema.safeParse(frame).success).toBe(false);
    } else {
      const parsed = JSONRPCErrorResponseSchema.safeParse(frame);
      expect(parsed.error).toBeUndefined();
      expect(parsed.data).toEqual(frame);
      expect(JSONRPCResultResponseSchema.safeParse(frame).success).toBe(false);
    }
  });

  it('conforms for any id, model and text', () => {
    const id = fc.oneof(fc.string(), fc.integer());
    const str = fc.string({ unit: 'binary' });
    fc.assert(
      fc.property(id, str, str, (i, model, text) => {
        for (const f of [
          resultFrame(i, { model, text }),
          budgetExhaustedFrame(i, { model, partialText: text, decision })
        ]) {
          expect(JSONRPCResultResponseSchema.safeParse(f).success).toBe(true);
          expect(CreateMessageResultSchema.safeParse(isResult(f) && f.result).success).toBe(true);
        }
        const d = denialFrame(i, { reason: text, server: model, retryable: false });
        expect(JSONRPCErrorResponseSchema.safeParse(d).success).toBe(true);
      })
    );
  });
});

describe('result frames', () => {
  it('builds an allowed result, endTurn by default, members in a fixed order', () => {
    expect(JSON.stringify(resultFrame(1, { model: 'm', text: 't' }))).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"t"},"model":"m","stopReason":"endTurn"}}'
    );
  });

  it('annotates a trim in _meta.context in a fixed order, whatever order it was given in', () => {
    const f = trimmedFrame('a', {
      model: 'm',
      text: 't',
      context: { reason: 'policy.max_scope', applied: 'thisServer', requested: 'allServers' }
    });
    expect(JSON.stringify(f.result._meta)).toBe(
      '{"context":{"requested":"allServers","applied":"thisServer","reason":"policy.max_scope"}}'
    );
    expect(f.result.stopReason).toBe('endTurn');
  });

  it('refuses pre-flight on cost with empty content and the decision basis', () => {
    const f = budgetExceededFrame(3, { model: 'm', decision });
    expect(f.result).toEqual({
      role: 'assistant',
      content: { type: 'text', text: '' },
      model: 'm',
      stopReason: 'budget_exceeded',
      budget: { decision }
    });
  });

  it('stops mid-generation on cost with the partial content and the decision basis', () => {
    const f = budgetExhaustedFrame(3, { model: 'm', partialText: 'half', decision });
    expect(f.result).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'half' },
      model: 'm',
      stopReason: 'budget_exhausted',
      budget: { decision }
    });
  });
});

describe('denial frames', () => {
  it('reproduces the seed frame byte for byte', () => {
    const f = denialFrame(47, {
      reason: 'policy.budget_exhausted',
      server: 'release-notes',
      retryable: false,
      resetsAt: '2026-03-11T00:00:00Z',
      message: "Sampling denied: 24h budget for server 'release-notes' exhausted"
    });
    expect(JSON.stringify(f)).toBe(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 47,
        error: {
          code: -32003,
          message: "Sampling denied: 24h budget for server 'release-notes' exhausted",
          data: {
            reason: 'policy.budget_exhausted',
            server: 'release-notes',
            retryable: false,
            resetsAt: '2026-03-11T00:00:00Z'
          }
        }
      })
    );
  });

  it.each(REASONS.map((r) => [r]))('%s: code -32003, standard message, typed data', (reason) => {
    const { retryable } = DEFAULT_REASONS[reason];
    const extra =
      reason === 'policy.budget_exhausted'
        ? { resetsAt: '2026-03-11T00:00:00Z' }
        : retryable
          ? { retryAfterMs: 1500 }
          : {};
    const f = denialFrame(9, { reason, server: 'srv', retryable, ...extra });
    expect(f.error.code).toBe(CODES.denied);
    expect(f.error.code).toBe(-32003);
    expect(f.error.message).toBe(reasonMessage(reason, 'srv'));
    // The classification is in data.reason; the prose never has to be parsed.
    expect(f.error.message).not.toContain(reason);
    expect(f.error.data).toEqual({ reason, server: 'srv', retryable, ...extra });
    expect(Object.keys(f.error.data ?? {})).toEqual([
      'reason',
      'server',
      'retryable',
      ...Object.keys(extra)
    ]);
  });

  it('omits absent optional members rather than setting them to undefined', () => {
    const f = denialFrame(1, {
      reason: 'user.denied',
      server: 's',
      retryable: false,
      resetsAt: undefined,
      retryAfterMs: undefined
    });
    expect(Object.keys(f.error.data ?? {})).toEqual(['reason', 'server', 'retryable']);
    expect(hasUndefinedMember(f)).toBe(false);
  });

  it('takes a custom message, and gives an unknown reason generic prose', () => {
    expect(
      denialFrame(1, { reason: 'user.denied', server: 's', retryable: false, message: 'No.' }).error
        .message
    ).toBe('No.');
    const f = denialFrame(1, { reason: 'policy.custom_thing', server: 's', retryable: false });
    expect(f.error.message).toBe("Sampling denied for server 's'");
    expect(f.error.data).toEqual({ reason: 'policy.custom_thing', server: 's', retryable: false });
  });

  it('sends a cost refusal as an error: -32003, policy.cost_cap, never retryable', () => {
    const f = budgetRefusalErrorFrame(5, { server: 'srv', decision });
    expect(f.error.code).toBe(-32003);
    expect(f.error.data).toEqual({
      reason: COST_CAP_REASON,
      server: 'srv',
      retryable: false,
      budget: { decision }
    });
    expect(COST_CAP_REASON).toBe('policy.cost_cap');
  });
});

describe('transport and provider failures', () => {
  it.each([
    ['transport', transportErrorFrame(2), CODES.requestTimeout, -32001],
    ['provider', providerErrorFrame(2), CODES.internal, -32603]
  ] as const)('%s: its own code, no policy reason, no budget decision', (_n, f, code, literal) => {
    expect(f.error.code).toBe(code);
    expect(f.error.code).toBe(literal);
    expect(typeof f.error.message).toBe('string');
    expect(f.error.message.length).toBeGreaterThan(0);
    expect('data' in f.error).toBe(false);
    const data = f.error.data as Record<string, unknown> | undefined;
    expect(data?.reason).toBeUndefined();
    expect(data?.budget).toBeUndefined();
    expect(JSON.stringify(f)).not.toMatch(/reason|budget/);
  });

  it('takes a custom message', () => {
    expect(transportErrorFrame(1, 'slow').error.message).toBe('slow');
    expect(providerErrorFrame(1, 'boom').error.message).toBe('boom');
  });
});

describe('classifyFrame', () => {
  it.each(everyFrame('r-1'))('round-trips %s, also through JSON', (_name, kind, frame) => {
    expect(classifyFrame(frame)).toBe(kind);
    expect(classifyFrame(JSON.parse(JSON.stringify(frame)))).toBe(kind);
  });

  it('reports unknown for what this client never sends, and never throws', () => {
    const r = resultFrame(1, { model: 'm', text: 't' });
    const e = providerErrorFrame(1);
    for (const odd of [
      null,
      'frame',
      [],
      {},
      { jsonrpc: '2.0', id: 1 },
      { ...r, error: e.error },
      { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'no such method' } },
      { jsonrpc: '2.0', id: 1, error: 'bad' },
      { jsonrpc: '2.0', id: 1, result: 'bad' }
    ]) {
      expect(classifyFrame(odd)).toBe('unknown');
    }
    fc.assert(
      fc.property(fc.anything(), (v) => {
        expect(typeof classifyFrame(v)).toBe('string');
        expect(typeof classifyFrame({ jsonrpc: '2.0', id: 1, result: v })).toBe('string');
        expect(typeof classifyFrame({ jsonrpc: '2.0', id: 1, error: v })).toBe('string');
      })
    );
  });
});

describe('parseFrame', () => {
  it.each(everyFrame(12))('accepts %s as built', (_name, _kind, frame) => {
    const parsed = parseFrame(JSON.stringify(frame));
    expect(parsed).toEqual({ ok: true, frame });
  });

  it('accepts a string id, whitespace, and an error with arbitrary data', () => {
    const text =
      '{ "jsonrpc": "2.0", "id": "x-1",\n "error": { "code": -32000, "message": "m", "data": [1] } }';
    const parsed = parseFrame(text);
    expect(parsed.ok).toBe(true);
    expect(parsed.ok && isError(parsed.frame) && parsed.frame.error.data).toEqual([1]);
  });

  const ok = '"jsonrpc":"2.0","id":1';
  const result = '"role":"assistant","content":{"type":"text","text":"t"},"model":"m"';
  it.each([
    ['not json', 'not valid JSON'],
    ['[1]', '(root): expected an object'],
    ['{"jsonrpc":"1.0","id":1,"result":{}}', 'jsonrpc: expected "2.0"'],
    ['{"id":1,"result":{}}', 'jsonrpc: expected "2.0"'],
    ['{"jsonrpc":"2.0","result":{}}', 'id: expected a string or a number'],
    [
      '{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}',
      'id: expected a string or a number'
    ],
    [`{${ok}}`, 'expected exactly one of result and error, got neither'],
    [`{${ok},"result":{${result}},"error":{"code":1,"message":"m"}}`, 'got both'],
    [`{${ok},"result":{${result}},"extra":1}`, 'extra: unexpected member'],
    [`{${ok},"error":"boom"}`, 'error: expected an object'],
    [`{${ok},"error":{"code":"x","message":"m"}}`, 'error.code: expected an integer'],
    [`{${ok},"error":{"code":1.5,"message":"m"}}`, 'error.code: expected an integer'],
    [`{${ok},"error":{"code":-32003}}`, 'error.message: expected a string'],
    [`{${ok},"result":[]}`, 'result: expected an object'],
    [
      `{${ok},"result":{"role":"user","content":{"type":"text","text":"t"},"model":"m"}}`,
      'result.role'
    ],
    [`{${ok},"result":{"role":"assistant","model":"m"}}`, 'result.content: expected an object'],
    [
      `{${ok},"result":{"role":"assistant","content":{"type":"text"},"model":"m"}}`,
      'result.content.text: expected a string'
    ],
    [
      `{${ok},"result":{"role":"assistant","content":{"type":"text","text":"t"}}}`,
      'result.model: expected a string'
    ],
    [`{${ok},"result":{${result},"stopReason":1}}`, 'result.stopReason: expected a string'],
    [
      `{${ok},"result":{${result},"_meta":{"context":{"requested":"allServers","applied":"none"}}}}`,
      'result._meta.context.reason: expected a string'
    ],
    [`{${ok},"result":{${result},"budget":{}}}`, 'result.budget.decision: expected an object']
  ])('rejects %s naming the path', (text, problem) => {
    const parsed = parseFrame(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain(problem);
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const parsed = parseFrame(text);
        expect(typeof parsed.ok).toBe('boolean');
      })
    );
  });
});
