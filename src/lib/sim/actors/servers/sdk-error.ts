/**
 * The error a server's MCP SDK raises for an error response — `McpError` from
 * `@modelcontextprotocol/sdk/types.js` — and the SDK's `ErrorCode` values a server reads, as a
 * small class and table of our own. The SDK's types module defines every protocol schema in zod
 * at load, and the simulated servers run in the playground's worker, whose first load carries no
 * zod (issue #24). sdk-error.spec.ts holds both to the SDK's: the same `code`, `data`, `name` and
 * message text for every code, the same `ErrorCode` values, and the same reading by `failureOf`.
 */

/** The SDK's `McpError`, as its `Protocol` builds one from an error response. */
export class SdkMcpError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(`MCP error ${code}: ${message}`);
    this.code = code;
    this.data = data;
    this.name = 'McpError';
  }
}

/** The SDK's `ErrorCode` values a server tells apart (the SDK's enum names). */
export const SdkErrorCode = {
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  UrlElicitationRequired: -32042
} as const;
