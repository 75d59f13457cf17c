/**
 * `sdkErrorOf` builds the SDK's own `McpError` without a stack trace (for speed): the error a
 * server reads is the same, and the process-wide stack trace limit is left as it was.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { sdkErrorOf } from './base';

describe('sdkErrorOf', () => {
  it('hands over the McpError the SDK would build, and restores the stack trace limit', () => {
    const before = Error.stackTraceLimit;
    const data = { reason: 'user.denied', retryable: false };
    const e = sdkErrorOf({ jsonrpc: '2.0', id: 1, error: { code: -32003, message: 'No', data } });
    const sdk = new McpError(-32003, 'No', data);
    expect(e).toBeInstanceOf(McpError);
    expect(e!.code).toBe(sdk.code);
    expect(e!.message).toBe(sdk.message);
    expect(e!.name).toBe(sdk.name);
    expect(e!.data).toBe(data);
    expect(Error.stackTraceLimit).toBe(before);
    // Not an error frame, or a code the SDK would not take: nothing.
    expect(sdkErrorOf({ jsonrpc: '2.0', id: 1, result: {} })).toBeNull();
    expect(sdkErrorOf({ jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'x' } })).toBeNull();
    expect(Error.stackTraceLimit).toBe(before);
  });
});
