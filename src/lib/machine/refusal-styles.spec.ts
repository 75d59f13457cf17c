import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  budgetRefusalErrorFrame,
  denialFrame,
  providerErrorFrame,
  resultFrame,
  transportErrorFrame
} from './frames';
import { DENIAL_STYLES, FOREIGN_REFUSALS, styleFrame } from './refusal-styles';

const denial = denialFrame(47, {
  reason: 'policy.budget_exhausted',
  server: 'release-notes',
  retryable: false,
  resetsAt: '2026-03-11T00:00:00Z'
});

/** Each style's frame for request 47, byte for byte, as the table gives it. */
const EXPECTED: Record<(typeof DENIAL_STYLES)[number], string> = {
  lab: JSON.stringify(denial),
  spec: '{"jsonrpc":"2.0","id":47,"error":{"code":-1,"message":"User rejected sampling request"}}',
  vscode:
    '{"jsonrpc":"2.0","id":47,"error":{"code":-32000,"message":"The user has denied permission to call this method."}}',
  inspector:
    '{"jsonrpc":"2.0","id":47,"error":{"code":-32603,"message":"Sampling request rejected"}}',
  'python-default':
    '{"jsonrpc":"2.0","id":47,"error":{"code":-32600,"message":"Sampling not supported"}}',
  cursor: '{"jsonrpc":"2.0","id":47,"error":{"code":-32601,"message":"Method not found"}}'
};

describe('refusal styles', () => {
  it.each(DENIAL_STYLES)('%s: the denial is sent exactly as that client sends it', (style) => {
    expect(JSON.stringify(styleFrame(denial, style))).toBe(EXPECTED[style]);
  });

  it("the lab's denial keeps its data; every other style sends none", () => {
    for (const style of DENIAL_STYLES) {
      const f = styleFrame(denial, style);
      expect('error' in f && 'data' in f.error).toBe(style === 'lab');
    }
  });

  it("the codes are the MCP SDK's own ErrorCode values", () => {
    expect(FOREIGN_REFUSALS.vscode.code).toBe(ErrorCode.ConnectionClosed);
    expect(FOREIGN_REFUSALS.inspector.code).toBe(ErrorCode.InternalError);
    expect(FOREIGN_REFUSALS['python-default'].code).toBe(ErrorCode.InvalidRequest);
    expect(FOREIGN_REFUSALS.cursor.code).toBe(ErrorCode.MethodNotFound);
    // The spec's example code is not one of the SDK's: a server's SDK cannot name it.
    expect(Object.values(ErrorCode)).not.toContain(FOREIGN_REFUSALS.spec.code);
  });

  it('a cost refusal sent as an error is a refusal too; results and failures are untouched', () => {
    const cost = budgetRefusalErrorFrame(3, {
      server: 's',
      decision: {
        estimatedCost: { amount: '0.1027', currency: 'USD' },
        limitApplied: { amount: '0.0500', currency: 'USD' },
        limitSource: 'host_policy',
        meterBasis: 'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok',
        estimatedTokens: { input: 24000, output: 2048 }
      }
    });
    expect(styleFrame(cost, 'vscode')).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32000, message: 'The user has denied permission to call this method.' }
    });
    const untouched = [
      resultFrame(4, { model: 'm', text: 'ok' }),
      transportErrorFrame(5),
      providerErrorFrame(6, 'provider failed')
    ];
    for (const style of DENIAL_STYLES)
      for (const f of untouched) expect(styleFrame(f, style)).toBe(f);
    expect(styleFrame(null, 'cursor')).toBeNull();
  });
});
