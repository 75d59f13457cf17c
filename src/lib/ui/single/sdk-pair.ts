/**
 * The /single/ page's MCP connection: a real MCP SDK 1.x `Server` and `Client` joined by the SDK's
 * in-memory transport, in the browser. The server sends `sampling/createMessage` with the SDK's
 * own `createMessage`; the client's request handler is the lab's host (as the shipped handler
 * is, handler/handler.ts); what the page shows as "received" is what the server's SDK call gave
 * its caller — the parsed result, or the error it threw (an `McpError` with the SDK's text).
 *
 * The SDK is loaded on first use (a dynamic import): it is in the /single/ page's chunks only,
 * never in the playground's.
 */
import type { CreateMessageResult, Frame, JsonRpcId, SamplingParams } from '../../machine/types';

/** What the server's SDK call gave: a result, or the error it threw. */
export type Received =
  | { kind: 'result'; result: unknown }
  | {
      kind: 'error';
      /** The thrown error's class (`McpError` for a JSON-RPC error frame). */
      name: string;
      /** Its message as the SDK wrote it (`MCP error -32003: …`). */
      message: string;
      code: number | null;
      data?: unknown;
    };

/** The client's answer to one request: the frame the lab built, as the SDK wants it. */
export type ClientHandler = (
  params: SamplingParams,
  extra: { requestId: JsonRpcId; signal: AbortSignal }
) => Promise<CreateMessageResult>;

export interface SdkPair {
  /** The server asks the client to sample; never rejects (an error is a `Received`). */
  request(params: SamplingParams): Promise<Received>;
  close(): Promise<void>;
}

/**
 * A thrown frame error: the SDK (1.x `Protocol`) sends a handler's error as `{ code, message,
 * data }` when `code` is an integer, so the server receives the lab's -32003 and its `data`
 * unchanged (an `McpError` would prefix its message with "MCP error -32003: " on the way out).
 */
export class FrameError extends Error {
  readonly code: number;
  readonly data?: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'FrameError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

/** The frame as a handler's answer: a result returned, an error thrown (`null`: silence). */
export function answerOf(frame: Frame | null): CreateMessageResult {
  if (frame === null) throw new FrameError(-32603, 'no frame: the client stayed silent');
  if ('error' in frame)
    throw new FrameError(frame.error.code, frame.error.message, frame.error.data);
  return frame.result;
}

function received(e: unknown): Received {
  const err = e as { name?: unknown; message?: unknown; code?: unknown; data?: unknown } | null;
  return {
    kind: 'error',
    name: typeof err?.name === 'string' ? err.name : 'Error',
    message: typeof err?.message === 'string' ? err.message : String(e),
    code: typeof err?.code === 'number' ? err.code : null,
    ...(err?.data !== undefined ? { data: err.data } : {})
  };
}

/** Open one connection: `server` is the name the SDK server announces at initialize. */
export async function openSdkPair(server: string, handle: ClientHandler): Promise<SdkPair> {
  const [{ Client }, { Server }, { InMemoryTransport }, { CreateMessageRequestSchema }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/inMemory.js'),
      import('@modelcontextprotocol/sdk/types.js')
    ]);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sdkServer = new Server({ name: server, version: '1.0.0' }, { capabilities: {} });
  const client = new Client(
    { name: 'sampling-policy-lab', version: '1.0.0' },
    { capabilities: { sampling: {} } }
  );
  client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
    handle(request.params as unknown as SamplingParams, {
      requestId: extra.requestId,
      signal: extra.signal
    })
  );
  await Promise.all([client.connect(clientSide), sdkServer.connect(serverSide)]);
  return {
    request: (params) =>
      sdkServer
        .createMessage(params as Parameters<typeof sdkServer.createMessage>[0])
        .then((result): Received => ({ kind: 'result', result }), received),
    close: () => client.close()
  };
}
