/**
 * `sdkErrorOf` builds the error a server's SDK raises for an error response without a stack trace
 * (for speed), and with our own class and code table (sdk-error.ts: the playground's worker loads
 * no zod, which the SDK's types module would bring). The SDK's `McpError` and `ErrorCode` are the
 * reference: the same code, data, name and message text, the same codes by the same names, and a
 * server reads our error as it would read the SDK's.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { failureOf, sdkErrorOf } from './base';
import { SdkErrorCode, SdkMcpError } from './sdk-error';

/** What a server can read of an error: everything but the stack. */
const readable = (e: Error & { code: number; data?: unknown }) => ({
  code: e.code,
  data: e.data,
  name: e.name,
  message: e.message,
  text: String(e),
  keys: Object.keys(e),
  isError: e instanceof Error
});

const CODES = [...Object.values(SdkErrorCode), -32003, -32002, -1, 0, 1, 42, -32099, -(2 ** 31)];
const MESSAGES = ['', 'No', "Sampling denied by the user for server 'srv'", 'ünïcødé ✓'];
const DATA = [undefined, null, 'text', 0, { reason: 'user.denied', retryable: false }, [1, 2]];

describe('the SDK error, our own', () => {
  it("equals the SDK's McpError for every code, message and data", () => {
    for (const code of CODES)
      for (const message of MESSAGES)
        for (const data of DATA) {
          const ours = new SdkMcpError(code, message, data);
          const sdk = new McpError(code, message, data);
          expect(readable(ours)).toEqual(readable(sdk));
          expect(ours.data).toBe(data);
        }
  });

  it("has the SDK's ErrorCode values, by the SDK's names", () => {
    const sdk = Object.fromEntries(
      Object.entries(ErrorCode).filter(([, v]) => typeof v === 'number')
    );
    expect({ ...SdkErrorCode }).toEqual(sdk);
  });

  it("is read by a server as the SDK's would be, for every code", () => {
    for (const code of CODES) {
      const data = { reason: 'user.denied', retryable: code % 2 === 0 };
      const frame = { jsonrpc: '2.0', id: 1, error: { code, message: 'No', data } };
      const e = sdkErrorOf(frame)!;
      expect(readable(e)).toEqual(readable(new McpError(code, 'No', data)));
      // The reading goes by the SDK's own code values.
      const what = failureOf(frame);
      if (code === ErrorCode.ConnectionClosed)
        expect(what).toEqual({ kind: 'error', what: 'connection_closed' });
      else if (code === ErrorCode.RequestTimeout)
        expect(what).toEqual({ kind: 'error', what: 'transport_error' });
      else if (code === ErrorCode.InternalError)
        expect(what).toEqual({ kind: 'error', what: 'provider_error' });
      else if (code === -32003) expect(what).toMatchObject({ kind: 'denied' });
      else expect(what).toEqual({ kind: 'error', what: 'unknown' });
    }
  });
});

describe('sdkErrorOf', () => {
  it('hands over the McpError the SDK would build, and restores the stack trace limit', () => {
    const before = Error.stackTraceLimit;
    const data = { reason: 'user.denied', retryable: false };
    const e = sdkErrorOf({ jsonrpc: '2.0', id: 1, error: { code: -32003, message: 'No', data } });
    const sdk = new McpError(-32003, 'No', data);
    expect(e).toBeInstanceOf(SdkMcpError);
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
