/**
 * A real MCP SDK 1.x server and client joined by the SDK's in-memory transport, the client's
 * `sampling/createMessage` handler being a connection of the handler under test: what a server
 * author's code sees is what these tests assert.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CreateMessageRequestSchema,
  type CreateMessageRequest
} from '@modelcontextprotocol/sdk/types.js';
import type { Connection, SamplingPolicy } from './handler';

type Params = CreateMessageRequest['params'];

export const ask = (text = 'Summarise 2.3.', over: Partial<Params> = {}): Params => ({
  messages: [{ role: 'user', content: { type: 'text', text } }],
  maxTokens: 200,
  ...over
});

export interface Pair {
  server: Server;
  client: Client;
  conn: Connection;
  /** How many sampling requests reached the client's handler. */
  handled(): number;
  close(): Promise<void>;
}

export async function pair(lab: SamplingPolicy, name = 'everything'): Promise<Pair> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new Server({ name, version: '1.0.0' }, { capabilities: {} });
  const client = new Client(
    { name: 'policy-lab-test-client', version: '1.0.0' },
    { capabilities: { sampling: {} } }
  );
  const conn = lab.connect(name);
  let handled = 0;
  client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => {
    handled++;
    return conn.handle(request, extra);
  });
  await Promise.all([client.connect(clientSide), server.connect(serverSide)]);
  // The SDK's own close hook (a transport's `onclose` is the SDK's once connected).
  client.onclose = () => conn.close();
  return { server, client, conn, handled: () => handled, close: () => client.close() };
}

/** What the server's `createMessage` gave: the result, or the error's code, message and data. */
export async function outcome(p: Promise<unknown>) {
  try {
    return { result: (await p) as Record<string, unknown> };
  } catch (e) {
    const err = e as { code?: unknown; message?: string; data?: Record<string, unknown> };
    return { error: { code: err.code, message: err.message, data: err.data } };
  }
}

/** A deferred promise: a dialog the test answers when it chooses. */
export function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Wait until `check` holds, one macrotask at a time (no fixed sleep). */
export async function until(check: () => boolean, what: string, turns = 1_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`never: ${what}`);
}

/**
 * Wait until `check` holds across a process boundary (a server over stdio): bounded by wall time,
 * not by turns, since a loaded machine may take seconds to start a child process, while idle
 * turns pass in microseconds. Polls each macrotask (no fixed sleep).
 */
export async function untilWithin(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 1));
  }
  if (!check()) throw new Error(`never within ${ms} ms: ${what}`);
}
