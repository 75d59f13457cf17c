/**
 * The handler's line of `npm run bench` (issue #20, Speed): requests per second through a real
 * MCP SDK 1.x round trip (a `Server` and a `Client` joined by the SDK's in-memory transport, the
 * server calling `createMessage`) with the handler as the client's sampling handler, against the
 * same round trip with a bare handler returning a fixed result, measured back to back in one run;
 * the handler alone (its `handle` called directly) in CPU time per request; and `fileStore`
 * commits per second, one at a time and 64 in flight (fdatasync'd, grouped).
 *
 * The handler's requests are distinct (each its own identity, so each is hashed, evaluated,
 * consented to at once, sampled, committed to a memory store and audited to a callback) under a
 * policy without a rate limit, so every request takes the whole path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CreateMessageRequestSchema,
  type CreateMessageResult
} from '@modelcontextprotocol/sdk/types.js';
import { defaultPolicy } from '../src/lib/machine/policy';
import type { StoredDecision } from '../src/lib/machine/types';
import { createSamplingPolicy, fileStore, memoryStore } from '../src/lib/handler/index';

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const load = () => `load ${loadavg()[0]!.toFixed(2)}`;

type Handle = (request: unknown, extra: unknown) => Promise<CreateMessageResult>;

async function sdkPair(handle: Handle) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
  const client = new Client(
    { name: 'bench-client', version: '1.0.0' },
    { capabilities: { sampling: {} } }
  );
  client.setRequestHandler(CreateMessageRequestSchema, (r, extra) => handle(r, extra));
  await Promise.all([client.connect(clientSide), server.connect(serverSide)]);
  return { server, close: () => client.close() };
}

let seq = 0;
const small = () => ({
  messages: [
    { role: 'user' as const, content: { type: 'text' as const, text: `Summarise ${++seq}.` } }
  ],
  maxTokens: 200
});

/** Requests per second: `n` round trips, `concurrency` in flight. */
async function roundTrips(
  server: Server,
  n: number,
  concurrency: number
): Promise<{ rps: number; errors: number }> {
  let next = 0;
  let errors = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) {
        try {
          await server.createMessage(small());
        } catch {
          errors++;
        }
      }
    })
  );
  return { rps: (n / (performance.now() - t)) * 1000, errors };
}

/** CPU µs (user + system) per request through `conn.handle` directly, `concurrency` in flight. */
async function handlerCpu(
  conn: { handle: (request: never, extra: never) => Promise<unknown> },
  n: number,
  concurrency: number
): Promise<number> {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const requestId = `direct-${next++}`;
        await conn.handle(
          { method: 'sampling/createMessage', params: small() } as never,
          { requestId } as never
        );
      }
    })
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

async function commits(n: number, concurrency: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-file-store-'));
  const store = fileStore(dir);
  let next = 0;
  const decision = (i: number): StoredDecision => ({
    server: 'everything',
    identity: `everything:${i.toString(16).padStart(32, '0')}`,
    verdict: 'denied',
    reason: 'user.denied',
    retryable: false,
    decidedAt: i,
    expiresAt: null,
    policyHash: '0123456789abcdef',
    represented: 0,
    recent: []
  });
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await store.commit('c', decision(next++));
    })
  );
  const rate = (n / (performance.now() - t)) * 1000;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

export async function benchHandler(): Promise<void> {
  const policy = defaultPolicy();
  policy.defaults.rateLimit = null;
  policy.defaults.budget = { amount: '1000000.00', currency: 'USD', windowMs: 86_400_000 };
  let records = 0;
  const lab = createSamplingPolicy({
    policy,
    store: memoryStore(),
    audit: () => void records++,
    consent: () => 'allow',
    sample: (_p, { model }) => ({
      content: { type: 'text', text: 'fixed' },
      model,
      usage: { outputTokens: 1 }
    })
  });
  const conn = lab.connect('everything');
  const withHandler = await sdkPair((r, e) => conn.handle(r as never, e as never));
  const fixed: CreateMessageResult = {
    role: 'assistant',
    content: { type: 'text', text: 'fixed' },
    model: 'example-model-v2',
    stopReason: 'endTurn'
  };
  const bare = await sdkPair(async () => fixed);

  const N = 10_000;
  const C = 16;
  // Warm both paths, then alternate, keeping each side's best of three.
  await roundTrips(bare.server, 2_000, C);
  await roundTrips(withHandler.server, 2_000, C);
  let bareBest = 0;
  let handlerBest = 0;
  let errors = 0;
  for (let round = 0; round < 3; round++) {
    bareBest = Math.max(bareBest, (await roundTrips(bare.server, N, C)).rps);
    const h = await roundTrips(withHandler.server, N, C);
    errors += h.errors;
    handlerBest = Math.max(handlerBest, h.rps);
  }
  console.log(
    `handler (SDK 1.x in-memory round trip, small distinct requests, ${C} in flight): ${fmt(handlerBest)} req/s with the policy vs ${fmt(bareBest)} req/s bare → ratio ${(handlerBest / bareBest).toFixed(2)} (goal ≥ 0.5; ${errors} errors, ${fmt(records)} records)  [${load()}]`
  );
  // The handler alone, called as the SDK would but without it: CPU time per request, which a
  // loaded machine disturbs far less than the wall-clock rates above (other processes' time is
  // not counted), so a change to the handler shows here first.
  let cpuBest = Infinity;
  for (let round = 0; round < 3; round++)
    cpuBest = Math.min(cpuBest, await handlerCpu(conn, 5_000, C));
  console.log(
    `handler alone (no SDK, same requests, ${C} in flight): ${cpuBest.toFixed(1)} µs of CPU per request (best of 3)  [${load()}]`
  );
  await withHandler.close();
  await bare.close();
  await lab.close();

  const one = await commits(2_000, 1);
  const many = await commits(20_000, 64);
  console.log(
    `fileStore commits (fdatasync'd): ${fmt(one)} decisions/s one at a time, ${fmt(many)} decisions/s with 64 in flight (grouped; goal ≥ 2,000)  [${load()}]`
  );
}
