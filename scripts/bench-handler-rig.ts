/**
 * What the handler's bench (bench-handler.ts) and its one-sided probe (bench-handler-probe.ts)
 * share, so the two measure the same thing: the policy a bench handler runs, the bare handler's
 * fixed result, the small distinct requests, the SDK round trip over the in-memory or the
 * yielding transport, and the bytes allocated and promoted as V8's GC profiler reports them.
 */
import { GCProfiler, type GCProfilerResult } from 'node:v8';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  type CreateMessageResult
} from '@modelcontextprotocol/sdk/types.js';
import { defaultPolicy } from '../src/lib/machine/policy';

export type Handle = (request: unknown, extra: unknown) => Promise<CreateMessageResult>;

/** The default policy without a rate limit and with a budget no run spends: every request takes the whole path. */
export function benchPolicy() {
  const policy = defaultPolicy();
  policy.defaults.rateLimit = null;
  policy.defaults.budget = { amount: '1000000.00', currency: 'USD', windowMs: 86_400_000 };
  return policy;
}

/** What the bench's handlers' `sample` returns: a fixed text, one output token. */
export const benchSample = (_p: unknown, { model }: { model: string }) => ({
  content: { type: 'text' as const, text: 'fixed' },
  model,
  usage: { outputTokens: 1 }
});

/** The bare handler's answer. */
export const FIXED: CreateMessageResult = {
  role: 'assistant',
  content: { type: 'text', text: 'fixed' },
  model: 'example-model-v2',
  stopReason: 'endTurn'
};

let seq = 0;
/** A small request, distinct from every other (so each is its own identity). */
export const small = () => ({
  messages: [
    { role: 'user' as const, content: { type: 'text' as const, text: `Summarise ${++seq}.` } }
  ],
  maxTokens: 200
});
/** How many requests {@link small} has made. */
export const made = () => seq;

/**
 * The SDK's in-memory pair, but each message is delivered in a turn of its own (`setImmediate`),
 * as a stdio transport's reader hands on each line it reads: the microtasks a message started
 * have all run before the next one arrives.
 */
class YieldingTransport implements Transport {
  other: YieldingTransport | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  static pair(): [YieldingTransport, YieldingTransport] {
    const a = new YieldingTransport();
    const b = new YieldingTransport();
    a.other = b;
    b.other = a;
    return [a, b];
  }
  async start(): Promise<void> {}
  async send(message: Parameters<Transport['send']>[0]): Promise<void> {
    const other = this.other;
    if (!other) throw new Error('Not connected');
    setImmediate(() => other.onmessage?.(message));
  }
  async close(): Promise<void> {
    const other = this.other;
    this.other = undefined;
    await other?.close();
    this.onclose?.();
  }
}

/** A `Server` and a `Client` (SDK 1.x) joined, `handle` the client's sampling handler. */
export async function sdkPair(handle: Handle, yielding = false) {
  const [clientSide, serverSide]: [Transport, Transport] = yielding
    ? YieldingTransport.pair()
    : InMemoryTransport.createLinkedPair();
  const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
  const client = new Client(
    { name: 'bench-client', version: '1.0.0' },
    { capabilities: { sampling: {} } }
  );
  client.setRequestHandler(CreateMessageRequestSchema, (r, extra) => handle(r, extra));
  await Promise.all([client.connect(clientSide), server.connect(serverSide)]);
  return { server, close: () => client.close() };
}

const oldSpace = (h: { heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] }) =>
  h.heapSpaceStatistics.find((x) => x.spaceName === 'old_space')?.spaceUsedSize ?? 0;

export interface Alloc {
  /** Bytes allocated per request. */
  allocated: number;
  /** Bytes per request the young generation's collections moved to the old one. */
  promoted: number;
  /** Milliseconds spent collecting, and how many collections. */
  gcMs: number;
  collections: number;
}

/**
 * Bytes allocated per request by `work` (which runs `n` requests): the heap's growth plus what
 * each garbage collection in between freed, from V8's GC profiler; and the bytes promoted (the
 * old space's growth across each scavenge): what outlived two scavenges, which a mark-compact
 * has to collect later.
 */
export async function allocPerRequest(n: number, work: () => Promise<unknown>): Promise<Alloc> {
  const profiler = new GCProfiler();
  const before = process.memoryUsage().heapUsed;
  profiler.start();
  await work();
  const after = process.memoryUsage().heapUsed;
  const stats: GCProfilerResult['statistics'] = profiler.stop()?.statistics ?? [];
  let freed = 0;
  let promoted = 0;
  let gcMs = 0;
  for (const gc of stats) {
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    gcMs += gc.cost / 1000;
    if (gc.gcType === 'Scavenge') promoted += oldSpace(gc.afterGC) - oldSpace(gc.beforeGC);
  }
  return {
    allocated: (after - before + freed) / n,
    promoted: promoted / n,
    gcMs,
    collections: stats.length
  };
}
